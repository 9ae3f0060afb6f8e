/**
 * The session state machine:
 *
 * ```
 *   idle ──start──▶ running ──pause──▶ pausing ──workersCheckpointed──▶ paused ──resume──▶ running
 *                     │  ▲                │ ▲ resume (cancels the pause)     │
 *                     │  └────────────────┘ │                                │ stop (no worker runs)
 *                     │ stop                                                 ▼
 *                     └──────▶ stopping ──workersCheckpointed──▶ idle ◀──────┘
 *   running ──allTasksDone──▶ completed ──newWork / start──▶ running
 * ```
 *
 * Decisions recorded here (the seeds leave them open):
 * - `pausing`/`stopping` wait for running workers to reach their next iteration boundary; the controller sends
 *   `workersCheckpointed` once none is running. An event may carry `activeWorkers: 0` to skip the wait.
 * - `paused` keeps the reason that started the pause (user, consecutive failures, budget) with its actor.
 * - `completed` is not final on GitHub: labeling a new issue ready is how people add work, so `newWork` (new
 *   ready tasks appeared) brings a completed session back to running. A stopped (`idle`) session does not
 *   react to new work: someone has to start it.
 * - `resume` while `pausing` cancels the pause (workers have not stopped yet, they simply go on).
 * - `stop` while `paused` goes straight to `idle` (no worker runs while paused).
 * - `start` while `paused` is refused with a hint to resume (resuming keeps the pause reason's history
 *   visible; a start would look like a new session).
 *
 * The reducer is pure: time is passed in; effects are data for the controller to carry out. An illegal
 * transition returns the state unchanged, no effects, and `refused.reason` for the person who asked.
 */

export const SESSION_STATUSES = ["idle", "running", "pausing", "paused", "stopping", "completed"] as const;
export type SessionStatus = (typeof SESSION_STATUSES)[number];

export const SESSION_REASONS = [
  /** Never started. */
  "initial",
  "user_start",
  "user_resume",
  "user_pause",
  "user_stop",
  /** N consecutive tasks failed (consecutiveErrorThreshold). */
  "consecutive_failures",
  /** The session's token or USD budget is used up. */
  "budget_exhausted",
  /** errorStrategy "abort": a failed task stops the session. */
  "error_abort",
  /** No ready task left and no worker running. */
  "all_done",
  /** New ready tasks appeared after the session had completed. */
  "new_work",
] as const;
export type SessionReason = (typeof SESSION_REASONS)[number];

export interface SessionState {
  status: SessionStatus;
  /** When the current status began (ISO 8601). */
  since: string;
  /** Why the session is in this status. */
  reason: SessionReason;
  /** Who caused it: a login, or "autopilot" for automatic transitions. */
  actor: string;
  /** Free text for people ("3 consecutive tasks failed: #4, #7, #9"). */
  detail?: string;
  /** When the current run of the session began (set by start; kept through pause/resume). */
  startedAt: string | null;
}

/** The automatic actor. */
const AUTOPILOT_ACTOR = "autopilot";

interface WithActor {
  /** Login of the person who asked; "autopilot" when omitted. */
  actor?: string;
}
interface WithWorkers {
  /** Workers still running, when known; 0 skips the pausing/stopping wait. */
  activeWorkers?: number;
}

export type SessionEvent =
  | ({ type: "start" } & WithActor)
  | ({ type: "pause" } & WithActor & WithWorkers)
  | ({ type: "resume" } & WithActor)
  | ({ type: "stop" } & WithActor & WithWorkers)
  /** Every running worker has stopped at an iteration boundary. */
  | { type: "workersCheckpointed" }
  /** No ready task is left and no worker runs. */
  | { type: "allTasksDone" }
  | ({ type: "consecutiveFailures"; count: number; threshold?: number; issues?: number[] } & WithWorkers)
  | ({ type: "budgetExhausted"; detail?: string } & WithWorkers)
  /** errorStrategy "abort" after a failed task. */
  | ({ type: "abort"; issue?: number; detail?: string } & WithWorkers)
  /** New ready tasks appeared. */
  | ({ type: "newWork"; issues?: number[] } & WithActor);

export type SessionEventType = SessionEvent["type"];

type SessionEffect =
  /** Dispatch workers into free slots again. */
  | { type: "startDispatching" }
  /** Start no new worker. */
  | { type: "stopDispatching" }
  /** Tell running workers to stop at their next iteration boundary (they read the session status). */
  | { type: "checkpointWorkers"; reason: SessionReason }
  /** The consecutive-failure counter starts again from 0. */
  | { type: "resetConsecutiveFailures" }
  /** Tell people (tracking issue comment / log). */
  | { type: "notify"; level: "info" | "warning"; message: string };

