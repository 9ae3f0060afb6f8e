import nock from "nock";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { reconcile } from "../../src/app/reconcile-repo.js";
import {
  emptyState,
  parseDashboard,
  renderStateBlock,
  TRACKING_MARKER,
} from "../../src/core/dashboard/index.js";
import { GitHubCircuit } from "../../src/github/transport/circuit.js";
import { totalOf } from "../../src/github/transport/counter.js";
import { resetMemories } from "../../src/github/gateway.js";
import { createOctokit } from "../../src/github/transport/octokit.js";
import { createValidatingFetch, type ValidatingFetch } from "../helpers/validating-fetch.js";
import {
  API,
  BOT,
  type CommentSpec,
  gqlIssue,
  gqlTracking,
  OWNER,
  REPO,
  replyRuns,
  replySnapshot,
  restIssue,
  snapshotPage,
} from "../github/fixtures.js";

const R = `/repos/${OWNER}/${REPO}`;
const NOW = new Date("2026-11-20T10:00:00Z");
let validating: ValidatingFetch;

beforeAll(async () => {
  validating = await createValidatingFetch();
  canonical = await renderIdleBody();
});
beforeEach(() => {
  nock.disableNetConnect();
  resetMemories();
});
afterEach(() => {
  nock.cleanAll();
  nock.enableNetConnect();
});

interface Write {
  method: string;
  path: string;
  body: Record<string, unknown>;
}

/** Records every write (they are validated against GitHub's description on the way). */
function recordWrites(scope: nock.Scope): Write[] {
  const writes: Write[] = [];
  const record = (method: string) =>
    function (this: unknown, path: string, body: nock.Body) {
      writes.push({ method, path, body: (body ?? {}) as Record<string, unknown> });
      return method === "POST" && path === `${R}/issues` ? [201, restIssue(99, "")] : [200, {}];
    };
  scope
    .persist()
    .post(/\/repos\/.*/)
    .reply(record("POST"))
    .patch(/\/repos\/.*/)
    .reply(record("PATCH"))
    .delete(/\/repos\/.*/)
    .reply(record("DELETE"))
    .put(/\/repos\/.*/)
    .reply(record("PUT"));
  return writes;
}

/** A bare tracking body: a state block and nothing rendered (what a person might leave after an edit). */
function bareBody(revision = 3): string {
  return `${TRACKING_MARKER}\n## Autopilot is idle\n${renderStateBlock({ ...emptyState(NOW), revision })}\n`;
}

let canonical = "";

/** The tracking body as Autopilot renders an idle session at NOW (one reconcile of a bare body writes it). */
async function renderIdleBody(): Promise<string> {
  nock.disableNetConnect();
  const scope = nock(API);
  replySnapshot(scope, snapshotPage({ tracking: gqlTracking({ number: 1, body: bareBody(0) }) }));
  replyRuns(scope, []);
  scope.get(`${R}/issues/1`).reply(200, restIssue(1, bareBody(0)));
  const writes = recordWrites(nock(API));
  await run();
  nock.cleanAll();
  resetMemories();
  return String(writes.find((w) => w.method === "PATCH")?.body.body);
}

function idleBody(revision = 3): string {
  const state = parseDashboard(canonical).state!;
  return canonical.replace(renderStateBlock(state), renderStateBlock({ ...state, revision }));
}

const run = (extra: Partial<Parameters<typeof reconcile>[0]> = {}) =>
  reconcile({
    octokit: createOctokit({ auth: "ghs_test", fetch: validating.fetch, throttle: false, retry: false }),
    repo: { owner: OWNER, name: REPO },
    botLogin: BOT,
    circuit: new GitHubCircuit(),
    now: () => NOW,
    ...extra,
  });

