/**
 * The offline sandbox as the hosted controller's tests against it start it: the process-wide GitHub memories
 * and circuits reset, then repositories with the worker workflow and a maintainer with write access.
 */
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
