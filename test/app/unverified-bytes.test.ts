/**
 * One webhook body is bounded by GitHub's cap; many unverified bodies at once are bounded by a pool shared by
 * the server's requests, so a stranger opening connections in parallel cannot make it hold cap × connections.
 */
import { generateKeyPairSync } from "node:crypto";
import { type ClientRequest, request } from "node:http";
import { sign } from "@octokit/webhooks-methods";
import { afterEach, beforeAll, expect, it } from "vitest";
import { type ControllerServer, startControllerServer } from "../../src/app/hosted/http-server.js";

const SECRET = "webhook-secret";
let privateKey: string;
let server: ControllerServer | null = null;
const open: ClientRequest[] = [];

beforeAll(() => {
  privateKey = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({
    type: "pkcs1",
    format: "pem",
  }) as string;
});
afterEach(async () => {
  for (const req of open.splice(0)) req.destroy();
  await server?.stop();
  server = null;
});

/** Starts a POST that declares `declared` bytes and sends only `sent`: the server holds them, waiting. */
function hold(url: string, declared: number, sent: number): Promise<number | null> {
  return new Promise((resolve) => {
    const req = request(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "content-length": String(declared),
        "x-github-event": "ping",
        "x-github-delivery": "d-hold",
        "x-hub-signature-256": `sha256=${"0".repeat(64)}`,
      },
    });
    req.on("response", (res) => {
      res.resume();
      resolve(res.statusCode ?? null);
    });
    req.on("error", () => resolve(null));
    req.write("x".repeat(sent));
    open.push(req);
    // Still waiting for the rest after a moment: the server holds these bytes.
    setTimeout(() => resolve(null), 300);
  });
}

it("answers 503 to a body that would take the unverified bytes held past the pool, and recovers", async () => {
  let reconciles = 0;
  server = await startControllerServer({
    appId: 1,
    privateKey,
    webhookSecret: SECRET,
    baseUrl: "http://127.0.0.1:9",
    tickMs: 0,
    logLevel: "fatal",
    webhookBodyLimit: 1000,
    webhookUnverifiedBytes: 2000,
    reconcile: async () => {
      reconciles++;
    },
  });
  expect(await hold(server.webhookUrl, 900, 800)).toBeNull();
  expect(await hold(server.webhookUrl, 900, 800)).toBeNull();
  // 1,600 bytes held: 800 more would pass the pool of 2,000.
  expect(await hold(server.webhookUrl, 900, 800)).toBe(503);

  // The held connections go away; their bytes are released and a real delivery is read again.
  for (const req of open.splice(0)) req.destroy();
  await new Promise((r) => setTimeout(r, 100));
  const body = JSON.stringify({ zen: "Keep it logically awesome.", hook_id: 1 });
  const response = await fetch(server.webhookUrl, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-github-event": "ping",
      "x-github-delivery": "d-ping",
      "x-hub-signature-256": await sign(SECRET, body),
    },
    body,
  });
  expect(response.status).toBe(200);
  expect(reconciles).toBe(0);
});
