/**
 * The git remote wired into a running sandbox: bare repositories for the store's repositories, the store's
 * git backend, `/git/` served on the sandbox's port, token rights taken from the store and every push
 * recorded in it.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { ZERO_SHA } from "./git-constants.js";
import { fullRef } from "./git-ref-names.js";
import { installationGrants } from "../server/app-setup.js";
import { signedBranchPattern } from "../merge/branch-rules-state.js";
import { GitRemote } from "./git-remote.js";
import { isVerified, unverifiedCommits, writeBlob, writeCommit, writeTree } from "./git-database-writes.js";
import { GitRemoteError } from "./git-remote-error.js";
import type { Author, CommitInfo } from "./git-remote-types.js";
import { gitEnv, run } from "../proc.js";
import {
  permissionAtLeast,
  type SandboxStore,
  type CommitInfo as StoreCommitInfo,
  StoreError,
  type GitBackend as StoreGitBackend,
} from "../store.js";

/** The remote URL of a sandbox repository, with a token embedded for clients that cannot be configured. */
function gitUrl(baseUrl: string, owner: string, repo: string, token?: string): string {
  const url = new URL(`/git/${owner}/${repo}.git`, baseUrl);
  if (token) {
    url.username = "x-access-token";
    url.password = token;
  }
  return url.toString();
}

/** What the git remote needs of a running sandbox (see index.ts). */
interface GitHost {
  url: string;
  store: SandboxStore;
  registerHandler(
    prefix: string,
    handler: (req: IncomingMessage, res: ServerResponse, url: URL) => void | Promise<void>,
  ): unknown;
}

/** Adapts the remote to the store's {@link StoreGitBackend} interface. */
function storeBackend(remote: GitRemote): StoreGitBackend {
  const toInfo = (c: CommitInfo): StoreCommitInfo => ({
    sha: c.sha,
    message: c.message,
    authorName: c.author.name,
    authorEmail: c.author.email,
    authorDate: c.author.date,
    committerName: c.committer.name,
    committerEmail: c.committer.email,
    committerDate: c.committer.date,
    parents: c.parents,
    tree: c.tree,
  });
  const wrap = async <T>(fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (error) {
      if (error instanceof GitRemoteError) throw new StoreError(error.status, error.message);
      throw error;
    }
  };
  return {
    listRefs: (repo) => wrap(() => remote.listRefs(repo.owner, repo.name)),
    resolveRef: (repo, ref) => wrap(() => remote.resolveRef(repo.owner, repo.name, ref)),
    compare: (repo, base, head) =>
      wrap(async () => {
        const result = await remote.compare(repo.owner, repo.name, base, head);
        return {
          files: result.files.map((f) => ({
            filename: f.filename,
            status: f.status,
            additions: f.additions,
            deletions: f.deletions,
            changes: f.changes,
            ...(f.patch !== undefined ? { patch: f.patch } : {}),
            ...(f.previousFilename ? { previous_filename: f.previousFilename } : {}),
          })),
          ahead_by: result.aheadBy,
          behind_by: result.behindBy,
          ...(result.mergeBaseSha ? { merge_base_sha: result.mergeBaseSha } : {}),
          commits: result.commits.map(toInfo),
        };
      }),
    createRef: (repo, ref, sha) => wrap(() => remote.createRef(repo.owner, repo.name, ref, sha)),
    updateRef: (repo, ref, sha, force) =>
      wrap(() => remote.updateRef(repo.owner, repo.name, ref, sha, force)),
    deleteRef: (repo, ref) => wrap(() => remote.deleteRef(repo.owner, repo.name, ref)),
    mergeBranches: (repo, base, head, method, message) =>
      wrap(async () => {
        const split = message.indexOf("\n\n");
        const title = split >= 0 ? message.slice(0, split) : message;
        const body = split >= 0 ? message.slice(split + 2) : "";
        const result = await remote.merge(repo.owner, repo.name, {
          base,
          head,
          method,
          title,
          ...(body ? { message: body } : {}),
        });
        if (result.merged) return { sha: result.sha };
        if (result.reason === "not_found") throw new StoreError(404, result.message);
        return { conflict: true as const, message: result.message };
      }),
    revertCommit: (repo, onto, commit, message, author) =>
      wrap(async () => {
        const result = await remote.revertOnto(repo.owner, repo.name, { onto, commit, message, author });
        return result.ok ? { sha: result.sha } : { conflict: true as const, message: result.message };
      }),
    canMerge: (repo, base, head) =>
      wrap(async () => (await remote.mergeability(repo.owner, repo.name, base, head)).mergeable),
    readFile: (repo, ref, path) => wrap(() => remote.readFileBuffer(repo.owner, repo.name, ref, path)),
    listDirectory: (repo, ref, path) =>
      wrap(async () => {
        const sha = await remote.resolveRef(repo.owner, repo.name, ref);
        if (!sha) return null;
        const clean = path.replace(/^\/+|\/+$/g, "");
        if (clean) {
          const type = await run("git", ["cat-file", "-t", `${sha}:${clean}`], {
            cwd: remote.repoPath(repo.owner, repo.name),
            env: gitEnv(),
          });
          if (type.stdout.trim() !== "tree") return null;
        }
        const entries = await remote.listTree(repo.owner, repo.name, sha, clean);
        return entries.map((e) => ({
          name: e.path.slice(e.path.lastIndexOf("/") + 1),
          path: e.path,
          type: e.type === "tree" ? ("dir" as const) : ("file" as const),
          sha: e.sha,
          size: e.size ?? 0,
        }));
      }),
    database: {
      blob: (repo, bytes) => wrap(() => writeBlob(remote.repoPath(repo.owner, repo.name), bytes)),
      tree: (repo, base, entries) =>
        wrap(() => writeTree(remote.repoPath(repo.owner, repo.name), base, entries)),
      commit: (repo, input, signed) =>
        wrap(() => writeCommit(remote.repoPath(repo.owner, repo.name), input, signed)),
      verified: (repo, sha) => isVerified(remote.repoPath(repo.owner, repo.name), sha),
      unverified: (repo, sha, since) =>
        wrap(() => unverifiedCommits(remote.repoPath(repo.owner, repo.name), sha, since)),
    },
    treeEntries: (repo, ref) =>
      wrap(async () => {
        const sha = /^[0-9a-f]{40}$/.test(ref) ? ref : await remote.resolveRef(repo.owner, repo.name, ref);
        return sha ? remote.listTreeRecursive(repo.owner, repo.name, sha) : null;
      }),
    getCommit: (repo, sha) =>
      wrap(async () => {
        const commit = await remote.getCommit(repo.owner, repo.name, sha);
        return commit ? toInfo(commit) : null;
      }),
  };
}

