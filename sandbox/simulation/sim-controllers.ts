/**
 * The controllers of a simulated world: Autopilot's own `reconcile` (src/app/reconcile-repo.ts) run in this
 * process against the sandbox on the simulation's clock. A second controller is a second instance of that
 * module (its own per-process lock) with its own memory of the repository, as a second process has, so the two
 * can overlap. Every request goes through {@link SimControllers.fetchFor}, where the simulation lets the world move between two requests of a reconcile
 * (a push, a comment, the other controller's whole reconcile): the interleavings FoundationDB-style simulation
 * explores, chosen by the seed. A killed controller fails every request after its last write, then starts afresh.
 */
import type { reconcile as Reconcile, ReconcileResult } from "../../src/app/reconcile-repo.js";
import { resetMemories } from "../../src/github/gateway.js";
import { newRepoMemory, type RepoMemory } from "../../src/github/snapshot/snapshot-context.js";
import { GitHubCircuit } from "../../src/github/transport/circuit.js";
import { createOctokit } from "../../src/github/transport/octokit.js";
import type { ControllerMode } from "./world-generator.js";

type ReconcileFn = typeof Reconcile;

interface SimControllerState {
  id: number;
  circuit: GitHubCircuit;
  /** What this controller's process learned of the repository (its own: two processes share no memory). */
  memory: RepoMemory;
  /** Writes left before the process dies (a `killController` fault), or null. */
  killAfterWrites: number | null;
  dead: boolean;
  running: boolean;
  reconciles: number;
  failures: number;
  requests: number;
}

export interface ControllerHooks {
  /** Before each request of controller `id`: the world may move here. */
  beforeRequest(id: number, method: string, url: string): Promise<void>;
}

const NULL_BODY = new Set([101, 204, 205, 304]);

/**
 * The circuit breaker (src/github/transport/circuit.ts) waits on the wall clock: its minute open would span hours of
 * simulated time, so here it tries again after a millisecond. Its opening and its queue of writes still happen.
 */
const newCircuit = () => new GitHubCircuit({ resetMs: 1 });

export class SimControllers {
  readonly states: SimControllerState[];
  private readonly fns: ReconcileFn[];

  private constructor(fns: ReconcileFn[]) {
    this.fns = fns;
    this.states = fns.map((_, i) => ({
      id: i + 1,
      circuit: newCircuit(),
      memory: newRepoMemory(),
      killAfterWrites: null,
      dead: false,
      running: false,
      reconciles: 0,
      failures: 0,
      requests: 0,
    }));
  }

  /** `count` controllers; the second is a fresh instance of the reconcile module (its own lock). */
  static async create(count: number): Promise<SimControllers> {
    // Nothing a controller remembers may pass from one world to the next.
    resetMemories();
    const fns: ReconcileFn[] = [];
    for (let i = 1; i <= count; i++) {
      const specifier =
        i === 1 ? "../../src/app/reconcile-repo.js" : `../../src/app/reconcile-repo.js?controller=${i}`;
      const mod = (await import(specifier)) as { reconcile: ReconcileFn };
      fns.push(mod.reconcile);
    }
    return new SimControllers(fns);
  }

  /** The fetch controller `id` talks to GitHub through. */
  fetchFor(id: number, hooks: ControllerHooks): typeof globalThis.fetch {
    const state = this.states[id - 1]!;
    return async (input, init) => {
      const method = (init?.method ?? "GET").toUpperCase();
      const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
      if (state.dead) throw new TypeError("fetch failed: the controller process was killed");
      await hooks.beforeRequest(id, method, url);
      if (state.dead) throw new TypeError("fetch failed: the controller process was killed");
      state.requests++;
      const response = await globalThis.fetch(input, init);
      const body = NULL_BODY.has(response.status) ? null : await response.arrayBuffer();
      if (method !== "GET" && response.ok && state.killAfterWrites !== null) {
        state.killAfterWrites--;
        if (state.killAfterWrites <= 0) state.dead = true;
      }
      return new Response(body, {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers,
      });
    };
  }

  /**
   * One reconcile by controller `id`. Actions mode is a fresh process each time (no memories); a hosted
   * controller keeps them until it is killed. Errors are the reconcile's failure, not the simulation's.
   */
  async reconcile(
    id: number,
    options: {
      mode: ControllerMode;
      url: string;
      token: string;
      repo: { owner: string; name: string };
      bot: string;
      now: () => Date;
      hooks: ControllerHooks;
      endingRunId?: number;
    },
  ): Promise<{ result: ReconcileResult | null; error: unknown }> {
    const state = this.states[id - 1]!;
    if (options.mode === "actions" || state.dead) {
      resetMemories();
      state.memory = newRepoMemory();
      state.circuit = newCircuit();
      state.dead = false;
      state.killAfterWrites = null;
    }
    state.running = true;
    state.reconciles++;
    try {
      const octokit = createOctokit({
        auth: options.token,
        baseUrl: options.url,
        fetch: this.fetchFor(id, options.hooks),
        throttle: false,
        retry: false,
      });
      const result = await this.fns[id - 1]!({
        octokit,
        repo: options.repo,
        botLogin: options.bot,
        circuit: state.circuit,
        memory: state.memory,
        baseUrl: options.url,
        now: options.now,
        ...(process.env.SIM_LOG ? { log: simLog(id, options.now) } : {}),
        ...(options.endingRunId ? { endingRunId: options.endingRunId } : {}),
      });
      return { result, error: null };
    } catch (error) {
      state.failures++;
      return { result: null, error };
    } finally {
      state.running = false;
      if (state.dead) {
        // The process died mid-reconcile; the next reconcile is a new process on the same GitHub state.
        resetMemories();
        state.memory = newRepoMemory();
        state.circuit = newCircuit();
      }
    }
  }
}

/** SIM_LOG=1: every controller's log lines, with its number and the simulated time. */
function simLog(id: number, now: () => Date) {
  const line = (level: string) => (message: string) =>
    console.log(`[${now().toISOString()} c${id} ${level}] ${message}`);
  return { debug: line("debug"), info: line("info"), warn: line("warn"), error: line("error") };
}
