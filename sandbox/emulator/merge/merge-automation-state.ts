/**
 * What GitHub keeps about its own merge mechanisms, beside the store: the repository setting "Allow auto-merge",
 * each pull request's auto-merge request, and each base branch's merge queue. The engine that acts on them is
 * sandbox/emulator/merge/merge-automation.ts; the GraphQL and REST layers read them from here.
 */
import type { MergeMethod, SandboxStore } from "../store.js";

/** Repositories are keyed in lower case, as GitHub matches their names. */
function repoKey(repo: string): string {
  return repo.toLowerCase();
}

/** An enabled auto-merge (GraphQL `AutoMergeRequest`, REST `auto_merge`). */
export interface AutoMergeRequest {
  enabledAt: Date;
  enabledBy: string;
  method: MergeMethod;
  commitHeadline: string | null;
  commitBody: string | null;
  authorEmail: string | null;
}

/** The merge group GitHub builds for the entry at the front of a queue. */
export interface MergeGroup {
  /** `gh-readonly-queue/{base}/pr-{number}-{head sha}` (branch name, without `refs/heads/`). */
  branch: string;
  sha: string;
  /** The base commit the group was built on. */
  baseSha: string;
  /** When GitHub stops waiting for the required checks (store clock, ms). */
  deadline: number;
}

/** One pull request in a merge queue (GraphQL `MergeQueueEntry`). */
export interface MergeQueueEntry {
  id: string;
  repo: string;
  base: string;
  pull: number;
  enqueuedAt: Date;
  enqueuer: string;
  jump: boolean;
  /** The pull request's head when it entered the queue. */
  headSha: string;
  state: "QUEUED" | "AWAITING_CHECKS";
  group: MergeGroup | null;
}

interface MergeAutomationState {
  autoMergeAllowed: Set<string>;
  /** `owner/repo#number` (lower-case repository) → request. */
  requests: Map<string, AutoMergeRequest>;
  /** `owner/repo#base` (lower-case repository) → entries, front first. */
  queues: Map<string, MergeQueueEntry[]>;
  nextEntry: number;
}

const states = new WeakMap<SandboxStore, MergeAutomationState>();

export function mergeAutomationStateOf(store: SandboxStore): MergeAutomationState {
  let state = states.get(store);
  if (!state) {
    state = { autoMergeAllowed: new Set(), requests: new Map(), queues: new Map(), nextEntry: 1 };
    states.set(store, state);
  }
  return state;
}

export function pullKey(repo: string, number: number): string {
  return `${repoKey(repo)}#${number}`;
}

export function queueKey(repo: string, base: string): string {
  return `${repoKey(repo)}#${base}`;
}

/**
 * "Allow auto-merge" (REST `allow_auto_merge`, GraphQL `autoMergeAllowed`): off unless a repository admin
 * turns it on. https://docs.github.com/repositories/configuring-branches-and-merges-in-your-repository/configuring-pull-request-merges/managing-auto-merge-for-pull-requests-in-your-repository
 */
export function isAutoMergeAllowed(store: SandboxStore, repo: string): boolean {
  return mergeAutomationStateOf(store).autoMergeAllowed.has(repoKey(repo));
}

export function setAutoMergeAllowed(store: SandboxStore, repo: string, allowed: boolean): void {
  const set = mergeAutomationStateOf(store).autoMergeAllowed;
  if (allowed) set.add(repoKey(repo));
  else set.delete(repoKey(repo));
}

export function autoMergeRequestOf(
  store: SandboxStore,
  repo: string,
  number: number,
): AutoMergeRequest | null {
  return mergeAutomationStateOf(store).requests.get(pullKey(repo, number)) ?? null;
}

/** A pull request's merge queue entry and its 1-based position, or null when it is not queued. */
export function queueEntryOf(
  store: SandboxStore,
  repo: string,
  number: number,
): { entry: MergeQueueEntry; position: number } | null {
  for (const entries of mergeAutomationStateOf(store).queues.values()) {
    const index = entries.findIndex((e) => e.repo.toLowerCase() === repo.toLowerCase() && e.pull === number);
    if (index >= 0) return { entry: entries[index]!, position: index + 1 };
  }
  return null;
}
