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
}

export interface PushRecord {
  ref: string;
  before: string;
  after: string;
  created: boolean;
  deleted: boolean;
  forced: boolean;
  pusher: string;
  commits: PushCommit[];
  at: Date;
}
