/**
 * The hosted controller server as its tests start it: a fresh RSA key for the App, a webhook secret, GitHub
 * behind nock (only 127.0.0.1 is reachable), a reconcile that records its calls, and every server stopped
 * after its test.
 */
import { generateKeyPairSync } from "node:crypto";
import nock from "nock";
import { afterEach, beforeAll, beforeEach } from "vitest";
import { type ControllerServer, startControllerServer } from "../../src/app/hosted/http-server.js";
import type { ReconcileOptions } from "../../src/app/reconcile-repo.js";

export const SECRET = "webhook-secret";
export const API = "https://api.github.com";
/** The reconciles the current test's servers started (emptied before each test). */
export const calls: ReconcileOptions[] = [];
// A live binding: set in useControllerServer's beforeAll.
export let privateKey: string;
const running: { stop(): Promise<void> }[] = [];

export function useControllerServer(): void {
  beforeAll(() => {
    privateKey = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({
      type: "pkcs1",
      format: "pem",
    }) as string;
  });
  beforeEach(() => {
    calls.splice(0);
    nock.disableNetConnect();
    nock.enableNetConnect(/127\.0\.0\.1/);
  });
  afterEach(async () => {
    for (const server of running.splice(0)) await server.stop();
    nock.cleanAll();
    nock.enableNetConnect();
  });
}

/** Stops `server` after the test (stopping twice is harmless). */
export function stopAfterTest<T extends { stop(): Promise<void> }>(server: T): T {
  running.push(server);
  return server;
}

export async function startServer(
  extra: Partial<Parameters<typeof startControllerServer>[0]> = {},
): Promise<ControllerServer> {
  return stopAfterTest(
    await startControllerServer({
      appId: 123,
      privateKey,
      webhookSecret: SECRET,
      baseUrl: API,
      retry: false,
      throttle: false,
      logLevel: "fatal",
      reconcile: async (options) => {
        calls.push(options);
      },
      ...extra,
    }),
  );
}
