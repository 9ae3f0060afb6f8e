// biome-ignore-all lint/suspicious/noTemplateCurlyInString: GitHub Actions expressions are what these strings test
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ActionsRunner, startActions } from "../../sandbox/emulator/actions/actions.js";
import { isAutopilotActionRef } from "../../sandbox/scenario/autopilot-action.js";
import { parseKeyValueFile } from "../../sandbox/emulator/actions/file-commands.js";
import { readWorkflow } from "../../sandbox/emulator/actions/workflow-template.js";
import { conditionHolds, evaluate, tokenString } from "../../sandbox/emulator/actions/expressions.js";
import type { StoreEvent } from "../../sandbox/emulator/store.js";
import { type GitTestHost, startGitHost } from "./git-host.js";

const FIXTURE = join(import.meta.dirname, "..", "fixtures", "echo-action");

const WORKER_WORKFLOW = `name: Autopilot worker
run-name: "autopilot #\${{ inputs.issue }} \${{ inputs.dispatch-id }}"
on:
  workflow_dispatch:
    inputs:
      issue: { required: true }
      dispatch-id: { required: false, default: none }
      sleep-ms: { default: "0" }
      hold-until: { default: "" }
      exit-code: { default: "0" }
concurrency:
  group: autopilot-issue-\${{ inputs.issue }}
  cancel-in-progress: false
env:
  FROM_JOB_ENV: job-env
jobs:
  work:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - id: echo
        uses: acme/autopilot@v1
        env:
          GITHUB_TOKEN: \${{ github.token }}
        with:
          issue: \${{ inputs.issue }}
          github-token: \${{ secrets.GITHUB_TOKEN }}
          from-with: \${{ github.event.inputs.dispatch-id }}
          sleep-ms: \${{ inputs.sleep-ms }}
          hold-until: \${{ inputs.hold-until }}
          exit-code: \${{ inputs.exit-code }}
      - name: after
        run: echo "greeting-again=\${{ steps.echo.outputs.greeting }}" >> "$GITHUB_OUTPUT"
      - name: on failure
        if: failure()
        run: echo "failed=yes" >> "$GITHUB_OUTPUT"
`;

// A step that starts a grandchild in a process group of its own (as the worker starts its agent).
const TREE_WORKFLOW = `name: Tree
on: workflow_dispatch
jobs:
  tree:
    runs-on: ubuntu-latest
    steps:
      - run: |
          node -e "const c = require('child_process').spawn('sleep', ['30'], { detached: true, stdio: 'ignore' }); console.log('grandchild=' + c.pid); setInterval(() => {}, 1000)"
`;

let host: GitTestHost;
let actions: ActionsRunner;
const events: StoreEvent[] = [];

beforeAll(async () => {
  process.env.APP_SECRET_FROM_PARENT = "must-not-leak";
  host = await startGitHost();
  host.store.addUser("alice", { permission: "admin" });
  await host.git.seedRepo("demo", "shop", {
    "README.md": "# shop\n",
    ".github/workflows/autopilot-worker.yml": WORKER_WORKFLOW,
    "test/ok.test.mjs": 'import test from "node:test";\ntest("ok", () => {});\n',
    ".github/workflows/tree.yml": TREE_WORKFLOW,
    ".github/workflows/cleanup.yml": CLEANUP_WORKFLOW,
  });
  host.store.onEvent((event) => events.push(event));
  actions = startActions({
    url: host.url,
    store: host.store,
    git: host.git,
    actionDir: FIXTURE,
    actionRefs: isAutopilotActionRef,
    cancelGraceMs: 300,
    ci: { "demo/shop": { command: "node --test", name: "ci" } },
  });
  await actions.syncWorkflows("demo/shop");
});

afterAll(async () => {
  await actions?.stop();
  await host?.stop();
  delete process.env.APP_SECRET_FROM_PARENT;
});

// A long step, then a cleanup step on always(): a plain cancel runs it, a forced cancel does not.
const CLEANUP_WORKFLOW = `name: Cleanup
on: workflow_dispatch
jobs:
  cleanup:
    runs-on: ubuntu-latest
    steps:
      - run: echo long-step-started; sleep 20
      - name: cleanup
        if: always()
        run: echo cleanup-ran
`;

function dispatch(inputs: Record<string, string>) {
  return host.store.dispatchWorkflow("demo/shop", "autopilot-worker.yml", {
    ref: "main",
    inputs,
    actor: "autopilot[bot]",
  });
}

