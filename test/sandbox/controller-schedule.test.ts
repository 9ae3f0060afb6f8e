// biome-ignore-all lint/suspicious/noTemplateCurlyInString: GitHub Actions expressions are what these strings test
/**
 * The controller workflow's schedule in Actions mode: its job runs on a cron only while the repository variable
 * AUTOPILOT_WAKE (src/core/scheduling/wake-variable.ts) says something waits on time, so an idle repository
 * bills no scheduled job; events run it whatever the variable says. Evaluated by the sandbox's Actions stand-in
 * as GitHub evaluates a job's `if:` (https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-syntax#jobsjob_idif).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ActionsRunner, startActions } from "../../sandbox/emulator/actions/actions.js";
import { conditionHolds } from "../../sandbox/emulator/actions/expressions.js";
import { readWorkflow } from "../../sandbox/emulator/actions/workflow-template.js";
import { isAutopilotActionRef } from "../../sandbox/scenario/autopilot-action.js";
import { type GitTestHost, startGitHost } from "./git-host.js";

const TEMPLATE = readFileSync(
  join(import.meta.dirname, "../../templates/workflows/autopilot-controller.yml"),
  "utf8",
);
const EVERY_10 = "*/10 * * * *";
const HOURLY = "5 * * * *";

async function jobRuns(event: Record<string, unknown>, vars: Record<string, string>): Promise<boolean> {
  const job = (await readWorkflow("autopilot-controller.yml", TEMPLATE)).workflow!.jobs[0]!;
  return conditionHolds(job.if, {
    contexts: {
      github: { repository: "acme/shop", ...event },
      vars,
      inputs: {},
      needs: {},
    },
    status: "success",
  });
}

const scheduled = (cron: string) => ({ event_name: "schedule", event: { schedule: cron } });

describe("the controller template's schedule", () => {
  it("lists the 10-minute and the hourly cron", async () => {
    const events = (await readWorkflow("autopilot-controller.yml", TEMPLATE)).workflow!.events;
    expect((events.schedule ?? []).map((entry) => entry.cron)).toEqual([EVERY_10, HOURLY]);
  });

  it("skips every scheduled run of an idle repository", async () => {
    expect(await jobRuns(scheduled(EVERY_10), { AUTOPILOT_WAKE: "idle" })).toBe(false);
    expect(await jobRuns(scheduled(HOURLY), { AUTOPILOT_WAKE: "idle" })).toBe(false);
  });

  it("runs every 10 minutes while something waits soon, hourly while it waits later", async () => {
    const soon = { AUTOPILOT_WAKE: "soon 2026-11-28T18:00:00.000Z" };
    const later = { AUTOPILOT_WAKE: "later 2026-11-29T09:00:00.000Z" };
    expect(await jobRuns(scheduled(EVERY_10), { AUTOPILOT_WAKE: "soon" })).toBe(true);
    expect(await jobRuns(scheduled(EVERY_10), soon)).toBe(true);
    expect(await jobRuns(scheduled(HOURLY), soon)).toBe(false);
    expect(await jobRuns(scheduled(EVERY_10), later)).toBe(false);
    expect(await jobRuns(scheduled(HOURLY), later)).toBe(true);
  });

  it("runs every 10 minutes while the variable is unset (before the controller first sets it)", async () => {
    expect(await jobRuns(scheduled(EVERY_10), {})).toBe(true);
    expect(await jobRuns(scheduled(HOURLY), {})).toBe(false);
  });

  it("runs on a person's event and a dispatch whatever the variable says", async () => {
    const idle = { AUTOPILOT_WAKE: "idle" };
    const comment = {
      event_name: "issue_comment",
      event: { action: "created", sender: { type: "User", login: "alice" } },
    };
    expect(await jobRuns(comment, idle)).toBe(true);
    expect(
      await jobRuns({ event_name: "workflow_dispatch", event: { sender: { type: "User" } } }, idle),
    ).toBe(true);
  });
});

// A scheduled job whose `if:` reads a repository variable: the stand-in reads the value of the moment a run
// starts, as the REST API set it.
const SCHEDULED = `name: Scheduled
on:
  schedule:
    - cron: "*/5 * * * *"
jobs:
  tick:
    if: vars.WAKE != 'idle'
    runs-on: ubuntu-latest
    steps:
      - run: echo "wake=\${{ vars.wake }}" >> "$GITHUB_OUTPUT"
`;

describe("the Actions stand-in's vars context", () => {
  let host: GitTestHost;
  let actions: ActionsRunner;

  beforeAll(async () => {
    host = await startGitHost();
    await host.git.seedRepo("demo", "shop", { ".github/workflows/scheduled.yml": SCHEDULED });
    host.store.createVariable("demo/shop", "WAKE", "idle");
    actions = startActions({
      url: host.url,
      store: host.store,
      git: host.git,
      actionRefs: isAutopilotActionRef,
      eventTriggers: true,
      scheduleMinuteMs: 20,
    });
    await actions.syncWorkflows("demo/shop");
  });

  afterAll(async () => {
    await actions?.stop();
    await host?.stop();
  });

  async function until(condition: () => boolean): Promise<void> {
    const start = Date.now();
    while (!condition()) {
      if (Date.now() - start > 15_000) throw new Error("condition not met in time");
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  it("skips the scheduled job while the variable says idle, and runs it once it says otherwise", async () => {
    await until(() => actions.listRuns().filter((r) => r.status === "completed").length >= 2);
    expect(new Set(actions.listRuns().map((r) => r.conclusion))).toEqual(new Set(["skipped"]));
    host.store.updateVariable("demo/shop", "wake", { value: "soon" });
    await until(() => actions.listRuns().some((r) => r.conclusion === "success"));
    expect(actions.listRuns().find((r) => r.conclusion === "success")?.outputs).toMatchObject({
      wake: "soon",
    });
  });
});
