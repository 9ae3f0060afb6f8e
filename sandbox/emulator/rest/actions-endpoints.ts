/** REST handlers of GitHub Actions: workflows, their dispatch, workflow runs and jobs. */
import { readWorkflow } from "../actions/workflow-template.js";
import type { Repo, SandboxStore, WorkflowRun } from "../store.js";
import {
  bodyObject,
  countedList,
  fail,
  num,
  type RestHandler,
  type RestReply,
  type RestRequest,
  repoOf,
  str,
} from "./rest-helpers.js";

/** Registers workflow files found under `.github/workflows` (the git backend or in-memory files). */
async function discoverWorkflows(req: RestRequest, repo: Repo): Promise<void> {
  let entries: Awaited<ReturnType<SandboxStore["listDirectory"]>> = null;
  try {
    entries = await req.store.listDirectory(repo.fullName, ".github/workflows");
  } catch {
    return;
  }
  for (const entry of entries ?? []) {
    if (entry.type !== "file" || !/\.ya?ml$/.test(entry.name)) continue;
    if (req.store.getWorkflow(repo.fullName, entry.path)) continue;
    const text = (await req.store.readFile(repo.fullName, entry.path).catch(() => null))?.toString("utf8");
    // A workflow GitHub's parser rejects is still a workflow, named by its path.
    const name = text ? (await readWorkflow(entry.path, text)).workflow?.name : null;
    req.store.addWorkflow(repo.fullName, { path: entry.path, ...(name ? { name } : {}) });
  }
}

/** GitHub's checks on dispatch inputs, when the workflow file can be read. */
async function checkDispatchInputs(
  req: RestRequest,
  repo: Repo,
  path: string,
  ref: string,
  inputs: Record<string, string>,
): Promise<void> {
  let text: string | undefined;
  try {
    text = (await req.store.readFile(repo.fullName, path, ref))?.toString("utf8");
  } catch {
    return;
  }
  if (!text) return;
  // A file GitHub's parser rejects is dispatched anyway: its run fails at startup with the parser's messages.
  const workflow = (await readWorkflow(path, text)).workflow;
  if (!workflow) return;
  const dispatch = workflow.events.workflow_dispatch;
  if (!dispatch) fail(422, "Workflow does not have 'workflow_dispatch' trigger");
  const known: Record<string, { required?: boolean; default?: unknown }> = dispatch?.inputs ?? {};
  const unexpected = Object.keys(inputs).filter((k) => !(k in known));
  if (unexpected.length) fail(422, `Unexpected inputs provided: ${JSON.stringify(unexpected)}`);
  const missing = Object.entries(known)
    .filter(([k, v]) => v.required === true && !(k in inputs) && v.default === undefined)
    .map(([k]) => k);
  if (missing.length)
    fail(422, `Required input${missing.length > 1 ? "s" : ""} '${missing.join("', '")}' not provided`);
}

function parseCreated(filter: string | undefined): { from?: Date; to?: Date } {
  if (!filter) return {};
  const range = /^(.+)\.\.(.+)$/.exec(filter);
  if (range) return { from: new Date(range[1]!), to: new Date(range[2]!) };
  const cmp = /^(>=|<=|>|<)?(.+)$/.exec(filter)!;
  const date = new Date(cmp[2]!);
  if (cmp[1] === ">=" || cmp[1] === ">") return { from: date };
  if (cmp[1] === "<=" || cmp[1] === "<") return { to: date };
  return { from: date, to: new Date(date.getTime() + 86_400_000 - 1) };
}

async function requireWorkflow(req: RestRequest, repo: Repo) {
  const id = req.params.workflow_id ?? "";
  let workflow = req.store.getWorkflow(repo.fullName, id);
  if (!workflow) {
    await discoverWorkflows(req, repo);
    workflow = req.store.getWorkflow(repo.fullName, id);
  }
  if (!workflow) fail(404, "Not Found");
  return workflow;
}

function runsReply(req: RestRequest, repo: Repo, runs: WorkflowRun[]): RestReply {
  return countedList(req, "workflow_runs", runs, (r) => req.shapes.workflowRun(repo, r));
}

function filterRuns(req: RestRequest, repo: Repo, workflow?: number): WorkflowRun[] {
  const created = parseCreated(req.query.created);
  return req.store.listWorkflowRuns(repo.fullName, {
    ...(workflow !== undefined ? { workflow } : {}),
    ...(req.query.status ? { status: req.query.status } : {}),
    ...(req.query.branch ? { branch: req.query.branch } : {}),
    ...(req.query.event ? { event: req.query.event } : {}),
    ...(req.query.actor ? { actor: req.query.actor } : {}),
    ...(req.query.head_sha ? { headSha: req.query.head_sha } : {}),
    ...(created.from ? { createdFrom: created.from } : {}),
    ...(created.to ? { createdTo: created.to } : {}),
  });
}

function cancelWorkflowRun(force: boolean): RestHandler {
  return (req) => {
    const repo = repoOf(req);
    req.store.cancelWorkflowRun(repo.fullName, num(req.params.run_id), req.identity.login, { force });
    return { status: 202, body: {} };
  };
}