async function until(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const start = Date.now();
  while (!condition()) {
    if (Date.now() - start > timeoutMs) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("the Actions stand-in running a workflow_dispatch", () => {
  it("registers the workflow files of the default branch", () => {
    expect(host.store.getWorkflow("demo/shop", "autopilot-worker.yml")?.name).toBe("Autopilot worker");
  });

  it("runs the real action bundle with the runner's environment, inputs and file commands", async () => {
    const run = await dispatch({ issue: "7", "dispatch-id": "7-1-abc" });
    const record = await actions.waitForRun(run.id);
    expect(record.conclusion).toBe("success");
    const o = record.outputs;
    expect(o.issue).toBe("7");
    expect(o.greeting).toBe("hello");
    expect(o["greeting-again"]).toBe("hello");
    expect(o.token).toMatch(/^ghs_/);
    expect(o.token).toBe(record.token);
    expect(o["env-token-matches"]).toBe("true");
    expect(o["from-with"]).toBe("7-1-abc");
    expect(o["event-issue"]).toBe("7");
    expect(o["event-repo"]).toBe("demo/shop");
    expect(o["workspace-has-readme"]).toBe("true");
    expect(o.cwd).toBe(o.GITHUB_WORKSPACE);
    expect(o.multiline).toBe("first line\nsecond line");
    expect(o).toMatchObject({
      CI: "true",
      GITHUB_ACTIONS: "true",
      GITHUB_REPOSITORY: "demo/shop",
      GITHUB_REPOSITORY_OWNER: "demo",
      GITHUB_EVENT_NAME: "workflow_dispatch",
      GITHUB_REF: "refs/heads/main",
      GITHUB_RUN_ID: String(run.id),
      GITHUB_RUN_NUMBER: String(run.runNumber),
      GITHUB_RUN_ATTEMPT: "1",
      GITHUB_ACTOR: "autopilot[bot]",
      GITHUB_WORKFLOW: "Autopilot worker",
      GITHUB_JOB: "work",
      GITHUB_API_URL: host.url,
      GITHUB_GRAPHQL_URL: `${host.url}/graphql`,
      GITHUB_SERVER_URL: `${host.url}/git`,
      RUNNER_OS: "Linux",
      FROM_JOB_ENV: "job-env",
      APP_SECRET_FROM_PARENT: "",
    });
    expect(o.GITHUB_SHA).toBe(await host.store.resolveRef("demo/shop", "main"));
    expect(o.RUNNER_TEMP).toBeTruthy();
    expect(o.failed).toBeUndefined();
    expect(record.summary).toContain("issue 7");
    expect(record.annotations).toContainEqual({ level: "notice", message: "echo ran for issue 7" });
    expect(record.log).toContain("post step: started=yes");
    expect(record.steps.map((s) => s.conclusion)).toEqual(["success", "success", "success", "skipped"]);

    const stored = host.store.getWorkflowRun("demo/shop", run.id)!;
    expect(stored).toMatchObject({ status: "completed", conclusion: "success" });
    expect(stored.displayTitle).toBe("autopilot #7 7-1-abc");
    const lifecycle = events
      .filter((e): e is Extract<StoreEvent, { name: "workflow_run" }> => e.name === "workflow_run")
      .filter((e) => e.run.id === run.id)
      .map((e) => e.action);
    expect(lifecycle).toEqual(["requested", "in_progress", "completed"]);
    // The run's GITHUB_TOKEN dies with the run.
    expect(host.store.authenticate(record.token!)).toBeNull();
  });

  it("fails the run when the action exits non-zero, running only failure() steps after it", async () => {
    const run = await dispatch({ issue: "8", "exit-code": "3" });
    const record = await actions.waitForRun(run.id);
    expect(record.conclusion).toBe("failure");
    expect(record.steps.map((s) => s.conclusion)).toEqual(["success", "failure", "skipped", "success"]);
    expect(record.outputs.failed).toBe("yes");
    expect(record.steps[1]?.exitCode).toBe(3);
    expect(host.store.getWorkflowRun("demo/shop", run.id)?.conclusion).toBe("failure");
  });

  it("cancels a running run: SIGINT reaches the action, the run ends cancelled", async () => {
    const run = await dispatch({ issue: "9", "sleep-ms": "20000" });
    await until(() => actions.getRun(run.id)?.log.includes("working…") ?? false);
    host.store.cancelWorkflowRun("demo/shop", run.id, "alice");
    const record = await actions.waitForRun(run.id);
    expect(record.conclusion).toBe("cancelled");
    expect(record.log).toContain("received SIGINT: checkpointing");
    expect(host.store.getWorkflowRun("demo/shop", run.id)?.conclusion).toBe("cancelled");
  });

  it("runs always() steps after a plain cancel but none after a forced cancel", async () => {
    const cancelAndLog = async (force: boolean) => {
      const run = await host.store.dispatchWorkflow("demo/shop", "cleanup.yml", {
        ref: "main",
        actor: "alice",
      });
      await until(() => actions.getRun(run.id)?.log.includes("long-step-started") ?? false);
      host.store.cancelWorkflowRun("demo/shop", run.id, "alice", { force });
      const record = await actions.waitForRun(run.id);
      expect(record.conclusion).toBe("cancelled");
      return record.log.join("\n");
    };
    expect(await cancelAndLog(false)).toContain("cleanup-ran");
    expect(await cancelAndLog(true)).not.toContain("cleanup-ran");
  });

  it("kills a run mid-way as a lost runner: SIGKILL, conclusion failure", async () => {
    const run = await dispatch({ issue: "10", "sleep-ms": "20000" });
    await until(() => actions.getRun(run.id)?.log.includes("working…") ?? false);
    const started = Date.now();
    expect(actions.killRun(run.id)).toBe(true);
    const record = await actions.waitForRun(run.id);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(record.conclusion).toBe("failure");
    expect(record.log).not.toContain("received SIGINT: checkpointing");
  });

  it("kills the whole process tree of a lost run, grandchildren in their own groups included", async () => {
    const run = await host.store.dispatchWorkflow("demo/shop", "tree.yml", { ref: "main", actor: "alice" });
    await until(() => actions.getRun(run.id)?.log.some((l) => l.startsWith("grandchild=")) ?? false);
    const pid = Number(
      actions
        .getRun(run.id)!
        .log.find((l) => l.startsWith("grandchild="))!
        .split("=")[1],
    );
    const alive = () => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
        return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
      } catch {
        return false;
      }
    };
    expect(alive()).toBe(true);
    actions.killRun(run.id);
    expect((await actions.waitForRun(run.id)).conclusion).toBe("failure");
    await until(() => !alive(), 2000);
  });

  it("keeps one running and one pending run per concurrency group, cancelling the older pending one", async () => {
    // The first run holds until the test releases it (not a timer that a loaded machine outruns).
    const release = join(mkdtempSync(join(tmpdir(), "autopilot-actions-")), "release");
    const first = await dispatch({ issue: "11", "hold-until": release });
    await until(() => actions.getRun(first.id)?.status === "in_progress");
    const second = await dispatch({ issue: "11" });
    await until(() => actions.getRun(second.id)?.status === "pending");
    const other = await dispatch({ issue: "12" });
    const third = await dispatch({ issue: "11" });

    const secondRecord = await actions.waitForRun(second.id);
    expect(secondRecord.conclusion).toBe("cancelled");
    expect(secondRecord.startedAt).toBeNull();
    expect(host.store.getWorkflowRun("demo/shop", second.id)?.status).toBe("completed");

    // Another group is not held up.
    const otherRecord = await actions.waitForRun(other.id);
    expect(otherRecord.conclusion).toBe("success");
    expect(actions.getRun(first.id)?.status).toBe("in_progress");
    expect(actions.getRun(third.id)?.status).toBe("pending");

    writeFileSync(release, "");
    const firstRecord = await actions.waitForRun(first.id);
    const thirdRecord = await actions.waitForRun(third.id);
    expect(firstRecord.conclusion).toBe("success");
    expect(thirdRecord.conclusion).toBe("success");
    expect(thirdRecord.startedAt!.getTime()).toBeGreaterThanOrEqual(firstRecord.completedAt!.getTime());
  });
});

