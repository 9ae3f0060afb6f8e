/**
 * Which events start a workflow run (GitHub's rules the Actions stand-in follows), and which of them the
 * controller template's job lets through: the runs the Actions-only controller is billed for.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  conditionHolds,
  evaluateToken,
  type ExprContext,
} from "../../sandbox/emulator/actions/expressions.js";
import type { StoreEvent } from "../../sandbox/emulator/store.js";
import {
  cronPeriodMinutes,
  eventStartsRun,
  globMatch,
} from "../../sandbox/emulator/actions/workflow-triggers.js";
import { readWorkflow, type WorkflowDefinition } from "../../sandbox/emulator/actions/workflow-template.js";

/** A workflow as GitHub's parser reads it (the test fails on a file the parser rejects). */
async function parsed(path: string, text: string): Promise<WorkflowDefinition> {
  const reading = await readWorkflow(path, text);
  expect(reading.errors).toEqual([]);
  return reading.workflow!;
}

/** The events of a workflow whose `on:` is the given YAML. */
async function eventsOf(on: string) {
  const steps = "jobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - run: true\n";
  return (await parsed("on.yml", `on: ${on}\n${steps}`)).events;
}

const TEMPLATE = await parsed(
  "autopilot-controller.yml",
  readFileSync(join(import.meta.dirname, "..", "..", "templates/workflows/autopilot-controller.yml"), "utf8"),
);

const repo = { fullName: "demo/shop", defaultBranch: "main" } as StoreEvent["repo"];

function event(fields: Record<string, unknown>): StoreEvent {
  return { repo, sender: "alice", ...fields } as unknown as StoreEvent;
}

const facts = { workflowName: "Autopilot controller" };

describe("the events that start a run of the controller template", () => {
  const starts = (e: StoreEvent) => eventStartsRun(TEMPLATE.events, e, facts).starts;

  it("starts on the activity types it lists and not on others", () => {
    expect(starts(event({ name: "issues", action: "labeled" }))).toBe(true);
    expect(starts(event({ name: "issues", action: "assigned" }))).toBe(false);
    expect(starts(event({ name: "pull_request", action: "closed" }))).toBe(true);
    expect(starts(event({ name: "pull_request", action: "review_requested" }))).toBe(false);
    // GitHub giving back a merge Autopilot handed it starts a run, not only the next schedule.
    expect(
      starts(event({ name: "pull_request", action: "dequeued", sender: "github-merge-queue[bot]" })),
    ).toBe(true);
    expect(starts(event({ name: "pull_request", action: "auto_merge_disabled" }))).toBe(true);
  });

  it("starts on nothing a run's GITHUB_TOKEN caused, and on what an App token caused", () => {
    expect(starts(event({ name: "issues", action: "labeled", sender: "github-actions[bot]" }))).toBe(false);
    expect(starts(event({ name: "issues", action: "labeled", sender: "autopilot[bot]" }))).toBe(true);
  });

  it("starts on a completed run of the worker workflow only", () => {
    const run = (name: string) =>
      event({ name: "workflow_run", action: "completed", workflow: { name }, run: {} });
    expect(starts(run("Autopilot worker"))).toBe(true);
    expect(starts(run("Release"))).toBe(false);
    expect(starts(run("Autopilot controller"))).toBe(false);
  });

  it("ignores pushes to task branches (branches-ignore) and branch deletions", () => {
    const push = (ref: string, deleted = false) => event({ name: "push", push: { ref, deleted } });
    expect(starts(push("refs/heads/main"))).toBe(true);
    expect(starts(push("refs/heads/autopilot/issue-3"))).toBe(false);
    expect(starts(push("refs/heads/main", true))).toBe(false);
  });

  it("starts on no check suite GitHub Actions created", () => {
    const suite = (appSlug: string) =>
      event({ name: "check_suite", action: "completed", checkSuite: { appSlug } });
    expect(
      eventStartsRun(TEMPLATE.events, suite("github-actions"), { ...facts, checkSuiteApp: "github-actions" })
        .starts,
    ).toBe(false);
    expect(
      eventStartsRun(TEMPLATE.events, suite("circleci"), { ...facts, checkSuiteApp: "circleci" }).starts,
    ).toBe(true);
  });

  it("defaults pull_request to opened, synchronize and reopened when a workflow lists no types", async () => {
    const on = await eventsOf("pull_request");
    expect(eventStartsRun(on, event({ name: "pull_request", action: "synchronize" }), facts).starts).toBe(
      true,
    );
    expect(eventStartsRun(on, event({ name: "pull_request", action: "labeled" }), facts).starts).toBe(false);
  });

  it("reads filter patterns and the schedule's period as GitHub does", () => {
    expect(globMatch("autopilot/**", "autopilot/issue-3")).toBe(true);
    expect(globMatch("release/*", "release/a/b")).toBe(false);
    expect(cronPeriodMinutes("*/10 * * * *")).toBe(10);
    expect(cronPeriodMinutes("*/1 * * * *")).toBe(5); // GitHub's shortest interval is 5 minutes
    expect(cronPeriodMinutes("0 3 * * *")).toBe(24 * 60);
  });
});

