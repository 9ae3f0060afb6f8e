/**
 * Which deliveries reconcile in the hosted controller: a push only when it reaches the default branch (where the
 * config file is), since a worker pushes to its task branch on every iteration and those pushes would each cost
 * a reconcile; a review conversation resolved, which ends the gate's wait on its reviewer.
 */
import { generateKeyPairSync } from "node:crypto";
import { sign } from "@octokit/webhooks-methods";
import nock from "nock";
import { afterEach, beforeAll, beforeEach, expect, it } from "vitest";
import { type ControllerServer, startControllerServer } from "../../src/app/hosted/http-server.js";
import type { ReconcileOptions } from "../../src/app/reconcile-repo.js";
import { webhookExample } from "../github/fixtures.js";

const SECRET = "webhook-secret";
let privateKey: string;
let server: ControllerServer | null = null;
let calls: ReconcileOptions[] = [];

beforeAll(() => {
  privateKey = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({
    type: "pkcs1",
    format: "pem",
  }) as string;
});
beforeEach(() => {
  calls = [];
  nock.disableNetConnect();
  nock.enableNetConnect(/127\.0\.0\.1/);
});
afterEach(async () => {
  await server?.stop();
  server = null;
  nock.cleanAll();
  nock.enableNetConnect();
});

async function deliver(event: string, payload: Record<string, unknown>, id: string): Promise<number> {
  const body = JSON.stringify({ ...payload, installation: { id: 42 } });
  const response = await fetch(server!.webhookUrl, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-github-event": event,
      "x-github-delivery": id,
      "x-hub-signature-256": await sign(SECRET, body),
    },
    body,
  });
  return response.status;
}

function push(ref: string): Promise<number> {
  return deliver("push", { ...webhookExample("push"), ref }, `d-${ref}`);
}

async function startServer(): Promise<ControllerServer> {
  nock("https://api.github.com").get("/app").optionally().reply(200, { id: 123, slug: "autopilot-test" });
  return startControllerServer({
    appId: 123,
    privateKey,
    webhookSecret: SECRET,
    baseUrl: "https://api.github.com",
    retry: false,
    throttle: false,
    logLevel: "fatal",
    awaitReconcile: true,
    reconcile: async (options) => {
      calls.push(options);
    },
  });
}

it("reconciles a push to the default branch, not one to a task branch or a tag", async () => {
  server = await startServer();
  // The example repository's default branch is `master`.
  expect(await push("refs/heads/autopilot/issue-7")).toBe(200);
  expect(await push("refs/tags/v1.0.0")).toBe(200);
  await server.idle();
  expect(calls).toHaveLength(0);
  expect(await push("refs/heads/master")).toBe(200);
  await server.idle();
  expect(calls).toHaveLength(1);
});

it("reconciles when a review conversation is resolved", async () => {
  server = await startServer();
  const resolved = webhookExample("pull_request_review_thread", "resolved");
  expect(resolved.action).toBe("resolved");
  expect(await deliver("pull_request_review_thread", resolved, "d-thread")).toBe(200);
  await server.idle();
  expect(calls).toHaveLength(1);
});
