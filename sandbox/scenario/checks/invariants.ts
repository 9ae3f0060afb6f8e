/**
 * End-of-run invariants of a sandbox scenario, checked after every run (faults or not) and written into the
 * report as `invariants: { lostCommits, doubleDispatches, stuckTasks, details[] }`. A run with any count above
 * zero fails. Pure: the runner gathers the facts (run records, pushes, reachable commits, task states) and
 * this module judges them, so the rules can be unit-tested with synthetic records.
 *
 * Definitions (decided here, for the fault scenarios in scenarios/faults-*.yml):
 *
 * - **Lost commit**: a commit that a push put on a task branch (`<branchPrefix>issue-N`) and that, at the end,
 *   is reachable from none of: the default branch, any existing branch, the head a pull request had when it
 *   was merged (a squash merge lands the content, not the commits). A commit dropped by a forced push is
 *   exempt only when `exemptForcePush` says that push was a deliberate rewrite by Autopilot itself; neither
 *   the worker (its push is never forced) nor the controller (it only deletes merged branches) force-pushes
 *   today, so the runner exempts nothing and any missing commit counts as lost. A commit deleted with its
 *   branch by the scenario App's own bot is exempt when `exemptDeletion` says a writer asked for that
 *   (`/autopilot rollback` or `cleanup`) after the commit was pushed, or the stale-branch sweep deleted a
 *   branch only that bot had pushed to.
 * - **Double dispatch**: two worker runs of the same task whose live periods (`startedAt` → `completedAt`, or
 *   the end of the run when still going) overlap; or two dispatches of the same task and attempt where the
 *   second was created before the first had completed (a queued duplicate behind the concurrency group). A
 *   dispatch of the same attempt after the previous run ended (the runner was lost) is a resume, not a double
 *   dispatch; it is listed in `details` as a note.
 * - **Unasked dispatch** (`mode: semi-auto` only): a dispatched attempt of a task (a resend of the same dispatch
 *   id is the same attempt) with fewer writers' `/autopilot run` of that task before it than attempts so far.
 * - **Stuck task**: at the end, a task labeled in-progress with no live (queued or running) worker run; or a
 *   task that is ready — put there by someone with write access, not excluded, every dependency done — while
 *   fewer runs than `maxParallel` are live, the session is not paused or stopped (or on its way there) and
 *   does not wait for a person's command by its configuration (`awaitsPerson`);
 *   or a task in review whose PR Autopilot could merge (open, checks green, nobody asking for changes, no
 *   human gate waiting) that nothing has happened to for `REVIEW_IDLE_SECONDS` at the end.
 */

import { issueOfTaskBranch } from "../../../src/core/contract.js";

export interface InvariantRun {
  id: number;
  issue: number | null;
  attempt: number | null;
  dispatchId: string | null;
  status: "queued" | "pending" | "in_progress" | "completed";
  conclusion: string | null;
  createdAt: Date;
  startedAt: Date | null;
  completedAt: Date | null;
}

export interface InvariantPush {
  /** Full ref, `refs/heads/autopilot/issue-3`. */
  ref: string;
  before: string;
  after: string;
  forced: boolean;
  pusher: string;
  /** Commits the push introduced (oldest first). */
  commits: string[];
  at: Date;
}

export interface InvariantTask {
  number: number;
  /** The report state (`done`, `ready`, `in-progress`, …). */
  state: string;
  /** Task numbers it waits for (dependsOn + blockedBy). */
  dependsOn: number[];
  /** Whoever made it ready may do so (write access); false: a ready label nobody entitled added. */
  readyByWriter: boolean;
  excluded: boolean;
  /**
   * For a task in review: whether its PR could be merged by Autopilot now (open, every check passed, no
   * change request outstanding, no human gate waiting for an approval), and how long nothing happened to it.
   */
  review?: { mergeable: boolean; idleSeconds: number };
}

export interface InvariantInput {
  runs: InvariantRun[];
  pushes: InvariantPush[];
  /** Every commit reachable from the anchors (default branch, every branch head, merged PR heads). */
  reachable: ReadonlySet<string>;
  tasks: InvariantTask[];
  maxParallel: number;
  /** The session status the dashboard shows at the end (`running`, `paused`, `stopped`, `completed`, …). */
  sessionStatus: string | null;
  /**
   * Nothing starts without a person's command, by the scenario's configuration and the session's state
   * (`awaitsPerson`): a ready task is the person's to start. Never read from rendered text, which an issue's
   * title can write into.
   */
  awaitingCommand?: boolean;
  /**
   * With `mode: semi-auto`: every writer's `/autopilot run` by the task it names, when it was given. Each
   * dispatched attempt of a task must follow a command of its own for that task.
   */
  runCommands?: { issue: number; at: Date }[];
  branchPrefix: string;
  /** The end of the run (live periods of unfinished runs end here). */
  now: Date;
  /** A forced push Autopilot made on purpose, whose dropped commits are superseded, not lost. */
  exemptForcePush?: (push: InvariantPush) => boolean;
  /**
   * A branch deletion whose commits were thrown away on purpose: a writer asked for it with
   * `/autopilot rollback` or `/autopilot cleanup` of that task after `commit` was pushed (a later push is not
   * what the writer saw and discarded) and before Autopilot deleted the branch; or the stale-branch sweep
   * deleted a branch only Autopilot pushed to.
   */
  exemptDeletion?: (deletion: InvariantPush, issue: number, commit: InvariantPush) => boolean;
}

