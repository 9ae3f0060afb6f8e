/**
 * `autopilot doctor`'s judgement, pure: from the facts read off a repository (src/github/setup/setup-facts.ts),
 * which checks pass, and for each one that does not, the exact fix. A check whose facts could not be read
 * (for example the App's installation without the App's credentials) is skipped, and says how to run it.
 */
import { parse as parseYaml } from "yaml";
import { type AutopilotConfig, DEFAULT_CONFIG, parseConfig } from "./config/index.js";
import { labelSpecs } from "./setup-files.js";

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

export interface AppRequirements {
  permissions: Record<string, string>;
  events: string[];
}

export interface SetupFacts {
  repo: string;
  defaultBranch: string;
  /** The App's installation on the repository; null: not installed; "unknown": no App credentials. */
  installation: AppRequirements | null | "unknown";
  /** What app.yml asks for. */
  required: AppRequirements;
  /** Whether GitHub Actions may run in the repository; null when it could not be read. */
  actionsEnabled: boolean | null;
  workerWorkflowPath: string;
  /** The worker workflow's text on the default branch, null when absent. */
  workerWorkflowText: string | null;
  /** The workflow's state (`active`, `disabled_manually`, …), null when GitHub does not list it. */
  workerWorkflowState: string | null;
  /** Every workflow file in `.github/workflows/` on the default branch. */
  workflows: { path: string; text: string }[];
  /** `.github/autopilot.yml` on the default branch, null when absent. */
  configText: string | null;
  labels: string[];
  /** The default branch's classic protection, null when none, "unknown" when the token may not read it. */
  protection: { requiredChecks: string[]; requiredApprovals: number } | null | "unknown";
  /** Rules that apply to the default branch and to a task branch (rulesets). */
  rules: {
    defaultBranch: string[];
    taskBranch: string[];
    requiredChecks: string[];
    requiredApprovals: number;
  };
  /** Check and status names seen on the default branch's head commit. */
  seenChecks: string[];
  /** Whether the token may push to the repository; null when unknown. */
  canPush: boolean | null;
  /** The open tracking issue, null when no session has run yet. */
  trackingIssue: { number: number; pinned: boolean } | null;
}

/** `warn`: works, but unsafe or costly; the fix says what to change. Only `fail` makes doctor exit 1. */
export type CheckStatus = "pass" | "warn" | "fail" | "skip";

export interface DoctorCheck {
  id: string;
  title: string;
  status: CheckStatus;
  /** What was found. */
  detail: string;
  /** What to do (empty when it passes). */
  fix: string;
}

const LEVEL: Record<string, number> = { read: 1, write: 2, admin: 3 };

function pass(id: string, title: string, detail: string): DoctorCheck {
  return { id, title, status: "pass", detail, fix: "" };
}

function failed(id: string, title: string, detail: string, fix: string): DoctorCheck {
  return { id, title, status: "fail", detail, fix };
}

function list(items: readonly string[]): string {
  return items.map((i) => `"${i}"`).join(", ");
}

function checkApp(facts: SetupFacts): DoctorCheck {
  const title = "GitHub App installed with the permissions and events Autopilot needs";
  if (facts.installation === "unknown") {
    return {
      id: "app",
      title,
      status: "skip",
      detail: "no App credentials to look the installation up with",
      fix: "Run doctor with APP_ID and PRIVATE_KEY (or PRIVATE_KEY_PATH) set to check the installation.",
    };
  }
  if (facts.installation === null) {
    return failed(
      "app",
      title,
      `the App is not installed on ${facts.repo}`,
      `Install the App on ${facts.repo} (its page on GitHub → Install App → select the repository).`,
    );
  }
  const have = facts.installation;
  const missing = Object.entries(facts.required.permissions)
    .filter(([name, level]) => (LEVEL[have.permissions[name] ?? ""] ?? 0) < (LEVEL[level] ?? 0))
    .map(([name, level]) => `${name}: ${level}`);
  const events = facts.required.events.filter((e) => !have.events.includes(e));
  if (missing.length === 0 && events.length === 0)
    return pass("app", title, "installed; permissions and events match app.yml");
  const parts = [
    ...(missing.length ? [`missing permissions ${missing.join(", ")}`] : []),
    ...(events.length ? [`not subscribed to ${events.join(", ")}`] : []),
  ];
  return failed(
    "app",
    title,
    parts.join("; "),
    "Edit the App (Settings → Developer settings → GitHub Apps → Permissions & events) to match app.yml, then accept the new permissions on the installation.",
  );
}

function checkActions(facts: SetupFacts): DoctorCheck {
  const title = "GitHub Actions enabled";
  if (facts.actionsEnabled === null)
    return {
      id: "actions",
      title,
      status: "skip",
      detail: "the token cannot read the Actions settings",
      fix: "Run doctor with an admin's token to check it.",
    };
  return facts.actionsEnabled
    ? pass("actions", title, "Actions may run")
    : failed(
        "actions",
        title,
        "Actions are disabled for the repository, so no worker can run",
        `Enable them: Settings → Actions → General → "Allow all actions and reusable workflows" (or allow ${"actions/*"} and Autopilot's action).`,
      );
}

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

