import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Sandbox, startSandbox } from "../../sandbox/emulator/index.js";

const full = "acme/widgets";
let now = Date.parse("2026-11-25T12:00:00Z");
let sandbox: Sandbox;

async function call(
  method: string,
  path: string,
  token: string,
  body?: unknown,
): Promise<{ status: number; retryAfter: string | null; message: string }> {
  const response = await fetch(`${sandbox.url}${path}`, {
    method,
    headers: { authorization: `token ${token}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  const message = text ? String((JSON.parse(text) as { message?: unknown }).message ?? "") : "";
  return { status: response.status, retryAfter: response.headers.get("retry-after"), message };
}

const comment = (token: string, n: number) =>
  call("POST", `/repos/${full}/issues/1/comments`, token, { body: `note ${n}` });

beforeAll(async () => {
  sandbox = await startSandbox({ store: { now: () => new Date(now) } });
  sandbox.store.createRepo({ owner: "acme", name: "widgets" });
  sandbox.store.addUser("alice", { permission: "write" });
  sandbox.store.createIssue(full, { title: "Target", author: "alice" });
});

afterAll(async () => {
  await sandbox?.stop();
});

describe("the content-creation secondary limit", () => {
  it("is off unless switched on", async () => {
    sandbox.faults.clear();
    const token = sandbox.installationToken();
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await comment(token, i)).status);
    expect(statuses).toEqual([201, 201, 201, 201, 201]);
  });

  it("refuses content-generating requests over the per-minute figure with GitHub's message and retry-after, then lets them through", async () => {
    sandbox.faults.set({ contentLimit: { perMinute: 3, perHour: 100, minuteSeconds: 10 } });
    const token = sandbox.installationToken();
    const before = sandbox.store.listComments(full, 1).length;
    const first = [];
    for (let i = 0; i < 3; i++) first.push((await comment(token, i)).status);
    expect(first).toEqual([201, 201, 201]);
    now += 2000;
    const refused = await comment(token, 3);
    expect(refused.status).toBe(403);
    expect(refused.message).toMatch(/exceeded a secondary rate limit.*content creation/);
    expect(refused.retryAfter).toBe("8");
    // A refused request creates nothing; reads are not content.
    expect(sandbox.store.listComments(full, 1).length).toBe(before + 3);
    expect((await call("GET", `/repos/${full}/issues/1`, token)).status).toBe(200);
    // Labels on an issue and GraphQL mutations count too; a GraphQL query does not.
    expect((await call("POST", `/repos/${full}/issues/1/labels`, token, { labels: ["x"] })).status).toBe(403);
    const query = await call("POST", "/graphql", token, { query: "query { viewer { login } }" });
    expect(query.status).toBe(200);
    const mutation = await call("POST", "/graphql", token, {
      query: 'mutation { addComment(input: { subjectId: "x", body: "y" }) { clientMutationId } }',
    });
    expect(mutation.status).toBe(403);
    expect(sandbox.faults.stats.contentLimited).toBeGreaterThanOrEqual(3);
    now += 8000;
    expect((await comment(token, 4)).status).toBe(201);
  });

  it("counts per actor: workflow tokens and the App's bot have separate windows", async () => {
    sandbox.faults.set({ contentLimit: { perMinute: 1, perHour: 100, minuteSeconds: 10 } });
    expect((await comment(sandbox.installationToken(), 1)).status).toBe(201);
    expect((await comment(sandbox.installationToken(), 2)).status).toBe(403);
    // Scenario humans are never limited (as with every injected fault).
    expect((await comment(sandbox.userToken("alice"), 3)).status).toBe(201);
    expect((await comment(sandbox.userToken("alice"), 4)).status).toBe(201);
  });

  it("also holds the hourly figure, can answer 429, and can leave retry-after out", async () => {
    sandbox.faults.set({
      contentLimit: { perMinute: 50, perHour: 2, minuteSeconds: 1, status: 429, retryAfter: false },
    });
    const token = sandbox.installationToken();
    expect((await comment(token, 1)).status).toBe(201);
    now += 5000;
    expect((await comment(token, 2)).status).toBe(201);
    now += 5000;
    const refused = await comment(token, 3);
    expect(refused.status).toBe(429);
    expect(refused.retryAfter).toBeNull();
    now += 60_000; // one "hour" of 1-second minutes after the first
    expect((await comment(token, 4)).status).toBe(201);
  });
});