describe("CI on pull request heads", () => {
  it("runs the CI command on a new PR head and reports a check run, then again on each push", async () => {
    const main = (await host.store.resolveRef("demo/shop", "main"))!;
    await host.store.createRef("demo/shop", "refs/heads/feature", main, "alice");
    await host.git.seedRepo(
      "demo",
      "shop",
      { "test/more.test.mjs": 'import test from "node:test";\ntest("more", () => {});\n' },
      { branch: "feature" },
    );
    const pull = await host.store.createPull("demo/shop", {
      title: "More tests",
      head: "feature",
      base: "main",
      author: "alice",
    });
    const head = pull.pull!.head.sha;
    expect(host.store.listCheckRuns("demo/shop", head).map((c) => c.name)).toEqual(["ci"]);
    await actions.waitIdle();
    const [passed] = host.store.listCheckRuns("demo/shop", head);
    expect(passed).toMatchObject({
      name: "ci",
      status: "completed",
      conclusion: "success",
      appSlug: "github-actions",
    });
    expect(passed?.output.summary).toContain("pass 2");

    const broken = await host.git.seedRepo(
      "demo",
      "shop",
      {
        "test/broken.test.mjs":
          'import test from "node:test";\nimport assert from "node:assert";\ntest("price", () => assert.equal(1 + 1, 3));\n',
      },
      { branch: "feature" },
    );
    expect(host.store.getPull("demo/shop", pull.number)?.pull?.head.sha).toBe(broken);
    await actions.waitIdle();
    const [failed] = host.store.listCheckRuns("demo/shop", broken);
    expect(failed).toMatchObject({ status: "completed", conclusion: "failure" });
    expect(failed?.output.summary).toContain("not ok");
    expect(failed?.output.title).toMatch(/failed/);
  });
});