function checkWorkerWorkflow(facts: SetupFacts, cli: string): DoctorCheck {
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

function checkPushToken(facts: SetupFacts): DoctorCheck {
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

function checkRepositoryCode(facts: SetupFacts): DoctorCheck {
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
  const named = steps.map((s) => `step "${s.step}" (job ${s.job}) ${s.why}`).join("; ");
  return {
    id,
    title,
    status: "warn",
    detail:
      `${named}: it runs as the runner's user, beside the job's secrets (the App's private key), where an ` +
      "agent-merged install script or a hostile dependency reads them",
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
function checkEndReconcile(facts: SetupFacts): DoctorCheck {
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

function configOf(facts: SetupFacts): { config: AutopilotConfig; error: string | null } {
  const result = parseConfig(facts.configText);
  return result.ok
    ? { config: result.config, error: null }
    : { config: DEFAULT_CONFIG, error: result.error.message };
}

function checkConfig(facts: SetupFacts): DoctorCheck {
  const title = ".github/autopilot.yml valid";
  if (facts.configText === null) return pass("config", title, "absent: the defaults apply");
  const { error } = configOf(facts);
  return error === null
    ? pass("config", title, "valid")
    : failed(
        "config",
        title,
        error.split("\n").slice(0, 6).join(" "),
        "Correct the keys named above (reference: docs/CONFIGURATION.md); until then Autopilot uses the defaults or the last good file.",
      );
}

function checkLabels(facts: SetupFacts, config: AutopilotConfig, cli: string): DoctorCheck {
  const title = "Autopilot's labels exist";
  const have = new Set(facts.labels.map((l) => l.toLowerCase()));
  const missing = labelSpecs(config.labels)
    .map((l) => l.name)
    .filter((name) => !have.has(name.toLowerCase()));
  return missing.length === 0
    ? pass("labels", title, "all present")
    : failed(
        "labels",
        title,
        `missing ${list(missing)}`,
        `Run \`${cli} init\` with GITHUB_TOKEN set (it creates them with colours and descriptions).`,
      );
}

function protectionOf(facts: SetupFacts) {
  return facts.protection === "unknown" ? null : facts.protection;
}

const PROTECTION_UNREADABLE =
  "the token may not read the default branch's protection (an admin's token, or an App with administration: read, may)";

function checkRequiredChecks(facts: SetupFacts, config: AutopilotConfig): DoctorCheck {
  const title = "Required checks exist and are named in merge.requiredChecks";
  const requiredByGitHub = [
    ...new Set([...(protectionOf(facts)?.requiredChecks ?? []), ...facts.rules.requiredChecks]),
  ];
  const configured = config.merge.requiredChecks;
  const problems: string[] = [];
  const fixes: string[] = [];
  if (configured.length > 0) {
    const notConfigured = requiredByGitHub.filter((c) => !configured.includes(c));
    if (notConfigured.length) {
      problems.push(
        `${facts.defaultBranch} requires ${list(notConfigured)}, which merge.requiredChecks does not name`,
      );
      fixes.push(`add ${list(notConfigured)} to merge.requiredChecks`);
    }
  }
  const expected = [...new Set([...configured, ...requiredByGitHub])];
  const neverSeen = expected.filter((c) => !facts.seenChecks.includes(c));
  if (neverSeen.length && facts.seenChecks.length > 0) {
    problems.push(
      `no check named ${list(neverSeen)} ran on ${facts.defaultBranch}'s last commit, so a PR would wait for it forever`,
    );
    fixes.push(`rename them to checks that run (seen: ${list(facts.seenChecks)})`);
  } else if (neverSeen.length) {
    problems.push(
      `no check ran on ${facts.defaultBranch}'s last commit, yet ${list(neverSeen)} are required`,
    );
    fixes.push("add a CI workflow that reports them on pull requests");
  }
  if (problems.length === 0 && facts.protection === "unknown")
    return {
      id: "required-checks",
      title,
      status: "skip",
      detail: PROTECTION_UNREADABLE,
      fix: "Run doctor with GITHUB_TOKEN set to an admin's token.",
    };
  if (problems.length === 0)
    return pass(
      "required-checks",
      title,
      requiredByGitHub.length || configured.length
        ? `required: ${list(expected)}`
        : "none required: every check on a PR counts",
    );
  return failed(
    "required-checks",
    title,
    problems.join("; "),
    `${fixes.join("; ")}.`.replace(/^./, (c) => c.toUpperCase()),
  );
}

function checkMergeQueue(facts: SetupFacts, config: AutopilotConfig): DoctorCheck {
  const title = "A merge queue, if any, is one Autopilot can use";
  if (!facts.rules.defaultBranch.includes("merge_queue")) return pass("merge-queue", title, "no merge queue");
  if (!config.merge.auto)
    return pass("merge-queue", title, "a merge queue, and merge.auto is false: people merge");
  // GitHub refuses the merge API there; Autopilot then adds the approved head to the queue itself
  // (src/github/execution/merge-mechanisms.ts), and the queue merges it once its required checks pass on the merge group.
  return pass(
    "merge-queue",
    title,
    `${facts.defaultBranch} requires a merge queue: Autopilot adds each pull request its gates approved to the queue (the workflows of its required checks must run on \`merge_group\`)`,
  );
}

function checkReviews(facts: SetupFacts, config: AutopilotConfig): DoctorCheck {
  const title = "Required reviews agree with the human gate";
  const approvals = Math.max(protectionOf(facts)?.requiredApprovals ?? 0, facts.rules.requiredApprovals);
  if (approvals === 0 && facts.protection === "unknown")
    return {
      id: "reviews",
      title,
      status: "skip",
      detail: PROTECTION_UNREADABLE,
      fix: "Run doctor with GITHUB_TOKEN set to an admin's token.",
    };
  if (approvals === 0) return pass("reviews", title, "no review required by GitHub: the human gate decides");
  if (!config.merge.auto)
    return pass("reviews", title, `${approvals} approval(s) required, and merge.auto is false`);
  if (config.humanGate.enabled && config.humanGate.paths.includes("**"))
    return pass("reviews", title, "the human gate asks for a review on every change");
  return failed(
    "reviews",
    title,
    `${facts.defaultBranch} requires ${approvals} approving review(s), but the human gate asks for one only on risky changes: every other task PR waits without anyone being asked`,
    'Either add `paths: ["**"]` under humanGate (every PR asks for a review), set merge.auto: false, or drop the required review for the default branch.',
  );
}

function checkPush(facts: SetupFacts, config: AutopilotConfig): DoctorCheck {
  const title = `The token can push to ${config.branchPrefix}… branches`;
  const blocked = facts.rules.taskBranch.filter((r) =>
    ["creation", "update", "non_fast_forward", "restrict_pushes"].includes(r),
  );
  if (facts.canPush === false)
    return failed(
      "push",
      title,
      "the token has no write access to the repository",
      "Give the App `contents: write` (app.yml) and accept it on the installation; a user token needs write access.",
    );
  if (blocked.length)
    return failed(
      "push",
      title,
      `rulesets restrict ${config.branchPrefix}issue-N branches (${blocked.join(", ")})`,
      `Exclude \`${config.branchPrefix}**\` from the ruleset, or add the App to its bypass list.`,
    );
  if (facts.canPush === null)
    return {
      id: "push",
      title,
      status: "skip",
      detail: "the token's access could not be read",
      fix: "Run doctor with the App's credentials.",
    };
  return pass("push", title, "write access, no ruleset on task branches");
}

function checkTracking(facts: SetupFacts): DoctorCheck {
  const title = "Tracking issue pinned";
  if (!facts.trackingIssue)
    return pass("tracking-issue", title, "none yet: the first session creates and pins it");
  if (facts.trackingIssue.pinned)
    return pass("tracking-issue", title, `#${facts.trackingIssue.number} is pinned`);
  return failed(
    "tracking-issue",
    title,
    `#${facts.trackingIssue.number} (the Autopilot dashboard) is not pinned, so people will not find it`,
    `Pin it: open #${facts.trackingIssue.number} → "Pin issue" (a repository pins at most three issues; unpin one if needed).`,
  );
}

/**
 * Every check, in the order a new installation meets them. `cli` is how the user runs Autopilot's commands in
 * the fixes (`npx github:OWNER/NAME`; `npx autopilot` would fetch the npm registry's unrelated `autopilot`).
 */
export function runDoctorChecks(facts: SetupFacts, cli = "npx github:OWNER/autopilot"): DoctorCheck[] {
  const { config } = configOf(facts);
  return [
    checkApp(facts),
    checkActions(facts),
    checkWorkerWorkflow(facts, cli),
    checkPushToken(facts),
    checkRepositoryCode(facts),
    checkEndReconcile(facts),
    checkConfig(facts),
    checkLabels(facts, config, cli),
    checkRequiredChecks(facts, config),
    checkMergeQueue(facts, config),
    checkReviews(facts, config),
    checkPush(facts, config),
    checkTracking(facts),
  ];
}

export function doctorPassed(checks: readonly DoctorCheck[]): boolean {
  return checks.every((c) => c.status !== "fail");
}

/** ✓ / ! / ✗ / – lines with the fix under each warning and failure. */
export function renderDoctorReport(repo: string, checks: readonly DoctorCheck[]): string[] {
  const lines = [`Autopilot doctor: ${repo}`, ""];
  for (const check of checks) {
    const mark =
      check.status === "pass" ? "✓" : check.status === "fail" ? "✗" : check.status === "warn" ? "!" : "–";
    lines.push(`${mark} ${check.title}: ${check.detail}`);
    if (check.status !== "pass" && check.fix) lines.push(`    fix: ${check.fix}`);
  }
  const failedCount = checks.filter((c) => c.status === "fail").length;
  lines.push("");
  const warned = checks.filter((c) => c.status === "warn").length;
  const warnings = warned ? ` ${warned} warning(s).` : "";
  lines.push(
    failedCount === 0 ? `All checks pass.${warnings}` : `${failedCount} check(s) failed.${warnings}`,
  );
  return lines;
}
