/**
 * The simulation's invariant on the plan gate (docs/CONTROLLER.md "The plan gate"): a plan-gated task's code is
 * written only from a plan a writer approved. A named function over the store and what the simulation recorded,
 * as in sim-invariants.ts.
 */
import { planFromComment } from "../../src/core/tasks/task-plan.js";
import type { SimObservation, Violation } from "./sim-invariants.js";
import type { SimDispatch } from "./sim-worker.js";

/** The configuration's `planGate`, as the world's configuration file sets it. */
interface PlanGateSetting {
  enabled: boolean;
  label: string;
}

/**
 * No plan-gated task runs an implementing job before a writer approved the plan it runs from: a task the gate
 * applies to (every task when `planGate.enabled`, else one carrying its label) is dispatched either as a planning
 * run (`plan: "propose"` in its `config` input) or with the digest of a plan Autopilot posted on the task, and a
 * writer's `/autopilot approve` of the task came after that plan was posted. A non-writer's approval never
 * counts. Checked at each dispatch.
 */
export function planGatedWorkOnlyOnWritersApproval(
  o: SimObservation,
  dispatch: SimDispatch,
  gate: PlanGateSetting,
): Violation[] {
  const issue = o.store.getIssue(o.repo, dispatch.issue);
  if (!issue) return [];
  const gated = gate.enabled || issue.labels.map(String).includes(gate.label);
  // A splitting run (`/autopilot split`) is a planning run of its own command.
  if (!gated || dispatch.plan === "propose" || dispatch.plan === "split") return [];
  const fail = (detail: string): Violation[] => [
    { invariant: "planGatedWorkOnlyOnWritersApproval", atSeconds: o.elapsed(), detail },
  ];
  const digest = dispatch.plan;
  if (digest === null)
    return fail(`plan-gated #${dispatch.issue} dispatched to implement (run ${dispatch.runId}) with no plan`);
  const comments = o.store.listComments(o.repo, dispatch.issue);
  const posted = comments.find(
    (c) => c.user.toLowerCase() === o.bot.toLowerCase() && planFromComment(c.body, digest) !== null,
  );
  if (!posted)
    return fail(
      `#${dispatch.issue} dispatched (run ${dispatch.runId}) on plan ${digest.slice(0, 12)}, which Autopilot never posted`,
    );
  const approvals = o.store
    .listComments(o.repo)
    .filter((c) => c.id > posted.id && approves(c.body, dispatch.issue, c.issueNumber === dispatch.issue));
  if (approvals.some((c) => o.writers.has(c.user.toLowerCase()))) return [];
  const others = approvals.map((c) => c.user);
  return fail(
    `#${dispatch.issue} dispatched (run ${dispatch.runId}) on plan ${digest.slice(0, 12)} that no writer approved` +
      (others.length ? ` (approved by ${[...new Set(others)].join(", ")}, not writers)` : ""),
  );
}

/** Whether a comment is `/autopilot approve #N`, or a bare `/autopilot approve` on the task itself. */
function approves(body: string, issue: number, onTask: boolean): boolean {
  const command = /^\/autopilot approve(?:\s+#(\d+))?\s*$/.exec(body.trim());
  if (!command) return false;
  return command[1] === undefined ? onTask : Number(command[1]) === issue;
}
