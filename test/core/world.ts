/**
 * Builders for world snapshots, and a tiny GitHub stand-in that applies a reconcile's effects to a snapshot,
 * so tests can decide, "execute", and decide again on the world the effects produced.
 */
import { DEFAULT_CONFIG, type AutopilotConfig } from "../../src/core/config/index.js";
import { type DashboardState, type DashboardView, parseDashboard } from "../../src/core/dashboard/index.js";
import type { Effect } from "../../src/core/effects.js";
import { type Decision, decide, type DecideInput } from "../../src/core/reconcile/decide.js";
import type {
  CheckNode,
  CommentNode,
  IssueNode,
  Permission,
  PullNode,
  ReviewNode,
  RunNode,
  WorldSnapshot,
} from "../../src/core/world.js";
import type { WorkerResult } from "../../src/core/tasks/worker-result.js";

export const BOT = "autopilot[bot]";
export const T0 = new Date("2026-11-22T10:00:00Z");

export function minutes(n: number, from: Date = T0): Date {
  return new Date(from.getTime() + n * 60_000);
}

export function config(overrides: Partial<AutopilotConfig> = {}): AutopilotConfig {
  return { ...structuredClone(DEFAULT_CONFIG), ...overrides } as AutopilotConfig;
}

export const PERMISSIONS: Record<string, Permission> = {
  maintainer: "admin",
  dev: "write",
  lead: "maintain",
  triager: "triage",
  reader: "read",
  outsider: "none",
  [BOT]: "write",
};

export function issue(number: number, extra: Partial<IssueNode> = {}): IssueNode {
  return {
    number,
    title: `Task ${number}`,
    body: "",
    state: "open",
    labels: ["autopilot:ready"],
    createdAt: new Date(T0.getTime() - (1000 - number) * 60_000).toISOString(),
    author: "maintainer",
    readyLabeledBy: "maintainer",
    ...extra,
  };
}

export function world(extra: Partial<WorldSnapshot> = {}): WorldSnapshot {
  return {
    repo: { owner: "acme", name: "app", defaultBranch: "main" },
    botLogin: BOT,
    issues: [],
    pulls: [],
    runs: [],
    comments: [],
    workerResults: [],
    permissions: { ...PERMISSIONS },
    trackingIssue: null,
    configText: null,
    ...extra,
  };
}

export function result(issueNumber: number, extra: Partial<WorkerResult> = {}): WorkerResult {
  return {
    version: 1,
    issue: issueNumber,
    attempt: 1,
    dispatchId: `${issueNumber}-1-seed`,
    status: "finished",
    result: "complete",
    iterations: 3,
    maxIterations: 25,
    commits: 3,
    branch: `autopilot/issue-${issueNumber}`,
    prNumber: 100 + issueNumber,
    tokens: { input: 1000, output: 500 },
    costUsd: 0.05,
    humanGate: { fired: false, rules: [] },
    startedAt: T0.toISOString(),
    updatedAt: minutes(20).toISOString(),
    ...extra,
  };
}

export function run(id: number, issueNumber: number, extra: Partial<RunNode> = {}): RunNode {
  return {
    id,
    workflow: "autopilot-worker.yml",
    displayTitle: `Autopilot #${issueNumber} (${issueNumber}-1-seed)`,
    status: "in_progress",
    conclusion: null,
    createdAt: T0.toISOString(),
    updatedAt: T0.toISOString(),
    dispatchId: `${issueNumber}-1-seed`,
    issue: issueNumber,
    attempt: 1,
    ...extra,
  };
}

export function check(name: string, conclusion: string | null, extra: Partial<CheckNode> = {}): CheckNode {
  return {
    name,
    status: conclusion === null ? "in_progress" : "completed",
    conclusion,
    app: "github-actions",
    ...extra,
  };
}

export function review(
  author: string,
  state: ReviewNode["state"],
  commitSha: string,
  extra: Partial<ReviewNode> = {},
): ReviewNode {
  return { author, state, submittedAt: minutes(30).toISOString(), commitSha, body: "", ...extra };
}

