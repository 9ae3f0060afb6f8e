/**
 * The offline sandbox as the hosted controller's tests against it start it: the process-wide GitHub memories
 * and circuits reset, then repositories with the worker workflow and a maintainer with write access.
 */
import {
  type ControllerServer,
  type ControllerServerOptions,
  startControllerServer,
} from "../../src/app/hosted/http-server.js";
import { resetMemories } from "../../src/github/gateway.js";
import { resetCircuits } from "../../src/github/transport/circuit.js";
import { type Sandbox, startSandbox } from "../../sandbox/emulator/index.js";

export async function sandboxWithRepos(repos: { owner: string; name: string }[]): Promise<Sandbox> {
  resetMemories();
  resetCircuits();
  const s = await startSandbox();
  for (const repo of repos) {
    s.store.createRepo(repo);
    s.store.addWorkflow(repo, { path: "autopilot-worker.yml", name: "Autopilot worker" });
  }
  s.store.addUser("maintainer", { permission: "write" });
  return s;
}

/**
 * The hosted controller against the sandbox as the tests run it (no retries or throttling, Probot quiet), with
 * the sandbox's deliveries sent to it; `extra` adds to or overrides those options.
 */
export async function controllerOn(
  s: Sandbox,
  extra: Partial<ControllerServerOptions> = {},
): Promise<ControllerServer> {
  const server = await startControllerServer({
    appId: s.app.id,
    privateKey: s.app.privateKey,
    webhookSecret: s.app.webhookSecret,
    baseUrl: s.url,
    retry: false,
    throttle: false,
    logLevel: "fatal",
    ...extra,
  });
  s.setWebhookTarget(server.webhookUrl);
  return server;
}
