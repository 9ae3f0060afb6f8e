/**
 * `GET /metrics` of the hosted controller (src/app/hosted/controller-metrics.ts), scraped as Prometheus would, against
 * the offline sandbox with real reconciles: a task dispatched shows as in progress, the reconciles and their
 * GitHub requests are counted, the installation's rate limit is reported; without the bearer token nothing is
 * shown, and without a configured token there is no endpoint.
 */
import { afterEach, expect, it } from "vitest";
import type { ControllerServer } from "../../src/app/hosted/http-server.js";
import type { Sandbox } from "../../sandbox/emulator/index.js";
import { controllerOn, sandboxWithRepos } from "./sandbox-repos-fixture.js";

const TOKEN = "a-scraper-token-of-32-characters";
let sandbox: Sandbox | null = null;
let server: ControllerServer | null = null;

afterEach(async () => {
  await server?.stop();
  server = null;
  await sandbox?.stop();
  sandbox = null;
});

async function start(metricsToken?: string) {
  const s = await sandboxWithRepos([{ owner: "acme", name: "api" }]);
  sandbox = s;
  server = await controllerOn(s, metricsToken ? { metricsToken } : {});
  return { s, server };
}

/** The value of one series in a Prometheus text exposition; null when it is not there. */
function sample(text: string, series: string): number | null {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : null;
}

it("shows a scraper with the token each repository's tasks, the reconciles, GitHub requests and rate limits", async () => {
  const { s, server } = await start(TOKEN);
  s.store.createIssue(
    { owner: "acme", name: "api" },
    { title: "Add a widget", body: "Please.", labels: ["autopilot:ready"], author: "maintainer" },
  );
  for (let i = 0; i < 5; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    await server.idle();
  }
  expect(s.store.listWorkflowRuns({ owner: "acme", name: "api" })).toHaveLength(1);

  expect((await fetch(`${server.url}/metrics`)).status).toBe(401);
  expect(
    (await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}x` } })).status,
  ).toBe(401);
  const response = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  const text = await response.text();

  expect(sample(text, 'autopilot_tasks{repository="acme/api",status="in-progress"}')).toBe(1);
  expect(sample(text, 'autopilot_tasks{repository="acme/api",status="ready"}')).toBe(0);
  expect(sample(text, 'autopilot_tasks{repository="acme/api",status="done"}')).toBe(0);
  expect(sample(text, 'autopilot_reconciles_total{outcome="ok"}')).toBeGreaterThanOrEqual(1);
  expect(sample(text, "autopilot_reconcile_duration_seconds_count")).toBeGreaterThanOrEqual(1);
  const installation = String(s.store.installationId);
  const graphql = sample(
    text,
    `autopilot_github_requests_total{installation="${installation}",api="graphql"}`,
  );
  expect(graphql).toBeGreaterThanOrEqual(1);
  const rest = sample(text, `autopilot_github_requests_total{installation="${installation}",api="rest"}`);
  // What the metrics count is what the sandbox saw the installation's token make (one repository here).
  const made = s.requests.records.filter((r) => r.tokenKind === "installation");
  console.log("GQL", graphql, "REST", rest);
  expect(graphql! + rest!).toBe(made.length);
  const limit = sample(text, `autopilot_github_rate_limit{installation="${installation}",resource="core"}`);
  const left = sample(
    text,
    `autopilot_github_rate_limit_remaining{installation="${installation}",resource="core"}`,
  );
  expect(limit).toBeGreaterThan(0);
  expect(left).toBeGreaterThan(0);
  expect(left!).toBeLessThan(limit!);
  expect(sample(text, "autopilot_process_resident_memory_bytes")).toBeGreaterThan(0);
});

it("has no endpoint when no token is configured", async () => {
  const { server } = await start();
  expect((await fetch(`${server.url}/metrics`)).status).toBe(404);
});
