/**
 * Best of N (`bestOf` in the configuration). A task with `bestOf.label`, or (with `bestOf.onRetry`) an attempt
 * after one that ended without a pull request, is worked by a round of candidates: each agent of
 * `bestOf.candidates` in turn, as its own attempt, from the default branch on its own branch
 * (`<branchPrefix>issue-N-candidate-K`, src/core/contract.ts), opening its own pull request. One candidate runs at
 * a time, so the round holds one of the session's slots, and the one-run-per-task rules of the worker phase hold.
 *
 * When every candidate has ended and their pull requests' checks are in (or `bestOf.checksWaitMinutes` passed),
 * the winner is chosen by evidence the controller read itself (never what a candidate's branch says):
 *
 * 1. its worker completed (the quality gate passed) and its pull request is open, Autopilot's own;
 * 2. the pull request's checks: passing, then none, then still running, then failing;
 * 3. no human-gate rule fired (the controller's reading of the diff, and the rules the worker reported);
 * 4. the smaller diff (lines added and removed, from the controller's own read of it);
 * 5. on a tie, the earlier candidate.
 *
 * The winner continues on the task branch: the controller points the task branch at the winner's head and opens
 * the task's pull request from it (the `promoteCandidate` effect), so everything after (the merge gates, feedback
 * rounds, `fix`) is the ordinary single-branch flow. Once that pull request shows, every candidate's pull request
 * is closed with a comment naming the winner, and the candidate branches are deleted (a closed pull request keeps
 * its commits, and GitHub restores its branch on request). A round where no candidate completed fails the
 * attempt like any failure. Every candidate's spend counts against the task's budget (the worker carries the
 * task's totals from one attempt to the next) and is shown per candidate.
 */
import { agentLabel } from "../../config/index.js";
import type { TaskRecord } from "../../dashboard/index.js";
import { evaluatePullRequest } from "../../gates/gates.js";
import { escapeInline, formatTokens, formatUsd, table, truncate } from "../../text/markdown.js";
import type { WorkerResult } from "../../tasks/worker-result.js";
import type { PullNode } from "../../world.js";
import { note, type Reconciling, round4, taskBranch } from "../context.js";
import { verifiedGate } from "../pulls/pull-diff-verdicts.js";
import { pullsFor } from "../pulls/task-pulls.js";
import { hasLabel, setStatus, statusOf } from "../task-labels.js";
import { hasWriteAccess, sameLogin } from "../../tasks/commands.js";
import { accountResult, failTask } from "./worker-outcomes.js";
import { isLive } from "./worker-runs.js";
import { trustedOpenPulls } from "../../gates/pull-trust.js";
import { candidatePull, dropCandidates } from "./candidate-pulls.js";
import { counted } from "../../text/plural.js";

type Round = NonNullable<TaskRecord["bestOf"]>;
type Candidate = Round["candidates"][number];

/** The round still being worked or chosen (no winner yet). */
function openRound(record: TaskRecord | undefined): Round | null {
  const round = record?.bestOf;
  return round && round.winner === undefined ? round : null;
}

/** Which candidate (1-based) the task's current dispatch is; null when it is not a candidate's. */
export function candidateOfDispatch(record: Pick<TaskRecord, "bestOf" | "dispatchId">): number | null {
  const round = record.bestOf;
  if (!round || round.winner !== undefined || !record.dispatchId) return null;
  const i = round.candidates.findIndex((c) => c.dispatchId === record.dispatchId);
  return i < 0 ? null : i + 1;
}

/**
 * Whether a new attempt of the task is worked as a best-of round: candidates configured, no open pull request
 * (a worker sent back to one is a feedback round, not a new attempt), and the label or, with `onRetry`, an
 * earlier attempt that ended without a pull request.
 */
function roundWanted(ctx: Reconciling, n: number, record: TaskRecord): boolean {
  const { candidates, label, onRetry } = ctx.config.bestOf;
  if (candidates.length < 2) return false;
  if (pullsFor(ctx, n).some((p) => p.state === "open")) return false;
  const issue = ctx.issues.get(n);
  if (issue && hasLabel(issue.labels, label)) {
    // A round multiplies what the task spends: only a writer's label (or Autopilot's own) asks for one.
    const by = issue.bestOfLabeledBy;
    if (by && (sameLogin(by, ctx.snapshot.botLogin) || hasWriteAccess(ctx.snapshot.permissions, by)))
      return true;
    note(
      ctx,
      `#${n}: the \`${label}\` label was added by ${by ?? "someone unknown"}, without write access: no best-of round`,
    );
  }
  return onRetry && record.retries + record.failures > 0;
}

