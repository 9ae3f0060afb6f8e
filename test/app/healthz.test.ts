import { generateKeyPairSync } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { type ControllerServer, startControllerServer } from "../../src/app/hosted/http-server.js";

let server: ControllerServer | null = null;
afterEach(async () => {
  await server?.stop();
  server = null;
});

describe("GET /healthz on autopilot serve", () => {
  it("answers 200 without touching GitHub, for a load balancer's health check", async () => {
    const privateKey = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({
      type: "pkcs1",
      format: "pem",
    }) as string;
    let reconciles = 0;
    server = await startControllerServer({
      appId: 1,
      privateKey,
      webhookSecret: "s",
      baseUrl: "http://127.0.0.1:9",
      tickMs: 0,
      reconcile: async () => {
        reconciles++;
      },
    });
    const ok = await fetch(`${server.url}/healthz`);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ ok: true });
    // Only GET /healthz: other paths are still Probot's (404 for unknown ones).
    expect((await fetch(`${server.url}/healthzz`)).status).toBe(404);
    expect((await fetch(`${server.url}/healthz`, { method: "POST" })).status).toBe(404);
    expect(reconciles).toBe(0);
  });
});