describe("the controller template's job skips the runs that cannot change anything", () => {
  const job = TEMPLATE.jobs.find((j) => j.id === "reconcile")!;

  /** Whether GitHub would run the job (not skip it) for this event. */
  function runs(eventName: string, payload: Record<string, unknown>): boolean {
    const context: ExprContext = {
      contexts: {
        github: { event_name: eventName, event: payload as never, repository: "demo/shop" },
        inputs: {},
        secrets: {},
        vars: {},
        env: {},
        steps: {},
        job: {},
        runner: {},
        matrix: {},
        needs: {},
      },
      status: "success",
    };
    return conditionHolds(job.if, context);
  }
  const bot = { login: "autopilot[bot]", type: "Bot" };
  const person = { login: "alice", type: "User" };
  const ownPr = { head: { repo: { full_name: "demo/shop" } } };

  it("skips a worker's progress-comment edit, the App's labels and dashboard edits", () => {
    expect(runs("issue_comment", { action: "edited", sender: bot })).toBe(false);
    expect(runs("issues", { action: "labeled", sender: bot })).toBe(false);
    expect(runs("issues", { action: "edited", sender: bot })).toBe(false);
    expect(runs("pull_request", { action: "synchronize", sender: bot, pull_request: ownPr })).toBe(false);
    expect(runs("push", { sender: bot })).toBe(false);
  });

  it("runs for people, for a worker's end, for merges, and on schedule", () => {
    expect(runs("issue_comment", { action: "created", sender: person })).toBe(true);
    expect(runs("issues", { action: "edited", sender: person })).toBe(true);
    expect(
      runs("workflow_run", { action: "completed", sender: bot, workflow_run: { conclusion: "failure" } }),
    ).toBe(true);
    expect(
      runs("workflow_run", { action: "completed", sender: bot, workflow_run: { conclusion: "cancelled" } }),
    ).toBe(true);
    expect(runs("pull_request", { action: "closed", sender: bot, pull_request: ownPr })).toBe(true);
    expect(runs("check_run", { action: "completed", sender: bot })).toBe(true);
    expect(runs("schedule", { schedule: "*/10 * * * *", sender: person })).toBe(true);
    expect(runs("workflow_dispatch", { inputs: {}, sender: person })).toBe(true);
  });

  it("skips the end of a worker run that succeeded: its own last step did this reconcile", () => {
    expect(
      runs("workflow_run", { action: "completed", sender: bot, workflow_run: { conclusion: "success" } }),
    ).toBe(false);
  });

  it("skips the bot's merge of its own pull request (the merging run reconciled again), not others' merges", () => {
    const merged = (by: { login: string }, author: { login: string }) => ({
      ...ownPr,
      merged: true,
      merged_by: by,
      user: author,
    });
    expect(runs("pull_request", { action: "closed", sender: bot, pull_request: merged(bot, bot) })).toBe(
      false,
    );
    // A person's merge of the bot's PR, the bot's merge of a person's PR, a close without a merge: they run.
    expect(
      runs("pull_request", { action: "closed", sender: person, pull_request: merged(person, bot) }),
    ).toBe(true);
    expect(runs("pull_request", { action: "closed", sender: bot, pull_request: merged(bot, person) })).toBe(
      true,
    );
    expect(
      runs("pull_request", {
        action: "closed",
        sender: bot,
        pull_request: { ...ownPr, merged: false, merged_by: null, user: bot },
      }),
    ).toBe(true);
  });

  it("skips pull requests from forks, which get no secrets to make the App token with", () => {
    const fork = { head: { repo: { full_name: "eve/shop" } } };
    expect(runs("pull_request", { action: "opened", sender: person, pull_request: fork })).toBe(false);
    expect(runs("pull_request", { action: "opened", sender: person, pull_request: ownPr })).toBe(true);
  });

  it("keeps its concurrency group at the job, where a skipped run cannot cancel a pending one", () => {
    expect(TEMPLATE.concurrency).toBeUndefined();
    expect(evaluateToken(job.concurrency, { contexts: {} })).toMatchObject({ group: "autopilot-controller" });
  });
});

describe("merge_group", () => {
  const group = (baseRef: string, action = "checks_requested") =>
    event({
      name: "merge_group",
      action,
      sender: "github-merge-queue[bot]",
      group: {
        baseRef,
        headRef: `refs/heads/gh-readonly-queue/${baseRef.slice(11)}/pr-1-abc`,
        headSha: "abc",
      },
    });

  it("starts a workflow that lists it, filtered by the group's base branch, on checks_requested only", async () => {
    const on = await eventsOf("{ pull_request: {}, merge_group: { branches: [main] } }");
    expect(eventStartsRun(on, group("refs/heads/main"), facts).starts).toBe(true);
    expect(eventStartsRun(on, group("refs/heads/release"), facts).starts).toBe(false);
    expect(eventStartsRun(on, group("refs/heads/main", "destroyed"), facts).starts).toBe(false);
  });

  it("starts nothing in a workflow that does not list it", async () => {
    expect(eventStartsRun(await eventsOf("pull_request"), group("refs/heads/main"), facts).starts).toBe(
      false,
    );
  });
});
