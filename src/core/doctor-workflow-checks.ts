/**
 * `autopilot doctor`'s checks of the worker workflow, pure: it is there and dispatchable with the inputs
 * Autopilot sends, pushes with a token whose pushes start workflows, runs no repository code outside the
 * worker, and a worker run's end is reconciled once (src/core/doctor-checks.ts runs them in order).
 */
import { parse as parseYaml } from "yaml";
import { type DoctorCheck, failed, itemized, list, pass, type SetupFacts } from "./doctor-facts.js";

/** Inputs the controller sends with every worker dispatch (docs/ARCHITECTURE.md, "Dispatch"). */
const WORKER_INPUTS = [
  "issue",
  "attempt",
  "dispatch-id",
  "tracking-issue",
  "task-digest",
  "config-digest",
  "config",
] as const;

interface WorkflowShape {
  on?: unknown;
  jobs?: unknown;
}

function dispatchInputs(text: string): { dispatch: boolean; inputs: string[] } | null {
  let doc: WorkflowShape;
  try {
    doc = parseYaml(text) as WorkflowShape;
  } catch {
    return null;
  }
  if (!doc || typeof doc !== "object") return null;
  const on = doc.on;
  if (on === "workflow_dispatch") return { dispatch: true, inputs: [] };
  if (Array.isArray(on)) return { dispatch: on.includes("workflow_dispatch"), inputs: [] };
  if (!on || typeof on !== "object" || !("workflow_dispatch" in on)) return { dispatch: false, inputs: [] };
  const dispatch = (on as Record<string, unknown>).workflow_dispatch;
  const inputs =
    dispatch && typeof dispatch === "object" && (dispatch as { inputs?: unknown }).inputs
      ? Object.keys((dispatch as { inputs: object }).inputs)
      : [];
  return { dispatch: true, inputs };
}

export function checkWorkerWorkflow(facts: SetupFacts, cli: string): DoctorCheck {
  const title = `Worker workflow ${facts.workerWorkflowPath} on ${facts.defaultBranch}, started by workflow_dispatch with Autopilot's inputs`;
  const fix = `Run \`${cli} init\` and push ${facts.workerWorkflowPath} to ${facts.defaultBranch}.`;
  if (facts.workerWorkflowText === null)
    return failed(
      "worker-workflow",
      title,
      `${facts.workerWorkflowPath} is not on ${facts.defaultBranch}`,
      fix,
    );
  const shape = dispatchInputs(facts.workerWorkflowText);
  if (!shape) return failed("worker-workflow", title, "the file is not valid YAML", fix);
  if (!shape.dispatch)
    return failed(
      "worker-workflow",
      title,
      "it has no `on: workflow_dispatch`, so the controller cannot start it",
      fix,
    );
  const missing = WORKER_INPUTS.filter((input) => !shape.inputs.includes(input));
  if (missing.length)
    return failed(
      "worker-workflow",
      title,
      `workflow_dispatch lacks the inputs ${list(missing)}, so GitHub rejects every dispatch (422)`,
      `Add the inputs ${list(missing)} under on.workflow_dispatch.inputs (see templates/workflows/autopilot-worker.yml), or ${fix[0]!.toLowerCase()}${fix.slice(1)}`,
    );
  if (facts.workerWorkflowState && facts.workerWorkflowState !== "active")
    return failed(
      "worker-workflow",
      title,
      `the workflow is ${facts.workerWorkflowState}`,
      `Enable it: Actions → ${facts.workerWorkflowPath} → "Enable workflow".`,
    );
  return pass("worker-workflow", title, "present, dispatchable, with every input");
}

export function checkPushToken(facts: SetupFacts): DoctorCheck {
  const title = "The worker pushes with a token whose pushes start workflows";
  if (facts.workerWorkflowText === null)
    return {
      id: "push-token",
      title,
      status: "skip",
      detail: "no worker workflow to read",
      fix: "Fix the worker workflow first.",
    };
  const uses = /github-token:\s*\$\{\{\s*(secrets\.GITHUB_TOKEN|github\.token)\s*\}\}/.exec(
    facts.workerWorkflowText,
  );
  if (uses)
    return failed(
      "push-token",
      title,
      `the worker is given ${uses[1]}: pushes made with it start no workflow runs, so a task PR's checks never run`,
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a GitHub Actions expression, not a template
      "Pass the App's token instead: an actions/create-github-app-token step and `github-token: ${{ steps.app-token.outputs.token }}` (as templates/workflows/autopilot-worker.yml does).",
    );
  return pass("push-token", title, "the worker gets a token other than the workflow's GITHUB_TOKEN");
}

