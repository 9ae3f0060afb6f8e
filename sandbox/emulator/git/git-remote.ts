/**
 * The sandbox's git remote: bare repositories in a temporary directory, served over git's smart HTTP protocol
 * (git-smart-http.ts) at `/git/<owner>/<repo>.git`, plus the repository operations the REST API needs (refs,
 * compare, file contents, merges), all done by real git. sandbox-git.ts wires it into a running sandbox.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { ZERO_SHA } from "./git-constants.js";
import { assertName, assertRefArg, fullRef } from "./git-ref-names.js";
import { GitRemoteError } from "./git-remote-error.js";
import type {
  Author,
  ChangedFile,
  CommitInfo,
  CompareResult,
  GitBackend,
  GitRemoteOptions,
  MergeRequest,
  MergeResult,
  RefEntry,
  WriteFileRequest,
} from "./git-remote-types.js";
import { GitSmartHttp } from "./git-smart-http.js";
import {
  applyNumstat,
  LOG_FORMAT,
  parseChangedPaths,
  parseLog,
  parseLsTree,
  parseLsTreeRecursive,
  parseNameStatus,
} from "./git-output.js";
import { gitEnv, KeyedLock, run, systemGit } from "../proc.js";
import { installWorkflowPushHook } from "./workflow-push-hook.js";
import { buildTree, type RepoGit } from "./tree-building.js";
import { replayCommits, revertCommit } from "./worktree-replays.js";

export class GitRemote implements GitBackend {
  readonly root: string;
  private readonly ownsRoot: boolean;
  private readonly lock = new KeyedLock();
  private readonly children = new Set<ChildProcess>();
  private readonly repos = new Set<string>();
  private stopped = false;
  authenticate: NonNullable<GitRemoteOptions["authenticate"]>;
  onPush: NonNullable<GitRemoteOptions["onPush"]>;
  allowAnonymousRead: boolean;
  /**
   * The HTTP handler for `/git/<owner>/<repo>.git/...` (the path may also omit `.git`). Mount it with
   * `sandbox.registerHandler("/git/", remote.handler)`. Resolves false when the path is not a git path.
   */
  readonly handler: (req: IncomingMessage, res: ServerResponse) => Promise<boolean>;

  constructor(options: GitRemoteOptions = {}) {
    this.ownsRoot = !options.root;
    this.root = options.root ?? mkdtempSync(join(tmpdir(), "autopilot-git-"));
    mkdirSync(this.root, { recursive: true });
    this.authenticate = options.authenticate ?? (() => null);
    this.onPush = options.onPush ?? (() => {});
    this.allowAnonymousRead = options.allowAnonymousRead ?? false;
    this.handler = new GitSmartHttp({
      root: this.root,
      children: this.children,
      isStopping: () => this.stopped,
      hasRepo: (owner, repo) => this.hasRepo(owner, repo),
      withRepoLock: (owner, repo, fn) => this.lock.with(this.key(owner, repo), fn),
      refSnapshot: (owner, repo) => this.refSnapshot(owner, repo),
      authenticate: (token, repo) => this.authenticate(token, repo),
      onPush: (update) => this.onPush(update),
      allowAnonymousRead: () => this.allowAnonymousRead,
    }).handler;
  }

  /** Absolute path of a bare repository. */
  repoPath(owner: string, repo: string): string {
    assertName("owner", owner);
    assertName("repository", repo);
    return join(this.root, owner, `${repo}.git`);
  }

  private key(owner: string, repo: string): string {
    return `${owner}/${repo}`.toLowerCase();
  }

  hasRepo(owner: string, repo: string): boolean {
    return this.repos.has(this.key(owner, repo));
  }

  private requireRepo(owner: string, repo: string): string {
    if (!this.hasRepo(owner, repo)) throw new GitRemoteError(`repository ${owner}/${repo} not found`, 404);
    return this.repoPath(owner, repo);
  }

  /** Runs git in a bare repository; rejects with git's stderr on a non-zero exit. */
  private async git(
    owner: string,
    repo: string,
    args: string[],
    options: { input?: string | Buffer; env?: NodeJS.ProcessEnv; allowFail?: boolean } = {},
  ): Promise<string> {
    const cwd = this.requireRepo(owner, repo);
    const result = await run("git", args, { cwd, env: gitEnv(options.env), input: options.input });
    if (result.code !== 0 && !options.allowFail) {
      throw new GitRemoteError(`git ${args[0]} failed: ${result.stderr.trim() || result.stdout.trim()}`);
    }
    return result.stdout;
  }

  /** `git` bound to one repository (tree-building.ts). */
  private repoGit(owner: string, repo: string): RepoGit {
    return (args, options) => this.git(owner, repo, args, options);
  }

  async createRepo(owner: string, repo: string, defaultBranch = "main"): Promise<void> {
    const path = this.repoPath(owner, repo);
    mkdirSync(dirname(path), { recursive: true });
    const init = await run("git", ["init", "--bare", "--quiet", `--initial-branch=${defaultBranch}`, path], {
      env: gitEnv(),
    });
    if (init.code !== 0) throw new GitRemoteError(`git init failed: ${init.stderr}`);
    this.repos.add(this.key(owner, repo));
    // http-backend refuses receive-pack without REMOTE_USER unless enabled; we authorize in front of it.
    await this.git(owner, repo, ["config", "http.receivepack", "true"]);
    await this.git(owner, repo, ["config", "uploadpack.allowAnySHA1InWant", "true"]);
    await this.git(owner, repo, ["config", "receive.denyDeleteCurrent", "true"]);
    installWorkflowPushHook(path);
  }

  async seedRepo(
    owner: string,
    repo: string,
    files: Record<string, string>,
    options: { branch?: string; message?: string; author?: Author } = {},
  ): Promise<string> {
    if (!this.hasRepo(owner, repo)) await this.createRepo(owner, repo, options.branch ?? "main");
    const branch = options.branch ?? (await this.defaultBranch(owner, repo));
    return this.lock.with(this.key(owner, repo), async () => {
      const parent = await this.resolveRef(owner, repo, fullRef(branch));
      const tree = await buildTree(this.repoGit(owner, repo), this.root, parent, files, []);
      const sha = await this.commitTree(owner, repo, tree, parent ? [parent] : [], {
        message: options.message ?? "Initial commit",
        author: options.author,
      });
      await this.git(owner, repo, ["update-ref", fullRef(branch), sha, parent ?? ZERO_SHA]);
      return sha;
    });
  }

  /** The branch HEAD points at in the bare repository. */
  async defaultBranch(owner: string, repo: string): Promise<string> {
    const head = (await this.git(owner, repo, ["symbolic-ref", "HEAD"])).trim();
    return head.replace(/^refs\/heads\//, "");
  }

  async setDefaultBranch(owner: string, repo: string, branch: string): Promise<void> {
    await this.git(owner, repo, ["symbolic-ref", "HEAD", fullRef(branch)]);
  }

  private async commitTree(
    owner: string,
    repo: string,
    tree: string,
    parents: string[],
    options: { message: string; author?: Author; committer?: Author },
  ): Promise<string> {
    const args = ["commit-tree", tree];
    for (const parent of parents) args.push("-p", parent);
    const env: NodeJS.ProcessEnv = {};
    if (options.author) {
      env.GIT_AUTHOR_NAME = options.author.name;
      env.GIT_AUTHOR_EMAIL = options.author.email;
      if (options.author.date) env.GIT_AUTHOR_DATE = options.author.date;
    }
    if (options.committer) {
      env.GIT_COMMITTER_NAME = options.committer.name;
      env.GIT_COMMITTER_EMAIL = options.committer.email;
      if (options.committer.date) env.GIT_COMMITTER_DATE = options.committer.date;
    }
    return (await this.git(owner, repo, args, { input: options.message, env })).trim();
  }

  async listRefs(owner: string, repo: string, prefix = "refs/"): Promise<RefEntry[]> {
    const out = await this.git(owner, repo, ["for-each-ref", "--format=%(objectname) %(refname)", prefix]);
    return out
      .split("\n")
      .filter(Boolean)
      .map((line) => {
        const space = line.indexOf(" ");
        return { sha: line.slice(0, space), ref: line.slice(space + 1) };
      });
  }

  private async refSnapshot(owner: string, repo: string): Promise<Map<string, string>> {
    return new Map((await this.listRefs(owner, repo)).map((entry) => [entry.ref, entry.sha]));
  }

  async resolveRef(owner: string, repo: string, ref: string): Promise<string | null> {
    assertRefArg(ref);
    const candidates = /^[0-9a-f]{4,40}$/i.test(ref) ? [ref, fullRef(ref)] : [fullRef(ref), ref];
    for (const candidate of candidates) {
      const out = await this.git(owner, repo, ["rev-parse", "--verify", "--quiet", `${candidate}^{commit}`], {
        allowFail: true,
      });
      if (out.trim()) return out.trim();
    }
    return null;
  }

  private async requireCommit(owner: string, repo: string, ref: string): Promise<string> {
    const sha = await this.resolveRef(owner, repo, ref);
    if (!sha) throw new GitRemoteError(`No commit found for ${ref}`, 404);
    return sha;
  }

  private async checkRefName(owner: string, repo: string, ref: string): Promise<void> {
    assertRefArg(ref);
    const ok = await run("git", ["check-ref-format", ref], { env: gitEnv() });
    if (ok.code !== 0) throw new GitRemoteError(`invalid ref name: ${ref}`);
    void owner;
    void repo;
  }

  async createRef(owner: string, repo: string, ref: string, sha: string): Promise<void> {
    const name = fullRef(ref);
    await this.checkRefName(owner, repo, name);
    await this.lock.with(this.key(owner, repo), async () => {
      const target = await this.requireCommit(owner, repo, sha);
      const existing = await this.resolveRef(owner, repo, name);
      if (existing) throw new GitRemoteError("Reference already exists");
      await this.git(owner, repo, ["update-ref", name, target, ZERO_SHA]);
    });
  }

  async updateRef(owner: string, repo: string, ref: string, sha: string, force = false): Promise<void> {
    const name = fullRef(ref);
    await this.checkRefName(owner, repo, name);
    await this.lock.with(this.key(owner, repo), async () => {
      const target = await this.requireCommit(owner, repo, sha);
      const current = await this.resolveRef(owner, repo, name);
      if (!current) throw new GitRemoteError("Reference does not exist");
      if (!force && !(await this.isAncestor(owner, repo, current, target))) {
        throw new GitRemoteError("Update is not a fast forward");
      }
      await this.git(owner, repo, ["update-ref", name, target, current]);
    });
  }

  async deleteRef(owner: string, repo: string, ref: string): Promise<void> {
    const name = fullRef(ref);
    await this.checkRefName(owner, repo, name);
    await this.lock.with(this.key(owner, repo), async () => {
      const current = await this.resolveRef(owner, repo, name);
      if (!current) throw new GitRemoteError("Reference does not exist");
      await this.git(owner, repo, ["update-ref", "-d", name, current]);
    });
  }

  async isAncestor(owner: string, repo: string, ancestor: string, descendant: string): Promise<boolean> {
    assertRefArg(ancestor);
    assertRefArg(descendant);
    const result = await run("git", ["merge-base", "--is-ancestor", ancestor, descendant], {
      cwd: this.requireRepo(owner, repo),
      env: gitEnv(),
    });
    return result.code === 0;
  }

  async getCommit(owner: string, repo: string, ref: string): Promise<CommitInfo | null> {
    const sha = await this.resolveRef(owner, repo, ref);
    if (!sha) return null;
    const [commit] = await this.logCommits(owner, repo, ["-1", sha]);
    return commit ?? null;
  }

  private async logCommits(owner: string, repo: string, range: string[]): Promise<CommitInfo[]> {
    return parseLog(await this.git(owner, repo, ["log", `--format=${LOG_FORMAT}`, ...range]));
  }

  async compare(owner: string, repo: string, base: string, head: string): Promise<CompareResult> {
    const baseSha = await this.requireCommit(owner, repo, base);
    const headSha = await this.requireCommit(owner, repo, head);
    const mergeBase =
      (await this.git(owner, repo, ["merge-base", baseSha, headSha], { allowFail: true })).trim() || null;
    const counts = (
      await this.git(owner, repo, ["rev-list", "--left-right", "--count", `${baseSha}...${headSha}`])
    ).trim();
    const [behindBy = 0, aheadBy = 0] = counts.split(/\s+/).map(Number);
    const status =
      aheadBy === 0 && behindBy === 0
        ? "identical"
        : behindBy === 0
          ? "ahead"
          : aheadBy === 0
            ? "behind"
            : "diverged";
    const from =
      mergeBase ?? (await this.git(owner, repo, ["hash-object", "-t", "tree", "/dev/null"])).trim();
    const files = await this.diffFiles(owner, repo, from, headSha);
    const commits =
      aheadBy > 0 ? await this.logCommits(owner, repo, ["--reverse", `${baseSha}..${headSha}`]) : [];
    return { status, aheadBy, behindBy, baseSha, headSha, mergeBaseSha: mergeBase, files, commits };
  }

  private async diffFiles(owner: string, repo: string, from: string, to: string): Promise<ChangedFile[]> {
    const nameStatus = (await this.git(owner, repo, ["diff", "--name-status", "-z", "-M", from, to])).split(
      "\0",
    );
    const numstat = (await this.git(owner, repo, ["diff", "--numstat", "-z", "-M", from, to])).split("\0");
    const files = parseNameStatus(nameStatus);
    applyNumstat(files, numstat);
    const patch = await this.git(owner, repo, ["diff", "-M", "--no-color", "--no-ext-diff", from, to]);
    const sections = patch.split(/^(?=diff --git )/m);
    for (const file of files) {
      const section = sections.find(
        (s) => s.startsWith("diff --git ") && s.split("\n", 1)[0]!.endsWith(` b/${file.filename}`),
      );
      if (section && !/^Binary files /m.test(section)) {
        const hunk = section.indexOf("\n@@");
        if (hunk >= 0) file.patch = section.slice(hunk + 1).replace(/\n$/, "");
      }
      if (file.status !== "removed") {
        const sha = await this.git(
          owner,
          repo,
          ["rev-parse", "--verify", "--quiet", `${to}:${file.filename}`],
          {
            allowFail: true,
          },
        );
        if (sha.trim()) file.sha = sha.trim();
      }
    }
    return files;
  }

  async readFileBuffer(owner: string, repo: string, ref: string, path: string): Promise<Buffer | null> {
    const sha = await this.resolveRef(owner, repo, ref);
    if (!sha) return null;
    const clean = path.replace(/^\/+/, "");
    const cwd = this.requireRepo(owner, repo);
    const type = await run("git", ["cat-file", "-t", `${sha}:${clean}`], { cwd, env: gitEnv() });
    if (type.code !== 0 || type.stdout.trim() !== "blob") return null;
    return new Promise((resolve, reject) => {
      const child = spawn(systemGit(), ["cat-file", "blob", `${sha}:${clean}`], { cwd, env: gitEnv() });
      const chunks: Buffer[] = [];
      child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
      child.on("error", reject);
      child.on("close", (code) => resolve(code === 0 ? Buffer.concat(chunks) : null));
    });
  }

  async readFile(owner: string, repo: string, ref: string, path: string): Promise<string | null> {
    const buffer = await this.readFileBuffer(owner, repo, ref, path);
    return buffer ? buffer.toString("utf8") : null;
  }

  async fileSha(owner: string, repo: string, ref: string, path: string): Promise<string | null> {
    const sha = await this.resolveRef(owner, repo, ref);
    if (!sha) return null;
    const out = await this.git(
      owner,
      repo,
      ["rev-parse", "--verify", "--quiet", `${sha}:${path.replace(/^\/+/, "")}`],
      { allowFail: true },
    );
    return out.trim() || null;
  }

  async listTree(
    owner: string,
    repo: string,
    ref: string,
    path = "",
  ): Promise<{ path: string; type: "blob" | "tree"; sha: string; size?: number }[]> {
    const sha = await this.requireCommit(owner, repo, ref);
    const clean = path.replace(/^\/+|\/+$/g, "");
    const out = await this.git(owner, repo, ["ls-tree", "-l", "-z", clean ? `${sha}:${clean}` : sha], {
      allowFail: true,
    });
    return parseLsTree(out, clean);
  }

  /** Every entry below a commit's (or tree's) root with its git mode, as `ls-tree -r -t` lists them. */
  async listTreeRecursive(
    owner: string,
    repo: string,
    ref: string,
  ): Promise<
    { path: string; mode: string; type: "blob" | "tree" | "commit"; sha: string; size?: number }[] | null
  > {
    const type = await this.git(owner, repo, ["cat-file", "-t", ref], { allowFail: true });
    if (type.trim() !== "commit" && type.trim() !== "tree") return null;
    const out = await this.git(owner, repo, ["ls-tree", "-r", "-t", "-l", "-z", ref], { allowFail: true });
    return parseLsTreeRecursive(out);
  }

  async writeFile(owner: string, repo: string, request: WriteFileRequest): Promise<string> {
    const ref = fullRef(request.branch);
    return this.lock.with(this.key(owner, repo), async () => {
      const parent = await this.resolveRef(owner, repo, ref);
      const tree = await buildTree(
        this.repoGit(owner, repo),
        this.root,
        parent,
        {
          [request.path]: request.content,
        },
        [],
      );
      const sha = await this.commitTree(owner, repo, tree, parent ? [parent] : [], {
        message: request.message,
        author: request.author,
      });
      await this.git(owner, repo, ["update-ref", ref, sha, parent ?? ZERO_SHA]);
      return sha;
    });
  }

  /** Runs `git merge-tree --write-tree`: the merged tree, or the conflicting paths. */
  private async mergeTree(
    owner: string,
    repo: string,
    base: string,
    head: string,
  ): Promise<{ tree: string; conflicts: string[] }> {
    const result = await run(
      "git",
      ["merge-tree", "--write-tree", "--name-only", "--no-messages", base, head],
      {
        cwd: this.requireRepo(owner, repo),
        env: gitEnv(),
      },
    );
    if (result.code !== 0 && result.code !== 1) {
      throw new GitRemoteError(`git merge-tree failed: ${result.stderr.trim()}`);
    }
    const [tree = "", ...rest] = result.stdout.split("\n");
    return { tree: tree.trim(), conflicts: result.code === 1 ? [...new Set(rest.filter(Boolean))] : [] };
  }

  async mergeability(
    owner: string,
    repo: string,
    base: string,
    head: string,
  ): Promise<{ mergeable: boolean; conflicts: string[] }> {
    const baseSha = await this.requireCommit(owner, repo, base);
    const headSha = await this.requireCommit(owner, repo, head);
    const { conflicts } = await this.mergeTree(owner, repo, baseSha, headSha);
    return { mergeable: conflicts.length === 0, conflicts };
  }

  async merge(owner: string, repo: string, request: MergeRequest): Promise<MergeResult> {
    const baseRef = fullRef(request.base);
    return this.lock.with(this.key(owner, repo), async (): Promise<MergeResult> => {
      const baseSha = await this.resolveRef(owner, repo, baseRef);
      const headSha = await this.resolveRef(owner, repo, request.head);
      if (!baseSha || !headSha) {
        return { merged: false, reason: "not_found", conflicts: [], message: "Base or head not found" };
      }
      if (request.expectedHeadSha && request.expectedHeadSha !== headSha) {
        return {
          merged: false,
          reason: "stale_base",
          conflicts: [],
          message: "Head branch was modified. Review and try the merge again.",
        };
      }
      const { tree, conflicts } = await this.mergeTree(owner, repo, baseSha, headSha);
      if (conflicts.length > 0) {
        return { merged: false, reason: "conflict", conflicts, message: "Pull Request is not mergeable" };
      }
      const message = (title: string) => (request.message ? `${title}\n\n${request.message}` : title);
      const headName = request.head.replace(/^refs\/heads\//, "");
      let sha: string;
      if (request.method === "merge") {
        sha = await this.commitTree(owner, repo, tree, [baseSha, headSha], {
          message: message(
            request.title ?? `Merge ${headName} into ${request.base.replace(/^refs\/heads\//, "")}`,
          ),
          author: request.author,
        });
      } else if (request.method === "squash") {
        const commits = await this.logCommits(owner, repo, ["--reverse", `${baseSha}..${headSha}`]);
        const title = request.title ?? commits[0]?.message.split("\n")[0] ?? `Squashed ${headName}`;
        const body = request.message ?? commits.map((c) => `* ${c.message.split("\n")[0]}`).join("\n");
        sha = await this.commitTree(owner, repo, tree, [baseSha], {
          message: body ? `${title}\n\n${body}` : title,
          author: request.author ?? commits[0]?.author,
        });
      } else {
        const rebased = await this.rebaseOnto(owner, repo, baseSha, headSha);
        if (!rebased.ok) {
          return {
            merged: false,
            reason: "conflict",
            conflicts: rebased.conflicts,
            message: "This branch can't be rebased",
          };
        }
        sha = rebased.sha;
      }
      await this.git(owner, repo, ["update-ref", baseRef, sha, baseSha]);
      return { merged: true, sha, method: request.method };
    });
  }

  /**
   * A commit on top of branch `onto` that undoes `commit` (a merge commit against its first parent, as the web's
   * Revert button does), made in a temporary worktree by `git revert`; no ref moves. A conflict reports the
   * conflicting paths and makes nothing.
   */
  async revertOnto(
    owner: string,
    repo: string,
    request: { onto: string; commit: string; message: string; author?: Author },
  ): Promise<{ ok: true; sha: string } | { ok: false; conflicts: string[]; message: string }> {
    return this.lock.with(this.key(owner, repo), async () => {
      const ontoSha = await this.resolveRef(owner, repo, fullRef(request.onto));
      if (!ontoSha) return { ok: false, conflicts: [], message: `${request.onto} does not exist` };
      const parents = (await this.git(owner, repo, ["rev-list", "--parents", "-n", "1", request.commit]))
        .trim()
        .split(" ")
        .slice(1);
      return revertCommit(this.requireRepo(owner, repo), {
        ...request,
        onto: ontoSha,
        isMerge: parents.length > 1,
      });
    });
  }

  /** Replays head's commits (not on base, merges skipped) onto base (worktree-replays.ts). */
  private async rebaseOnto(
    owner: string,
    repo: string,
    baseSha: string,
    headSha: string,
  ): Promise<{ ok: true; sha: string } | { ok: false; conflicts: string[] }> {
    const commits = (
      await this.git(owner, repo, ["rev-list", "--reverse", "--no-merges", `${baseSha}..${headSha}`])
    )
      .split("\n")
      .filter(Boolean);
    return replayCommits(this.requireRepo(owner, repo), baseSha, commits);
  }

  /**
   * The commits a ref update brought, oldest first, as a push payload lists them (at most `limit`): for a new
   * branch, the commits no other ref had; with the files each one added, removed and modified.
   */
  async pushCommits(
    owner: string,
    repo: string,
    update: { ref: string; before: string; after: string },
    limit = 20,
  ): Promise<Array<CommitInfo & { added: string[]; removed: string[]; modified: string[] }>> {
    if (update.after === ZERO_SHA) return [];
    const range =
      update.before === ZERO_SHA
        ? [
            update.after,
            "--not",
            ...(await this.listRefs(owner, repo))
              .filter((r) => r.ref !== update.ref && r.sha !== update.after)
              .map((r) => r.sha),
          ]
        : [`${update.before}..${update.after}`];
    const commits = (await this.logCommits(owner, repo, ["--reverse", ...range])).slice(-limit);
    const out: Array<CommitInfo & { added: string[]; removed: string[]; modified: string[] }> = [];
    for (const commit of commits) {
      const changes = await this.git(owner, repo, [
        "diff-tree",
        "--no-commit-id",
        "--name-status",
        "-r",
        "--root",
        "-z",
        commit.sha,
      ]);
      out.push({ ...commit, ...parseChangedPaths(changes) });
    }
    return out;
  }

  /** Kills running backends and removes the repositories (when the directory was created here). */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const child of this.children) child.kill("SIGKILL");
    this.children.clear();
    if (this.ownsRoot) rmSync(this.root, { recursive: true, force: true });
  }
}