describe("reconcile", () => {
  it("costs two requests and writes nothing on an idle repository", async () => {
    const scope = nock(API);
    replySnapshot(scope, snapshotPage({ tracking: gqlTracking({ number: 1, body: idleBody() }) }));
    replyRuns(scope, []);
    const result = await run();
    expect(scope.isDone()).toBe(true);
    expect(result.decision.effects).toEqual([]);
    expect(totalOf(result.requests)).toBe(2);
  });

  it("runs commands from people with write access and refuses others once, looking each permission up once", async () => {
    const comments: CommentSpec[] = [
      { id: 101, author: "writer", body: "/autopilot start" },
      { id: 102, author: "reader", body: "/autopilot pause" },
      { id: 103, author: "reader", body: "/autopilot stop" },
      { id: 104, author: BOT, bot: true, mine: true, body: "/autopilot stop" },
    ];
    const scope = nock(API);
    replySnapshot(
      scope,
      snapshotPage({
        tracking: gqlTracking({ number: 1, body: idleBody(), comments }),
        issues: [gqlIssue({ number: 5, readyBy: "writer" })],
      }),
    );
    replyRuns(scope, []);
    scope
      .get(`${R}/collaborators/reader/permission`)
      .once()
      .reply(200, { permission: "read", role_name: "read" });
    scope
      .get(`${R}/collaborators/writer/permission`)
      .once()
      .reply(200, { permission: "write", role_name: "write" });
    scope.get(`${R}/issues/1`).reply(200, restIssue(1, idleBody()));
    const writes = recordWrites(nock(API));

    const result = await run();
    expect(scope.isDone()).toBe(true);
    expect(result.snapshot.permissions).toEqual({ reader: "read", writer: "write" });
    // The session started (the tracking issue records it), the writer's command was acknowledged.
    const tracking = writes.find((w) => w.method === "PATCH" && w.path === `${R}/issues/1`);
    expect(parseDashboard(String(tracking?.body.body)).state?.session).toMatchObject({
      status: "running",
      actor: "writer",
    });
    expect(writes).toContainEqual(
      expect.objectContaining({
        method: "POST",
        path: `${R}/git/refs`,
        body: { ref: "refs/autopilot/dispatch/issue-5-attempt-1", sha: "c".repeat(40) },
      }),
    );
    expect(writes).toContainEqual(
      expect.objectContaining({
        method: "POST",
        path: `${R}/actions/workflows/autopilot-worker.yml/dispatches`,
      }),
    );
    expect(writes).toContainEqual({
      method: "POST",
      path: `${R}/issues/comments/101/reactions`,
      body: { content: "+1" },
    });
    // The reader got one polite refusal for two commands, and nothing else changed for them.
    const replies = writes.filter((w) => w.path === `${R}/issues/1/comments`).map((w) => String(w.body.body));
    expect(
      replies.filter((b) => b.includes("only takes commands from people with write access")),
    ).toHaveLength(1);
    expect(replies.join("\n")).toContain("@reader");
    // Autopilot's own comment was no command: no reaction to it.
    expect(writes.some((w) => w.path.includes("/comments/104/"))).toBe(false);
  });

  it("does not look a permission up again for commands already handled", async () => {
    const comments: CommentSpec[] = [
      { id: 101, author: "writer", body: "/autopilot start", acknowledged: true },
    ];
    const scope = nock(API);
    replySnapshot(scope, snapshotPage({ tracking: gqlTracking({ number: 1, body: idleBody(), comments }) }));
    replyRuns(scope, []);
    const result = await run();
    expect(scope.isDone()).toBe(true);
    expect(totalOf(result.requests)).toBe(2);
  });

  it("re-runs once on a fresh snapshot when the tracking issue changed since the snapshot", async () => {
    const comments: CommentSpec[] = [{ id: 101, author: "writer", body: "/autopilot start" }];
    const scope = nock(API);
    // First attempt: the snapshot shows revision 3, the re-read before writing shows revision 4.
    replySnapshot(scope, snapshotPage({ tracking: gqlTracking({ number: 1, body: idleBody(3), comments }) }));
    replyRuns(scope, []);
    scope.get(`${R}/collaborators/writer/permission`).reply(200, { permission: "admin", role_name: "admin" });
    scope.get(`${R}/issues/1`).reply(200, restIssue(1, idleBody(4)));
    // Second attempt: revision 4 everywhere; the write goes through.
    replySnapshot(
      scope,
      snapshotPage({ tracking: gqlTracking({ number: 1, body: idleBody(4), comments }) }),
      (v) => v.withRepo === true && v.trackingNumber === 1,
    );
    replyRuns(scope, []);
    // The writer's permission was looked up moments ago: the second attempt trusts it (no request).
    scope.get(`${R}/issues/1`).reply(200, restIssue(1, idleBody(4)));
    const writes = recordWrites(nock(API));
    const result = await run();
    expect(scope.isDone()).toBe(true);
    expect(result.attempts).toBe(2);
    expect(result.report.conflict).toBe(false);
    const tracking = writes.filter((w) => w.method === "PATCH" && w.path === `${R}/issues/1`);
    expect(tracking).toHaveLength(1);
    expect(parseDashboard(String(tracking[0]?.body.body)).state?.revision).toBe(5);
  });

  it("keeps the last good config when the file turns bad, across a restart, and reports the problem on the tracking issue", async () => {
    const good = "workerWorkflow: custom-worker.yml\n";
    const first = nock(API);
    replySnapshot(
      first,
      snapshotPage({ config: good, tracking: gqlTracking({ number: 1, body: idleBody() }) }),
    );
    // The runs are listed before the query, with the default workflow until the config names another.
    replyRuns(first, []);
    replyRuns(first, [], "custom-worker.yml");
    first.get(`${R}/issues/1`).reply(200, restIssue(1, idleBody()));
    const firstWrites = recordWrites(nock(API));
    await run();
    expect(first.isDone()).toBe(true);
    // The good file is kept in the tracking issue's state.
    const written = String(firstWrites.find((w) => w.method === "PATCH")?.body.body);
    expect(parseDashboard(written).state?.lastGoodConfig?.text).toBe(good);
    nock.cleanAll();

    // A restart: nothing of the first reconcile is remembered in this process.
    resetMemories();
    const second = nock(API);
    replySnapshot(
      second,
      snapshotPage({ config: "maxParallel: lots\n", tracking: gqlTracking({ number: 1, body: written }) }),
    );
    replyRuns(second, []);
    replyRuns(second, [], "custom-worker.yml");
    second.get(`${R}/issues/1`).reply(200, restIssue(1, written));
    const writes = recordWrites(nock(API));
    const result = await run();
    expect(second.isDone()).toBe(true);
    expect(result.configError?.message).toMatch(/Invalid config in \.github\/autopilot\.yml/);
    const tracking = writes.find((w) => w.method === "PATCH" && w.path === `${R}/issues/1`);
    expect(String(tracking?.body.body)).toContain("maxParallel");
    expect(String(tracking?.body.body)).toContain("keeps using the last valid configuration");
  });

  it("logs and skips every write in a dry run asked for by the config file", async () => {
    const lines: string[] = [];
    const scope = nock(API);
    replySnapshot(
      scope,
      snapshotPage({
        config: "dryRun: true\n",
        tracking: gqlTracking({
          number: 1,
          body: idleBody(),
          comments: [{ id: 101, author: "writer", body: "/autopilot start" }],
        }),
        issues: [gqlIssue({ number: 5, readyBy: "writer" })],
      }),
    );
    replyRuns(scope, []);
    scope.get(`${R}/collaborators/writer/permission`).reply(200, { permission: "write", role_name: "write" });
    const result = await run({
      log: {
        debug() {},
        info: (m) => lines.push(m),
        warn: (m) => lines.push(m),
        error: (m) => lines.push(m),
      },
    });
    expect(scope.isDone()).toBe(true);
    expect(result.dryRun).toBe(true);
    expect(result.report.outcomes.every((o) => o.status === "dry-run" || o.status === "skipped")).toBe(true);
    expect(lines).toContain("[dry run] would dispatch a worker for #5 (attempt 1)");
  });
});

