// biome-ignore-all lint/suspicious/noTemplateCurlyInString: a GitHub Actions expression is what one string tests
/**
 * The workflows Autopilot ships and the scenarios run are read as GitHub reads them: GitHub's own parser
 * (`@actions/workflow-parser`) accepts every one, and the Actions stand-in fails at startup a run of a
 * workflow GitHub would reject, with the parser's words.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { type ActionsRunner, startActions } from "../../sandbox/emulator/actions/actions.js";
import { workflowErrors } from "../../sandbox/emulator/actions/workflow-template.js";
import { type GitTestHost, startGitHost } from "./git-host.js";

const root = join(import.meta.dirname, "..", "..");

/** Workflow files a scenario puts in a repository (any `.github/workflows/*.yml` key with text under it). */
function workflowsIn(value: unknown, found: [string, string][] = []): [string, string][] {
  if (Array.isArray(value)) for (const item of value) workflowsIn(item, found);
  else if (value && typeof value === "object") {
    for (const [key, inner] of Object.entries(value)) {
      if (/^\.github\/workflows\/[^/]+\.ya?ml$/.test(key) && typeof inner === "string")
        found.push([key, inner]);
      else workflowsIn(inner, found);
    }
  }
  return found;
}

function shippedAndScenarioWorkflows(): [string, string][] {
  const files: [string, string][] = [];
  // The templates users copy, and the project's own workflows (CI, release, the scheduled simulation).
  for (const dir of ["templates/workflows", ".github/workflows"])
    for (const name of readdirSync(join(root, dir)).filter((n) => n.endsWith(".yml")))
      files.push([`${dir}/${name}`, readFileSync(join(root, dir, name), "utf8")]);
  for (const dir of ["scenarios", "bench/scenarios"]) {
    for (const name of readdirSync(join(root, dir)).filter((n) => n.endsWith(".yml"))) {
      const scenario = parseYaml(readFileSync(join(root, dir, name), "utf8")) as unknown;
      for (const [path, text] of workflowsIn(scenario)) files.push([`${dir}/${name}: ${path}`, text]);
    }
  }
  return files;
}

describe("GitHub's workflow parser", () => {
  it("accepts every workflow template, the project's own workflows and every workflow a scenario writes", async () => {
    const files = shippedAndScenarioWorkflows();
    expect(files.map(([name]) => name)).toEqual(
      expect.arrayContaining([
        "templates/workflows/autopilot-worker.yml",
        "templates/workflows/autopilot-controller.yml",
        ".github/workflows/simulate.yml",
      ]),
    );
    const rejected: string[] = [];
    // The release workflow calls CI as a reusable workflow: GitHub's parser accepts it, the sandbox does
    // not run such jobs, and the project's own workflows run on GitHub, not in the sandbox.
    for (const [name, text] of files)
      for (const error of await workflowErrors(name, text))
        if (!(name.startsWith(".github/") && error.endsWith("which the sandbox does not run")))
          rejected.push(error);
    expect(rejected).toEqual([]);
  });

  it("names what GitHub rejects: a job without runs-on, an unknown key, a broken expression", async () => {
    expect(await workflowErrors("a.yml", "on: push\njobs:\n  x:\n    steps:\n      - run: echo\n")).toEqual([
      "a.yml (Line: 4, Col: 5): Required property is missing: runs-on",
    ]);
    expect(
      await workflowErrors(
        "b.yml",
        "on: push\njobs:\n  x:\n    runs-on: ubuntu-latest\n    step:\n      - run: echo\n",
      ),
    ).toEqual(["b.yml (Line: 5, Col: 5): Unexpected value 'step'"]);
    const broken =
      "on: push\njobs:\n  x:\n    runs-on: ubuntu-latest\n    if: ${{ github.ref == }}\n    steps:\n      - run: echo\n";
    expect((await workflowErrors("c.yml", broken)).join()).toContain("Unexpected end of expression");
  });
});

describe("the Actions stand-in with a workflow GitHub rejects", () => {
  let host: GitTestHost;
  let actions: ActionsRunner;

  beforeAll(async () => {
    host = await startGitHost();
    host.store.addUser("alice", { permission: "admin" });
    await host.git.seedRepo("demo", "shop", {
      "README.md": "# shop\n",
      // `step:` for `steps:`: GitHub shows "Invalid workflow file" and runs nothing.
      ".github/workflows/typo.yml":
        "name: Typo\non: workflow_dispatch\njobs:\n  build:\n    runs-on: ubuntu-latest\n    step:\n      - run: echo ran > ran.txt\n",
    });
    actions = startActions({ url: host.url, store: host.store, git: host.git });
    await actions.syncWorkflows("demo/shop");
  });

  afterAll(async () => {
    await actions?.stop();
    await host?.stop();
  });

  it("fails the run at startup with the parser's words and runs no step", async () => {
    const run = await host.store.dispatchWorkflow("demo/shop", "typo.yml", {
      ref: "main",
      inputs: {},
      actor: "alice",
    });
    const record = await actions.waitForRun(run.id);
    expect(record.conclusion).toBe("failure");
    expect(record.reason).toContain("Invalid workflow file");
    expect(record.reason).toContain("Unexpected value 'step'");
    expect(record.steps).toEqual([]);
  });
});
