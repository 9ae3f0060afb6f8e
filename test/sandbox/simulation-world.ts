/** A small world for the simulation's invariants, built by hand: a repository, a writer and a triager. */
import { SandboxStore } from "../../sandbox/emulator/store.js";
import type { SimObservation } from "../../sandbox/simulation/sim-invariants.js";
import type { SimDispatch } from "../../sandbox/simulation/sim-worker.js";

export const REPO = "demo/shop";
export const BOT = "autopilot[bot]";

const NOW = Date.parse("2026-11-02T09:00:00Z");
/** Every review was submitted before the merging reconcile read the pull request. */
export const ALL_READ = () => true;

/** The world; `clock.ms` moves the store's time on (for what happened before or after what). */
export function world(): { store: SandboxStore; o: SimObservation; clock: { ms: number } } {
  const clock = { ms: NOW };
  const store = new SandboxStore({ now: () => new Date(clock.ms) });
  for (const [login, permission] of [
    ["alice", "admin"],
    ["tina", "triage"],
  ] as const)
    store.addUser(login, { permission });
  store.createRepo({ owner: "demo", name: "shop" });
  store.setPermission(REPO, "alice", "admin");
  store.setPermission(REPO, "tina", "triage");
  const o: SimObservation = {
    store,
    repo: REPO,
    bot: BOT,
    writers: new Set(["alice"]),
    dispatches: [],
    writerCommands: [],
    gatedHeads: new Map(),
    trackingTampered: false,
    elapsed: () => 0,
  };
  return { store, o, clock };
}

export const dispatch = (issue: number, runId: number): SimDispatch => ({
  runId,
  issue,
  attempt: 1,
  dispatchId: `${issue}-1-${runId}`,
  at: 0,
  endedAt: null,
  overrun: 0,
  candidate: false,
  candidateNumber: null,
  maxIterations: null,
  taskDigest: null,
  pushed: [],
  plan: null,
});
