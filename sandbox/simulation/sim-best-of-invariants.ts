/**
 * `bestOfOneWinner`, best of N's invariant (docs/CONTROLLER.md "Best of N"): a round only on a writer's word (the
 * best-of label a writer or Autopilot set, or `bestOf.onRetry`); no candidate's pull request ever merged (the
 * winner continues as the task's own pull request, from the task branch); and once the task's own pull request
 * shows, every candidate pull request of the round before it closed.
 */
import type { SimObservation, Violation } from "./sim-invariants.js";
import type { SimDispatch } from "./sim-worker.js";

const BEST_OF = "autopilot:best-of";
const CANDIDATE_BRANCH = /^autopilot\/issue-(\d+)-candidate-\d$/;

const violation = (o: SimObservation, detail: string): Violation => ({
  invariant: "bestOfOneWinner",
  atSeconds: o.elapsed(),
  detail,
});

/** At a candidate's dispatch: a writer (or Autopilot) labeled the task for a round, or `onRetry` is set. */
export function bestOfOnlyByWritersWord(
  o: SimObservation,
  dispatch: SimDispatch,
  onRetry: boolean,
): Violation[] {
  if (dispatch.candidateNumber === null || onRetry) return [];
  const labeled = o.store.getIssue(o.repo, dispatch.issue)?.events.some((e) => {
    const actor = e.actor.toLowerCase();
    return (
      e.event === "labeled" &&
      e.label?.name === BEST_OF &&
      (o.writers.has(actor) || actor === o.bot.toLowerCase())
    );
  });
  return labeled
    ? []
    : [
        violation(
          o,
          `#${dispatch.issue}: candidate ${dispatch.candidateNumber} dispatched though no writer set ${BEST_OF} on it`,
        ),
      ];
}

/** Once the world has run its course: no candidate merged; a round whose winner continued has its others closed. */
export function bestOfOneWinner(o: SimObservation): Violation[] {
  const out: Violation[] = [];
  const pulls = o.store.listPulls(o.repo);
  for (const pull of pulls) {
    const task = CANDIDATE_BRANCH.exec(pull.pull.head.ref)?.[1];
    if (task === undefined) continue;
    if (pull.pull.merged) out.push(violation(o, `candidate PR #${pull.number} of #${task} was merged`));
    // The task's own pull request, opened from the task branch after this candidate's: the round chose.
    const chosen = pulls.some(
      (p) =>
        p.pull.head.ref === `autopilot/issue-${task}` &&
        p.user.toLowerCase() === o.bot.toLowerCase() &&
        p.createdAt.getTime() > pull.createdAt.getTime(),
    );
    if (chosen && pull.state === "open")
      out.push(
        violation(
          o,
          `candidate PR #${pull.number} of #${task} is still open after the round's winner continued`,
        ),
      );
  }
  return out;
}
