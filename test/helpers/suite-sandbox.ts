/**
 * One sandbox for a whole test file, started before its tests and stopped after them, with a maintainer who
 * can write, and an Octokit client on the installation token (no retries or throttling: a test counts requests).
 */
import { afterAll, beforeAll } from "vitest";
import { createOctokit } from "../../src/github/transport/octokit.js";
import { type Sandbox, startSandbox } from "../../sandbox/emulator/index.js";

interface SuiteSandbox {
  readonly sandbox: Sandbox;
  octokit(): ReturnType<typeof createOctokit>;
}

export function useSuiteSandbox(): SuiteSandbox {
  let sandbox: Sandbox | null = null;
  beforeAll(async () => {
    sandbox = await startSandbox();
    sandbox.store.addUser("maintainer", { permission: "write" });
  });
  afterAll(async () => {
    await sandbox?.stop();
  });
  const started = (): Sandbox => {
    if (!sandbox) throw new Error("the suite's sandbox is not started yet (use it inside a test)");
    return sandbox;
  };
  return {
    get sandbox() {
      return started();
    },
    octokit: () =>
      createOctokit({
        auth: started().installationToken(),
        baseUrl: started().url,
        retry: false,
        throttle: false,
      }),
  };
}