/**
 * Shell commands that run the repository's code: installs (lifecycle scripts), builds, tests, task runners, and
 * scripts of the checkout. A global install of a named package (`npm install -g <cli>`) or `pip install <name>`
 * runs no repository code; `pip install -r …`, `-e …` or `.` does.
 */
const REPOSITORY_CODE: readonly RegExp[] = [
  /\bnpm\s+(?:ci|install|i|add|run|run-script|test|t|start|exec|rebuild|pack)\b(?![^\n]*(?:\s-g\b|\s--global\b))/,
  /\bnpm\s+(?:install|i)\b[^\n]*\s(?:-g|--global)\s+(?:\.|\/)/,
  /\b(?:npx|yarn|pnpm|bun|bunx|corepack)\b/,
  /\bpip3?\s+install\b[^\n]*\s(?:-r|--requirement|-e|--editable|-c|--constraint)\b/,
  /\bpip3?\s+install\b[^\n]*\s\.{1,2}(?:\/|\s|$)/,
  /\b(?:poetry|pipenv|uv|pdm|hatch)\s+(?:install|sync|run|build)\b/,
  /\b(?:tox|nox|pytest)\b|\bpython3?\s+(?:-m\s+pytest|setup\.py)\b/,
  /(?:^|[\s;&|(])make\b/,
  /\bcargo\s+(?:build|test|run|check|bench|clippy|doc|install\s+--path)\b/,
  /\bgo\s+(?:build|test|run|generate|vet|install)\b/,
  /\b(?:gradle|mvn|ant|sbt|rake)\b|\.\/(?:gradlew|mvnw)\b/,
  /\bbundle\s+(?:install|exec)\b|\bdotnet\s+(?:build|test|run|restore|pack)\b/,
  /\b(?:bash|sh|zsh|node|deno|python3?|ruby|perl|php)\s+(?!-)[\w./-]+\.(?:sh|js|mjs|cjs|ts|py|rb|pl|php)\b/,
  /(?:^|[\s;&|(])\.{1,2}\/[\w./-]+/,
];

interface WorkflowStep {
  name?: unknown;
  uses?: unknown;
  run?: unknown;
}

/** The steps of the worker workflow that run the repository's code outside the worker, by job. */
export function repositoryCodeSteps(workflowText: string): { job: string; step: string; why: string }[] {
  let workflow: { jobs?: Record<string, { steps?: WorkflowStep[] }> } | null;
  try {
    workflow = parseYaml(workflowText) as typeof workflow;
  } catch {
    return [];
  }
  const found: { job: string; step: string; why: string }[] = [];
  for (const [job, spec] of Object.entries(workflow?.jobs ?? {})) {
    for (const [index, step] of (Array.isArray(spec?.steps) ? spec.steps : []).entries()) {
      const label =
        typeof step?.name === "string" && step.name.trim()
          ? step.name.trim()
          : typeof step?.uses === "string"
            ? step.uses
            : typeof step?.run === "string"
              ? step.run.trim().split("\n")[0]!.slice(0, 60)
              : `step ${index + 1}`;
      if (typeof step?.uses === "string" && step.uses.trim().startsWith("./"))
        found.push({
          job,
          step: label,
          why: `a local action (${step.uses.trim()}) is the repository's code`,
        });
      if (typeof step?.run !== "string") continue;
      const line = step.run
        .split("\n")
        .map((l) => l.replace(/(?:^|\s)#.*$/, "").trim())
        .find((l) => l && REPOSITORY_CODE.some((re) => re.test(l)));
      if (line) found.push({ job, step: label, why: `runs \`${line.slice(0, 80)}\`` });
    }
  }
  return found;
}

/** A check of the worker workflow's steps when there is no worker workflow: skipped, after the check that fails for it. */
function noWorkerWorkflow(id: string, title: string): DoctorCheck {
  return {
    id,
    title,
    status: "skip",
    detail: "no worker workflow to read",
    fix: "Fix the worker workflow first.",
  };
}

export function checkRepositoryCode(facts: SetupFacts): DoctorCheck {
  const id = "repository-code";
  const title = "The worker workflow runs no repository code outside the worker";
  if (facts.workerWorkflowText === null) return noWorkerWorkflow(id, title);
  const steps = repositoryCodeSteps(facts.workerWorkflowText);
  if (steps.length === 0)
    return pass(
      id,
      title,
      "installs, builds and tests run only inside the worker (`setup:`, quality commands)",
    );
  const named = steps.map((s) => `step "${s.step}" (job ${s.job}) ${s.why}`);
  const risk =
    "as the runner's user, beside the job's secrets (the App's private key), where an agent-merged install " +
    "script or a hostile dependency reads them";
  return {
    id,
    title,
    status: "warn",
    detail: itemized(
      `these steps run ${risk}:`,
      named.length === 1 ? [`${named[0]}: it runs ${risk}`] : named,
    ),
    fix:
      "Move the command into `setup:` in .github/autopilot.yml (the worker runs it once, inside its sandbox, as " +
      "the agent's user) and delete the step; keep only toolchain installs (actions/setup-node, …) in the workflow.",
  };
}

/** The steps of a workflow that use Autopilot's controller action, and whether each passes `ending-run`. */
function controllerSteps(workflowText: string): { ending: boolean }[] {
  let workflow: { jobs?: Record<string, { steps?: { uses?: unknown; with?: Record<string, unknown> }[] }> };
  try {
    workflow = parseYaml(workflowText) as typeof workflow;
  } catch {
    return [];
  }
  return Object.values(workflow?.jobs ?? {}).flatMap((job) =>
    (Array.isArray(job?.steps) ? job.steps : [])
      .filter((step) => typeof step?.uses === "string" && /(^|\/)autopilot\/controller@/i.test(step.uses))
      .map((step) => ({ ending: String(step.with?.["ending-run"] ?? "").trim() !== "" })),
  );
}

/**
 * The worker's last step (the controller action with `ending-run`) and the controller workflow's skip of a
 * successful worker run's end go together (docs/CONTROLLER.md, "What it costs in runs"): the skip without the
 * step leaves every finished worker to the schedule; the step without a controller workflow (the hosted app)
 * reconciles beside the app.
 */
export function checkEndReconcile(facts: SetupFacts): DoctorCheck {
  const id = "end-reconcile";
  const title = "A worker run's end is reconciled once, at once";
  if (facts.workerWorkflowText === null) return noWorkerWorkflow(id, title);
  const workerEnds = controllerSteps(facts.workerWorkflowText).some((s) => s.ending);
  const controllers = facts.workflows.filter(
    (w) => w.path !== facts.workerWorkflowPath && controllerSteps(w.text).some((s) => !s.ending),
  );
  const skipping = controllers.filter((w) => /workflow_run\.conclusion\s*==\s*'success'/.test(w.text));
  const step =
    "the last step of templates/workflows/autopilot-worker.yml (the controller action with `ending-run`, given the run's own `github.run_id`)";
  if (controllers.length === 0) {
    return workerEnds
      ? {
          id,
          title,
          status: "warn",
          detail:
            "the worker workflow's last step reconciles the run's end, but no workflow here runs the controller: with the hosted app that step reconciles beside it",
          fix: "With the hosted app, delete that step (`autopilot init --mode app` writes the template without it); in Actions mode, add the controller workflow (templates/workflows/autopilot-controller.yml).",
        }
      : pass(id, title, "no controller workflow: the hosted app reconciles each worker run's end");
  }
  if (skipping.length > 0 && !workerEnds)
    return {
      id,
      title,
      status: "warn",
      detail: `${skipping.map((w) => w.path).join(", ")} skips the end of a worker run that succeeded, but the worker workflow has no step that reconciles it: each finished worker waits for the schedule (up to 10 minutes)`,
      fix: `Add ${step} after the Autopilot step of ${facts.workerWorkflowPath}.`,
    };
  if (!workerEnds)
    return pass(id, title, "the controller workflow reconciles every worker run's end (a billed job each)");
  return skipping.length > 0
    ? pass(
        id,
        title,
        "the worker's last step reconciles its end; the controller workflow skips a successful end",
      )
    : pass(
        id,
        title,
        "the worker's last step reconciles its end; the controller workflow still runs on it too (copy templates/workflows/autopilot-controller.yml to save that job)",
      );
}
