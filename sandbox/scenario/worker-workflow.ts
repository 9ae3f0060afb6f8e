/**
 * The worker workflow a scenario repository gets unless it brings its own (`.github/workflows/<workerWorkflow>`).
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { PACKAGE_ROOT } from "../../src/cli/package-root.js";
import { withoutEndReconcile } from "../../src/core/setup-files.js";

const WORKER_TEMPLATE = join(PACKAGE_ROOT, "templates", "workflows", "autopilot-worker.yml");

/**
 * The worker workflow a scenario repository gets unless it brings its own: the product's template
 * (templates/workflows/autopilot-worker.yml) with the agent-CLI install steps dropped (the demo agent needs
 * none, and the sandbox has no registry) and the job's time limit set; a built-in equivalent without it.
 */
export function workerWorkflowYaml(options: {
  jobTimeoutMinutes: number;
  /** The hosted app: the template as `autopilot init --mode app` writes it (no end-of-run reconcile step). */
  hostedController?: boolean;
}): string {
  if (existsSync(WORKER_TEMPLATE)) {
    const template = readFileSync(WORKER_TEMPLATE, "utf8");
    const text = options.hostedController ? withoutEndReconcile(template) : template;
    const workflow = parseYaml(text) as {
      jobs?: Record<string, { steps?: { run?: string }[]; "timeout-minutes"?: number }>;
    };
    for (const job of Object.values(workflow.jobs ?? {})) {
      job["timeout-minutes"] = options.jobTimeoutMinutes;
      job.steps = (job.steps ?? []).filter(
        (step) => !/\bnpm\s+(install|i)\b[^\n]*\s-g\b|\bnpm\s+(install|i)\s+-g\b/.test(step.run ?? ""),
      );
    }
    return `# templates/workflows/autopilot-worker.yml, adapted by the sandbox: no agent CLI install, timeout ${options.jobTimeoutMinutes} min.\n${stringifyYaml(workflow, { lineWidth: 0 })}`;
  }
  return `name: Autopilot worker
run-name: "autopilot #\${{ inputs.issue }} attempt \${{ inputs.attempt }} [\${{ inputs.dispatch-id }}]"
on:
  workflow_dispatch:
    inputs:
      issue:
        description: Task issue number
        required: true
      attempt:
        description: Attempt number
        required: false
        default: "1"
      dispatch-id:
        description: Dispatch id chosen by the controller
        required: false
        default: ""
      tracking-issue:
        description: Tracking issue number
        required: false
        default: ""
      task-digest:
        description: Digest of the approved task text
        required: false
        default: ""
      config-digest:
        description: Digest of the configuration the controller decided with
        required: false
        default: ""
      config:
        description: JSON overrides of .github/autopilot.yml
        required: false
        default: ""
concurrency:
  group: autopilot-issue-\${{ inputs.issue }}
  cancel-in-progress: false
permissions:
  contents: write
  issues: write
  pull-requests: write
jobs:
  work:
    runs-on: ubuntu-latest
    timeout-minutes: ${options.jobTimeoutMinutes}
    steps:
      - id: app-token
        uses: actions/create-github-app-token@v1
        with:
          app-id: \${{ vars.AUTOPILOT_APP_ID }}
          private-key: \${{ secrets.AUTOPILOT_APP_PRIVATE_KEY }}
      - uses: actions/checkout@v4
        with:
          token: \${{ steps.app-token.outputs.token }}
          fetch-depth: 0
      - uses: autopilot-dev/autopilot@v1
        with:
          issue: \${{ inputs.issue }}
          attempt: \${{ inputs.attempt }}
          dispatch-id: \${{ inputs.dispatch-id }}
          tracking-issue: \${{ inputs.tracking-issue }}
          task-digest: \${{ inputs.task-digest }}
          config-digest: \${{ inputs.config-digest }}
          config: \${{ inputs.config }}
          github-token: \${{ steps.app-token.outputs.token }}
          git-user-name: autopilot[bot]
`;
}
