import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import nock from "nock";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { runController } from "../../src/app/actions/controller-action.js";
import { ACTIONS_HELD_WRITES_WAIT_SECONDS, heldWritesWait } from "../../src/app/actions/reconcile-rounds.js";
import { parseEndingRun, parseOverrides } from "../../src/app/actions/run-inputs.js";
import { parseDashboard } from "../../src/core/dashboard/index.js";
import { GitHubCircuit, resetCircuits } from "../../src/github/transport/circuit.js";
import { resetMemories } from "../../src/github/gateway.js";
import { createValidatingFetch, type ValidatingFetch } from "../helpers/validating-fetch.js";
import {
  API,
  gqlIssue,
  JOB_SHA,
  OWNER,
  REPO,
  replyLock,
  replyRuns,
  replySnapshot,
  restIssue,
  snapshotPage,
  webhookExample,
} from "../github/fixtures.js";

const R = `/repos/${OWNER}/${REPO}`;
let validating: ValidatingFetch;
let dir: string;

beforeAll(async () => {
  validating = await createValidatingFetch();
  dir = mkdtempSync(path.join(os.tmpdir(), "autopilot-controller-"));
});
beforeEach(() => {
  nock.disableNetConnect();
  resetMemories();
  resetCircuits();
  process.exitCode = undefined;
});
afterEach(() => {
  nock.cleanAll();
  nock.enableNetConnect();
  process.exitCode = undefined;
  for (const key of Object.keys(process.env)) if (key.startsWith("INPUT_")) delete process.env[key];
});

function eventFile(name: string, payload: unknown): string {
  const file = path.join(dir, `${name}.json`);
  writeFileSync(file, JSON.stringify(payload));
  return file;
}

function env(eventName: string, payload: unknown): NodeJS.ProcessEnv {
  return {
    GITHUB_REPOSITORY: `${OWNER}/${REPO}`,
    GITHUB_EVENT_NAME: eventName,
    GITHUB_EVENT_PATH: eventFile(eventName, payload),
    GITHUB_API_URL: API,
    GITHUB_ACTOR: "maintainer",
    GITHUB_TOKEN: "ghs_from_env",
    GITHUB_SHA: JOB_SHA,
    GITHUB_RUN_ID: "900",
    GITHUB_RUN_ATTEMPT: "1",
  };
}