export function pull(issueNumber: number, extra: Partial<PullNode> = {}): PullNode {
  return {
    number: 100 + issueNumber,
    title: `Task ${issueNumber} (#${issueNumber})`,
    body: `Closes #${issueNumber}\n\n<!-- autopilot:pr issue=${issueNumber} -->`,
    headRef: `autopilot/issue-${issueNumber}`,
    headSha: `sha${issueNumber}a`,
    baseRef: "main",
    state: "open",
    mergeable: "MERGEABLE",
    labels: ["autopilot:review"],
    createdAt: minutes(20).toISOString(),
    lastPushAt: minutes(20).toISOString(),
    checks: [check("test", "success")],
    reviews: [],
    ...extra,
  };
}

export function comment(
  id: number,
  issueNumber: number,
  author: string,
  body: string,
  extra: Partial<CommentNode> = {},
): CommentNode {
  return { id, issue: issueNumber, author, body, createdAt: minutes(1).toISOString(), ...extra };
}

/** A decide input with defaults. */
export function input(snapshot: WorldSnapshot, extra: Partial<DecideInput> = {}): DecideInput {
  return {
    snapshot,
    state: snapshot.trackingIssue ? parseDashboard(snapshot.trackingIssue.body).state : null,
    config: config(),
    now: T0,
    dispatchIdSeed: "seed",
    ...extra,
  };
}

export function types(effects: readonly Effect[]): string[] {
  return effects.map((e) => e.type);
}

export function only<T extends Effect["type"]>(
  effects: readonly Effect[],
  type: T,
): Extract<Effect, { type: T }>[] {
  return effects.filter((e): e is Extract<Effect, { type: T }> => e.type === type);
}

let nextRunId = 9000;

/**
 * Applies effects to a copy of the snapshot as GitHub would (labels, comments, closes, merges, dispatches as
 * queued runs, cancels, the tracking issue). Comments Autopilot writes are not added to `comments` (they are
 * the bot's), but reactions mark the comment acknowledged.
 */
