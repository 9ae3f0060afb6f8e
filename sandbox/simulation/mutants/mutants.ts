/**
 * The simulation's mutants: each turns off one subject of an invariant (a check the product makes) by rewriting
 * one exact piece of one product file as the simulation's worker processes load it (mutant-loader.mjs, a Node
 * module hook), so the product itself has no switch a deployment could flip. `npm run simulate -- --mutant <name>`
 * runs seeds under one until an invariant fails: the evidence that the invariants, and the worlds the generator
 * makes, would notice that check missing (docs/ARCHITECTURE.md "Mutants").
 *
 * A mutant whose `find` no longer occurs exactly once in its file refuses to load (and
 * test/sandbox/simulation-mutants.test.ts fails), so a mutant never silently turns into the unmutated product.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

export interface Mutant {
  name: string;
  /** The check turned off, in a few words. */
  subject: string;
  /** The invariant expected to catch it (sim-invariants.ts, sim-work-invariants.ts, sim-plan-invariants.ts). */
  caughtBy: string;
  /** The product file, relative to the repository's root. */
  file: string;
  find: string;
  replace: string;
}

export const MUTANTS: readonly Mutant[] = [
  {
    name: "dispatch-lock",
    subject: "the dispatch lock (a ref per task attempt taken before each dispatch)",
    caughtBy: "noTaskDispatchedTwiceAtOnce",
    file: "src/github/execution/dispatch-effect.ts",
    find: 'const lock = effect.resend ? "taken" : await takeDispatchLock(ctx, effect);',
    replace: 'const lock: DispatchLock = "taken";',
  },
  {
    name: "command-permission",
    subject: "the permission check on `/autopilot` commands",
    caughtBy: "sessionMovesOnlyByWriters",
    file: "src/core/reconcile/commands/comment-commands.ts",
    find: "if (!authority.authorized) {",
    replace: "if (authority.ignored) {",
  },
  {
    name: "merge-head-sha",
    subject: "the head SHA the merge is pinned to (GitHub's `sha` parameter)",
    caughtBy: "mergeOnlyWithEveryGate",
    file: "src/github/execution/executor.ts",
    find: "sha: effect.expectedHeadSha,\n            merge_method: effect.method,",
    replace: "merge_method: effect.method,",
  },
  {
    name: "ready-label-writer",
    subject: "the writer check on who set the ready label",
    caughtBy: "dispatchOnlyByWritersWord",
    file: "src/core/reconcile/runs/pool-dispatch.ts",
    find: "if (!by || !(sameLogin(by, snapshot.botLogin) || hasWriteAccess(snapshot.permissions, by))) {",
    replace: "if (!by) {",
  },
  {
    name: "human-gate-approval",
    subject: "the human gate's need of a writer's approval of the head",
    caughtBy: "mergeOnlyWithEveryGate",
    file: "src/core/gates/gates.ts",
    find: "const humanApproved = approvers.length > 0;",
    replace: "const humanApproved = true;",
  },
  {
    name: "reviewer-permission",
    subject: "the write-access check on reviewers (a reader's approval counting)",
    caughtBy: "mergeOnlyWithEveryGate",
    file: "src/core/gates/gates.ts",
    find: "if (!hasWriteAccess(options.permissions, review.author)) continue;",
    replace: "",
  },
  {
    name: "stale-changes-request",
    subject: "the wait for a writer whose changes request was on an earlier commit",
    caughtBy: "mergeOnlyWithEveryGate",
    file: "src/core/gates/gates.ts",
    find: "} else if (staleChangesRequested.length > 0) {",
    replace: "} else if (staleChangesRequested.length < 0) {",
  },
  {
    name: "text-editor-writer",
    subject: "the write-access check on who edited a task's text since a writer approved it",
    caughtBy: "promptHoldsOnlyWritersWords",
    file: "src/core/reconcile/text-approval.ts",
    find: "const isWriter = (login: string) => hasWriteAccess(ctx.snapshot.permissions, login);",
    replace: "const isWriter = (_login: string) => hasWriteAccess !== undefined;",
  },
  {
    name: "merged-branch-head",
    subject: "the condition on deleting a merged task's branch (only while it is at the merged head)",
    caughtBy: "noCommitLost",
    file: "src/core/reconcile/runs/task-exit.ts",
    find: 'ctx.effects.push({ type: "deleteBranch", branch: pr.headRef, expectOid: pr.headSha });',
    replace: 'ctx.effects.push({ type: "deleteBranch", branch: pr.headRef });',
  },
  {
    name: "dependency-wait",
    subject: "the wait for a task's open dependencies",
    caughtBy: "dependenciesDoneBeforeDispatch",
    file: "src/core/tasks/ready-tasks.ts",
    find: "if (on.length > 0) {",
    replace: "if (on.length < 0) {",
  },
  {
    name: "plan-approval",
    subject: "the plan gate's wait for a writer's approval (a proposed plan taken as approved)",
    caughtBy: "planGatedWorkOnlyOnWritersApproval",
    file: "src/core/reconcile/commands/plan-approval.ts",
    find: "if (record.plan?.approvedBy) return record.plan.digest;",
    replace: "if (record.plan) return record.plan.digest;",
  },
  {
    name: "session-budget",
    subject: "the session budget's check (a session whose spend reached its budget pauses)",
    caughtBy: "budgetsNeverExceeded",
    file: "src/core/reconcile/session-end.ts",
    find: 'if (over) sessionEvent(ctx, { type: "budgetExhausted", detail: over, activeWorkers: liveCount(ctx) });',
    replace: "void over;",
  },
];

const ROOT = new URL("../../../", import.meta.url);

export function mutantNamed(name: string): Mutant | undefined {
  return MUTANTS.find((m) => m.name === name);
}

/** The product file's URL, as Node's loader names it. */
function mutantTarget(mutant: Mutant): string {
  return new URL(mutant.file, ROOT).href;
}

/** How often the mutant's `find` occurs in its file today (1, or the mutant is stale). */
export function occurrences(mutant: Mutant): number {
  const text = readFileSync(fileURLToPath(mutantTarget(mutant)), "utf8");
  return text.split(mutant.find).length - 1;
}

/** The `node --import` argument and the environment that load the product with this mutant in a child process. */
export function mutantChildOptions(mutant: Mutant): { importUrl: string; env: NodeJS.ProcessEnv } {
  return {
    importUrl: new URL("./mutant-loader.mjs", import.meta.url).href,
    env: {
      ...process.env,
      SIM_MUTANT: JSON.stringify({
        name: mutant.name,
        url: mutantTarget(mutant),
        find: mutant.find,
        replace: mutant.replace,
      }),
    },
  };
}
