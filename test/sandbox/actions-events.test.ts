// biome-ignore-all lint/suspicious/noTemplateCurlyInString: GitHub Actions expressions are what these strings test
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ActionsRunner, type RunRecord, startActions } from "../../sandbox/emulator/actions/actions.js";
import { isAutopilotActionRef } from "../../sandbox/scenario/autopilot-action.js";
import { type GitTestHost, startGitHost } from "./git-host.js";

// Job-level concurrency: a job its `if:` skips never enters the group.
const JOB_LEVEL = `name: Job level
on:
  issues:
    types: [labeled]
jobs:
  react:
    if: github.event.sender.type != 'Bot'
    concurrency:
      group: job-level
      cancel-in-progress: false
    runs-on: ubuntu-latest
    env:
      HOLD: \${{ github.event.issue.body }}
    steps:
      - id: seen
        run: |
          echo "action=\${{ github.event.action }}" >> "$GITHUB_OUTPUT"
          echo "label=\${{ github.event.label.name }}" >> "$GITHUB_OUTPUT"
          echo "secret=\${{ secrets.SOME_SECRET }}" >> "$GITHUB_OUTPUT"
          if [ -n "$HOLD" ]; then while [ ! -e "$HOLD" ]; do sleep 0.05; done; fi
`;

// The same at the workflow level: every run enters the group, a skipped one too.
const WORKFLOW_LEVEL = `name: Workflow level
on:
  issues:
    types: [closed]
concurrency:
  group: workflow-level
  cancel-in-progress: false
jobs:
  react:
    if: github.event.sender.type != 'Bot'
    runs-on: ubuntu-latest
    env:
      HOLD: \${{ github.event.issue.body }}
    steps:
      - run: if [ -n "$HOLD" ]; then while [ ! -e "$HOLD" ]; do sleep 0.05; done; fi
`;

const SCHEDULED = `name: Scheduled
on:
  schedule:
    - cron: "*/5 * * * *"
jobs:
  tick:
    runs-on: ubuntu-latest
    steps:
      - run: |
          echo "event=\${{ github.event_name }}" >> "$GITHUB_OUTPUT"
          echo "cron=\${{ github.event.schedule }}" >> "$GITHUB_OUTPUT"
`;

// An action in a folder of the action repository, as the controller's `controller/action.yml`.
const SUBFOLDER = `name: Subfolder
on:
  issues:
    types: [opened]
jobs:
  run:
    runs-on: ubuntu-latest
    steps:
      - id: sub
        uses: acme/autopilot/controller@v1
        with:
          greeting: hello
`;

let host: GitTestHost;
let actions: ActionsRunner;
let actionDir: string;

beforeAll(async () => {
  actionDir = mkdtempSync(join(tmpdir(), "autopilot-action-"));
  mkdirSync(join(actionDir, "controller"));
  writeFileSync(
    join(actionDir, "controller", "action.yml"),
    "name: sub\ndescription: a folder action\ninputs:\n  greeting: { default: none }\nruns:\n  using: node24\n  main: ../dist/sub.js\n",
  );
  mkdirSync(join(actionDir, "dist"));
  writeFileSync(
    join(actionDir, "dist", "sub.js"),
    'require("fs").appendFileSync(process.env.GITHUB_OUTPUT, `said=${process.env.INPUT_GREETING}\\n`);\n',
  );
  host = await startGitHost();
  host.store.addUser("alice", { permission: "admin" });
  await host.git.seedRepo("demo", "shop", {
    "README.md": "# shop\n",
    ".github/workflows/job-level.yml": JOB_LEVEL,
    ".github/workflows/workflow-level.yml": WORKFLOW_LEVEL,
    ".github/workflows/scheduled.yml": SCHEDULED,
    ".github/workflows/subfolder.yml": SUBFOLDER,
  });
  actions = startActions({
    url: host.url,
    store: host.store,
    git: host.git,
    actionDir,
    actionRefs: isAutopilotActionRef,
    eventTriggers: true,
    // One cron minute lasts 40 ms: the every-5-minutes schedule runs every 200 ms.
    scheduleMinuteMs: 40,
    secrets: { SOME_SECRET: "s3cret" },
  });
  await actions.syncWorkflows("demo/shop");
});

afterAll(async () => {
  await actions?.stop();
  await host?.stop();
});

async function until(condition: () => boolean, timeoutMs = 15_000): Promise<void> {
  const start = Date.now();
  while (!condition()) {
    if (Date.now() - start > timeoutMs) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 20));
  }
}

function runsOf(workflow: string, after = 0): RunRecord[] {
  return actions.listRuns().filter((r) => r.workflowName === workflow && r.id > after);
}

function lastRunId(): number {
  return Math.max(0, ...actions.listRuns().map((r) => r.id));
}