/**
 * The dispatch just recorded (its attempt and dispatch id) as the round's next candidate: a round is begun when
 * the task wants one, and continued while it has candidates left. A planning run is never a candidate.
 */
export function enterCandidate(ctx: Reconciling, n: number, record: TaskRecord, plan: string | null): void {
  if (plan === "propose" || plan === "split" || !record.dispatchId) return;
  let round = openRound(record);
  if (!round) {
    if (!roundWanted(ctx, n, record)) return;
    round = { of: ctx.config.bestOf.candidates.length, at: ctx.now.toISOString(), candidates: [] };
    record.bestOf = round;
    note(ctx, `#${n}: best of ${round.of} begins`);
  }
  const agent = ctx.config.bestOf.candidates[round.candidates.length];
  if (round.candidates.length >= round.of) return;
  if (!agent) {
    // The configuration lost the candidates this round had left: it ends without a choice, its candidates' pull
    // requests are closed, and this dispatch is an ordinary attempt.
    round.winner = 0;
    round.chosenAt = ctx.now.toISOString();
    note(
      ctx,
      `#${n}: best-of round ended: \`bestOf.candidates\` no longer lists candidate ${round.candidates.length + 1}`,
    );
    return;
  }
  round.candidates.push({
    attempt: record.attempt,
    dispatchId: record.dispatchId,
    agent: truncate(agentLabel(agent), 80),
    costUsd: 0,
    tokens: 0,
  });
  note(ctx, `#${n}: candidate ${round.candidates.length} of ${round.of}: ${agentLabel(agent)}`);
}

/** The candidate of the round whose dispatch this is, unfinished; null for any other dispatch. */
function unfinishedCandidate(record: TaskRecord, dispatchId: string | undefined): Candidate | null {
  const round = openRound(record);
  const entry = round?.candidates.find((c) => c.dispatchId === dispatchId);
  return entry && entry.outcome === undefined ? entry : null;
}

/** Whether a finished dispatch (or one that ended without a result) is a candidate's: its end is the round's. */
export function isCandidateDispatch(record: TaskRecord, dispatchId: string | undefined): boolean {
  return unfinishedCandidate(record, dispatchId) !== null;
}

/**
 * A candidate ended, with its worker's result or without one (a crash, a lost run): its outcome and spend go in
 * the round. The task goes back to the queue for the next candidate, or stays in progress while the round is
 * chosen. A candidate's end is never the task's: blocked, a question, a limit or a failure only take it out of
 * the round.
 */
export function candidateEnded(
  ctx: Reconciling,
  n: number,
  record: TaskRecord,
  ended: { result?: WorkerResult; outcome: string; reason: string },
): void {
  const round = openRound(record)!;
  const entry = unfinishedCandidate(record, record.dispatchId)!;
  const index = round.candidates.indexOf(entry) + 1;
  const before = { usd: record.costUsd, tokens: record.tokensIn + record.tokensOut };
  if (ended.result) accountResult(record, ended.result);
  entry.costUsd = round4(Math.max(0, record.costUsd - before.usd));
  entry.tokens = Math.max(0, record.tokensIn + record.tokensOut - before.tokens);
  entry.outcome = truncate(ended.outcome, 40);
  entry.reason = truncate(ended.reason, 200);
  const rules = ended.result?.humanGate.fired ? ended.result.humanGate.rules : [];
  if (rules.length > 0) entry.rules = [...new Set(rules.map((r) => truncate(r.rule, 120)))].slice(0, 20);
  entry.at = ctx.now.toISOString();
  const pull = candidatePull(ctx, n, index, "open");
  if (pull) entry.pr = pull.number;
  record.handled = record.dispatchId;
  record.result = entry.outcome;
  record.cancelAt = undefined;
  record.reason = truncate(`best of ${round.of}: candidate ${index} (${entry.agent}) ${ended.outcome}`, 300);
  note(
    ctx,
    `#${n}: candidate ${index} of ${round.of} ended: ${ended.outcome} (${truncate(ended.reason, 100)})`,
  );
  if (round.candidates.length < round.of && ctx.config.bestOf.candidates[round.candidates.length]) {
    setStatus(ctx, n, "ready");
    return;
  }
  // The configuration lost candidates mid-round: the round is the ones it had.
  round.of = round.candidates.length;
  record.reason = truncate(`best of ${round.of}: every candidate ended; choosing`, 300);
}

