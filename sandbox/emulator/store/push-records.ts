/** Pushes: what the git remote reports after a ref moved, and what the store keeps of it. */
import type { RepoRef } from "./repo-records.js";

export interface PushCommit {
  id: string;
  message: string;
  timestamp: string;
  author: { name: string; email: string; username?: string };
  added?: string[];
  removed?: string[];
  modified?: string[];
}

/** What {@link SandboxStore.recordPush} receives from the git remote after a ref moved. */
export interface PushInput {
  repo: RepoRef;
  /** Full ref, `refs/heads/x`. */
  ref: string;
  /** Previous SHA, or 40 zeros when created. */
  before: string;
  /** New SHA, or 40 zeros when deleted. */
  after: string;
  /** Login of the pusher (from the token). */
  pusher: string;
  forced?: boolean;
  commits?: PushCommit[];
  /** A pull request's merge moved the ref (by the merge button or API, or by a merge queue). */
  merge?: "pr_merge" | "merge_queue_merge";
}

export interface PushRecord {
  /** Its number in the repository's record, from 1: what "List repository activities" answers as `id`. */
  id: number;
  ref: string;
  before: string;
  after: string;
  created: boolean;
  deleted: boolean;
  forced: boolean;
  pusher: string;
  commits: PushCommit[];
  at: Date;
  merge?: "pr_merge" | "merge_queue_merge";
}
