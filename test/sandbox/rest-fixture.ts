/**
 * The sandbox both REST test files start: repository acme/widgets, users alice (write), mallory (read) and tess
 * (triage), an installation client, and every request and response checked against GitHub's OpenAPI
 * description. Each test must leave no validation failure behind; one that sends a bad call on purpose takes
 * its failures with `takeFailures()`.
 */
import { RequestError } from "@octokit/request-error";
import { Octokit } from "@octokit/rest";
import { afterAll, afterEach, beforeAll } from "vitest";
import { type Sandbox, startSandbox } from "../../sandbox/emulator/index.js";

export const owner = "acme";
export const repo = "widgets";
export const silent = { debug() {}, info() {}, warn() {}, error() {} };

// Live bindings: set by useRestSandbox's beforeAll, read by the tests after it.
export let sandbox: Sandbox;
export let octokit: Octokit;

/** Starts the sandbox for the calling test file; `setup` runs once after the installation client exists. */
export function useRestSandbox(setup: () => Promise<void> = async () => {}): void {
  beforeAll(async () => {
    sandbox = await startSandbox({ validateResponses: true });
    sandbox.store.createRepo({ owner, name: repo });
    sandbox.store.addUser("alice", { permission: "write" });
    sandbox.store.addUser("mallory", { permission: "read" });
    sandbox.store.addUser("tess", { permission: "triage" });
    octokit = client(sandbox.installationToken());
    await setup();
  });
  afterEach(() => sandbox.assertNoValidationFailures());
  afterAll(async () => {
    await sandbox?.stop();
  });
}

export function client(auth: string): Octokit {
  return new Octokit({ auth, baseUrl: sandbox.url, log: silent });
}

export async function rejection(promise: Promise<unknown>): Promise<RequestError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof RequestError) return error;
    throw error;
  }
  throw new Error("expected the request to fail");
}

/** A request the typed routes would refuse at compile time (these tests send bad calls on purpose). */
export function untyped(route: string, params: Record<string, unknown>) {
  return octokit.request(route, params);
}

/** Takes the validation failures recorded since the last call (the intentionally bad requests). */
export function takeFailures(): string[] {
  return sandbox.validationFailures.splice(0).map((f) => f.message);
}