/**
 * Whether the task stays in progress with no worker: its round is being chosen, or its winner is on its way to
 * the task branch (the worker phase would otherwise send a worker-less task back to the queue).
 */
export function holdsInProgress(record: TaskRecord | undefined): boolean {
  const round = record?.bestOf;
  if (!round) return false;
  if (round.winner === undefined)
    return round.candidates.length >= round.of && round.candidates.every((c) => c.outcome !== undefined);
  return round.winner > 0 && record?.pr === undefined;
}

/** What the choice weighs for one candidate, all read by the controller itself. */
interface Evidence {
  candidate: number;
  entry: Candidate;
  pull: PullNode | null;
  /** Its worker completed (the quality gate passed) and its pull request is open. */
  completed: boolean;
  checks: "passing" | "none" | "pending" | "failing";
  /** Human-gate rules that fired: the controller's reading of the diff, or the worker's report if more. */
  rules: number;
  /** Lines added and removed, from the controller's own read of the diff; null when not read. */
  lines: number | null;
}

const CHECKS_RANK: Record<Evidence["checks"], number> = { passing: 0, none: 1, pending: 2, failing: 3 };

/** Best first: completed, checks, no human-gate rule, the smaller diff, the earlier candidate. */
function compareEvidence(a: Evidence, b: Evidence): number {
  return (
    Number(b.completed) - Number(a.completed) ||
    CHECKS_RANK[a.checks] - CHECKS_RANK[b.checks] ||
    Number(a.rules > 0) - Number(b.rules > 0) ||
    (a.lines ?? Number.MAX_SAFE_INTEGER) - (b.lines ?? Number.MAX_SAFE_INTEGER) ||
    a.candidate - b.candidate
  );
}

/** The evidence of one candidate, or why the choice must wait for it. */
function evidenceOf(
  ctx: Reconciling,
  n: number,
  candidate: number,
  entry: Candidate,
  waitOver: boolean,
): Evidence | { waiting: string } {
  const pull = entry.outcome === "complete" ? candidatePull(ctx, n, candidate, "open") : null;
  const none: Evidence = {
    candidate,
    entry,
    pull: null,
    completed: false,
    checks: "none",
    rules: 0,
    lines: null,
  };
  if (!pull) return none;
  const evaluation = evaluatePullRequest(pull, {
    requiredChecks: ctx.config.merge.requiredChecks,
    botLogin: ctx.snapshot.botLogin,
    permissions: ctx.snapshot.permissions,
    humanGateRules: [],
    feedbackSha: null,
    autoMerge: false,
    now: ctx.now,
    checksTimeoutMinutes: ctx.config.merge.checksTimeoutMinutes,
  });
  const checks = evaluation.checks.state;
  const checksDue = checks === "pending" || (checks === "none" && !evaluation.checks.overdue);
  if (checksDue && !waitOver) return { waiting: `the checks of candidate ${candidate}'s PR #${pull.number}` };
  const gate = verifiedGate(ctx, pull);
  if ("waiting" in gate) return { waiting: gate.waiting };
  return {
    candidate,
    entry,
    pull,
    completed: true,
    checks,
    rules: Math.max(gate.rules.length, entry.rules?.length ?? 0),
    lines: gate.lines,
  };
}

/**
 * The phase that chooses among a round's candidates once all have ended, carries the winner over to the task
 * branch, and closes the candidates' pull requests once the task's own shows. Runs after the workers phase and
 * the diff verdicts, before the reviews (a winner's pull request is reviewed as any task's).
 */
