/**
 * A broken `.github/autopilot.yml` never makes Autopilot bolder: the last good configuration comes from the
 * tracking issue's state, so a controller with no memory of earlier reconciles — a restarted App, and always
 * the controller inside Actions (a fresh job each time) — keeps every setting of it. Each test imports the
 * controller into a fresh module registry, so nothing an earlier reconcile left in this process can help.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import nock from "nock";
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { configDigest, type LastGoodConfig } from "../../src/core/config/index.js";
import {
  type DashboardState,
  emptyState,
  parseDashboard,
  renderStateBlock,
  TRACKING_MARKER,
} from "../../src/core/dashboard/index.js";
import { createValidatingFetch, type ValidatingFetch } from "../helpers/validating-fetch.js";
import {
  API,
  DEFAULT_HEAD,
  gqlIssue,
  gqlTracking,
  JOB_SHA,
  OWNER,
  REPO,
  replyLock,
  replyRuns,
  replySnapshot,
  restIssue,
  snapshotPage,
} from "../github/fixtures.js";

const R = `/repos/${OWNER}/${REPO}`;
const NOW = new Date("2026-11-20T10:00:00Z");
const GOOD = "maxParallel: 1\nworkerWorkflow: careful-worker.yml\nmerge:\n  auto: false\n";
const TYPO = "maxParalel: 1\nworkerWorkflow: careful-worker.yml\nmerge:\n  auto: false\n";
const OLD_COMMIT = "a".repeat(40);
let validating: ValidatingFetch;
let dir: string;

beforeAll(async () => {
  validating = await createValidatingFetch();
  dir = mkdtempSync(path.join(os.tmpdir(), "autopilot-last-good-"));
});
beforeEach(() => {
  nock.disableNetConnect();
  vi.resetModules();
  process.exitCode = undefined;
});
afterEach(() => {
  nock.cleanAll();
  nock.enableNetConnect();
  process.exitCode = undefined;
});

/** A tracking issue body: a running session whose state may carry a last good configuration. */
function trackingBody(lastGoodConfig: LastGoodConfig | null): string {
  const state: DashboardState = {
    ...emptyState(NOW),
    revision: 3,
    session: {
      status: "running",
      since: NOW.toISOString(),
      reason: "user_start",
      actor: "m",
      startedAt: null,
    },
    lastGoodConfig,
  };
  return `${TRACKING_MARKER}\n## Autopilot is running\n${renderStateBlock(state)}\n`;
}

interface Write {
  method: string;
  path: string;
  body: Record<string, unknown>;
}

function recordWrites(scope: nock.Scope): Write[] {
  const writes: Write[] = [];
  const record = (method: string) =>
    function (this: unknown, p: string, body: nock.Body) {
      writes.push({ method, path: p, body: (body ?? {}) as Record<string, unknown> });
      if (p.endsWith("/git/refs"))
        return [201, { ref: (body as { ref: string }).ref, object: { sha: DEFAULT_HEAD } }];
      if (p.endsWith("/dispatches")) return [204, ""];
      return [200, {}];
    };
  scope
    .persist()
    .post(/\/repos\/.*/)
    .reply(record("POST"))
    .patch(/\/repos\/.*/)
    .reply(record("PATCH"))
    .delete(/\/repos\/.*/)
    .reply(record("DELETE"));
  return writes;
}

/** Two ready tasks labeled by a maintainer, the file as given, and the tracking issue as given. */
function world(scope: nock.Scope, config: string, body: string): void {
  replySnapshot(
    scope,
    snapshotPage({
      config,
      tracking: gqlTracking({ number: 1, body }),
      issues: [
        gqlIssue({ number: 5, readyBy: "maintainer" }),
        gqlIssue({ number: 6, readyBy: "maintainer" }),
      ],
    }),
  );
  scope
    .get(`${R}/collaborators/maintainer/permission`)
    .reply(200, { permission: "admin", role_name: "admin" });
  scope.get(`${R}/issues/1`).reply(200, restIssue(1, body));
}

/** One controller job in Actions, as a fresh process runs it. */
async function actionsJob(): Promise<void> {
  const { runController } = await import("../../src/app/actions/controller-action.js");
  const eventPath = path.join(dir, "schedule.json");
  writeFileSync(eventPath, JSON.stringify({ schedule: "*/5 * * * *" }));
  await runController({
    env: {
      GITHUB_REPOSITORY: `${OWNER}/${REPO}`,
      GITHUB_EVENT_NAME: "schedule",
      GITHUB_EVENT_PATH: eventPath,
      GITHUB_API_URL: API,
      GITHUB_TOKEN: "ghs_from_env",
      GITHUB_SHA: JOB_SHA,
    },
    fetch: validating.fetch,
    retry: false,
    throttle: false,
  });
}

