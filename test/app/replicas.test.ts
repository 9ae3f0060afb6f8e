/**
 * Two replicas of the hosted controller sharing their work through a real Redis server (src/app/hosted/replica-work.ts),
 * against the offline sandbox: real reconciles, real webhooks. A delivery to one replica is worked on once,
 * by either; a tick on one replica chooses from what the other learned.
 */
import { randomUUID } from "node:crypto";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import type { ControllerServer } from "../../src/app/hosted/http-server.js";
import { ReplicaWork } from "../../src/app/hosted/replica-work.js";
import type { Sandbox } from "../../sandbox/emulator/index.js";
import { controllerOn, sandboxWithRepos } from "./sandbox-repos-fixture.js";
import { type RedisServer, startRedis } from "../../sandbox/scenario/controllers/redis-server.js";

const quiet = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
let redis: RedisServer;
let sandbox: Sandbox | null = null;
const servers: ControllerServer[] = [];

beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis.stop();
});
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.stop()));
  await sandbox?.stop();
  sandbox = null;
});

async function start(repos: { owner: string; name: string }[]) {
  const s = await sandboxWithRepos(repos);
  sandbox = s;
  const prefix = `t-${randomUUID()}`;
  const replica = () =>
    controllerOn(s, { replicas: new ReplicaWork({ url: redis.url, prefix, log: quiet }) });
  const b = await replica();
  servers.push(b);
  // Deliveries go to the replica started last: a.
  const a = await replica();
  servers.push(a);
  return { s, a, b };
}

/** Lets deliveries, and the reconciles either replica runs for them, settle. */
async function settle(...replicas: ControllerServer[]) {
  for (let i = 0; i < 5; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    for (const r of replicas) await r.idle();
  }
}

it("a ready label delivered to one replica dispatches its task once, whichever replica reconciles", async () => {
  const repos = ["api", "web", "docs"].map((name) => ({ owner: "acme", name }));
  const { s, a, b } = await start(repos);
  for (const repo of repos)
    s.store.createIssue(repo, {
      title: "Add a widget",
      body: "Please.",
      labels: ["autopilot:ready"],
      author: "maintainer",
    });
  await settle(a, b);
  for (const repo of repos) expect(s.store.listWorkflowRuns(repo), repo.name).toHaveLength(1);
  // More deliveries for the same repositories (comments): reconciled again, still one worker each.
  for (const repo of repos) s.store.createComment(repo, 1, "Any news?", "maintainer");
  await settle(a, b);
  for (const repo of repos) expect(s.store.listWorkflowRuns(repo), repo.name).toHaveLength(1);
  s.assertNoValidationFailures();
});

it("a tick on one replica does not learn again an idle repository the other already reconciled", async () => {
  const { s, a, b } = await start([{ owner: "acme", name: "quiet" }]);
  const before = s.requests.total;
  await a.tick();
  await settle(a, b);
  // The first tick learns what the repository holds: nothing of Autopilot's.
  expect(s.requests.records.slice(before).some((r) => r.endpoint === "POST /graphql")).toBe(true);
  // The other replica's tick knows it is idle from what the first recorded: it costs the installation nothing
  // (it lists the App's installations with the App's own token, once per replica).
  const after = s.requests.total;
  await b.tick();
  await settle(a, b);
  const charged = s.requests.records.slice(after).filter((r) => r.tokenKind === "installation");
  expect(charged.map((r) => r.endpoint).filter((e) => e !== "GET /installation/repositories")).toEqual([]);
});