export function processBestOf(ctx: Reconciling): void {
  for (const [key, record] of Object.entries(ctx.state.tasks)) {
    const round = record.bestOf;
    if (!round) continue;
    const n = Number(key);
    const issue = ctx.issues.get(n);
    if (round.winner === undefined) {
      if (issue?.state !== "open") {
        round.winner = 0;
        round.chosenAt = ctx.now.toISOString();
        note(ctx, `#${n}: best-of round ended with the issue closed`);
      } else if (holdsInProgress(record) && statusOf(ctx, n) === "in-progress") choose(ctx, n, record, round);
    }
    if (round.winner !== undefined) followThrough(ctx, n, record, round);
  }
  sweepForgottenCandidates(ctx);
}

/**
 * Candidates' pull requests no round remembers (the state was lost and rebuilt mid-round, or a task left it
 * without its candidates closed): closed, and their branches deleted, once no worker of the task runs.
 */
function sweepForgottenCandidates(ctx: Reconciling): void {
  for (const { pull, issue, candidate } of trustedOpenPulls(ctx.snapshot, ctx.config.branchPrefix)) {
    if (!candidate || ctx.state.tasks[issue]?.bestOf || isLive(ctx, issue)) continue;
    if (ctx.effects.some((e) => e.type === "closePull" && e.pr === pull.number)) continue;
    const body = `Candidate ${candidate} of a best-of round of #${issue} that Autopilot no longer tracks: closed.`;
    ctx.effects.push({ type: "comment", issue: pull.number, key: `best-of-closed-${pull.number}`, body });
    ctx.effects.push({ type: "closePull", pr: pull.number, issue });
    ctx.effects.push({ type: "deleteBranch", branch: pull.headRef, expectOid: pull.headSha });
    note(ctx, `#${issue}: closed PR #${pull.number}, a candidate no round remembers`);
  }
}

function choose(ctx: Reconciling, n: number, record: TaskRecord, round: Round): void {
  const lastEnd = Math.max(...round.candidates.map((c) => Date.parse(c.at ?? "") || 0));
  const deadline = lastEnd + ctx.config.bestOf.checksWaitMinutes * 60_000;
  const waitOver = ctx.nowMs >= deadline;
  const evidence: Evidence[] = [];
  for (const [i, entry] of round.candidates.entries()) {
    const read = evidenceOf(ctx, n, i + 1, entry, waitOver);
    if ("waiting" in read) {
      record.reason = truncate(`best of ${round.of}: choosing, waiting for ${read.waiting}`, 300);
      if (!waitOver) ctx.wakes.push(deadline);
      note(ctx, `#${n}: best of ${round.of}: waiting for ${read.waiting}`);
      return;
    }
    evidence.push(read);
  }
  const ranked = [...evidence].sort(compareEvidence);
  const best = ranked[0];
  const winner = best?.completed && best.pull ? best : null;
  round.winner = winner?.candidate ?? 0;
  round.chosenAt = ctx.now.toISOString();
  const summary = choiceTable(evidence, winner?.candidate ?? 0);
  ctx.effects.push({
    type: "comment",
    issue: n,
    key: `best-of-${n}-${round.candidates[0]?.attempt ?? 0}`,
    body: choiceComment(round, summary, winner),
  });
  if (!winner) {
    note(ctx, `#${n}: best of ${round.of}: no candidate completed`);
    failTask(ctx, n, record, `best of ${round.of}: no candidate completed (${outcomes(round)})`);
    return;
  }
  note(
    ctx,
    `#${n}: best of ${round.of}: candidate ${winner.candidate} (${winner.entry.agent}) wins with PR #${winner.pull!.number}`,
  );
  record.reason = truncate(
    `best of ${round.of}: candidate ${winner.candidate} (${winner.entry.agent}) chosen; opening the task's pull request`,
    300,
  );
  promote(ctx, n, winner.pull!, summary);
}

function outcomes(round: Round): string {
  return round.candidates.map((c, i) => `${i + 1}: ${c.outcome ?? "?"}`).join(", ");
}

/** The task branch pointed at the winner's head, and the task's pull request opened from it (repeat-safe). */
function promote(ctx: Reconciling, n: number, pull: PullNode, summary: string): void {
  const title = pull.title.replace(/^\[candidate \d of \d\] /, "");
  const section = `\n\n---\n\n### Chosen by best of N\n\n${summary}\n`;
  const room = 60_000 - section.length;
  ctx.effects.push({
    type: "promoteCandidate",
    issue: n,
    branch: taskBranch(ctx, n),
    sha: pull.headSha,
    base: pull.baseRef,
    title,
    body: `${pull.body.length > room ? `${pull.body.slice(0, room)}…` : pull.body}${section}`,
  });
}