export function applyEffects(snapshot: WorldSnapshot, effects: readonly Effect[], now: Date): WorldSnapshot {
  const next = structuredClone(snapshot);
  const issueOf = (n: number) => next.issues.find((i) => i.number === n);
  let created: number | null = null;
  for (const e of effects) {
    switch (e.type) {
      case "setStateLabel": {
        const i = issueOf(e.issue);
        if (!i) break;
        i.labels = i.labels.filter((l) => !e.remove.includes(l));
        if (e.add && !i.labels.includes(e.add)) {
          i.labels.push(e.add);
          if (e.add === "autopilot:ready") i.readyLabeledBy = next.botLogin;
        }
        break;
      }
      case "addLabels": {
        const i = issueOf(e.issue);
        if (i) for (const l of e.labels) if (!i.labels.includes(l)) i.labels.push(l);
        break;
      }
      case "removeLabels": {
        const i = issueOf(e.issue);
        if (i) i.labels = i.labels.filter((l) => !e.labels.includes(l));
        break;
      }
      case "react": {
        const c = next.comments.find((x) => x.id === e.commentId);
        if (c) c.acknowledged = true;
        break;
      }
      case "comment":
        break;
      case "dispatchWorker":
        next.runs.push({
          id: nextRunId++,
          workflow: "autopilot-worker.yml",
          displayTitle: `Autopilot #${e.issue} (${e.dispatchId})`,
          status: "queued",
          conclusion: null,
          createdAt: now.toISOString(),
          updatedAt: now.toISOString(),
          dispatchId: e.dispatchId,
          issue: e.issue,
          attempt: e.attempt,
        });
        break;
      case "cancelRun": {
        const r = next.runs.find((x) => x.id === e.runId);
        if (r) {
          r.status = "completed";
          r.conclusion = "cancelled";
        }
        break;
      }
      case "mergePr": {
        const p = next.pulls.find((x) => x.number === e.pr);
        if (p && p.headSha === e.expectedHeadSha) {
          p.state = "merged";
          const i = issueOf(e.issue);
          if (i) {
            i.state = "closed";
            i.stateReason = "completed";
          }
        }
        break;
      }
      case "closeIssue": {
        const i = issueOf(e.issue);
        if (i) {
          i.state = "closed";
          i.stateReason = e.reason;
        }
        break;
      }
      case "deleteBranch":
      case "releaseDispatchLocks":
        break;
      case "closePull": {
        const p = next.pulls.find((x) => x.number === e.pr);
        if (p && p.state === "open") p.state = "closed";
        break;
      }
      case "promoteCandidate": {
        const from = next.pulls.find((x) => x.headSha === e.sha);
        next.pulls.push({
          ...(from ?? pull(e.issue)),
          number: Math.max(100, ...next.pulls.map((x) => x.number)) + 1,
          title: e.title,
          body: e.body,
          headRef: e.branch,
          headSha: e.sha,
          baseRef: e.base,
          state: "open",
          createdAt: now.toISOString(),
          ...(next.botId !== undefined ? { authorId: next.botId } : {}),
        });
        break;
      }
      case "writeTrackingIssue":
        if (e.issue === null) {
          created = 1;
          next.trackingIssue = {
            number: 1,
            body: e.body,
            updatedAt: now.toISOString(),
            state: "open",
            pinned: false,
            lastEditedBy: next.botLogin,
          };
        } else if (next.trackingIssue) {
          next.trackingIssue = {
            ...next.trackingIssue,
            body: e.body,
            updatedAt: now.toISOString(),
            lastEditedBy: next.botLogin,
          };
        }
        break;
      case "pinIssue":
        if (
          next.trackingIssue &&
          (e.issue === next.trackingIssue.number || (e.issue === 0 && created !== null))
        ) {
          next.trackingIssue.pinned = true;
        }
        break;
    }
  }
  // Comments already seen by a reconcile stay in the list (the gateway lists since the cursor; state dedupes).
  return next;
}

/** Decide, apply, and return the next world and state. */
export function step(
  snapshot: WorldSnapshot,
  state: DashboardState | null,
  extra: Partial<DecideInput> = {},
) {
  const now = extra.now ?? T0;
  const decision = decide({ ...input(snapshot, extra), state, now });
  const after = applyEffects(snapshot, decision.effects, now);
  return { decision, world: after, state: decision.state };
}

/** The state as the next reconcile would read it back from the written tracking issue. */
export function readBack(decision: Decision, previous: WorldSnapshot): DashboardState | null {
  const write = only(decision.effects, "writeTrackingIssue")[0];
  if (!write) return previous.trackingIssue ? parseDashboard(previous.trackingIssue.body).state : null;
  return parseDashboard(write.body).state;
}

/** A dashboard view of a repository with no tasks (a render needs one beside the state). */
export function emptyView(): DashboardView {
  return {
    repo: { owner: "acme", name: "app" },
    dryRun: false,
    maxParallel: 1,
    maxIterations: 25,
    slots: [],
    queue: [],
    waiting: [],
    review: [],
    needsHuman: [],
    blocked: [],
    timeouts: [],
    failed: [],
    notInPool: [],
    cycles: [],
    graph: { nodes: [], edges: [] },
    statistics: {
      runtimeMs: 0,
      tasks: {
        total: 0,
        completed: 0,
        failed: 0,
        blocked: 0,
        timeout: 0,
        needsHuman: 0,
        skipped: 0,
        remaining: 0,
        ready: 0,
        inProgress: 0,
        review: 0,
      },
      iterations: { total: 0, average: 0, fastest: null, slowest: null },
      merges: { successful: 0, pending: 0, conflictsResolved: 0 },
      tokens: { input: 0, output: 0, total: 0 },
      costUsd: 0,
    },
    progress: { done: 0, total: 0 },
    configProblems: null,
  };
}
