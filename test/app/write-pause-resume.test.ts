/**
 * The hosted controller after GitHub's secondary rate limit paused a repository's writes: the held writes go out
 * in a reconcile scheduled for when the pause ends, without waiting for another webhook or the 5-minute tick.
 */
import { generateKeyPairSync } from "node:crypto";
import { sign } from "@octokit/webhooks-methods";
import nock from "nock";
import { afterEach, beforeAll, beforeEach, expect, it } from "vitest";
import { type ControllerServer, startControllerServer } from "../../src/app/hosted/http-server.js";
import type { ReconcileOptions } from "../../src/app/reconcile-repo.js";
import { circuitFor, resetCircuits } from "../../src/github/transport/circuit.js";
import { repoKey } from "../../src/github/transport/octokit-surface.js";
import { webhookExample } from "../github/fixtures.js";

const SECRET = "webhook-secret";
const BASE = "https://api.github.com";
let privateKey: string;
let server: ControllerServer | null = null;

beforeAll(() => {
  privateKey = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({
    type: "pkcs1",
    format: "pem",
  }) as string;
});
beforeEach(() => {
  resetCircuits();
  nock.disableNetConnect();
  nock.enableNetConnect(/127\.0\.0\.1/);
});
afterEach(async () => {
  await server?.stop();
  server = null;
  resetCircuits();
  nock.cleanAll();
  nock.enableNetConnect();
});

it("reconciles a repository again when its write pause ends, once, while it holds writes", async () => {
  nock(BASE).get("/app").optionally().reply(200, { id: 123, slug: "autopilot-test" });
  const calls: { at: number; reason: string }[] = [];
  let pausedAt = 0;
  server = await startControllerServer({
    appId: 123,
    privateKey,
    webhookSecret: SECRET,
    baseUrl: BASE,
    retry: false,
    throttle: false,
    logLevel: "fatal",
    awaitReconcile: true,
    reconcile: async (options: ReconcileOptions) => {
      calls.push({ at: Date.now(), reason: calls.length === 0 ? "webhook" : "resume" });
      const key = repoKey(options.repo);
      const circuit = circuitFor(BASE);
      if (calls.length === 1) {
        // The first reconcile meets the limit: GitHub asks for a second; two writes are held.
        pausedAt = Date.now();
        circuit.pauseWrites(key, 1, "403 You have exceeded a secondary rate limit");
        circuit.enqueue(key, { type: "addLabels", issue: 1, labels: ["a"] }, "paused", "labels#1");
        circuit.enqueue(key, { type: "addLabels", issue: 2, labels: ["a"] }, "paused", "labels#2");
      } else {
        // The resumed reconcile carries them out (the gateway replays them).
        circuit.takeQueued(key);
      }
    },
  });
  const payload = { ...webhookExample("issues", "opened"), installation: { id: 42 } };
  const body = JSON.stringify(payload);
  const response = await fetch(server.webhookUrl, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-github-event": "issues",
      "x-github-delivery": "d-1",
      "x-hub-signature-256": await sign(SECRET, body),
    },
    body,
  });
  expect(response.status).toBe(200);
  expect(calls).toHaveLength(1);
  // No webhook, no tick: the pause's end brings the next reconcile (1 s pause + 1 s margin).
  for (let i = 0; i < 50 && calls.length < 2; i++) await new Promise((r) => setTimeout(r, 100));
  expect(calls).toHaveLength(2);
  expect(calls[1]!.at - pausedAt).toBeGreaterThanOrEqual(1_000);
  // Nothing held any more: no further reconcile is scheduled.
  await new Promise((r) => setTimeout(r, 2_500));
  expect(calls).toHaveLength(2);
}, 15_000);
