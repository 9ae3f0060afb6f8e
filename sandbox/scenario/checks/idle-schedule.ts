/**
 * The Actions controller's schedule over a quiet stretch of a scenario: between an Autopilot comment (`after`) or,
 * when later, the end of the last worker run before the stretch's end — plus `afterSeconds` for the run it came
 * from and the one its effects ask for — and the next comment matching `before`, how many scheduled controller
 * runs had their job run (billed) and how many were skipped (free). A worker still running keeps the controller
 * awake by design (a pausing session waits for its checkpoint), however long a loaded machine makes it take.
 * Checked against `expect.actions.idleSchedule` by expectations.ts.
 */
import { CONTROLLER_WORKFLOW_PATH } from "../controllers/controller-mode.js";
import type { SandboxStore } from "../../emulator/store.js";

type QuietStretch =
  | { found: false; why: string }
  | { found: true; seconds: number; ran: number; skipped: number };

export function scheduledRunsInStretch(
  store: SandboxStore,
  repoFull: string,
  humans: Set<string>,
  stretch: { after: string; afterSeconds: number; before: string },
): QuietStretch {
  const comments = [...store.listComments(repoFull)].sort(
    (a, b) => a.createdAt.getTime() - b.createdAt.getTime(),
  );
  const from = comments.find(
    (c) => !humans.has(c.user.toLowerCase()) && new RegExp(stretch.after, "i").test(c.body),
  );
  if (!from) return { found: false, why: `no comment by Autopilot matches /${stretch.after}/` };
  const afterComment = from.createdAt.getTime() + stretch.afterSeconds * 1000;
  const ends = comments.find(
    (c) => c.createdAt.getTime() > afterComment && new RegExp(stretch.before, "i").test(c.body),
  );
  if (!ends) return { found: false, why: `no comment matches /${stretch.before}/ after the stretch began` };
  const workflow = store.getWorkflow(repoFull, CONTROLLER_WORKFLOW_PATH);
  // Worker runs are the dispatched runs of the other workflow; the last to end before the stretch's end.
  const workerEnd = Math.max(
    0,
    ...store
      .listWorkflowRuns(repoFull, { event: "workflow_dispatch" })
      .filter((r) => r.workflowId !== workflow?.id && r.status === "completed")
      .map((r) => r.updatedAt.getTime())
      .filter((t) => t < ends.createdAt.getTime()),
  );
  const start = Math.max(afterComment, workerEnd + stretch.afterSeconds * 1000);
  const to = comments.find(
    (c) => c.createdAt.getTime() > start && new RegExp(stretch.before, "i").test(c.body),
  );
  if (!to) return { found: false, why: `no comment matches /${stretch.before}/ after the stretch began` };
  const scheduled = (
    workflow ? store.listWorkflowRuns(repoFull, { workflow: workflow.id, event: "schedule" }) : []
  ).filter((r) => r.createdAt.getTime() >= start && r.createdAt.getTime() < to.createdAt.getTime());
  return {
    found: true,
    seconds: (to.createdAt.getTime() - start) / 1000,
    ran: scheduled.filter((r) => r.conclusion !== "skipped" && r.runStartedAt !== null).length,
    skipped: scheduled.filter((r) => r.conclusion === "skipped").length,
  };
}
