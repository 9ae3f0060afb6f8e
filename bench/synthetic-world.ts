import { type AutopilotConfig, DEFAULT_CONFIG } from "../src/core/config/index.js";
import {
  type DashboardState,
  type DashboardView,
  emptyState,
  type HistoryEntry,
  newTaskRecord,
  parseDashboard,
  type ReasonLine,
  renderStateBlock,
  TRACKING_MARKER,
  type TaskRecord,
} from "../src/core/dashboard/index.js";
import { buildTaskGraph } from "../src/core/tasks/graph.js";
import { readyTasks } from "../src/core/tasks/ready-tasks.js";
import { type DecideInput, decide } from "../src/core/reconcile/decide.js";
import { formatScoreParts, rankTasks } from "../src/core/tasks/scoring.js";
import type {
  CheckNode,
  CommentNode,
  IssueNode,
  Permission,
  PullNode,
  RunNode,
  WorldSnapshot,
} from "../src/core/world.js";
import { computeStatistics, type TaskRecordLike } from "../src/core/session/stats.js";
import { type TaskStatus, taskStatusFromLabels } from "../src/core/tasks/task.js";
import type { WorkerOutcome, WorkerResult } from "../src/core/tasks/worker-result.js";
import { seededRandom } from "../sandbox/emulator/server/faults.js";

// ---------------------------------------------------------------------------------------------------------
// A synthetic world

export const BOT = "autopilot[bot]";
export const NOW = new Date("2026-11-22T12:00:00Z");
const OWNER = "acme";
const NAME = "monolith";

const SUBJECTS = [
  "payment reconciliation pipeline",
  "order history export",
  "search index rebuild",
  "multi-currency invoice renderer",
  "webhook retry scheduler",
  "customer notification preferences",
  "inventory sync with the warehouse API",
  "OAuth device-flow login",
  "audit log retention job",
  "feature-flag evaluation cache",
];
const VERBS = ["Refactor", "Add tests for", "Fix flaky behaviour in", "Document", "Speed up", "Harden"];
const BLOCKERS = [
  "there are no staging credentials for the payment provider: please add PAYMENTS_SANDBOX_KEY to the repository secrets so the integration tests can run against the provider's sandbox",
  "the change needs a schema migration on the production database, which the contributing guide says must be approved by the data team before any code depends on it",
  "the upstream library pins an incompatible major version of the HTTP client; upgrading it first is a separate task with its own review",
];
const QUESTIONS = [
  "Should partial refunds be recorded against the original order line, or as a separate negative line item? Both appear in the codebase and the tests disagree.",
  "The issue asks for a 30-day retention, but the compliance note in docs/ says 90 days. Which one applies to audit logs of deleted accounts?",
];

function title(n: number, rand: () => number): string {
  const verb = VERBS[Math.floor(rand() * VERBS.length)]!;
  const subject = SUBJECTS[Math.floor(rand() * SUBJECTS.length)]!;
  // Long titles: people write whole sentences.
  return `${verb} the ${subject} so that the edge cases reported by support in the last quarter are covered (part ${n})`;
}

function iso(minutesBefore: number): string {
  return new Date(NOW.getTime() - minutesBefore * 60_000).toISOString();
}

export interface WorldOptions {
  /** Open task issues. */
  open: number;
  /** Tasks finished in earlier reconciles (history counters; the last few still pending in the state). */
  done?: number;
  /** Workers running now, and still running after this reconcile. */
  live?: number;
  /** Two-issue dependency cycles among the ready tasks. */
  cycles?: number;
  /**
   * Things that happened since the last reconcile (default true): 20 PRs merged (their issues closed), two
   * workers finished (one PR opened, one blocked; their slots go to the next tasks), checks passed on two
   * PRs in review and failed on one, a person answered a needs-human question, a `/autopilot status`
   * command. Without events the world is at rest: deciding on it (once settled) has nothing to do.
   */
  events?: boolean;
  seed?: number;
}

export interface World {
  snapshot: WorldSnapshot;
  state: DashboardState;
  config: AutopilotConfig;
  now: Date;
  /** Open issues per status. */
  counts: Record<string, number>;
}

type Kind = Exclude<TaskStatus, "done" | "skipped"> | "not-in-pool";

const MIX: [Kind, number][] = [
  ["review", 0.03],
  ["blocked", 0.08],
  ["needs-human", 0.05],
  ["timeout", 0.03],
  ["failed", 0.04],
  ["not-in-pool", 0.01],
];