/**
 * Creates the git remote for a sandbox: bare repositories for every repository the store knows (and for
 * those added later through {@link SandboxGit.ensureRepo}), registered as the store's git backend, served at
 * `/git/`, with token rights taken from the store and every push recorded through `store.recordPush`.
 */
export async function attachGit(host: GitHost, options: { root?: string } = {}): Promise<SandboxGit> {
  const { store } = host;
  const remote = new GitRemote({
    ...(options.root ? { root: options.root } : {}),
    authenticate: (token, { owner, repo }) => {
      const info = store.authenticate(token);
      const record = store.getRepo({ owner, name: repo });
      if (!info || !record) return null;
      // A token reaches its run's or its installation's repositories only (with-installations.ts).
      if (!store.tokenReaches(info, record.fullName)) return null;
      // A workflow's GITHUB_TOKEN never has `workflows`; an installation token only when granted
      // (sandbox/emulator/git/workflow-push-hook.ts).
      // Branches that require signed commits, whoever pushes (sandbox/emulator/git/signed-commits-hook.ts).
      const signed = signedBranchPattern(store, record);
      const rules = signed ? { signedBranches: signed } : {};
      if (info.kind === "worker") return { login: info.login, write: true, workflows: false, ...rules };
      if (info.kind === "installation") {
        const granted = installationGrants(store)?.permissions.workflows === "write";
        return { login: info.login, write: true, workflows: granted, ...rules };
      }
      const permission = store.getPermission(record.fullName, info.login);
      if (record.private && !permissionAtLeast(permission, "read")) return null;
      return { login: info.login, write: permissionAtLeast(permission, "write"), ...rules };
    },
    onPush: async (update) => {
      const forced =
        update.before !== ZERO_SHA &&
        update.after !== ZERO_SHA &&
        !(await remote.isAncestor(update.owner, update.repo, update.before, update.after));
      const commits = await remote.pushCommits(update.owner, update.repo, update);
      await store.recordPush({
        repo: { owner: update.owner, name: update.repo },
        ref: update.ref,
        before: update.before,
        after: update.after,
        pusher: update.pusher,
        forced,
        commits: commits.map((c) => ({
          id: c.sha,
          message: c.message,
          timestamp: c.committer.date,
          author: { name: c.author.name, email: c.author.email },
          added: c.added,
          removed: c.removed,
          modified: c.modified,
        })),
      });
    },
  });
  for (const repo of store.listRepos()) {
    if (!remote.hasRepo(repo.owner, repo.name))
      await remote.createRepo(repo.owner, repo.name, repo.defaultBranch);
  }
  store.setGitBackend(storeBackend(remote));
  host.registerHandler("/git/", async (req, res) => {
    if (!(await remote.handler(req, res))) {
      res.writeHead(404, { "content-type": "text/plain" });
      res.end("Not Found\n");
    }
  });
  return new SandboxGit(host, remote);
}

/** The sandbox's git remote with the store-aware conveniences the runner and tests use. */
export class SandboxGit {
  constructor(
    private readonly host: GitHost,
    readonly remote: GitRemote,
  ) {}

  /** The clone URL of a repository (no credentials). */
  url(owner: string, repo: string, token?: string): string {
    return gitUrl(this.host.url, owner, repo, token);
  }

  /** Creates the store record (if needed) and the bare repository. */
  async ensureRepo(owner: string, name: string, defaultBranch = "main"): Promise<void> {
    if (!this.host.store.getRepo({ owner, name })) this.host.store.createRepo({ owner, name, defaultBranch });
    if (!this.remote.hasRepo(owner, name)) await this.remote.createRepo(owner, name, defaultBranch);
  }

  /**
   * Commits files on a branch (default: the repository's default branch) and records the push, so the store
   * emits `push` as if someone had pushed the commit. Returns the new commit SHA.
   */
  async seedRepo(
    owner: string,
    name: string,
    files: Record<string, string>,
    options: { branch?: string; message?: string; author?: Author; pusher?: string } = {},
  ): Promise<string> {
    const record = this.host.store.getRepo({ owner, name });
    const branch = options.branch ?? record?.defaultBranch ?? "main";
    await this.ensureRepo(owner, name, branch);
    const before = (await this.remote.resolveRef(owner, name, fullRef(branch))) ?? ZERO_SHA;
    const sha = await this.remote.seedRepo(owner, name, files, { ...options, branch });
    await this.host.store.recordPush({
      repo: { owner, name },
      ref: fullRef(branch),
      before,
      after: sha,
      pusher: options.pusher ?? owner,
    });
    return sha;
  }

  stop(): Promise<void> {
    return this.remote.stop();
  }
}
