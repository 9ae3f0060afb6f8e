/** The view: what reconcile derived from the snapshot for people, rendered by dashboard-markdown.ts. */
import type { SessionStatistics } from "../session/stats.js";
import type { WaitingCode } from "../tasks/ready-tasks.js";
import type { TaskStatus } from "../tasks/task.js";

export interface TaskLine {
  issue: number;
  title: string;
}

export interface SlotLine extends TaskLine {
  attempt: number;
  iteration: number | null;
  maxIterations: number | null;
  startedAt: string | null;
  runId: number | null;
  runUrl: string | null;
  phase: "dispatched" | "queued" | "running" | "cancelling";
  /** The job is a candidate of a best-of round: which, of how many, and its agent. */
  candidate?: string | null;
  /** The agent the worker reports using (its result marker: src/core/tasks/worker-result.ts), and why it is not the primary. */
  agent?: string | null;
  fallback?: string | null;
}

export interface QueueLine extends TaskLine {
  score: number;
  why: string;
}

export interface ReasonLine extends TaskLine {
  reason: string;
  /** When the task entered this list, when known. */
  since?: string | null;
  pr?: number | null;
  /**
   * For a task under Waiting: what it waits for, as readyTasks (src/core/tasks/graph.ts) codes it, or `time`
   * (a backoff or a limit's reset).
   */
  code?: WaitingCode | "time";
}

/**
 * What the session waits for a person to say: `/autopilot start` (ready work, no session running:
 * `session.autoStart: false` or a stopped session), or `/autopilot run #N` (`mode: semi-auto`), with the task
 * it would pick next (the head of the queue), and whether a slot is free for it.
 */
export type AwaitedCommand =
  | { command: "start"; ready: number; why: string }
  | { command: "run"; next: QueueLine | null; freeSlots: number };

export interface DashboardView {
  repo: { owner: string; name: string };
  dryRun: boolean;
  maxParallel: number;
  maxIterations: number;
  slots: SlotLine[];
  /** Ranked, best first. */
  queue: QueueLine[];
  /** Set when nothing starts until a person gives a command. */
  awaiting?: AwaitedCommand;
  /** In the pool but not ready: dependencies, cycles, waits. */
  waiting: ReasonLine[];
  review: ReasonLine[];
  needsHuman: ReasonLine[];
  blocked: ReasonLine[];
  timeouts: ReasonLine[];
  failed: ReasonLine[];
  /** Labeled ready by someone without write access: not in the pool. */
  notInPool: ReasonLine[];
  /** Epics (src/core/reconcile/epic-pooling.ts): parents whose ready label pooled their sub-issues, with their progress. */
  epics?: ReasonLine[];
  cycles: number[][];
  graph: { nodes: { issue: number; status: TaskStatus | "waiting" }[]; edges: [number, number][] };
  statistics: SessionStatistics;
  progress: { done: number; total: number };
  /** Markdown from `renderConfigError`, when the config file is bad. */
  configProblems: string | null;
  /**
   * While the file is bad: the commit of the last good configuration still in force, or `held` when there is
   * none (nothing is dispatched or merged until the file is fixed).
   */
  configFallback?: { held: true } | { held: false; commit: string | null };
  /** Since when GitHub's secondary rate limit has been holding Autopilot's writes back (they wait, then go out). */
  githubLimitSince?: Date;
  /** Set with `isolation: uid` or `none` (weaker than the default): the dashboard says what the agent can reach. */
  weakIsolation?: "uid" | "none";
  /** True with `network: open`: the dashboard says the agent's network is not allow-listed. */
  openNetwork?: boolean;
  /**
   * The session-budget marker workers read (src/core/session/session-budget.ts), and notes on budgets that cannot
   * apply (an agent whose cost is unknown cannot be held to a USD budget).
   */
  budget?: { marker: string | null; notes: string[] };
}