describe("the controller inside Actions", () => {
  it("starts a session on workflow_dispatch with the dispatch's overrides", async () => {
    process.env["INPUT_BOT-LOGIN"] = "autopilot[bot]";
    const scope = nock(API);
    const lock = replyLock(scope);
    replySnapshot(scope, snapshotPage({ issues: [gqlIssue({ number: 5, readyBy: "maintainer" })] }));
    replyRuns(scope, []);
    scope
      .get(`${R}/collaborators/maintainer/permission`)
      .reply(200, { permission: "admin", role_name: "admin" });
    scope
      .get(`${R}/issues`)
      .query((q) => q.creator === "autopilot[bot]")
      .reply(200, []);
    let created = "";
    scope
      .post(`${R}/issues`, (body: { body: string }) => {
        created = body.body;
        return true;
      })
      .reply(201, restIssue(50, ""));
    // Listed again after the create: no older tracking issue, so #50 stays.
    scope
      .get(`${R}/issues`)
      .query((q) => q.creator === "autopilot[bot]")
      .reply(200, [restIssue(50, "")]);
    scope
      .post("/graphql", (b: { query: string }) => b.query.includes("AutopilotIssueNodeId"))
      .reply(200, { data: { repository: { issue: { id: "I_50", isPinned: false } } } })
      .post("/graphql", (b: { query: string }) => b.query.includes("pinIssue"))
      .reply(200, { data: { pinIssue: { issue: { number: 50, isPinned: true } } } })
      .post(`${R}/issues/5/labels`)
      .reply(200, [])
      .delete(`${R}/issues/5/labels/autopilot%3Aready`)
      .reply(200, [])
      .post(`${R}/git/refs`, { ref: "refs/autopilot/dispatch/issue-5-attempt-1", sha: "c".repeat(40) })
      .reply(201, { ref: "refs/autopilot/dispatch/issue-5-attempt-1", object: { sha: "c".repeat(40) } })
      .post(
        `${R}/actions/workflows/autopilot-worker.yml/dispatches`,
        (b: { inputs: Record<string, string> }) => b.inputs["tracking-issue"] === "50",
      )
      .reply(204);
    // The reconcile acted and a task is in progress: the schedule's 10-minute cron stays on (AUTOPILOT_WAKE).
    scope
      .get(`${R}/actions/variables/AUTOPILOT_WAKE`)
      .reply(404, { message: "Not Found" })
      .post(`${R}/actions/variables`, { name: "AUTOPILOT_WAKE", value: "soon" })
      .reply(201, {});
    const dispatch = {
      ...webhookExample("workflow_dispatch"),
      inputs: { "max-parallel": "1", labels: "", "dry-run": "false" },
    };
    // The runner's files for the step's outputs and its job summary.
    const outputs = path.join(dir, "outputs");
    const summary = path.join(dir, "summary.md");
    writeFileSync(outputs, "");
    writeFileSync(summary, "");
    process.env.GITHUB_OUTPUT = outputs;
    process.env.GITHUB_STEP_SUMMARY = summary;
    try {
      await runController({
        env: { ...env("workflow_dispatch", dispatch), RUNNER_TEMP: dir },
        fetch: validating.fetch,
        retry: false,
        throttle: false,
      });
    } finally {
      delete process.env.GITHUB_OUTPUT;
      delete process.env.GITHUB_STEP_SUMMARY;
    }
    expect(process.exitCode).toBeUndefined();
    expect(scope.isDone()).toBe(true);
    // The run's figures: in the job summary, and as JSON in the file its `metrics-file` output names (the
    // controller workflow keeps it as an artifact).
    const file = /metrics-file<<(\S+)\n(.*)\n\1/.exec(readFileSync(outputs, "utf8"))?.[2] ?? "";
    expect(file.startsWith(dir)).toBe(true);
    const metrics = JSON.parse(readFileSync(file, "utf8"));
    expect(metrics).toMatchObject({
      format: "autopilot-run-metrics/1",
      repository: `${OWNER}/${REPO}`,
      event: "workflow_dispatch",
      session: { tasks: { "in-progress": 1, done: 0 } },
      reconciles: { count: 1 },
    });
    // Every request of the run but the lock's own: the snapshot's GraphQL queries apart from the REST ones.
    expect(metrics.requests.graphql).toBeGreaterThanOrEqual(3);
    expect(metrics.requests.rest).toBeGreaterThanOrEqual(5);
    expect(readFileSync(summary, "utf8")).toMatch(/\| Tasks \| in-progress 1 \|/);
    // The reconcile held the lock: a claim of this run, deleted after (the scope saw the deletion).
    expect(lock.claim()).toMatch(/^refs\/autopilot\/reconcile\/\d{15}-run-900-1-[0-9a-f]{8}$/);
    const state = parseDashboard(created).state;
    expect(state?.session).toMatchObject({ status: "running", actor: "maintainer" });
    expect(state?.overrides).toEqual({ maxParallel: 1 });
  });

  it("fails the job with a clear message when GitHub cannot be reached", async () => {
    // The snapshot's first read (the worker runs, then the GraphQL query) gets the 502.
    const scope = nock(API);
    replyLock(scope);
    scope
      .get(/\/actions\/workflows\/.*\/runs/)
      .query(true)
      .reply(502, { message: "Bad Gateway" })
      .post("/graphql")
      .reply(502, { message: "Bad Gateway" });
    const lines: string[] = [];
    const write = process.stdout.write.bind(process.stdout);
    process.stdout.write = ((chunk: string) => {
      lines.push(String(chunk));
      return true;
    }) as typeof process.stdout.write;
    try {
      await runController({
        env: env("issues", webhookExample("issues", "labeled")),
        fetch: validating.fetch,
        retry: false,
        throttle: false,
      });
    } finally {
      process.stdout.write = write;
    }
    expect(process.exitCode).toBe(1);
    expect(lines.join("")).toContain(
      `::error::Autopilot could not reconcile ${OWNER}/${REPO}: GitHub answered 502 Bad Gateway`,
    );
  });

  it("waits out a short write pause once for the writes it holds (this job is their only record), never a long one", () => {
    const circuit = new GitHubCircuit();
    const t0 = Date.parse("2026-11-20T10:00:00Z");
    const label = { type: "addLabels" as const, issue: 1, labels: ["critical"] };
    expect(heldWritesWait(circuit, "o/r", t0)).toBeNull();
    circuit.pauseWrites("o/r", 60, "403 You have exceeded a secondary rate limit", t0);
    // Paused, but nothing held: the job ends at once.
    expect(heldWritesWait(circuit, "o/r", t0)).toBeNull();
    circuit.enqueue("o/r", label, "403 secondary rate limit", "labels#1");
    expect(heldWritesWait(circuit, "o/r", t0 + 10_000)).toBe(50_000);
    // A third refusal in a row pauses for 240 s: still waited out, held writes are not dropped.
    circuit.pauseWrites("o/r", 60, "again", t0 + 60_000);
    circuit.pauseWrites("o/r", 60, "again", t0 + 180_000);
    expect(circuit.writePause("o/r", t0 + 180_000)?.until).toBe(t0 + 420_000);
    expect(heldWritesWait(circuit, "o/r", t0 + 180_000, 110_000)).toBe(240_000);
    // The allowance fits the job's timeout with room for its reconciles (past it Actions cancels the job).
    const template = readFileSync(
      path.join(import.meta.dirname, "..", "..", "templates", "workflows", "autopilot-controller.yml"),
      "utf8",
    );
    const timeout = Number(/timeout-minutes:\s*(\d+)/.exec(template)?.[1]);
    expect(ACTIONS_HELD_WRITES_WAIT_SECONDS + 180).toBeLessThanOrEqual(timeout * 60);
    // Only a wait that would take the job past its whole allowance ends it with writes left.
    const allowance = ACTIONS_HELD_WRITES_WAIT_SECONDS * 1000;
    expect(heldWritesWait(circuit, "o/r", t0 + 180_000, allowance - 240_000)).toBe(240_000);
    expect(heldWritesWait(circuit, "o/r", t0 + 180_000, allowance - 239_999)).toBeNull();
  });

  it("reads overrides as numbers, JSON or role=name pairs, and refuses nonsense", () => {
    expect(parseOverrides("3", '{"ready":"go"}', "true")).toEqual({
      maxParallel: 3,
      labels: { ready: "go" },
      dryRun: true,
    });
    expect(parseOverrides("", "ready=go, review = check", "false")).toEqual({
      labels: { ready: "go", review: "check" },
    });
    expect(() => parseOverrides("many", "", "")).toThrow(/max-parallel/);
    expect(() => parseOverrides("", "", "maybe")).toThrow(/dry-run/);
  });

  it("reads ending-run as the worker run's id, and refuses anything else before it reconciles", () => {
    expect(parseEndingRun("")).toBeNull();
    expect(parseEndingRun(" 1024 ")).toBe(1024);
    expect(() => parseEndingRun("0")).toThrow(/ending-run must be the worker run's id/);
    expect(() => parseEndingRun("1024; rm -rf /")).toThrow(/ending-run/);
  });

  it("is bundled: dist/controller/index.js runs under node and fails cleanly without a repository", () => {
    const out = spawnSync(process.execPath, ["dist/controller/index.js"], {
      env: { PATH: process.env.PATH ?? "" },
      encoding: "utf8",
    });
    expect(out.status).toBe(1);
    expect(out.stdout).toMatch(/::error::.*GITHUB_REPOSITORY is not set/);
  });
});
