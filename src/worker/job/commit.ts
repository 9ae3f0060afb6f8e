/**
 * The job's commits and pushes: an iteration's commit, the push that carries it (after the secret guard), and
 * the checkpoint that keeps whatever the work tree holds when a job stops early (a pause, a limit, a failure).
 */
import type { Signal } from "../../core/agent/signals.js";
// Secret guard (push-guard.ts): the hook is the lines marked "Secret guard" below.
import { guardPush } from "../checkout/push-guard.js";
import { describeSignal } from "./iteration-signal.js";
import { publishBranch } from "./publish-branch.js";
import type { JobContext } from "./job-context.js";

/** A commit the worker made is the new HEAD; no commit leaves HEAD where it was. */
export function committed(ctx: JobContext, sha: string | null): string | null {
  if (sha !== null) ctx.state.knownHead = sha;
  return sha;
}

/** Commits the work tree as the iteration's commit; the sha, or null when nothing changed. */
export async function commitWork(ctx: JobContext, iteration: number, signal: Signal): Promise<string | null> {
  const subject = `autopilot: iteration ${iteration} for #${ctx.inputs.issue}`;
  const message = `${subject}\n\nAttempt ${ctx.inputs.attempt}, signal ${describeSignal(signal).slice(0, 200)}.\n`;
  return committed(ctx, await ctx.deps.git.commitAll(message));
}

/** Whether the agent made new work this iteration (a commit of its own or changed files). */
export async function readNewWork(ctx: JobContext, headBefore: string): Promise<boolean> {
  const state = await ctx.deps.git.workState();
  ctx.state.knownHead = state.head;
  return state.head !== headBefore || state.changed;
}

/**
 * Pushes the task branch (not in a dry run), and records the pushed head and the branch's commit count. In the
 * `background`, for an iteration the loop goes on from: the agent's next turn starts while the guard and the push
 * run (the push only reads the worker's own repository, and a real remote is a network round trip or more), and
 * the push is settled after that turn (job.ts), before any other push, and at the job's end.
 */
export async function pushBranch(ctx: JobContext, options: { background?: boolean } = {}): Promise<void> {
  await settlePush(ctx);
  if (ctx.config.dryRun) {
    ctx.log.info("dry run: not pushing");
    return;
  }
  const run = guardedPush(ctx, ctx.state.knownHead ?? undefined);
  // `commits: signed` moves HEAD onto GitHub's commits (publish-branch.ts): done before the next turn starts.
  if (!options.background || ctx.config.commits === "signed") return run;
  // Its failure is met where it is settled, not as an unhandled rejection while the agent runs.
  run.catch(() => {});
  ctx.state.pendingPush = run;
}

/** Waits for the push running in the background, if any; its failure (a refused push too) is thrown here. */
export async function settlePush(ctx: JobContext): Promise<void> {
  const pending = ctx.state.pendingPush;
  if (!pending) return;
  ctx.state.pendingPush = null;
  await pending;
}

async function guardedPush(ctx: JobContext, head: string | undefined): Promise<void> {
  const { git } = ctx.deps;
  const { state } = ctx;
  // Secret guard: throws SecretPushRefused before a push that carries a held secret's value.
  const push = { branch: ctx.branch, base: state.setup?.base, head };
  state.result.humanGate = await guardPush(ctx.deps.pushGuard, push, state.result.humanGate);
  // Counting reads what the push sends and changes nothing: the two git processes run side by side.
  const [pushed, commits] = await Promise.all([
    publishBranch(ctx, head),
    state.setup ? git.countCommits(state.setup.base, head) : null,
  ]);
  state.result.headSha = pushed;
  if (commits !== null) state.result.commits = commits;
}

/** Commit + push whatever the work tree holds (pause, limits, failures). */
export async function checkpoint(ctx: JobContext, why: string): Promise<void> {
  const { state } = ctx;
  await settlePush(ctx);
  // A planning run keeps nothing the agent changed (plan.ts): no checkpoint commits or pushes it.
  if (!state.setup || state.planning) return;
  const { git } = ctx.deps;
  await git.restoreConfig();
  await git.recoverBranch(ctx.branch);
  state.knownHead = null;
  const sha = await git.commitAll(`autopilot: checkpoint for #${ctx.inputs.issue} (${why})\n`);
  if (ctx.config.dryRun) return;
  const head = sha ?? (await git.headSha());
  state.knownHead = head;
  if (sha || head !== state.setup.head) {
    // Secret guard: as in pushBranch.
    const push = { branch: ctx.branch, base: state.setup.base, head };
    state.result.humanGate = await guardPush(ctx.deps.pushGuard, push, state.result.humanGate);
    state.result.headSha = await publishBranch(ctx, head);
    state.result.commits = await git.countCommits(state.setup.base);
  }
}