const OUTCOME: Partial<Record<Kind, WorkerOutcome>> = {
  blocked: "blocked",
  "needs-human": "needs_human",
  timeout: "timeout",
  failed: "failed",
  review: "complete",
};

/** PRs merged since the last reconcile, in a world with events. */
export const MERGED_NOW = 20;

/**
 * A repository as the previous reconcile left it (the state is what it wrote). Open issues are mostly ready
 * (in dependency chains of four, one link in five a native blocked-by relation, some critical or quick wins),
 * the rest spread over review (PRs whose checks are running, or waiting for a human-gate approval), blocked,
 * needs-human, timeout and failed with reasons; `live` workers run; `cycles` pairs of ready issues wait on
 * each other. See `events` for what happened since.
 */
export function syntheticWorld(options: WorldOptions): World {
  const rand = seededRandom(options.seed ?? 42);
  const live = options.live ?? 4;
  const events = options.events ?? true;
  const done = options.done ?? 0;
  const closedNow = events ? MERGED_NOW : 0;
  const finishing = events ? 2 : 0;
  const cycles = options.cycles ?? Math.max(1, Math.floor(options.open / 500));
  const L = DEFAULT_CONFIG.labels;
  const config: AutopilotConfig = { ...structuredClone(DEFAULT_CONFIG), maxParallel: live + finishing };
  const state = emptyState(new Date(NOW.getTime() - 6 * 3600_000));
  state.revision = 40;
  state.session = {
    status: "running",
    since: iso(360),
    reason: "user_start",
    actor: "maintainer",
    startedAt: iso(360),
  };
  state.cursor = { id: 1_000_000, at: iso(30) };
  state.renderedAt = iso(5);

  const issues: IssueNode[] = [];
  const pulls: PullNode[] = [];
  const runs: RunNode[] = [];
  const results: WorkerResult[] = [];
  const comments: CommentNode[] = [];
  const counts: Record<string, number> = {};
  const first = done + 1; // earlier tasks have the lowest numbers
  const trackingNumber = first + options.open + closedNow;
  let runId = 50_000;
  let reviewSeen = 0;
  let answered = false;

  const record = (n: number, patch: Partial<TaskRecord>): TaskRecord => {
    const r: TaskRecord = {
      ...newTaskRecord(),
      attempt: 1,
      dispatchId: `${n}-1-old`,
      dispatchedAt: iso(120),
      startedAt: iso(120),
      handled: `${n}-1-old`,
      iterations: 3 + Math.floor(rand() * 10),
      tokensIn: 20_000 + Math.floor(rand() * 200_000),
      tokensOut: 5_000 + Math.floor(rand() * 40_000),
      costUsd: Math.round(rand() * 300) / 100,
      ...patch,
    };
    state.tasks[String(n)] = r;
    return r;
  };
  const result = (n: number, patch: Partial<WorkerResult>): void => {
    results.push({
      version: 1,
      issue: n,
      attempt: 1,
      dispatchId: `${n}-1-old`,
      status: "finished",
      iterations: 5,
      maxIterations: config.maxIterations,
      commits: 4,
      branch: `${config.branchPrefix}issue-${n}`,
      tokens: { input: 50_000, output: 10_000 },
      costUsd: 0.8,
      humanGate: { fired: false, rules: [] },
      startedAt: iso(120),
      updatedAt: iso(90),
      ...patch,
    });
  };
  const pull = (n: number, issueTitle: string, sha: string, extra: Partial<PullNode>): PullNode => {
    const pr: PullNode = {
      number: 100_000 + n,
      title: `${issueTitle} (#${n})`,
      body: `Closes #${n}\n\nSummary of the change.\n\n<!-- autopilot:pr issue=${n} -->`,
      headRef: `${config.branchPrefix}issue-${n}`,
      headSha: sha,
      baseRef: "main",
      state: "open",
      mergeable: "MERGEABLE",
      labels: [L.review],
      createdAt: iso(60),
      lastPushAt: iso(60),
      checks: [],
      reviews: [],
      ...extra,
    };
    pulls.push(pr);
    return pr;
  };
  const check = (name: string, conclusion: string | null): CheckNode => ({
    name,
    status: conclusion === null ? "in_progress" : "completed",
    conclusion,
    app: "github-actions",
    summary: conclusion === "failure" ? "2 tests failed: checkout › applies the discount before tax" : null,
  });

  // Open issues.
  const cycleMembers: number[] = [];
  for (let k = 0; k < options.open; k++) {
    const n = first + k;
    let kind: Kind = "ready";
    if (k < live + finishing) kind = "in-progress";
    else {
      let x = rand();
      for (const [candidate, share] of MIX) {
        if (x < share) {
          kind = candidate;
          break;
        }
        x -= share;
      }
    }
    counts[kind] = (counts[kind] ?? 0) + 1;
    const labels: string[] = [];
    if (n % 17 === 0) labels.push(L.critical);
    if (n % 11 === 0) labels.push(L.quickWin);
    const issue: IssueNode = {
      number: n,
      title: title(n, rand),
      body: `As discussed in the planning thread, this needs to land before the release.\n\n${"Context: the current implementation predates the v2 API. ".repeat(3)}`,
      state: "open",
      labels,
      createdAt: iso(10_000 - (k % 9_000)),
      author: "maintainer",
      readyLabeledBy: "maintainer",
    };
    // Chains of four: each issue waits on the one before it (one in five through a native relation).
    if (k % 4 !== 0 && k > 0) {
      if (k % 5 === 0) issue.blockedBy = [n - 1];
      else issue.body += `\n\nDepends on #${n - 1}`;
    }
    issues.push(issue);

    switch (kind) {
      case "ready":
        labels.push(L.ready);
        if (k % 9 === 0) record(n, { retries: 1, result: "crash", reason: "the worker run ended (failure)" });
        else if (k % 4 === 0 && k > 8 && cycleMembers.length < cycles * 2) cycleMembers.push(n);
        break;
      case "not-in-pool":
        labels.push(L.ready);
        issue.readyLabeledBy = "drive-by";
        break;
      case "in-progress": {
        labels.push(L.inProgress);
        const running = k < live;
        const dispatchId = `${n}-1-${running ? "live" : "ended"}`;
        record(n, { dispatchId, dispatchedAt: iso(20), handled: undefined, runId: runId + 1 });
        runs.push({
          id: ++runId,
          workflow: config.workerWorkflow,
          displayTitle: `Autopilot #${n} (${dispatchId})`,
          status: running ? "in_progress" : "completed",
          conclusion: running ? null : "success",
          createdAt: iso(20),
          updatedAt: iso(running ? 2 : 1),
          dispatchId,
          issue: n,
          attempt: 1,
          url: `https://github.com/${OWNER}/${NAME}/actions/runs/${runId}`,
        });
        if (running) {
          result(n, { dispatchId, status: "running", iterations: 2, startedAt: iso(19), updatedAt: iso(3) });
        } else if (k === live) {
          // Finished with a PR.
          const sha = `${n.toString(16).padStart(7, "0")}fedcba`;
          result(n, {
            dispatchId,
            result: "complete",
            prNumber: 100_000 + n,
            headSha: sha,
            updatedAt: iso(1),
          });
          pull(n, issue.title, sha, { checks: [check("test", null)] });
        } else {
          result(n, { dispatchId, result: "blocked", reason: BLOCKERS[0], updatedAt: iso(1) });
        }
        break;
      }
      case "review": {
        labels.push(L.review);
        const sha = `${n.toString(16).padStart(7, "0")}abcdef`;
        // At rest: checks running, or a human-gate approval awaited (the explanation already posted).
        // Events: checks just passed on two PRs (merge) and failed on one (feedback to a worker).
        const event = events && reviewSeen < 3 ? (reviewSeen < 2 ? "success" : "failure") : null;
        const gated = !event && reviewSeen % 2 === 1;
        reviewSeen += 1;
        const pr = 100_000 + n;
        record(n, {
          pr,
          result: "complete",
          since: iso(60),
          ...(gated ? { gate: ["migrations/**"], notices: [`gate-${pr}`] } : {}),
        });
        result(n, { result: "complete", prNumber: pr, headSha: sha });
        pull(n, issue.title, sha, {
          body: `Closes #${n}\n\nSummary of the change.\n\n<!-- autopilot:pr issue=${n} -->${gated ? '\n<!-- autopilot:human-gate {"fired":true,"rules":["migrations/**"]} -->' : ""}`,
          checks: [check("test", event ?? (gated ? "success" : null)), check("lint", "success")],
        });
        break;
      }
      default: {
        const reason =
          kind === "needs-human"
            ? QUESTIONS[k % QUESTIONS.length]!
            : kind === "blocked"
              ? BLOCKERS[k % BLOCKERS.length]!
              : kind === "timeout"
                ? "reached maxIterations (25) without the completion signal; the branch is kept"
                : "the quality gate kept failing: npm test exits 1 (TypeError: Cannot read properties of undefined (reading 'currency')) after 3 attempts";
        labels.push(L[kind === "needs-human" ? "needsHuman" : kind]);
        record(n, { result: OUTCOME[kind], reason, since: iso(200) });
        result(n, { result: OUTCOME[kind], reason });
        if (kind === "needs-human" && events && !answered) {
          answered = true;
          comments.push({
            id: 1_000_002,
            issue: n,
            author: "reviewer",
            body: "Record partial refunds against the original order line.",
            createdAt: iso(1),
          });
        }
      }
    }
  }
  // Cycles: a waits on b and b waits on a.
  for (let i = 0; i + 1 < cycleMembers.length; i += 2) {
    const a = issues[cycleMembers[i]! - first]!;
    const b = issues[cycleMembers[i + 1]! - first]!;
    a.body += `\n\nDepends on #${b.number}`;
    b.body += `\n\nDepends on #${a.number}`;
  }

  // Tasks merged since the last reconcile: closed, PR merged, still in the state.
  for (let k = 0; k < closedNow; k++) {
    const n = first + options.open + k;
    const issueTitle = title(n, rand);
    issues.push({
      number: n,
      title: issueTitle,
      body: "",
      state: "closed",
      stateReason: "completed",
      labels: [],
      createdAt: iso(5_000),
      closedAt: iso(1),
      author: "maintainer",
    });
    record(n, { pr: 100_000 + n, result: "complete", merge: { sha: `m${n}`, at: iso(4) } });
    pull(n, issueTitle, `m${n}`, { state: "merged", mergeable: "UNKNOWN", lastPushAt: null });
  }

  // Earlier finished tasks: counters, and the last ones still waiting for their history comment.
  const h = state.history;
  h.completed = done;
  h.merges = done;
  h.completedIterations = done * 6;
  h.iterations = done * 6;
  h.tokensIn = done * 120_000;
  h.tokensOut = done * 25_000;
  h.costUsd = Math.round(done * 1.4 * 100) / 100;
  h.comments = Math.floor(done / 20);
  h.fastest = done > 0 ? { issue: 1, iterations: 1 } : null;
  h.slowest = done > 0 ? { issue: Math.max(1, done), iterations: 24 } : null;
  const pendingHistory: HistoryEntry[] = [];
  for (let n = done - (done % 20) + 1; n <= done; n++) {
    pendingHistory.push({
      issue: n,
      title: title(n, rand).slice(0, 80),
      outcome: "done",
      at: iso(30),
      iterations: 6,
      tokens: 145_000,
      costUsd: 1.4,
      attempts: 1,
      pr: 100_000 + n,
    });
  }
  state.pendingHistory = pendingHistory;
  state.processed = Array.from({ length: 120 }, (_, i) => 999_881 + i);

  if (events) {
    comments.push({
      id: 1_000_001,
      issue: trackingNumber,
      author: "maintainer",
      body: "/autopilot status",
      createdAt: iso(1),
    });
  }
  const permissions: Record<string, Permission> = {
    maintainer: "admin",
    reviewer: "write",
    "drive-by": "read",
    [BOT]: "write",
  };
  const snapshot: WorldSnapshot = {
    repo: { owner: OWNER, name: NAME, defaultBranch: "main" },
    botLogin: BOT,
    issues,
    pulls,
    runs,
    comments,
    workerResults: results,
    permissions,
    trackingIssue: {
      number: trackingNumber,
      body: `${TRACKING_MARKER}\n<!-- autopilot:session running -->\n${renderStateBlock(state)}\n`,
      updatedAt: iso(5),
      pinned: true,
      state: "open",
      lastEditedBy: BOT,
    },
    configText: null,
  };
  return { snapshot, state, config, now: NOW, counts };
}

