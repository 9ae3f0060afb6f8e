import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { WORKER_OUTCOMES } from "../../src/core/tasks/worker-result.js";
import { INPUT_NAMES } from "../../src/worker/settings/inputs.js";

const root = join(import.meta.dirname, "..", "..");
/** A GitHub Actions expression as written in a workflow. */
const expr = (inner: string) => `\${{ ${inner} }}`;
const action = parse(readFileSync(join(root, "action.yml"), "utf8")) as {
  inputs: Record<string, { required?: boolean; default?: string }>;
  outputs: Record<string, { description: string }>;
  runs: { using: string; main: string };
};
const workflow = parse(readFileSync(join(root, "templates/workflows/autopilot-worker.yml"), "utf8")) as {
  "run-name": string;
  on: { workflow_dispatch: { inputs: Record<string, unknown> } };
  concurrency: { group: string; "cancel-in-progress": boolean };
  permissions: Record<string, string>;
  jobs: {
    work: {
      steps: { id?: string; uses?: string; with?: Record<string, unknown>; env?: Record<string, string> }[];
    };
  };
};

describe("action.yml", () => {
  it("runs the committed bundle on node24", () => {
    expect(action.runs).toEqual({ using: "node24", main: "dist/worker/index.js" });
    expect(existsSync(join(root, action.runs.main))).toBe(true);
  });

  it("names the task on its first line, once the inputs are read and the secrets masked, before loading the rest", () => {
    const env = Object.fromEntries(
      Object.entries(process.env).filter(([name]) => !/^(GITHUB_|RUNNER_|INPUT_)/.test(name)),
    );
    const run = spawnSync(process.execPath, [join(root, action.runs.main)], {
      env: { ...env, INPUT_ISSUE: "7", INPUT_ATTEMPT: "2", "INPUT_GITHUB-TOKEN": "ghs_secret" },
      encoding: "utf8",
    });
    const lines = run.stdout.split("\n").filter(Boolean);
    // The token is masked before anything else is printed; then the task; then the rest of the worker loads
    // and (here) stops for want of GITHUB_REPOSITORY.
    expect(lines[0]).toBe("::add-mask::ghs_secret");
    expect(lines.find((line) => !line.startsWith("::"))).toBe("Autopilot worker: issue #7, attempt 2");
    expect(run.stdout).toContain("GITHUB_REPOSITORY is not set");
    expect(run.status).toBe(1);
  });

  it("leaves out of its bundle the HTTP clients @actions/core imports but the worker never calls", () => {
    const bundle = readFileSync(join(root, action.runs.main), "utf8");
    expect(bundle).not.toMatch(/node_modules\/(undici|tunnel|@actions\/http-client|@actions\/exec)\//);
  });

  it("declares exactly the inputs the runner reads", () => {
    expect(Object.keys(action.inputs).sort()).toEqual(Object.values(INPUT_NAMES).sort());
    expect(action.inputs.issue!.required).toBe(true);
    expect(action.inputs["github-token"]!.required).toBe(true);
  });

  it("declares the outputs the controller and workflows read, and names every outcome", () => {
    for (const name of ["result", "reason", "iterations", "commits", "pr-number", "tokens", "cost"]) {
      expect(action.outputs).toHaveProperty(name);
    }
    for (const outcome of WORKER_OUTCOMES) expect(action.outputs.result!.description).toContain(outcome);
  });
});

describe("the worker workflow users copy", () => {
  const steps = workflow.jobs.work.steps;
  const worker = steps.find((step) => step.id === "autopilot")!;

  it("is dispatched with the controller's inputs and names its run after the dispatch id", () => {
    expect(Object.keys(workflow.on.workflow_dispatch.inputs).sort()).toEqual(
      ["attempt", "config", "config-digest", "dispatch-id", "issue", "task-digest", "tracking-issue"].sort(),
    );
    expect(workflow["run-name"]).toBe(
      `autopilot #${expr("inputs.issue")} attempt ${expr("inputs.attempt")} [${expr("inputs.dispatch-id")}]`,
    );
  });

  it("passes every dispatch input through to the action", () => {
    for (const name of Object.keys(workflow.on.workflow_dispatch.inputs)) {
      expect(worker.with?.[name]).toBe(expr(`inputs.${name}`));
    }
  });

  it("pushes with a GitHub App token, not the default GITHUB_TOKEN, and persists no credentials in the checkout", () => {
    expect(steps.some((step) => step.uses?.startsWith("actions/create-github-app-token@"))).toBe(true);
    expect(worker.with?.["github-token"]).toBe(expr("steps.app-token.outputs.token"));
    const checkout = steps.find((step) => step.uses?.startsWith("actions/checkout@"))!;
    expect(checkout.with).toMatchObject({ "persist-credentials": false, "fetch-depth": 0 });
    expect(workflow.permissions).toEqual({ contents: "read" });
  });

  it("runs one worker per issue at a time", () => {
    expect(workflow.concurrency).toEqual({
      group: `autopilot-issue-${expr("inputs.issue")}`,
      "cancel-in-progress": false,
    });
  });

  it("gives agent keys to the worker step only through env", () => {
    expect(Object.keys(worker.env ?? {})).toEqual(expect.arrayContaining(["ANTHROPIC_API_KEY"]));
    expect(Object.keys(worker.env ?? {})).not.toContain("GITHUB_TOKEN");
  });
});