export interface InvariantDetail {
  kind: "lost-commit" | "double-dispatch" | "unasked-dispatch" | "stuck-task" | "note";
  issue: number | null;
  message: string;
}

export interface InvariantReport {
  lostCommits: number;
  doubleDispatches: number;
  /** With `mode: semi-auto`: dispatched attempts no writer's `/autopilot run` of the task came before. */
  unaskedDispatches: number;
  stuckTasks: number;
  details: InvariantDetail[];
  /** What was looked at (so a zero is seen not to be vacuous): task-branch commits, worker runs, tasks. */
  checked: { commits: number; runs: number; tasks: number };
}

const LIVE = new Set(["queued", "pending", "in_progress"]);
const ZERO = "0".repeat(40);

/** A mergeable task left alone this long at the end of a run is stuck. */
const REVIEW_IDLE_SECONDS = 20;

function taskOfRef(ref: string, branchPrefix: string): number | null {
  if (!ref.startsWith("refs/heads/")) return null;
  const n = issueOfTaskBranch(branchPrefix, ref.slice("refs/heads/".length));
  return n !== null && n > 0 ? n : null;
}

export function checkInvariants(input: InvariantInput): InvariantReport {
  const details: InvariantDetail[] = [];

  // --- lost commits -----------------------------------------------------------------------------------------
  let lostCommits = 0;
  const seen = new Set<string>();
  for (const push of input.pushes) {
    const issue = taskOfRef(push.ref, input.branchPrefix);
    if (issue === null) continue;
    for (const sha of push.commits) {
      if (seen.has(sha)) continue;
      seen.add(sha);
      if (input.reachable.has(sha)) continue;
      const forcedAway = input.pushes.find(
        (p) => p.ref === push.ref && p.forced && p.at.getTime() >= push.at.getTime(),
      );
      const deleted = input.pushes.find(
        (p) => p.ref === push.ref && p.after === ZERO && p.at.getTime() >= push.at.getTime(),
      );
      if (deleted && input.exemptDeletion?.(deleted, issue, push)) {
        details.push({
          kind: "note",
          issue,
          message: `commit ${sha.slice(0, 7)} discarded with its branch by ${deleted.pusher}, as a writer asked (rollback or cleanup)`,
        });
        continue;
      }
      if (forcedAway && input.exemptForcePush?.(forcedAway)) {
        details.push({
          kind: "note",
          issue,
          message: `commit ${sha.slice(0, 7)} superseded by Autopilot's forced push ${forcedAway.before.slice(0, 7)} → ${forcedAway.after.slice(0, 7)}`,
        });
        continue;
      }
      lostCommits += 1;
      details.push({
        kind: "lost-commit",
        issue,
        message: `commit ${sha.slice(0, 7)} pushed to ${push.ref.replace("refs/heads/", "")} by ${push.pusher} is reachable from no branch and no merged pull request${forcedAway ? ` (a forced push by ${forcedAway.pusher} moved the branch ${forcedAway.before.slice(0, 7)} → ${forcedAway.after.slice(0, 7)})` : ""}`,
      });
    }
  }

  // --- double dispatches ------------------------------------------------------------------------------------
  let doubleDispatches = 0;
  const byIssue = new Map<number, InvariantRun[]>();
  for (const run of input.runs) {
    if (run.issue === null) continue;
    byIssue.set(run.issue, [...(byIssue.get(run.issue) ?? []), run]);
  }
  const end = (run: InvariantRun) => (run.completedAt ?? input.now).getTime();
  for (const [issue, runs] of byIssue) {
    const sorted = [...runs].sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || a.id - b.id);
    const counted = new Set<string>();
    for (let i = 0; i < sorted.length; i++) {
      for (let j = i + 1; j < sorted.length; j++) {
        const a = sorted[i]!;
        const b = sorted[j]!;
        const key = `${a.id}/${b.id}`;
        if (a.startedAt && b.startedAt) {
          const overlap = a.startedAt.getTime() < end(b) && b.startedAt.getTime() < end(a);
          if (overlap) {
            counted.add(key);
            doubleDispatches += 1;
            details.push({
              kind: "double-dispatch",
              issue,
              message: `worker runs ${a.id} and ${b.id} of #${issue} were live at the same time`,
            });
            continue;
          }
        }
        if (a.attempt !== null && a.attempt === b.attempt) {
          const aEnd = a.completedAt?.getTime() ?? Number.POSITIVE_INFINITY;
          if (b.createdAt.getTime() < aEnd) {
            counted.add(key);
            doubleDispatches += 1;
            details.push({
              kind: "double-dispatch",
              issue,
              message: `#${issue} attempt ${a.attempt} was dispatched twice (runs ${a.id} and ${b.id}) before the first ended`,
            });
          } else if (j === i + 1) {
            details.push({
              kind: "note",
              issue,
              message:
                `#${issue} attempt ${a.attempt} dispatched again (run ${b.id}) after run ${a.id} ended ${a.conclusion ?? ""}`.trim(),
            });
          }
        }
      }
    }
  }

  // --- dispatches nobody asked for (semi-auto) --------------------------------------------------------------
  let unaskedDispatches = 0;
  if (input.runCommands) {
    for (const [issue, runs] of byIssue) {
      // Each attempt once (a resend of the same dispatch is the same attempt), in the order they were created.
      const attempts = new Map<string, Date>();
      for (const run of [...runs].sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime()))
        if (!attempts.has(run.dispatchId ?? `run-${run.id}`))
          attempts.set(run.dispatchId ?? `run-${run.id}`, run.createdAt);
      let k = 0;
      for (const [id, at] of attempts) {
        k += 1;
        const asked = input.runCommands.filter(
          (c) => c.issue === issue && c.at.getTime() <= at.getTime(),
        ).length;
        if (asked >= k) continue;
        unaskedDispatches += 1;
        details.push({
          kind: "unasked-dispatch",
          issue,
          message: `#${issue} dispatch ${id} (attempt ${k} of the run) in semi-auto follows ${asked} writer's \`/autopilot run\` of it`,
        });
      }
    }
  }

  // --- stuck tasks ------------------------------------------------------------------------------------------
  let stuckTasks = 0;
  const liveRuns = input.runs.filter((r) => LIVE.has(r.status));
  const liveOf = (n: number) => liveRuns.filter((r) => r.issue === n).length;
  const states = new Map(input.tasks.map((t) => [t.number, t.state]));
  const holding = ["pausing", "paused", "stopping", "stopped"].includes(input.sessionStatus ?? "");
  for (const task of input.tasks) {
    if (task.state === "in-progress" && liveOf(task.number) === 0) {
      stuckTasks += 1;
      details.push({
        kind: "stuck-task",
        issue: task.number,
        message: `#${task.number} is labeled in-progress but no worker run of it is queued or running`,
      });
    } else if (
      task.state === "review" &&
      task.review?.mergeable &&
      task.review.idleSeconds >= REVIEW_IDLE_SECONDS &&
      !holding
    ) {
      stuckTasks += 1;
      details.push({
        kind: "stuck-task",
        issue: task.number,
        message: `#${task.number} is in review with a PR Autopilot could merge (checks green, no change request, no gate waiting), untouched for ${Math.round(task.review.idleSeconds)} s`,
      });
    } else if (task.state === "ready" && task.readyByWriter && !task.excluded) {
      const waiting = task.dependsOn.filter((d) => (states.get(d) ?? "done") !== "done");
      if (waiting.length) continue;
      if (holding) {
        details.push({
          kind: "note",
          issue: task.number,
          message: `#${task.number} is ready but the session is ${input.sessionStatus}`,
        });
        continue;
      }
      if (input.awaitingCommand) {
        details.push({
          kind: "note",
          issue: task.number,
          message: `#${task.number} is ready and the dashboard waits for a person's command to start it`,
        });
        continue;
      }
      if (liveRuns.length < input.maxParallel) {
        stuckTasks += 1;
        details.push({
          kind: "stuck-task",
          issue: task.number,
          message: `#${task.number} is ready with nothing to wait for, yet undispatched while ${input.maxParallel - liveRuns.length} of ${input.maxParallel} slots are free`,
        });
      }
    }
  }

  return {
    lostCommits,
    doubleDispatches,
    unaskedDispatches,
    stuckTasks,
    details,
    checked: { commits: seen.size, runs: input.runs.length, tasks: input.tasks.length },
  };
}

/** Whether the invariants hold (every count zero). */
export function invariantsHold(report: InvariantReport): boolean {
  return (
    report.lostCommits === 0 &&
    report.doubleDispatches === 0 &&
    report.unaskedDispatches === 0 &&
    report.stuckTasks === 0
  );
}

/**
 * Whether nothing starts without a person's command, from the configuration and the session's state (as
 * src/core/reconcile/build-view.ts `awaitedCommand` decides it): `mode: semi-auto` with a running session waits
 * for `/autopilot run #N`; a stopped session (idle, not the initial one), or with `session.autoStart: false`
 * an idle or completed one, waits for `/autopilot start`.
 */
export function awaitsPerson(f: {
  mode: "auto" | "semi-auto";
  autoStart: boolean;
  session: { status: string; reason: string } | null;
}): boolean {
  const s = f.session;
  if (!s) return false;
  if (f.mode === "semi-auto" && s.status === "running") return true;
  if (s.status === "idle" && s.reason !== "initial") return true;
  return !f.autoStart && (s.status === "idle" || s.status === "completed");
}
