/** Listing the worker workflow's runs for the snapshot; each run's title names its task attempt. */
import { parseRunTitle } from "../../core/contract.js";
import type { RunNode } from "../../core/world.js";
import { statusOf } from "../transport/errors.js";
import type { SnapshotContext } from "./snapshot-context.js";

interface RestRun {
  id: number;
  name?: string | null;
  display_title?: string;
  status: string | null;
  conclusion: string | null;
  created_at: string;
  updated_at: string;
}

const ACTIVE = new Set(["queued", "in_progress", "waiting", "pending", "requested"]);

/** The worker workflow's dispatched runs, newest first: later pages only while runs on the last one are live. */
export async function fetchWorkerRuns(
  ctx: Pick<SnapshotContext, "client" | "repo" | "read" | "log">,
  workflow: string,
): Promise<RunNode[]> {
  const runs: RunNode[] = [];
  for (let page = 1; page <= 3; page++) {
    let data: { workflow_runs?: RestRun[] };
    try {
      const response = await ctx.read(() =>
        ctx.client.request("GET /repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs", {
          owner: ctx.repo.owner,
          repo: ctx.repo.name,
          workflow_id: workflow,
          event: "workflow_dispatch",
          exclude_pull_requests: true,
          per_page: 50,
          page,
        }),
      );
      data = response.data as { workflow_runs?: RestRun[] };
    } catch (error) {
      if (statusOf(error) === 404) {
        ctx.log.warn(`worker workflow ${workflow} not found in ${ctx.repo.owner}/${ctx.repo.name}`);
        return runs;
      }
      throw error;
    }
    const list = data.workflow_runs ?? [];
    for (const run of list) {
      const title = run.display_title ?? run.name ?? "";
      const parsed = parseRunTitle(title);
      const status = (run.status ?? "queued") as RunNode["status"];
      runs.push({
        id: run.id,
        workflow,
        displayTitle: title,
        status,
        conclusion: run.conclusion,
        createdAt: run.created_at,
        updatedAt: run.updated_at,
        dispatchId: parsed?.dispatchId ?? null,
        issue: parsed?.issue ?? null,
        attempt: parsed?.attempt ?? null,
      });
    }
    // Newest first: another page only while the oldest run on this one is still live.
    const oldest = list[list.length - 1];
    if (list.length < 50 || !oldest || !ACTIVE.has(oldest.status ?? "")) break;
  }
  return runs;
}
