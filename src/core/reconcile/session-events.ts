/** Feeds a session event to the session's state machine (src/core/session/session.ts) and carries out what it asks. */
import type { Effect } from "../effects.js";
import { reduceSession, type SessionEvent } from "../session/session.js";
import { sessionLifecycleEvent } from "../session/webhook-events.js";
import { note, type Reconciling } from "./context.js";

interface SessionOutcome {
  /** Why the session refused the event. */
  refused?: string;
  /** The session's notice, whether or not it was posted. */
  message?: string;
  /** The notice posted on the tracking issue when the session completed (the history joins it). */
  completionNotice?: Extract<Effect, { type: "comment" }>;
}

/**
 * Applies the event. Warnings and the completion are posted on the tracking issue unless `quiet` (a command
 * or a dispatch start, answered where it was asked).
 */
export function sessionEvent(ctx: Reconciling, event: SessionEvent, quiet = false): SessionOutcome {
  const t = reduceSession(ctx.state.session, event, ctx.now);
  if (t.refused) {
    note(ctx, `session: ${event.type} refused: ${t.refused.reason}`);
    return { refused: t.refused.reason };
  }
  const from = ctx.state.session.status;
  const lifecycle = sessionLifecycleEvent(ctx.state.session, t.state);
  if (lifecycle) ctx.events.push(lifecycle);
  ctx.state.session = t.state;
  note(ctx, `session: ${from} → ${t.state.status} (${event.type})`);
  const outcome: SessionOutcome = {};
  for (const e of t.effects) {
    if (e.type === "resetConsecutiveFailures") {
      ctx.state.consecutiveFailures = 0;
      ctx.state.failedInARow = [];
    }
    if (e.type === "notify") {
      outcome.message = e.message;
      if (!quiet && (e.level === "warning" || t.state.status === "completed") && ctx.tracking) {
        const comment: Extract<Effect, { type: "comment" }> = {
          type: "comment",
          issue: ctx.tracking.number,
          body: e.message,
          key: `session-${t.state.status}-${t.state.since}`,
        };
        ctx.effects.push(comment);
        if (t.state.status === "completed") outcome.completionNotice = comment;
      }
    }
  }
  return outcome;
}