export const actionsEndpoints: Record<string, RestHandler> = {
  "actions/list-repo-workflows": async (req) => {
    const repo = repoOf(req);
    await discoverWorkflows(req, repo);
    const workflows = req.store.listWorkflows(repo.fullName);
    return countedList(req, "workflows", workflows, (w) => req.shapes.workflow(repo, w));
  },

  "actions/get-workflow": async (req) => {
    const repo = repoOf(req);
    return { status: 200, body: req.shapes.workflow(repo, await requireWorkflow(req, repo)) };
  },

  "actions/create-workflow-dispatch": async (req) => {
    const repo = repoOf(req);
    const workflow = await requireWorkflow(req, repo);
    const b = bodyObject(req);
    const ref = str(b, "ref") ?? "";
    const rawInputs = (b.inputs ?? {}) as Record<string, unknown>;
    const inputs: Record<string, string> = {};
    for (const [k, v] of Object.entries(rawInputs)) inputs[k] = typeof v === "string" ? v : JSON.stringify(v);
    // At most 25 inputs and 65,535 characters of them:
    // https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-syntax#onworkflow_dispatchinputs
    if (Object.keys(inputs).length > 25)
      fail(422, "you may only define up to 25 `inputs` for a `workflow_dispatch` event");
    if (JSON.stringify(inputs).length > 65_535)
      fail(422, "inputs are too large: the payload for inputs may be at most 65,535 characters");
    await checkDispatchInputs(req, repo, workflow.path, ref, inputs);
    const run = await req.store.dispatchWorkflow(repo.fullName, workflow.id, {
      ref,
      inputs,
      actor: req.identity.login,
    });
    if (b.return_run_details === true) {
      return {
        status: 200,
        body: {
          workflow_run_id: run.id,
          run_url: `${req.shapes.repoApi(repo)}/actions/runs/${run.id}`,
          html_url: `${req.shapes.repoHtml(repo)}/actions/runs/${run.id}`,
        },
      };
    }
    return { status: 204 };
  },

  "actions/list-workflow-runs": async (req) => {
    const repo = repoOf(req);
    const workflow = await requireWorkflow(req, repo);
    return runsReply(req, repo, filterRuns(req, repo, workflow.id));
  },

  "actions/list-workflow-runs-for-repo": (req) => {
    const repo = repoOf(req);
    return runsReply(req, repo, filterRuns(req, repo));
  },

  "actions/get-workflow-run": (req) => {
    const repo = repoOf(req);
    const run = req.store.getWorkflowRun(repo.fullName, num(req.params.run_id));
    if (!run) fail(404, "Not Found");
    return { status: 200, body: req.shapes.workflowRun(repo, run) };
  },

  "actions/cancel-workflow-run": cancelWorkflowRun(false),

  // A forced cancel "bypasses conditions that would otherwise cause a workflow execution to continue, such
  // as an `always()` condition": no step runs after it.
  // https://docs.github.com/en/rest/actions/workflow-runs#force-cancel-a-workflow-run
  "actions/force-cancel-workflow-run": cancelWorkflowRun(true),

  "actions/re-run-workflow": (req) => {
    const repo = repoOf(req);
    req.store.rerunWorkflowRun(repo.fullName, num(req.params.run_id), req.identity.login);
    return { status: 201, body: {} };
  },

  // https://docs.github.com/en/rest/actions/artifacts (listing and reading; the download of an archive is not
  // modelled: tests read an artifact's files from the store).
  "actions/list-artifacts-for-repo": (req) => {
    const repo = repoOf(req);
    const artifacts = req.store.listArtifacts(repo.fullName, req.query.name ? { name: req.query.name } : {});
    return countedList(req, "artifacts", artifacts, (a) => req.shapes.artifact(repo, a));
  },

  "actions/list-workflow-run-artifacts": (req) => {
    const repo = repoOf(req);
    const artifacts = req.store.listArtifacts(repo.fullName, {
      runId: num(req.params.run_id),
      ...(req.query.name ? { name: req.query.name } : {}),
    });
    return countedList(req, "artifacts", artifacts, (a) => req.shapes.artifact(repo, a));
  },

  "actions/get-artifact": (req) => {
    const repo = repoOf(req);
    const id = num(req.params.artifact_id);
    const artifact = req.store.listArtifacts(repo.fullName).find((a) => a.id === id);
    if (!artifact) fail(404, "Not Found");
    return { status: 200, body: req.shapes.artifact(repo, artifact) };
  },

  "actions/list-jobs-for-workflow-run": (req) => {
    const repo = repoOf(req);
    const run = req.store.getWorkflowRun(repo.fullName, num(req.params.run_id));
    if (!run) fail(404, "Not Found");
    return countedList(req, "jobs", run.jobs, (j) => req.shapes.job(repo, run, j));
  },

  "actions/get-job-for-workflow-run": (req) => {
    const repo = repoOf(req);
    const found = req.store.getWorkflowJob(repo.fullName, num(req.params.job_id));
    if (!found) fail(404, "Not Found");
    return { status: 200, body: req.shapes.job(repo, found.run, found.job) };
  },
};