const dispatches = (writes: Write[]) => writes.filter((w) => w.path.endsWith("/dispatches"));
const digestSent = (write: Write | undefined) =>
  (write?.body.inputs as Record<string, string> | undefined)?.["config-digest"];
const trackingWrite = (writes: Write[]) =>
  String(writes.find((w) => w.method === "PATCH" && w.path === `${R}/issues/1`)?.body.body ?? "");

describe("the controller in Actions, with a typo in the file", () => {
  it("keeps every setting of the last good file the state kept: one worker, its workflow, its digest", async () => {
    const kept: LastGoodConfig = { digest: configDigest(GOOD), commit: OLD_COMMIT, text: GOOD };
    const scope = nock(API);
    replyLock(scope);
    // The runs are listed before the query with the defaults' workflow, then with the last good one's.
    replyRuns(scope, []);
    replyRuns(scope, [], "careful-worker.yml");
    world(scope, TYPO, trackingBody(kept));
    const writes = recordWrites(nock(API));
    await actionsJob();
    expect(process.exitCode).toBeUndefined();
    expect(scope.isDone()).toBe(true);
    // maxParallel 1 (the defaults would start two), on the last good file's worker workflow.
    const sent = dispatches(writes);
    expect(sent).toHaveLength(1);
    expect(sent[0]?.path).toBe(`${R}/actions/workflows/careful-worker.yml/dispatches`);
    expect(digestSent(sent[0])).toBe(kept.digest);
    const body = trackingWrite(writes);
    expect(body).toContain("maxParalel");
    expect(body).toContain("keeps using the last valid configuration (from commit `aaaaaaa`)");
    expect(parseDashboard(body).state?.lastGoodConfig).toEqual(kept);
  });

  it("reads the last good file at its commit when the state kept only the digest and the commit", async () => {
    const kept: LastGoodConfig = { digest: configDigest(GOOD), commit: OLD_COMMIT };
    const scope = nock(API);
    replyLock(scope);
    replyRuns(scope, []);
    replyRuns(scope, [], "careful-worker.yml");
    world(scope, TYPO, trackingBody(kept));
    scope
      .get(`${R}/contents/.github%2Fautopilot.yml`)
      .query({ ref: OLD_COMMIT })
      .reply(200, {
        type: "file",
        encoding: "base64",
        name: "autopilot.yml",
        path: ".github/autopilot.yml",
        content: Buffer.from(GOOD).toString("base64"),
      });
    const writes = recordWrites(nock(API));
    await actionsJob();
    expect(process.exitCode).toBeUndefined();
    expect(scope.isDone()).toBe(true);
    expect(dispatches(writes)).toHaveLength(1);
    expect(dispatches(writes)[0]?.path).toContain("careful-worker.yml");
  });

  it("holds when the state knows no last good configuration: no dispatch, and the dashboard says why", async () => {
    const scope = nock(API);
    replyLock(scope);
    replyRuns(scope, []);
    world(scope, TYPO, trackingBody(null));
    const writes = recordWrites(nock(API));
    await actionsJob();
    expect(process.exitCode).toBeUndefined();
    expect(scope.isDone()).toBe(true);
    expect(dispatches(writes)).toEqual([]);
    expect(writes.some((w) => w.path.includes("/labels"))).toBe(false);
    const body = trackingWrite(writes);
    expect(body).toContain("maxParalel");
    expect(body).toContain("Autopilot waits for a fix");
    expect(parseDashboard(body).state?.lastGoodConfig).toBeNull();
  });

  it("a good file becomes the last good one, named by the default branch's commit", async () => {
    const scope = nock(API);
    replyLock(scope);
    replyRuns(scope, []);
    replyRuns(scope, [], "careful-worker.yml");
    world(scope, GOOD, trackingBody(null));
    const writes = recordWrites(nock(API));
    await actionsJob();
    expect(scope.isDone()).toBe(true);
    const state = parseDashboard(trackingWrite(writes)).state;
    expect(state?.lastGoodConfig).toEqual({ digest: configDigest(GOOD), commit: DEFAULT_HEAD, text: GOOD });
    expect(dispatches(writes)).toHaveLength(1);
    expect(digestSent(dispatches(writes)[0])).toBe(configDigest(GOOD));
  });
});