interface SessionTransition {
  state: SessionState;
  effects: SessionEffect[];
  /** Present when the event was refused; `state` is then the input state, unchanged. */
  refused?: { reason: string };
}

export function initialSessionState(now: Date | number): SessionState {
  return { status: "idle", since: iso(now), reason: "initial", actor: AUTOPILOT_ACTOR, startedAt: null };
}

/** Whether workers may be dispatched in this status. */
export function isDispatching(status: SessionStatus): boolean {
  return status === "running";
}

export function reduceSession(
  state: SessionState,
  event: SessionEvent,
  now: Date | number,
): SessionTransition {
  const at = iso(now);
  const actor = ("actor" in event && event.actor) || AUTOPILOT_ACTOR;
  const refuse = (reason: string): SessionTransition => ({ state, effects: [], refused: { reason } });
  const to = (
    status: SessionStatus,
    reason: SessionReason,
    effects: SessionEffect[],
    extra: Partial<Pick<SessionState, "detail" | "startedAt" | "actor">> = {},
  ): SessionTransition => {
    const next: SessionState = { status, since: at, reason, actor, startedAt: state.startedAt };
    const detail = extra.detail;
    if (detail !== undefined) next.detail = detail;
    if (extra.startedAt !== undefined) next.startedAt = extra.startedAt;
    if (extra.actor !== undefined) next.actor = extra.actor;
    return { state: next, effects };
  };
  const noWorkers = (e: WithWorkers) => e.activeWorkers !== undefined && e.activeWorkers <= 0;
  const s = state.status;

  switch (event.type) {
    case "start": {
      if (s === "idle" || s === "completed") {
        return to(
          "running",
          "user_start",
          [{ type: "startDispatching" }, notify(`Autopilot started by @${actor}.`)],
          {
            startedAt: at,
          },
        );
      }
      return refuse(
        {
          running: "Autopilot is already running.",
          pausing: "Autopilot is pausing; use resume to cancel the pause.",
          paused: "Autopilot is paused; use resume to continue.",
          stopping: "Autopilot is stopping; start it again once running workers have finished.",
        }[s],
      );
    }

    case "pause": {
      if (s === "running") return beginPause("user_pause", event, `Autopilot paused by @${actor}`);
      return refuse(
        {
          idle: "Autopilot is not running; there is nothing to pause.",
          pausing: "Autopilot is already pausing; running workers stop at their next iteration boundary.",
          paused: "Autopilot is already paused.",
          stopping: "Autopilot is stopping; it cannot be paused.",
          completed: "Autopilot has completed; there is nothing to pause.",
        }[s],
      );
    }

    case "resume": {
      if (s === "paused" || s === "pausing") {
        const effects: SessionEffect[] = [{ type: "startDispatching" }];
        if (state.reason === "consecutive_failures") effects.push({ type: "resetConsecutiveFailures" });
        effects.push(
          notify(
            s === "pausing"
              ? `Pause cancelled by @${actor}; Autopilot keeps running.`
              : `Autopilot resumed by @${actor} (was paused: ${describeReason(state.reason)}).`,
          ),
        );
        return to("running", "user_resume", effects);
      }
      return refuse(
        {
          idle: "Autopilot is not running; use start.",
          running: "Autopilot is already running.",
          stopping: "Autopilot is stopping; start it again once running workers have finished.",
          completed: "Autopilot has completed; use start to run it again.",
        }[s],
      );
    }

    case "stop": {
      if (s === "paused" || ((s === "running" || s === "pausing") && noWorkers(event))) {
        return to("idle", "user_stop", [
          { type: "stopDispatching" },
          notify(`Autopilot stopped by @${actor}.`),
        ]);
      }
      if (s === "running" || s === "pausing") {
        return to("stopping", "user_stop", [
          { type: "stopDispatching" },
          { type: "checkpointWorkers", reason: "user_stop" },
          notify(
            `Autopilot stopping (asked by @${actor}); running workers stop at their next iteration boundary.`,
          ),
        ]);
      }
      return refuse(
        {
          idle: "Autopilot is not running; there is nothing to stop.",
          stopping: "Autopilot is already stopping.",
          completed: "Autopilot has already completed; there is nothing to stop.",
        }[s],
      );
    }

    case "workersCheckpointed": {
      if (s === "pausing") {
        return to(
          "paused",
          state.reason,
          [
            notify(
              `Autopilot paused: ${describeReason(state.reason)}${state.detail ? ` (${state.detail})` : ""}.`,
            ),
          ],
          { actor: state.actor, ...(state.detail !== undefined ? { detail: state.detail } : {}) },
        );
      }
      if (s === "stopping") {
        return to("idle", state.reason, [notify("Autopilot stopped; every worker has finished.")], {
          actor: state.actor,
          ...(state.detail !== undefined ? { detail: state.detail } : {}),
        });
      }
      return refuse(`No pause or stop is in progress (session is ${s}).`);
    }

    case "allTasksDone": {
      if (s === "running") {
        return to("completed", "all_done", [notify("Autopilot completed: no ready task is left.")]);
      }
      return refuse(`Only a running session completes (session is ${s}).`);
    }

    case "consecutiveFailures": {
      if (s !== "running")
        return refuse(`Consecutive failures only pause a running session (session is ${s}).`);
      const list = event.issues?.length ? `: ${event.issues.map((n) => `#${n}`).join(", ")}` : "";
      const detail = `${event.count} consecutive tasks failed${list}`;
      return beginPause("consecutive_failures", event, "Autopilot paused after failures", detail, "warning");
    }

    case "budgetExhausted": {
      if (s !== "running") return refuse(`The budget only pauses a running session (session is ${s}).`);
      const detail = event.detail ?? "session budget exhausted";
      return beginPause("budget_exhausted", event, "Autopilot paused: budget exhausted", detail, "warning");
    }

    case "abort": {
      if (s !== "running" && s !== "pausing") {
        return refuse(`Only a running or pausing session can be aborted (session is ${s}).`);
      }
      const detail = event.detail ?? (event.issue ? `task #${event.issue} failed` : "a task failed");
      const message = `Autopilot stopped: errorStrategy is abort and ${detail}.`;
      if (noWorkers(event)) {
        return to("idle", "error_abort", [{ type: "stopDispatching" }, notify(message, "warning")], {
          detail,
        });
      }
      return to(
        "stopping",
        "error_abort",
        [
          { type: "stopDispatching" },
          { type: "checkpointWorkers", reason: "error_abort" },
          notify(message, "warning"),
        ],
        { detail },
      );
    }

    case "newWork": {
      if (s === "completed") {
        const list = event.issues?.length ? ` (${event.issues.map((n) => `#${n}`).join(", ")})` : "";
        return to("running", "new_work", [
          { type: "startDispatching" },
          notify(`New ready tasks${list}: Autopilot is running again.`),
        ]);
      }
      return refuse(
        s === "idle"
          ? "Autopilot is not running; new work waits until someone starts it."
          : `New work is picked up as it comes while ${s}; nothing to change.`,
      );
    }
  }

  function beginPause(
    reason: SessionReason,
    e: WithWorkers,
    headline: string,
    detail?: string,
    level: "info" | "warning" = "info",
  ): SessionTransition {
    const extra = detail !== undefined ? { detail } : {};
    const suffix = detail ? ` (${detail})` : "";
    if (noWorkers(e)) {
      return to(
        "paused",
        reason,
        [{ type: "stopDispatching" }, notify(`${headline}${suffix}.`, level)],
        extra,
      );
    }
    return to(
      "pausing",
      reason,
      [
        { type: "stopDispatching" },
        { type: "checkpointWorkers", reason },
        notify(`${headline}${suffix}; running workers stop at their next iteration boundary.`, level),
      ],
      extra,
    );
  }
}

/** Words for a reason code, for the dashboard and messages. */
export function describeReason(reason: SessionReason): string {
  switch (reason) {
    case "initial":
      return "not started yet";
    case "user_start":
      return "started";
    case "user_resume":
      return "resumed";
    case "user_pause":
      return "paused by a user";
    case "user_stop":
      return "stopped by a user";
    case "consecutive_failures":
      return "too many consecutive failures";
    case "budget_exhausted":
      return "budget exhausted";
    case "error_abort":
      return "aborted after a failed task";
    case "all_done":
      // Not "all tasks done": tasks may still wait on people (a question, a plan, a review, a thin text).
      return "no ready task left";
    case "new_work":
      return "new work arrived";
  }
}

function notify(message: string, level: "info" | "warning" = "info"): SessionEffect {
  return { type: "notify", level, message };
}

function iso(now: Date | number): string {
  return (typeof now === "number" ? new Date(now) : now).toISOString();
}
