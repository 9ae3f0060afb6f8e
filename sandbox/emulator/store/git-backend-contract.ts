/** What the store asks of real git, and the shapes git answers in. */
import type { MergeMethod } from "./pull-records.js";
import type { RepoKey } from "./repo-records.js";

export interface GitRefEntry {
  /** Full ref name: `refs/heads/main`, `refs/tags/v1`. */
  ref: string;
  sha: string;
}

/** One changed file, in the shape of GitHub's compare / pulls-files entries. */
export interface ChangedFile {
  filename: string;
  status: "added" | "removed" | "modified" | "renamed" | "copied" | "changed" | "unchanged";
  additions: number;
  deletions: number;
  changes: number;
  patch?: string;
  previous_filename?: string;
}

export interface CompareResult {
  files: ChangedFile[];
  ahead_by: number;
  behind_by?: number;
  /** SHA of the merge base, when known. */
  merge_base_sha?: string;
  /** Commits in base..head, oldest first, when known. */
  commits?: CommitInfo[];
}

export interface CommitInfo {
  sha: string;
  message: string;
  authorName: string;
  authorEmail: string;
  /** ISO date. */
  authorDate: string;
  committerName?: string;
  committerEmail?: string;
  committerDate?: string;
  parents: string[];
  tree?: string;
}

export type MergeOutcome = { sha: string } | { conflict: true; message?: string };

/**
 * What the store needs from real git. Every method receives the repository as a {@link RepoKey}; refs are
 * full names (`refs/heads/x`) except where noted.
 */
export interface GitBackend {
  listRefs(repo: RepoKey): Promise<GitRefEntry[]>;
  /** Resolves a branch name, full ref or SHA (prefix) to a commit SHA; null when it does not exist. */
  resolveRef(repo: RepoKey, ref: string): Promise<string | null>;
  /** `base...head` (branch names or SHAs). */
  compare(repo: RepoKey, base: string, head: string): Promise<CompareResult>;
  createRef(repo: RepoKey, ref: string, sha: string): Promise<void>;
  /** Moves a ref; without `force` it must be a fast-forward (else throw a StoreError 422). */
  updateRef?(repo: RepoKey, ref: string, sha: string, force: boolean): Promise<void>;
  deleteRef(repo: RepoKey, ref: string): Promise<void>;
  /**
   * Merges `head` into the branch `base` (branch names) with the method, moves `base` and returns the new
   * base SHA, or reports a conflict without changing anything.
   */
  mergeBranches(
    repo: RepoKey,
    base: string,
    head: string,
    method: MergeMethod,
    message: string,
  ): Promise<MergeOutcome>;
  /**
   * A commit on top of the branch `onto` that undoes `commit` (a merge commit against its first parent); no
   * ref moves. Absent: reverts are not available (GraphQL `revertPullRequest` refuses).
   */
  revertCommit?(
    repo: RepoKey,
    onto: string,
    commit: string,
    message: string,
    author: { name: string; email: string },
  ): Promise<{ sha: string } | { conflict: true; message?: string }>;
  /** Whether `head` merges cleanly into `base` (no change). Assumed true when absent. */
  canMerge?(repo: RepoKey, base: string, head: string): Promise<boolean>;
  /** A file's content at a ref; null when the path does not exist (or is a directory). */
  readFile?(repo: RepoKey, ref: string, path: string): Promise<Buffer | null>;
  /** Entries of a directory at a ref; null when not a directory. */
  listDirectory?(
    repo: RepoKey,
    ref: string,
    path: string,
  ): Promise<Array<{ name: string; path: string; type: "file" | "dir"; sha: string; size: number }> | null>;
  getCommit?(repo: RepoKey, sha: string): Promise<CommitInfo | null>;
  /** The Git Database API's writes and GitHub's signatures (sandbox/emulator/git/git-database-writes.ts). */
  database?: GitDatabase;
  /** Every tree entry below a commit or tree (a SHA or a ref) with its git mode; null when there is none. */
  treeEntries?(repo: RepoKey, ref: string): Promise<TreeEntry[] | null>;
}

/** One entry of a git tree listing (`GET /repos/{owner}/{repo}/git/trees/{tree_sha}`). */
export interface TreeEntry {
  path: string;
  /** `100644`, `100755`, `120000` (symlink), `160000` (submodule), `040000` (tree). */
  mode: string;
  type: "blob" | "tree" | "commit";
  sha: string;
  size?: number;
}

/** One entry of a tree written through the Git Database API (`POST /repos/{owner}/{repo}/git/trees`). */
export interface DatabaseTreeEntry {
  path: string;
  mode: string;
  type: "blob" | "tree" | "commit";
  sha?: string | null;
  content?: string;
}

/** Blobs, trees and commits written as GitHub's Git Database API writes them; which commits GitHub signed. */
export interface GitDatabase {
  blob(repo: RepoKey, bytes: Buffer): Promise<string>;
  tree(repo: RepoKey, base: string | null, entries: readonly DatabaseTreeEntry[]): Promise<string>;
  commit(
    repo: RepoKey,
    input: {
      message: string;
      tree: string;
      parents: readonly string[];
      author: { name: string; email: string };
    },
    signed: boolean,
  ): Promise<string>;
  verified(repo: RepoKey, sha: string): Promise<boolean>;
  /** The commits `sha` brings onto a branch at `since` (null: a new branch) that GitHub did not sign. */
  unverified(repo: RepoKey, sha: string, since: string | null): Promise<string[]>;
}