/** The decide input of a world. */
export function decideInput(world: World): DecideInput {
  return {
    snapshot: world.snapshot,
    state: world.state,
    config: world.config,
    now: world.now,
    dispatchIdSeed: "bench",
  };
}

/**
 * The world one reconcile later, as the driver would see it: the tracking issue holds what that reconcile
 * wrote (or what it held, when nothing was written) and the state is read back from it.
 */
export function settle(world: World): { world: World; wrote: boolean } {
  const decision = decide(decideInput(world));
  const write = decision.effects.find((e) => e.type === "writeTrackingIssue");
  const tracking = world.snapshot.trackingIssue;
  const body = write?.type === "writeTrackingIssue" ? write.body : (tracking?.body ?? "");
  const snapshot: WorldSnapshot = {
    ...world.snapshot,
    comments: [],
    trackingIssue: tracking ? { ...tracking, body } : null,
  };
  const state = parseDashboard(body).state ?? decision.state;
  return { world: { ...world, snapshot, state }, wrote: write !== undefined };
}

/** Reconciles (without acting on any other effect) until the tracking issue is no longer rewritten. */
export function atRest(world: World, maxRounds = 5): World {
  let current = world;
  for (let i = 0; i < maxRounds; i++) {
    const next = settle(current);
    current = next.world;
    if (!next.wrote) break;
  }
  return current;
}