describe("runs started by events, as GitHub starts them", () => {
  it("starts a run for an event the workflow lists, with the webhook payload as github.event", async () => {
    const before = lastRunId();
    const issue = host.store.createIssue("demo/shop", { title: "Hello", body: "", author: "alice" });
    host.store.addLabels("demo/shop", issue.number, ["bug"], "alice");
    await until(() => runsOf("Job level", before).some((r) => r.status === "completed"));
    const run = runsOf("Job level", before)[0]!;
    expect(run.event).toBe("issues");
    expect(run.conclusion).toBe("success");
    expect(run.outputs).toMatchObject({ action: "labeled", label: "bug", secret: "s3cret" });
    // `opened` is not among the job-level workflow's types: one run, for `labeled`.
    expect(runsOf("Job level", before)).toHaveLength(1);
  });

  it("starts no run for an event caused by a run's GITHUB_TOKEN", async () => {
    const before = lastRunId();
    const issue = host.store.createIssue("demo/shop", { title: "By a workflow", body: "", author: "alice" });
    host.store.addLabels("demo/shop", issue.number, ["from-token"], "github-actions[bot]");
    // An event by a person afterwards shows the runner is listening.
    host.store.addLabels("demo/shop", issue.number, ["from-person"], "alice");
    await until(() => runsOf("Job level", before).some((r) => r.status === "completed"));
    expect(runsOf("Job level", before).map((r) => r.outputs.label)).toEqual(["from-person"]);
  });

  it("concludes a run skipped when its job's if: is false, and such a run cancels no pending run", async () => {
    const dir = mkdtempSync(join(tmpdir(), "autopilot-hold-"));
    const hold = join(dir, "release");
    const before = lastRunId();
    const first = host.store.createIssue("demo/shop", { title: "first", body: hold, author: "alice" });
    const second = host.store.createIssue("demo/shop", { title: "second", body: "", author: "alice" });
    host.store.addLabels("demo/shop", first.number, ["go"], "alice");
    await until(() => runsOf("Job level", before).some((r) => r.status === "in_progress"));
    host.store.addLabels("demo/shop", second.number, ["go"], "alice");
    await until(() => runsOf("Job level", before).some((r) => r.status === "pending"));
    // An App's bot labels: the run is created and skipped, and the pending run keeps its place.
    host.store.addLabels("demo/shop", second.number, ["by-bot"], "autopilot[bot]");
    await until(() => runsOf("Job level", before).some((r) => r.conclusion === "skipped"));
    expect(runsOf("Job level", before).find((r) => r.status === "pending")).toBeDefined();
    writeFileSync(hold, "");
    await until(() => runsOf("Job level", before).every((r) => r.status === "completed"));
    expect(runsOf("Job level", before).map((r) => r.conclusion)).toEqual(["success", "success", "skipped"]);
  });

  it("lets a skipped run cancel the pending one when the concurrency is the workflow's (GitHub's behaviour)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "autopilot-hold-"));
    const hold = join(dir, "release");
    const before = lastRunId();
    const first = host.store.createIssue("demo/shop", { title: "w1", body: hold, author: "alice" });
    const second = host.store.createIssue("demo/shop", { title: "w2", body: "", author: "alice" });
    const third = host.store.createIssue("demo/shop", { title: "w3", body: "", author: "alice" });
    host.store.closeIssue("demo/shop", first.number, "alice");
    await until(() => runsOf("Workflow level", before).some((r) => r.status === "in_progress"));
    host.store.closeIssue("demo/shop", second.number, "alice");
    await until(() => runsOf("Workflow level", before).some((r) => r.status === "pending"));
    host.store.closeIssue("demo/shop", third.number, "autopilot[bot]");
    await until(() => runsOf("Workflow level", before).filter((r) => r.status === "completed").length === 1);
    writeFileSync(hold, "");
    await until(() => runsOf("Workflow level", before).every((r) => r.status === "completed"));
    const [ran, replaced, skipped] = runsOf("Workflow level", before);
    expect(ran?.conclusion).toBe("success");
    expect(replaced?.conclusion).toBe("cancelled");
    expect(replaced?.startedAt).toBeNull();
    expect(skipped?.conclusion).toBe("skipped");
  });

  it("runs the action of a folder of the action repository (owner/repo/path@ref)", async () => {
    const before = lastRunId();
    host.store.createIssue("demo/shop", { title: "sub", body: "", author: "alice" });
    await until(() => runsOf("Subfolder", before).some((r) => r.status === "completed"));
    const run = runsOf("Subfolder", before)[0]!;
    expect(run.conclusion).toBe("success");
    expect(run.outputs.said).toBe("hello");
  });
});

describe("schedule", () => {
  it("starts a run on the default branch every period of the cron, in the sandbox's minutes", async () => {
    await until(() => runsOf("Scheduled").filter((r) => r.status === "completed").length >= 2);
    const run = runsOf("Scheduled").find((r) => r.status === "completed")!;
    expect(run.event).toBe("schedule");
    expect(run.outputs).toMatchObject({ event: "schedule", cron: "*/5 * * * *" });
  });
});
