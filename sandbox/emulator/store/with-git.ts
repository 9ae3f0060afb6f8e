/** Git data: refs, pushes, file contents, trees and commits, from the git backend or memory. */
import { ZERO_SHA } from "../git/git-constants.js";
import type {
  CommitInfo,
  CompareResult,
  GitBackend,
  GitRefEntry,
  TreeEntry,
} from "./git-backend-contract.js";
import type { PushInput, PushRecord } from "./push-records.js";
import { branchOf, fullRef, syntheticSha } from "./ref-names.js";
import { type RepoRef, repoKeyOf } from "./repo-records.js";
import type { RepoState } from "./store-core.js";
import { StoreError } from "./store-error.js";
import { StoreWithComments } from "./with-comments.js";

export class StoreWithGit extends StoreWithComments {
  protected gitBackend: GitBackend | null = null;

  /** Registers real git (the smart-HTTP remote). Refs then come from it instead of memory. */
  setGitBackend(backend: GitBackend | null): void {
    this.gitBackend = backend;
  }

  getGitBackend(): GitBackend | null {
    return this.gitBackend;
  }

  /** All refs of a repository (full names). */
  async listRefs(repo: RepoRef): Promise<GitRefEntry[]> {
    const state = this.state(repo);
    if (this.gitBackend) return this.gitBackend.listRefs(repoKeyOf(state.repo.fullName));
    return [...state.refs.entries()]
      .map(([ref, sha]) => ({ ref, sha }))
      .sort((a, b) => a.ref.localeCompare(b.ref));
  }

  /**
   * Whether the repository has this commit. Stricter than `resolveRef`, which in memory takes any full SHA:
   * here a commit must be some ref's, a pull request's head or base, or one a push recorded.
   */
  async hasCommit(repo: RepoRef, sha: string): Promise<boolean> {
    const state = this.state(repo);
    if (this.gitBackend) return !!(await this.gitBackend.resolveRef(repoKeyOf(state.repo.fullName), sha));
    if ([...state.refs.values()].includes(sha)) return true;
    for (const issue of state.issues.values())
      if (issue.pull && (issue.pull.head.sha === sha || issue.pull.base.sha === sha)) return true;
    return state.pushes.some((p) => p.after === sha || p.commits.some((c) => c.id === sha));
  }

  /** Resolves a branch name, full ref or SHA to a commit SHA; null when unknown. */
  async resolveRef(repo: RepoRef, ref: string): Promise<string | null> {
    const state = this.state(repo);
    if (this.gitBackend) return this.gitBackend.resolveRef(repoKeyOf(state.repo.fullName), ref);
    const direct = state.refs.get(ref) ?? state.refs.get(fullRef(ref)) ?? state.refs.get(`refs/tags/${ref}`);
    if (direct) return direct;
    if (/^[0-9a-f]{7,40}$/.test(ref)) {
      for (const sha of state.refs.values()) if (sha.startsWith(ref)) return sha;
      for (const issue of state.issues.values())
        if (issue.pull?.head.sha.startsWith(ref)) return issue.pull.head.sha;
      if (ref.length === 40) return ref;
    }
    return null;
  }

  /** Creates a ref (`refs/heads/x`); 422 when it exists. Emits `create`. */
  async createRef(repo: RepoRef, ref: string, sha: string, actor: string): Promise<void> {
    const state = this.state(repo);
    const name = fullRef(ref);
    const existing = await this.resolveExactRef(state, name);
    if (existing) throw new StoreError(422, "Reference already exists");
    if (this.gitBackend) await this.gitBackend.createRef(repoKeyOf(state.repo.fullName), name, sha);
    else state.refs.set(name, sha);
    this.emitRefEvent(state, "create", name, actor);
    await this.recordPush(
      { repo: state.repo.fullName, ref: name, before: ZERO_SHA, after: sha, pusher: actor },
      false,
    );
  }

  /** Moves a ref (fast-forward only unless `force`); updates PR heads and emits push/synchronize. */
  async updateRef(repo: RepoRef, ref: string, sha: string, force: boolean, actor: string): Promise<void> {
    const state = this.state(repo);
    const name = fullRef(ref);
    const before = await this.resolveExactRef(state, name);
    if (!before) throw new StoreError(422, "Reference does not exist");
    if (this.gitBackend) {
      if (!this.gitBackend.updateRef)
        throw new StoreError(422, "Updating refs is not supported by the git backend");
      await this.gitBackend.updateRef(repoKeyOf(state.repo.fullName), name, sha, force);
    } else {
      state.refs.set(name, sha);
    }
    await this.recordPush(
      { repo: state.repo.fullName, ref: name, before, after: sha, pusher: actor, forced: force },
      false,
    );
  }