/**
 * A dashboard view of the world built from the same core functions the controller uses (graph, readiness,
 * scoring, statistics), for timing `renderDashboard` on its own.
 */
export function viewOf(world: World): DashboardView {
  const { snapshot, state, config, now } = world;
  const L = config.labels;
  const graph = buildTaskGraph(snapshot.issues, snapshot.repo);
  const { ready, waiting } = readyTasks(graph, {
    readyLabel: L.ready,
    excludeLabel: L.exclude,
    stateLabels: [L.inProgress, L.review, L.blocked, L.needsHuman, L.timeout, L.failed],
  });
  const inPool = ready.filter((t) => t.issue.readyLabeledBy === "maintainer");
  const notInPool: ReasonLine[] = ready
    .filter((t) => t.issue.readyLabeledBy !== "maintainer")
    .map((t) => ({
      issue: t.number,
      title: t.issue.title,
      reason: `the \`${L.ready}\` label was added by drive-by, who has no write access`,
    }));
  const ranked = rankTasks(inPool, { weights: config.scoring });
  const lines = (label: string): ReasonLine[] =>
    snapshot.issues
      .filter((i) => i.state === "open" && i.labels.includes(label))
      .map((i) => ({
        issue: i.number,
        title: i.title,
        reason: state.tasks[i.number]?.reason ?? "no reason given",
        since: state.tasks[i.number]?.since ?? null,
        pr: state.tasks[i.number]?.pr ?? null,
      }));
  const records: TaskRecordLike[] = snapshot.issues
    .filter((i) => i.state === "open")
    .map((i) => {
      const r = state.tasks[i.number];
      return {
        issue: i.number,
        status: statusOf(i, L),
        iterations: r?.iterations ?? 0,
        attempts: r?.attempt ?? 0,
        startedAt: r?.startedAt ?? null,
        tokens: r ? { input: r.tokensIn, output: r.tokensOut } : null,
        costUsd: r?.costUsd ?? 0,
      };
    });
  const statistics = computeStatistics(records, now, { sessionStartedAt: state.session.startedAt });
  const open = snapshot.issues.filter((i) => i.state === "open").length;
  return {
    repo: { owner: snapshot.repo.owner, name: snapshot.repo.name },
    dryRun: false,
    maxParallel: config.maxParallel,
    maxIterations: config.maxIterations,
    slots: snapshot.runs.map((run) => ({
      issue: run.issue ?? 0,
      title: snapshot.issues.find((i) => i.number === run.issue)?.title ?? "",
      attempt: 1,
      iteration: 2,
      maxIterations: config.maxIterations,
      startedAt: run.createdAt,
      runId: run.id,
      runUrl: run.url ?? null,
      phase: "running",
    })),
    queue: ranked.map((t) => ({
      issue: t.issue,
      title: t.title,
      score: t.total,
      why: formatScoreParts(t.parts),
    })),
    waiting: waiting
      .filter((w) => w.code !== "other_state")
      .map((w) => ({
        issue: w.number,
        title: graph.nodes.get(w.number)?.issue.title ?? "",
        reason: w.reason,
      })),
    review: lines(L.review),
    needsHuman: lines(L.needsHuman),
    blocked: lines(L.blocked),
    timeouts: lines(L.timeout),
    failed: lines(L.failed),
    notInPool,
    cycles: graph.cycles,
    graph: {
      nodes: [...graph.nodes.values()]
        .filter((n) => n.issue.state === "open")
        .slice(0, 250)
        .map((n) => ({ issue: n.number, status: statusOf(n.issue, L) })),
      edges: graph.edges.slice(0, 500).map((e) => [e.from, e.to] as [number, number]),
    },
    statistics,
    progress: { done: state.history.completed, total: state.history.completed + open },
    configProblems: null,
  };
}

function statusOf(issue: IssueNode, L: AutopilotConfig["labels"]): TaskStatus {
  return taskStatusFromLabels(issue, L) ?? "ready";
}
