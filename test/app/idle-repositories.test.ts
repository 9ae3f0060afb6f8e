/**
 * Which repositories the hosted controller's ticks reconcile (src/core/scheduling/tick-choice.ts), against the
 * offline sandbox: real reconciles, real webhooks, and GitHub's rate-limit headers as the sandbox sends them.
 * Every request the controller makes is in the sandbox's accounting.
 */
import { afterEach, expect, it } from "vitest";
import type { ControllerServer } from "../../src/app/hosted/http-server.js";
import type { Sandbox } from "../../sandbox/emulator/index.js";
import { controllerOn, sandboxWithRepos } from "./sandbox-repos-fixture.js";

let sandbox: Sandbox | null = null;
let server: ControllerServer | null = null;

afterEach(async () => {
  await server?.stop();
  await sandbox?.stop();
  server = null;
  sandbox = null;
});

async function start(repos: { owner: string; name: string }[], tickPolicy = {}) {
  const s = await sandboxWithRepos(repos);
  sandbox = s;
  server = await controllerOn(s, { awaitReconcile: true, tickPolicy });
  return { sandbox: s, server };
}

/** Lets webhook deliveries (and the reconciles they start) settle. */
async function settle(s: ControllerServer) {
  for (let i = 0; i < 5; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    await s.idle();
  }
}

/** The requests a tick makes (after the deliveries it causes have settled). */
async function tickRequests(s: Sandbox, c: ControllerServer) {
  const before = s.requests.total;
  await c.tick();
  const made = s.requests.records.slice(before);
  await settle(c);
  return made;
}

const ready = { title: "Add a widget", body: "Please.", labels: ["autopilot:ready"], author: "maintainer" };

it("an idle repository costs a tick nothing; a ready label brings it in, and with a task in flight every tick reconciles it", async () => {
  const repo = { owner: "acme", name: "quiet" };
  const { sandbox: s, server: c } = await start([repo]);
  // The first tick learns what the repository holds: nothing of Autopilot's.
  expect((await tickRequests(s, c)).some((r) => r.endpoint === "POST /graphql")).toBe(true);
  for (let i = 0; i < 3; i++) expect(await tickRequests(s, c)).toEqual([]);

  // A ready label: its webhook reconciles the repository, which dispatches a worker.
  const before = s.requests.total;
  s.store.createIssue(repo, ready);
  await settle(c);
  expect(s.requests.records.slice(before).some((r) => r.endpoint === "POST /graphql")).toBe(true);
  expect(s.store.listWorkflowRuns(repo)).toHaveLength(1);

  // The task is in flight: each tick reconciles the repository again (its snapshot query at least).
  for (let i = 0; i < 3; i++) {
    const made = await tickRequests(s, c);
    expect(made.filter((r) => r.endpoint === "POST /graphql").length, `tick ${i}`).toBeGreaterThanOrEqual(1);
  }
  s.assertNoValidationFailures();
});

it("a busy installation's remaining budget stops ticks from reconciling past it; the reserve stays for webhooks", async () => {
  const repos = ["one", "two", "three"].map((name) => ({ owner: "acme", name }));
  const { sandbox: s, server: c } = await start(repos, { reserveFraction: 0.5 });
  for (const repo of repos) s.store.createIssue(repo, ready);
  await settle(c);
  await tickRequests(s, c);
  // Three tasks in flight: a tick reconciles all three (one snapshot query each, at least).
  const graphqlOf = (made: { endpoint: string }[]) =>
    made.filter((r) => r.endpoint === "POST /graphql").length;
  expect(graphqlOf(await tickRequests(s, c))).toBeGreaterThanOrEqual(3);

  // The installation has spent nearly all of its hour: GitHub's headers say 12 requests and 12 points are left,
  // below the half the controller keeps for webhooks.
  const spent = s.requests.records.filter((r) => r.tokenKind === "installation" && r.charged);
  const core = spent.filter((r) => r.endpoint !== "POST /graphql").length;
  const points = spent.reduce((sum, r) => sum + (r.points ?? 0), 0);
  s.setRateLimits({ installation: core + 12, graphql: points + 12 });
  // A webhook still reconciles (from the reserve), and its answers carry the new count.
  const before = s.requests.total;
  s.store.createComment(repos[0]!, 1, "Any news?", "maintainer");
  await settle(c);
  expect(graphqlOf(s.requests.records.slice(before))).toBeGreaterThanOrEqual(1);
  // Ticks now reconcile none of the three, though their tasks are in flight.
  for (let i = 0; i < 2; i++) expect(await tickRequests(s, c)).toEqual([]);
});
