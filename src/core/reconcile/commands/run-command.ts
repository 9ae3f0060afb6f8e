/**
 * `/autopilot run #N`: a person with write access starts one ready task now. With `mode: semi-auto` it is the
 * only way a task starts; with `auto` it starts a task ahead of the score order.
 *
 * The comments phase (comment-commands.ts) reads the request; the pool phase (pool-dispatch.ts) judges it here,
 * once the readiness of every task is known, and dispatches it. The comment is processed once (the state's
 * processed list), and a task already dispatched is in progress for the next request, so a re-delivered
 * webhook or a second `run` never starts a task twice.
 */
import type { SessionStatus } from "../../session/session.js";
import type { TaskStatus } from "../../tasks/task.js";

/** A `/autopilot run #N` read from a comment, to be judged in the pool phase. */
export interface RunRequest {
  commentIssue: number;
  commentId: number;
  /** The command is a line comment of a pull-request review. */
  review?: boolean;
  line: string;
  issue: number;
  actor: string;
}

/** What the pool phase knows of the asked-for task when it judges the request. */
export interface RunFacts {
  issue: number;
  /** Whether Autopilot sees the issue open (false: closed or not visible). */
  open: boolean;
  session: SessionStatus;
  /** No valid configuration yet: nothing is dispatched. */
  configHeld: boolean;
  status: TaskStatus | null;
  /** An epic's parent (src/core/reconcile/epic-pooling.ts): what to say instead of "label it ready"; null otherwise. */
  epic: string | null;
  /** A worker run is queued or running for it (or was dispatched and has not appeared yet). */
  live: boolean;
  /** Why a task labeled ready is not ready (dependencies, a cycle, another state label), when it is not. */
  waiting: string | null;
  /** Why a task is not in the pool at all (labeled ready by someone without write access), when it is not. */
  notInPool: string | null;
  /** A wait for a time (backoff, an agent's limit reset): the time and why. */
  waitUntil: { at: string; why: string } | null;
  /** Whether it is among the ranked ready candidates. */
  candidate: boolean;
  maxParallel: number;
  /** The tasks holding the slots, when none is free. */
  busy: readonly number[];
  readyLabel: string;
}

type RunVerdict = { start: true } | { start: false; reason: string };

/** Whether `/autopilot run #N` starts the task now, or why not (in words for the person who asked). */
export function runVerdict(f: RunFacts): RunVerdict {
  const n = `#${f.issue}`;
  const no = (reason: string): RunVerdict => ({ start: false, reason });
  if (!f.open) return no(`${n} is not an open issue Autopilot can see.`);
  if (f.live || f.status === "in-progress") return no(`${n} is already in progress.`);
  switch (f.status) {
    case null:
      return no(f.epic ? `${f.epic}.` : `${n} is not an Autopilot task: label it \`${f.readyLabel}\` first.`);
    case "review":
      return no(`${n} is in review: its pull request waits for the gates.`);
    case "done":
      return no(`${n} is done.`);
    case "skipped":
      return no(`${n} is skipped; \`/autopilot retry ${n}\` brings it back.`);
    case "blocked":
    case "needs-human":
    case "timeout":
    case "failed":
      return no(`${n} is ${f.status}; \`/autopilot retry ${n}\` puts it back in the queue, then run it.`);
    case "ready":
      break;
  }
  if (f.notInPool) return no(`${n} is not in the pool: ${f.notInPool}.`);
  if (f.waiting) return no(`${n} is not ready: ${f.waiting}.`);
  if (f.waitUntil)
    return no(
      `${n} waits until ${f.waitUntil.at} (${f.waitUntil.why}); \`/autopilot retry ${n}\` clears the wait.`,
    );
  if (!f.candidate) return no(`${n} is not ready to run.`);
  const session = sessionRefusal(f.session);
  if (session) return no(`Cannot run ${n}: ${session}`);
  if (f.configHeld)
    return no(
      `Cannot run ${n}: \`.github/autopilot.yml\` is not valid and there is no earlier good one; fix the file first (the dashboard says what is wrong).`,
    );
  if (f.busy.length >= f.maxParallel) {
    const busy = f.busy.map((b) => `#${b}`).join(", ");
    return no(
      `All ${f.maxParallel} slots are busy (${busy}); run it again once one is free (\`maxParallel\` sets how many).`,
    );
  }
  return { start: true };
}

/** Why a session in this status starts nothing, or null when it is running. */
function sessionRefusal(status: SessionStatus): string | null {
  switch (status) {
    case "running":
      return null;
    case "idle":
    case "completed":
      return "no session is running; start one with `/autopilot start`, then run the task.";
    case "pausing":
    case "paused":
      return "Autopilot is paused; `/autopilot resume` first.";
    case "stopping":
      return "Autopilot is stopping; start it again with `/autopilot start` once running workers have finished.";
  }
}
