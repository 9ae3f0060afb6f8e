/** The types of the sandbox's git remote: what it stores and answers, and the operations it offers. */

/** Who a token belongs to, as far as git access is concerned. */
export interface GitPrincipal {
  login: string;
  /** May push. */
  write: boolean;
  /** May push changes to `.github/workflows/` (sandbox/emulator/git/workflow-push-hook.ts); default true. */
  workflows?: boolean;
  /**
   * The branch names of the repository that require signed commits, as one extended regular expression
   * (sandbox/emulator/git/signed-commits-hook.ts); absent: none does.
   */
  signedBranches?: string;
}

export interface PushUpdate {
  owner: string;
  repo: string;
  /** Full ref name, e.g. refs/heads/main. */
  ref: string;
  /** Previous SHA, ZERO_SHA when the ref was created. */
  before: string;
  /** New SHA, ZERO_SHA when the ref was deleted. */
  after: string;
  pusher: string;
}

export interface RefEntry {
  ref: string;
  sha: string;
}

export interface CommitInfo {
  sha: string;
  tree: string;
  parents: string[];
  message: string;
  author: { name: string; email: string; date: string };
  committer: { name: string; email: string; date: string };
}

export type FileStatus = "added" | "removed" | "modified" | "renamed" | "copied" | "changed" | "unchanged";

export interface ChangedFile {
  filename: string;
  previousFilename?: string;
  status: FileStatus;
  additions: number;
  deletions: number;
  changes: number;
  /** Unified diff hunks of the file (GitHub's `patch`), absent for binary files. */
  patch?: string;
  /** Blob SHA at head, absent when removed. */
  sha?: string;
}

export interface CompareResult {
  status: "identical" | "ahead" | "behind" | "diverged";
  aheadBy: number;
  behindBy: number;
  baseSha: string;
  headSha: string;
  mergeBaseSha: string | null;
  files: ChangedFile[];
  commits: CommitInfo[];
}

export type MergeMethod = "merge" | "squash" | "rebase";

export type MergeResult =
  | { merged: true; sha: string; method: MergeMethod }
  | { merged: false; reason: "conflict" | "not_found" | "stale_base"; conflicts: string[]; message: string };

export interface Author {
  name: string;
  email: string;
  /** ISO date; now when absent. */
  date?: string;
}

/** A merge of head into the base branch (see {@link GitBackend.merge}). */
export interface MergeRequest {
  base: string;
  head: string;
  method: MergeMethod;
  /** Commit title; GitHub's default when absent. */
  title?: string;
  /** Commit body. */
  message?: string;
  author?: Author;
  expectedHeadSha?: string;
}

export interface WriteFileRequest {
  branch: string;
  path: string;
  /** New content; null deletes the file. */
  content: string | Buffer | null;
  message: string;
  author?: Author;
}

/**
 * The repository operations the sandbox's REST and GraphQL layer needs from git. Every `ref` argument accepts
 * a branch name, a full ref name (refs/heads/…, refs/tags/…, refs/pull/…) or a commit SHA.
 */
export interface GitBackend {
  hasRepo(owner: string, repo: string): boolean;
  createRepo(owner: string, repo: string, defaultBranch?: string): Promise<void>;
  seedRepo(
    owner: string,
    repo: string,
    files: Record<string, string>,
    options?: { branch?: string; message?: string; author?: Author },
  ): Promise<string>;
  listRefs(owner: string, repo: string, prefix?: string): Promise<RefEntry[]>;
  resolveRef(owner: string, repo: string, ref: string): Promise<string | null>;
  createRef(owner: string, repo: string, ref: string, sha: string): Promise<void>;
  updateRef(owner: string, repo: string, ref: string, sha: string, force?: boolean): Promise<void>;
  deleteRef(owner: string, repo: string, ref: string): Promise<void>;
  getCommit(owner: string, repo: string, ref: string): Promise<CommitInfo | null>;
  isAncestor(owner: string, repo: string, ancestor: string, descendant: string): Promise<boolean>;
  compare(owner: string, repo: string, base: string, head: string): Promise<CompareResult>;
  readFile(owner: string, repo: string, ref: string, path: string): Promise<string | null>;
  readFileBuffer(owner: string, repo: string, ref: string, path: string): Promise<Buffer | null>;
  /** Blob SHA of a file at a ref (the contents API's `sha`), null when absent. */
  fileSha(owner: string, repo: string, ref: string, path: string): Promise<string | null>;
  listTree(
    owner: string,
    repo: string,
    ref: string,
    path?: string,
  ): Promise<{ path: string; type: "blob" | "tree"; sha: string; size?: number }[]>;
  /** Commits one file change on a branch (the contents API's PUT/DELETE); returns the new commit SHA. */
  writeFile(owner: string, repo: string, request: WriteFileRequest): Promise<string>;
  /** Whether head merges cleanly into base, without writing anything. */
  mergeability(
    owner: string,
    repo: string,
    base: string,
    head: string,
  ): Promise<{ mergeable: boolean; conflicts: string[] }>;
  /**
   * Merges head into the base branch with GitHub's three methods, creating real commits and moving the base
   * branch. `expectedHeadSha` guards against a head that moved (GitHub's `sha` parameter).
   */
  merge(owner: string, repo: string, request: MergeRequest): Promise<MergeResult>;
}

export interface GitRemoteOptions {
  /** Directory for the bare repositories; a fresh temporary directory (removed on stop) when absent. */
  root?: string;
  /** Resolves a token to its owner and rights on one repository; null rejects it. */
  authenticate?: (
    token: string,
    repo: { owner: string; repo: string },
  ) => GitPrincipal | null | Promise<GitPrincipal | null>;
  /** Called once per moved ref after a push over HTTP. */
  onPush?: (update: PushUpdate) => void | Promise<void>;
  /** Anonymous clones and fetches (no credentials) are rejected unless this is true. */
  allowAnonymousRead?: boolean;
}