describe("CI and a workflow's GITHUB_TOKEN", () => {
  it("starts no CI for a pull request opened or pushed by github-actions[bot], as GitHub starts no workflow run", async () => {
    const main = (await host.store.resolveRef("demo/shop", "main"))!;
    await host.store.createRef("demo/shop", "refs/heads/by-bot", main, "github-actions[bot]");
    const pushed = await host.git.seedRepo(
      "demo",
      "shop",
      { "bot.txt": "from a run\n" },
      { branch: "by-bot" },
    );
    const pull = await host.store.createPull("demo/shop", {
      title: "From a workflow run",
      head: "by-bot",
      base: "main",
      author: "github-actions[bot]",
    });
    expect(pull.pull!.head.sha).toBe(pushed);
    await actions.waitIdle();
    expect(host.store.listCheckRuns("demo/shop", pushed)).toEqual([]);
  });
});

describe("workflow file commands and expressions", () => {
  it("parses k=v lines and heredoc blocks as the runner does", () => {
    expect(parseKeyValueFile("a=1\nb=x=y\nc<<EOF\nline 1\nline 2\nEOF\n\nd=\n")).toEqual({
      a: "1",
      b: "x=y",
      c: "line 1\nline 2",
      d: "",
    });
    expect(() => parseKeyValueFile("k<<EOF\nno end\n")).toThrow(/delimiter/);
  });

  it("evaluates a workflow's values and conditions from GitHub's parser", async () => {
    const context = {
      contexts: {
        inputs: { issue: "7", "dispatch-id": "7-1-x", flag: true },
        github: { token: "ghs_t", event: { inputs: { issue: "7" } }, repository: "demo/shop" },
        secrets: { GITHUB_TOKEN: "ghs_t" },
        steps: { echo: { outputs: { greeting: "hi" } } },
      },
    };
    const text = [
      "on: workflow_dispatch",
      "jobs:",
      "  a:",
      "    runs-on: ubuntu-latest",
      "    steps:",
      "      - run: true",
      "        env:",
      "          TITLE: '#${{ inputs.issue }} ${{ inputs.dispatch-id }}'",
      "          ISSUE: ${{ github.event.inputs.issue }}",
      "          SECRET: ${{ secrets.GITHUB_TOKEN }}",
      "          TOKEN: ${{ github.token }}",
      "          FALLBACK: ${{ inputs.missing || 'fallback' }}",
      "          GREETING: ${{ steps.echo.outputs['greeting'] }}",
      "          FORMAT: ${{ format('{0}-{1}', github.repository, inputs.issue) }}",
      "      - run: true",
      "        if: inputs.issue == '7'",
      "      - run: true",
      "        if: ${{ inputs.issue != 7 }}",
      "      - run: true",
      "        if: failure()",
      "      - run: true",
      "        if: inputs.flag",
      "      - run: true",
      "        if: always()",
    ].join("\n");
    const steps = (await readWorkflow("expressions.yml", text)).workflow!.jobs[0]!.steps;
    const env: Record<string, string> = {};
    for (const { key, value } of steps[0]!.env ?? [])
      env[tokenString(key, context)] = tokenString(value, context);
    expect(env).toEqual({
      TITLE: "#7 7-1-x",
      ISSUE: "7",
      SECRET: "ghs_t",
      TOKEN: "ghs_t",
      FALLBACK: "fallback",
      GREETING: "hi",
      FORMAT: "demo/shop-7",
    });
    expect(evaluate("inputs.flag && contains(github.repository, 'SHOP')", context)).toBe(true);
    // The parser adds GitHub's implicit success() to a condition that names no status function.
    expect(steps[1]!.if).toBe("success() && (inputs.issue == '7')");
    expect(conditionHolds(steps[1]!.if, context)).toBe(true);
    expect(conditionHolds(steps[2]!.if, context)).toBe(false);
    expect(conditionHolds(steps[3]!.if, { ...context, status: "failure" })).toBe(true);
    expect(conditionHolds(steps[4]!.if, { ...context, status: "failure" })).toBe(false);
    expect(conditionHolds(steps[5]!.if, { ...context, status: "cancelled" })).toBe(true);
  });
});
