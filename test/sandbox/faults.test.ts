import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FaultsSchema, type Sandbox, startSandbox } from "../../sandbox/emulator/index.js";

const owner = "acme";
const repo = "widgets";
const full = `${owner}/${repo}`;

let sandbox: Sandbox;
let receiver: Server;
let received: Array<{ delivery: string; title: string }> = [];

async function statuses(count: number, token: string): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < count; i++) {
    const response = await fetch(`${sandbox.url}/repos/${full}/issues/1`, {
      headers: { authorization: `token ${token}` },
    });
    await response.arrayBuffer();
    out.push(response.status);
  }
  return out;
}

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const payload = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { issue?: { title?: string } };
      received.push({
        delivery: String(req.headers["x-github-delivery"]),
        title: payload.issue?.title ?? "",
      });
      res.writeHead(200);
      res.end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  sandbox = await startSandbox();
  sandbox.store.createRepo({ owner, name: repo });
  sandbox.store.addUser("alice", { permission: "write" });
  sandbox.store.createIssue(full, { title: "Target", author: "alice" });
});

afterAll(async () => {
  await sandbox?.stop();
  await new Promise((resolve) => receiver?.close(resolve));
});

describe("faults", () => {
  it("answers a seeded, reproducible fraction of requests with 5xx", async () => {
    const token = sandbox.installationToken();
    sandbox.faults.set({ seed: 42, serverErrorRate: 0.3 });
    const first = await statuses(40, token);
    sandbox.faults.set({ seed: 42, serverErrorRate: 0.3 });
    const second = await statuses(40, token);
    expect(second).toEqual(first);
    const errors = first.filter((s) => s === 502).length;
    expect(errors).toBeGreaterThan(4);
    expect(errors).toBeLessThan(24);
    expect(first.filter((s) => s !== 502 && s !== 200)).toEqual([]);
    sandbox.faults.set({ seed: 43, serverErrorRate: 0.3 });
    expect(await statuses(40, token)).not.toEqual(first);
    // The scenario's humans are never faulted.
    sandbox.faults.set({ seed: 42, serverErrorRate: 1 });
    expect(await statuses(5, sandbox.userToken("alice"))).toEqual([200, 200, 200, 200, 200]);
    expect(await statuses(2, token)).toEqual([502, 502]);
    sandbox.faults.clear();
  });

  it("sends secondary-rate-limit 403s with retry-after in bursts", async () => {
    const token = sandbox.installationToken();
    sandbox.faults.set({
      seed: 1,
      secondaryRateLimitRate: 1,
      secondaryRateLimitBurst: 2,
      retryAfterSeconds: 3,
    });
    const response = await fetch(`${sandbox.url}/repos/${full}/issues/1`, {
      headers: { authorization: `token ${token}` },
    });
    expect(response.status).toBe(403);
    expect(response.headers.get("retry-after")).toBe("3");
    expect(((await response.json()) as { message: string }).message).toContain("secondary rate limit");
    sandbox.faults.set({ seed: 1, secondaryRateLimitRate: 0.05, secondaryRateLimitBurst: 3 });
    const seen = await statuses(60, token);
    const firstHit = seen.indexOf(403);
    expect(firstHit).toBeGreaterThanOrEqual(0);
    expect(seen.slice(firstHit, firstHit + 3)).toEqual([403, 403, 403]);
    expect(sandbox.faults.stats.secondaryRateLimits).toBeGreaterThanOrEqual(4);
    sandbox.faults.clear();
  });

  it("faults only the chosen token kinds and endpoints", async () => {
    sandbox.faults.set({ serverErrorRate: 1, tokenKinds: ["worker"] });
    expect(await statuses(2, sandbox.installationToken())).toEqual([200, 200]);
    sandbox.faults.set({ serverErrorRate: 1, endpoints: ["POST /graphql"] });
    expect(await statuses(2, sandbox.installationToken())).toEqual([200, 200]);
    const gql = await fetch(sandbox.graphqlUrl, {
      method: "POST",
      headers: { authorization: `token ${sandbox.installationToken()}` },
      body: JSON.stringify({ query: "{ viewer { login } }" }),
    });
    expect(gql.status).toBe(502);
    sandbox.faults.clear();
  });

  it("drops, duplicates and reorders webhook deliveries", async () => {
    sandbox.setWebhookTarget(`http://127.0.0.1:${(receiver.address() as AddressInfo).port}/`);
    received = [];
    sandbox.faults.set({ webhookDropRate: 1 });
    sandbox.store.createIssue(full, { title: "dropped", author: "alice" });
    await sandbox.webhooks.flush();
    expect(received).toEqual([]);
    expect(sandbox.webhooks.deliveries.at(-1)).toMatchObject({ dropped: true, status: null });

    sandbox.faults.set({ webhookDuplicateRate: 1 });
    sandbox.store.createIssue(full, { title: "twice", author: "alice" });
    await sandbox.webhooks.flush();
    expect(received.map((r) => r.title)).toEqual(["twice", "twice"]);
    expect(received[0]!.delivery).toBe(received[1]!.delivery);

    received = [];
    sandbox.faults.set({ seed: 5, webhookReorderWindow: 6 });
    const titles = ["r1", "r2", "r3", "r4", "r5", "r6"];
    for (const title of titles) sandbox.store.createIssue(full, { title, author: "alice" });
    await sandbox.webhooks.flush();
    expect(received.map((r) => r.title).sort()).toEqual(titles);
    expect(received.map((r) => r.title)).not.toEqual(titles);
    expect(sandbox.faults.stats.webhooksReordered).toBeGreaterThan(0);
    sandbox.faults.clear();
    sandbox.setWebhookTarget(null);
  });

  it("validates fault settings with FaultsSchema (the scenario file's `faults:`)", () => {
    expect(FaultsSchema.parse({ serverErrorRate: 0.1 })).toMatchObject({
      serverErrorRate: 0.1,
      tokenKinds: ["installation", "worker"],
      seed: 1,
    });
    expect(FaultsSchema.safeParse({ serverErrorRate: 2 }).success).toBe(false);
    expect(FaultsSchema.safeParse({ tokenKinds: ["user"] }).success).toBe(false);
    expect(FaultsSchema.safeParse({ typo: 1 }).success).toBe(false);
    expect(FaultsSchema.parse({ killRun: { issue: 3, afterSeconds: 2 } }).killRun).toEqual({
      issue: 3,
      afterSeconds: 2,
    });
    expect(() => sandbox.faults.set({ webhookDropRate: -1 })).toThrow();
  });
});
