/** What the worker does when the agent process ends: the agent exit table as a pure function. */
import type { IterationSignal, QualityOutcome } from "./iteration.js";
import type { TaskStatus } from "../tasks/task.js";

export interface AgentExitInput {
  /** Process exit code; null when it was ended by a signal. */
  exitCode: number | null;
  /** Terminating signal ("SIGTERM", "SIGKILL", …) or null. */
  processSignal?: string | null;
  /** The promise signal parsed from the agent's final message. */
  signal: IterationSignal;
  /** Quality result (only meaningful after COMPLETE). */
  quality?: QualityOutcome;
  /** The iteration exceeded iterationTimeoutMinutes and the worker killed the process tree. */
  iterationTimedOut?: boolean;
  /** The job is being cancelled (the runner's cancel, a timeout of the job): the worker killed the agent. */
  cancelled?: boolean;
}

type AgentExitAction =
  /** 0 + COMPLETE, gates pass: open/update the PR (queue merge), clean up. */
  | "open_pr"
  /** Next iteration (COMPLETE with failing tests, no signal, an iteration cut off by its own timeout). */
  | "continue"
  /** 0 + BLOCKED: log the reason, alert. */
  | "blocked"
  /** 0 + NEEDS_HUMAN: post the question, end the job. */
  | "needs_human"
  /** Non-zero exit, or killed by a signal the worker did not send: task failed, branch kept, alert. */
  | "fail"
  /** Killed because the job is being cancelled: checkpoint (commit + push), release the task to the pool. */
  | "release";

interface AgentExitDecision {
  action: AgentExitAction;
  /** Task status after this exit; "in-progress" while iterations go on. */
  status: TaskStatus;
  /** Commit and push what the agent left before ending, so no work is lost. */
  checkpoint: boolean;
  /** The branch stays for debugging / recovery. */
  keepBranch: boolean;
  /** People should be told. */
  alert: boolean;
  reason: string;
}

/**
 * The agent exit table:
 *
 * | exit              | status             | action                          |
 * |-------------------|--------------------|---------------------------------|
 * | 0 + COMPLETE      | done (→ review)    | queue merge (open PR), cleanup  |
 * | 0 + COMPLETE      | (tests fail)       | continue iterations             |
 * | 0 + no signal     | active             | increment iteration             |
 * | 0 + BLOCKED       | blocked            | log reason, alert user          |
 * | 0 + NEEDS_HUMAN   | needs-human        | post the question, alert        |
 * | != 0              | failed             | keep branch, alert              |
 * | killed, job cancelled | pending (ready) | checkpoint changes, release   |
 * | killed otherwise  | failed             | checkpoint, keep branch, alert  |
 *
 * Who sent the signal decides, not which signal: when the job is being cancelled the worker kills the agent
 * itself (SIGTERM, then SIGKILL), and the task goes back to the pool (the worker ends `paused`). A signal the
 * worker did not send — the agent's own crash (SIGSEGV, SIGABRT), the kernel's OOM killer (SIGKILL), a stray
 * SIGTERM — is a failed attempt like a non-zero exit: the error strategy retries it with backoff and the
 * consecutive-failure count sees it, where a silent return to the pool would re-run a crashing agent forever.
 *
 * Plus: an iteration killed by the worker's own per-iteration timeout → continue (the job's wall clock and
 * max iterations still bound it). Rate-limit / usage-limit output is classified before this table is
 * consulted (see `decideRateLimit` in iteration.ts). The branch is kept in every case.
 */
export function decideAgentExit(input: AgentExitInput): AgentExitDecision {
  const sig = input.processSignal ?? null;
  if (input.iterationTimedOut) {
    return exit(
      "continue",
      "in-progress",
      "iteration timed out; its work is committed and the next iteration continues",
    );
  }
  if (input.cancelled) {
    return exit("release", "ready", "the job was cancelled; work in progress committed, task released");
  }
  if (sig !== null) {
    return exit(
      "fail",
      "failed",
      `the agent was killed by ${sig}, not by the worker (its own crash or the system's); work so far is committed`,
      { alert: true },
    );
  }
  if (input.exitCode !== 0) {
    return exit("fail", "failed", `agent exited with code ${input.exitCode ?? "unknown"}`, { alert: true });
  }
  switch (input.signal.kind) {
    case "complete":
      if (input.quality === "fail") {
        return exit("continue", "in-progress", "COMPLETE claimed but tests fail; next iteration");
      }
      return exit("open_pr", "review", "complete; PR opened for merge");
    case "blocked":
      return exit("blocked", "blocked", `blocked: ${input.signal.text?.trim() || "no reason given"}`, {
        alert: true,
      });
    case "needs_human": {
      const question = input.signal.text?.trim() || "no question given";
      return exit("needs_human", "needs-human", `needs a human: ${question}`, { alert: true });
    }
    case "none":
      return exit("continue", "in-progress", "no signal; next iteration");
  }
}

/** A decision that checkpoints, keeps the branch and alerts no one unless `flags` say otherwise. */
function exit(
  action: AgentExitAction,
  status: TaskStatus,
  reason: string,
  flags: { checkpoint?: boolean; alert?: boolean } = {},
): AgentExitDecision {
  return {
    action,
    status,
    checkpoint: flags.checkpoint ?? true,
    keepBranch: true,
    alert: flags.alert ?? false,
    reason,
  };
}
