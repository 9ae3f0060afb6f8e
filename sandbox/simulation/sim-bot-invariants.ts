/**
 * `botsAreNeverObeyed`: a comment by a bot account (a login ending `[bot]`, Autopilot's own included) is never a
 * command (src/core/tasks/commands.ts `commentAuthority`): Autopilot neither acts on it nor answers it, so no
 * `/autopilot` comment of a bot ever gets Autopilot's reaction. That a bot's label or command moves no task is
 * checked by dispatchOnlyByWritersWord and sessionMovesOnlyByWriters (a bot is no writer).
 */
import type { SimObservation, Violation } from "./sim-invariants.js";

export function botsAreNeverObeyed(o: SimObservation): Violation[] {
  const out: Violation[] = [];
  for (const comment of o.store.listComments(o.repo)) {
    if (!/\[bot\]$/i.test(comment.user) || !/^\/autopilot\b/.test(comment.body.trim())) continue;
    const reacted = o.store
      .listReactions(o.repo, { commentId: comment.id })
      .some((r) => r.user.toLowerCase() === o.bot.toLowerCase());
    if (reacted)
      out.push({
        invariant: "botsAreNeverObeyed",
        atSeconds: o.elapsed(),
        detail: `"${comment.body}" by ${comment.user} (comment ${comment.id}) got Autopilot's reaction, as a command`,
      });
  }
  return out;
}