describe("the circuit breaker between controller jobs (Actions: a new process each)", () => {
  const outage = () =>
    Promise.reject(
      Object.assign(new Error("Bad Gateway"), { name: "HttpError", status: 502, response: { headers: {} } }),
    );

  /** One reconcile of `body` with `circuit`, as a controller job runs it; returns what it wrote. */
  async function job(circuit: GitHubCircuit, body: string, now: Date): Promise<string> {
    const scope = nock(API);
    replySnapshot(scope, snapshotPage({ tracking: gqlTracking({ number: 1, body }) }));
    replyRuns(scope, []);
    scope.get(`${R}/issues/1`).optionally().reply(200, restIssue(1, body));
    const writes = recordWrites(nock(API));
    await run({ circuit, persistCircuit: true, now: () => now });
    nock.cleanAll();
    resetMemories();
    return String(writes.find((w) => w.method === "PATCH" && w.path === `${R}/issues/1`)?.body.body ?? body);
  }

  it("keeps the last opening in the state; the next job starts on probation, so one outage opens it", async () => {
    // The first job's circuit opened on three outages and recovered (no wait: resetMs 0).
    const first = new GitHubCircuit({ resetMs: 0 });
    for (let i = 0; i < 3; i++) await first.run(outage).catch(() => undefined);
    const written = await job(first, idleBody(), NOW);
    const kept = parseDashboard(written).state?.circuit;
    expect(kept?.failure).toMatch(/502/);
    expect(first.state).toBe("closed");

    // The next job, minutes later, in a new process.
    const soon = new Date(Date.parse(kept!.openedAt) + 5 * 60_000);
    const next = new GitHubCircuit();
    await job(next, written, soon);
    expect(next.state).toBe("half-open");
    await next.run(outage).catch(() => undefined);
    expect(next.state).toBe("open");

    // Without the kept opening (or long after it), a job needs three outages as before.
    const fresh = new GitHubCircuit();
    await job(fresh, written, new Date(Date.parse(kept!.openedAt) + 60 * 60_000));
    await fresh.run(outage).catch(() => undefined);
    expect(fresh.state).toBe("closed");
  });
});