/**
 * After the choice: the winner's pull request on the task branch is the task's (review from here), the winner is
 * carried over again while it does not show, and the candidates' pull requests are closed and their branches
 * deleted once nothing needs them.
 */
function followThrough(ctx: Reconciling, n: number, record: TaskRecord, round: Round): void {
  const winner = round.winner ?? 0;
  if (winner > 0 && record.pr === undefined) {
    const own = pullsFor(ctx, n).find((p) => p.state === "open" || p.state === "merged");
    if (!own) {
      if (statusOf(ctx, n) !== "in-progress") return;
      // Chosen in this reconcile: carried over already.
      if (ctx.effects.some((e) => e.type === "promoteCandidate" && e.issue === n)) return;
      const pull = candidatePull(ctx, n, winner, "open");
      if (pull) {
        promote(ctx, n, pull, choiceTable([], winner));
        return;
      }
      round.winner = 0;
      failTask(ctx, n, record, `best of ${round.of}: the chosen candidate's pull request was closed`);
    } else {
      record.pr = own.number;
      // The rules the winner's worker reported hold for the task, as any worker's do (a PR body edit clears none).
      const rules = round.candidates[winner - 1]?.rules ?? [];
      if (rules.length > 0) record.gate = [...new Set([...(record.gate ?? []), ...rules])].slice(0, 20);
      record.result = "complete";
      record.since = ctx.now.toISOString();
      record.failures = 0;
      record.reason = truncate(
        `best of ${round.of}: candidate ${winner} (${round.candidates[winner - 1]?.agent ?? "?"}) chosen`,
        300,
      );
      if (statusOf(ctx, n) === "in-progress") setStatus(ctx, n, "review");
      note(ctx, `#${n}: the chosen candidate continues as PR #${own.number}`);
    }
  }
  dropCandidates(ctx, n, record, round);
}

/** The evidence as a table: candidate, agent, outcome, checks, human gate, diff, cost. */
function choiceTable(evidence: readonly Evidence[], winner: number): string {
  if (evidence.length === 0)
    return winner > 0 ? `Candidate ${winner} was chosen.` : "No candidate was chosen.";
  const rows = evidence.map((e) => [
    `${e.candidate === winner ? "**" : ""}${e.candidate}${e.candidate === winner ? " (chosen)**" : ""}`,
    escapeInline(e.entry.agent, 80),
    e.pull
      ? `complete, PR #${e.pull.number}`
      : escapeInline(`${e.entry.outcome ?? "?"}${e.entry.reason ? `: ${e.entry.reason}` : ""}`, 120),
    e.completed ? e.checks : "—",
    e.completed ? (e.rules > 0 ? `${counted(e.rules, "rule")} fired` : "none fired") : "—",
    e.lines === null ? "—" : counted(e.lines, "line"),
    `${formatUsd(e.entry.costUsd)}, ${formatTokens(e.entry.tokens)} tokens`,
  ]);
  return table(["candidate", "agent", "outcome", "checks", "human gate", "diff", "cost"], rows);
}

function choiceComment(round: Round, summary: string, winner: Evidence | null): string {
  const total = round4(round.candidates.reduce((sum, c) => sum + c.costUsd, 0));
  const head = winner
    ? `**Best of ${round.of}:** candidate ${winner.candidate} (${escapeInline(winner.entry.agent, 80)}) is chosen and continues as the task's pull request on the task branch; the other candidates' pull requests are closed.`
    : `**Best of ${round.of}:** no candidate completed, so the attempt failed; the candidates' pull requests are closed.`;
  return [
    head,
    "",
    summary,
    "",
    `Chosen by: the quality gate passed, the PR's checks, no human-gate rule fired, the smaller diff, then the earlier candidate. The round cost ${formatUsd(total)} in all.`,
  ].join("\n");
}

/** The dashboard's word for a running candidate: `candidate 2 of 3: codex`; null for any other dispatch. */
export function candidateSlotText(record: TaskRecord | undefined): string | null {
  const k = record ? candidateOfDispatch(record) : null;
  const round = record?.bestOf;
  if (!k || !round) return null;
  return `candidate ${k} of ${round.of}: ${round.candidates[k - 1]?.agent ?? "?"}`;
}