  /** Deletes a ref; 422 when it does not exist. Emits `delete` and `push`. */
  async deleteRef(repo: RepoRef, ref: string, actor: string): Promise<void> {
    const state = this.state(repo);
    const name = fullRef(ref);
    const before = await this.resolveExactRef(state, name);
    if (!before) throw new StoreError(422, "Reference does not exist");
    if (this.gitBackend) await this.gitBackend.deleteRef(repoKeyOf(state.repo.fullName), name);
    else state.refs.delete(name);
    this.emitRefEvent(state, "delete", name, actor);
    await this.recordPush(
      { repo: state.repo.fullName, ref: name, before, after: ZERO_SHA, pusher: actor },
      false,
    );
  }

  /** The `create` / `delete` webhook of a branch or tag: it names the ref short (`x`, not `refs/heads/x`). */
  private emitRefEvent(state: RepoState, name: "create" | "delete", ref: string, actor: string): void {
    if (!isBranchOrTag(ref)) return;
    this.emit({
      name,
      repo: state.repo,
      sender: actor,
      ref: branchOf(ref).replace(/^refs\/tags\//, ""),
      refType: ref.startsWith("refs/tags/") ? "tag" : "branch",
    });
  }

  private async resolveExactRef(state: RepoState, name: string): Promise<string | null> {
    if (this.gitBackend) {
      const refs = await this.gitBackend.listRefs(repoKeyOf(state.repo.fullName));
      return refs.find((r) => r.ref === name)?.sha ?? null;
    }
    return state.refs.get(name) ?? null;
  }

  /**
   * Tells the store that a ref moved (called by the git remote after `git push`, and internally for REST ref
   * changes). Without a git backend it moves the in-memory ref. Updates the head SHA of open PRs on that
   * branch (emitting `pull_request.synchronize`), marks their mergeability unknown, and emits `push`.
   */
  async recordPush(input: PushInput, moveRef = true): Promise<PushRecord> {
    const state = this.state(input.repo);
    const ref = fullRef(input.ref);
    const created = input.before === ZERO_SHA || /^0+$/.test(input.before);
    const deleted = input.after === ZERO_SHA || /^0+$/.test(input.after);
    if (moveRef && !this.gitBackend) {
      if (deleted) state.refs.delete(ref);
      else state.refs.set(ref, input.after);
    }
    const at = this.now();
    const record: PushRecord = {
      id: state.pushes.length + 1,
      ref,
      before: input.before,
      after: input.after,
      created,
      deleted,
      forced: input.forced ?? false,
      pusher: input.pusher,
      commits: input.commits ?? [],
      at,
      ...(input.merge ? { merge: input.merge } : {}),
    };
    state.pushes.push(record);
    state.repo.pushedAt = at;
    if (isBranchOrTag(ref)) this.emit({ name: "push", repo: state.repo, sender: input.pusher, push: record });
    if (ref.startsWith("refs/heads/") && !deleted) {
      const branch = branchOf(ref);
      for (const issue of state.issues.values()) {
        const pull = issue.pull;
        if (!pull || issue.state !== "open") continue;
        if (pull.head.ref === branch && pull.head.sha !== input.after) {
          const before = pull.head.sha;
          pull.head.sha = input.after;
          pull.mergeable = null;
          pull.mergeableState = "unknown";
          issue.updatedAt = at;
          if (record.forced) issue.events.push(this.event("head_ref_force_pushed", input.pusher));
          this.emit({
            name: "pull_request",
            action: "synchronize",
            repo: state.repo,
            sender: input.pusher,
            pull: issue,
            before,
            after: input.after,
          });
        } else if (pull.base.ref === branch) {
          pull.base.sha = input.after;
          pull.mergeable = null;
          pull.mergeableState = "unknown";
        }
      }
    }
    return record;
  }

  /** Pushes recorded for a repository, oldest first. */
  listPushes(repo: RepoRef): PushRecord[] {
    return [...this.state(repo).pushes];
  }

  /** `base...head` through the git backend; without one, an empty diff with ahead_by 1 when they differ. */
  async compare(repo: RepoRef, base: string, head: string): Promise<CompareResult> {
    const state = this.state(repo);
    if (this.gitBackend) return this.gitBackend.compare(repoKeyOf(state.repo.fullName), base, head);
    const baseSha = await this.resolveRef(repo, base);
    const headSha = await this.resolveRef(repo, head);
    if (!baseSha || !headSha) throw new StoreError(404, "Not Found");
    return { files: [], ahead_by: baseSha === headSha ? 0 : 1, behind_by: 0 };
  }

  /** Sets a file for the in-memory mode (the contents API reads it when no git backend is registered). */
  setFile(repo: RepoRef, path: string, content: string | Buffer): void {
    this.state(repo).files.set(path.replace(/^\/+/, ""), Buffer.from(content));
  }

  /** A file's content at a ref (default branch when omitted); null when absent. */
  async readFile(repo: RepoRef, path: string, ref?: string): Promise<Buffer | null> {
    const state = this.state(repo);
    const clean = path.replace(/^\/+/, "");
    if (this.gitBackend?.readFile) {
      return this.gitBackend.readFile(repoKeyOf(state.repo.fullName), ref ?? state.repo.defaultBranch, clean);
    }
    return state.files.get(clean) ?? null;
  }

  /** Every tree entry below a commit or tree (recursive), with modes; null when the ref is unknown. */
  async treeEntries(repo: RepoRef, ref: string): Promise<TreeEntry[] | null> {
    const state = this.state(repo);
    if (this.gitBackend?.treeEntries) return this.gitBackend.treeEntries(repoKeyOf(state.repo.fullName), ref);
    // Without git, files are plain and every directory is implied by its files.
    const entries = new Map<string, TreeEntry>();
    for (const [file, content] of state.files) {
      const parts = file.split("/");
      for (let i = 1; i < parts.length; i++) {
        const dir = parts.slice(0, i).join("/");
        entries.set(dir, { path: dir, mode: "040000", type: "tree", sha: syntheticSha("tree", dir) });
      }
      entries.set(file, {
        path: file,
        mode: "100644",
        type: "blob",
        sha: syntheticSha("blob", file),
        size: content.length,
      });
    }
    return [...entries.values()].sort((a, b) => a.path.localeCompare(b.path));
  }

  /** Directory entries at a ref; null when not a directory. */
  async listDirectory(
    repo: RepoRef,
    path: string,
    ref?: string,
  ): Promise<Array<{ name: string; path: string; type: "file" | "dir"; sha: string; size: number }> | null> {
    const state = this.state(repo);
    const clean = path.replace(/^\/+|\/+$/g, "");
    if (this.gitBackend?.listDirectory) {
      return this.gitBackend.listDirectory(
        repoKeyOf(state.repo.fullName),
        ref ?? state.repo.defaultBranch,
        clean,
      );
    }
    const prefix = clean ? `${clean}/` : "";
    const entries = new Map<
      string,
      { name: string; path: string; type: "file" | "dir"; sha: string; size: number }
    >();
    for (const [file, content] of state.files) {
      if (!file.startsWith(prefix)) continue;
      const rest = file.slice(prefix.length);
      const [first, ...more] = rest.split("/");
      if (!first) continue;
      const entryPath = prefix + first;
      entries.set(first, {
        name: first,
        path: entryPath,
        type: more.length ? "dir" : "file",
        sha: syntheticSha(entryPath, more.length ? "tree" : content.toString("base64")),
        size: more.length ? 0 : content.length,
      });
    }
    return entries.size ? [...entries.values()] : null;
  }

  async getCommit(repo: RepoRef, sha: string): Promise<CommitInfo | null> {
    const state = this.state(repo);
    if (this.gitBackend?.getCommit) return this.gitBackend.getCommit(repoKeyOf(state.repo.fullName), sha);
    const resolved = await this.resolveRef(repo, sha);
    if (!resolved) return null;
    const push = [...state.pushes].reverse().find((p) => p.after === resolved);
    const commit = push?.commits.find((c) => c.id === resolved);
    const date = (push?.at ?? state.repo.createdAt).toISOString();
    return {
      sha: resolved,
      message: commit?.message ?? "Commit",
      authorName: commit?.author.name ?? "sandbox",
      authorEmail: commit?.author.email ?? "sandbox@users.noreply.github.com",
      authorDate: commit?.timestamp ?? date,
      committerDate: commit?.timestamp ?? date,
      parents: push && !push.created ? [push.before] : [],
    };
  }
}

/**
 * GitHub announces refs of branches and tags only: `create` is "a Git branch or tag is created", `delete` "a Git
 * branch or tag is deleted", `push` "a push to a repository branch" or tag
 * (https://docs.github.com/en/webhooks/webhook-events-and-payloads#create, #delete, #push). A ref elsewhere
 * (Autopilot's locks under refs/autopilot/) changes silently and starts no workflow.
 */
function isBranchOrTag(ref: string): boolean {
  return ref.startsWith("refs/heads/") || ref.startsWith("refs/tags/");
}
