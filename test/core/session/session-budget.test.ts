/**
 * The session budget counts running work: the controller adds what live workers reported to what finished work
 * used and publishes what is left on the tracking issue; a worker weighs its own spend since then against it at
 * each iteration boundary (src/core/session/session-budget.ts, src/worker/job/session-status.ts).
 */
import { describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../../src/core/config/index.js";
import { parseDashboard } from "../../../src/core/dashboard/index.js";
import { usdBudgetNotes } from "../../../src/core/agent/pricing.js";
import {
  parseSessionBudgetMarker,
  renderSessionBudgetMarker,
  sessionSpend,
} from "../../../src/core/session/session-budget.js";
import { sessionWantsStop } from "../../../src/worker/job/session-status.js";
import { config, issue, minutes, only, result, step, world } from "../world.js";

const budgets = { ...DEFAULT_CONFIG.budgets, session: { tokens: null, usd: 1 } };

/** A session with two tasks dispatched and their runs going; `spent` is what each worker has reported. */
function sessionWithRunningWorkers(spent: [number, number]) {
  const first = step(world({ issues: [issue(1), issue(2)] }), null, {
    start: { actor: "dev" },
    config: config({ budgets }),
  });
  const dispatchOf = (n: number) => first.state.tasks[String(n)]!.dispatchId!;
  const running = {
    ...first.world,
    runs: first.world.runs.map((r) => ({ ...r, status: "in_progress" as const })),
    workerResults: [1, 2].map((n, i) =>
      result(n, {
        status: "running",
        result: undefined,
        prNumber: undefined,
        dispatchId: dispatchOf(n),
        tokens: { input: 1000, output: 100 },
        costUsd: spent[i]!,
        updatedAt: minutes(3).toISOString(),
      }),
    ),
  };
  const next = step(running, first.state, { now: minutes(4), config: config({ budgets }) });
  const body = only(next.decision.effects, "writeTrackingIssue")[0]?.body ?? "";
  return { next, body };
}

describe("the session budget counts running work", () => {
  it("the controller publishes what is left after the running workers' spend, and what it counted of each", () => {
    const { next, body } = sessionWithRunningWorkers([0.3, 0.25]);

    expect(next.state.session.status).toBe("running");
    const marker = parseSessionBudgetMarker(body);
    expect(marker).toEqual({
      tokensLeft: null,
      usdLeft: 0.45,
      counted: { "1": { tokens: 1100, usd: 0.3 }, "2": { tokens: 1100, usd: 0.25 } },
    });
    // The state block is still read as before: the marker sits beside the session-status marker.
    expect(parseDashboard(body).state?.session.status).toBe("running");
  });

  it("a worker stops at its next boundary once its spend since then uses up what is left; the other goes on", () => {
    const { body } = sessionWithRunningWorkers([0.3, 0.25]);

    // Worker #1 has spent $0.50 more since the controller counted its $0.30: $0.45 were left.
    const one = sessionWantsStop(body, { issue: 1, tokens: 1500, usd: 0.8 });
    expect(one.stop).toBe(true);
    expect(one.status).toContain("USD budget is spent");
    // Worker #2 has spent $0.10 more: some is left.
    expect(sessionWantsStop(body, { issue: 2, tokens: 1200, usd: 0.35 })).toEqual({
      stop: false,
      status: "running",
    });
  });

  it("when running workers' spend crosses the budget, the controller pauses the session (and every worker stops)", () => {
    const { next, body } = sessionWithRunningWorkers([0.6, 0.5]);

    expect(next.state.session).toMatchObject({ status: "pausing", reason: "budget_exhausted" });
    expect(next.state.session.detail).toContain("$1.10 spent");
    for (const n of [1, 2])
      expect(sessionWantsStop(body, { issue: n, tokens: 1100, usd: 0.6 }).stop).toBe(true);
    expect(only(next.decision.effects, "dispatchWorker")).toEqual([]);
  });

  it("without a session budget there is no marker, and a worker never stops for it", () => {
    const first = step(world({ issues: [issue(1)] }), null, { start: { actor: "dev" } });
    const body = only(first.decision.effects, "writeTrackingIssue")[0]!.body;
    expect(body).not.toContain("autopilot:session-budget");
    expect(sessionWantsStop(body, { issue: 1, tokens: 1e9, usd: 1e6 }).stop).toBe(false);
  });

  it("a task dispatched again starts counted at its earlier attempts' spend, so its worker is not stopped for it", () => {
    // Found by the seeded simulation (sandbox/simulation/fixed/retry-double-counted-1.yml): #4's first attempt
    // failed after 4,800 tokens and was retried; its worker carries those totals (src/worker/job/claim.ts), and
    // with no `counted` entry for #4 it took all of them off again, found the session spent, ended `paused`, and
    // was dispatched again, hundreds of times, while the controller saw some of the budget left.
    const state = {
      history: { tokensIn: 0, tokensOut: 0, costUsd: 0 },
      tasks: {
        "4": { tokensIn: 4000, tokensOut: 800, costUsd: 0.04, dispatchId: "4-2-new", handled: "4-1-old" },
        "5": { tokensIn: 900, tokensOut: 100, costUsd: 0.01, dispatchId: "5-1-done", handled: "5-1-done" },
      },
    };
    const budget = { tokens: 9000, usd: null };
    const spend = sessionSpend(state, []);
    expect(spend.total.tokens).toBe(5800);
    expect(spend.counted).toEqual({ "4": { tokens: 4800, usd: 0.04 } });
    const body = `<!-- autopilot:session running -->\n${renderSessionBudgetMarker(budget, spend)}`;
    // The retried worker at its first boundary: its totals are the earlier attempts' (3,200 tokens are left).
    expect(sessionWantsStop(body, { issue: 4, tokens: 4800, usd: 0.04 }).stop).toBe(false);
    // Once it has used what is left since, it stops.
    expect(sessionWantsStop(body, { issue: 4, tokens: 8000, usd: 0.08 }).stop).toBe(true);
  });

  it("a damaged marker never stops a worker", () => {
    const body = '<!-- autopilot:session running -->\n<!-- autopilot:session-budget {"usdLeft":"lots"} -->';
    expect(sessionWantsStop(body, { issue: 1, tokens: 1, usd: 100 }).stop).toBe(false);
  });
});

describe("a USD budget that cannot apply is shown", () => {
  const codex = { preset: "codex" as const, model: null, args: [], env: [], command: null };

  it("names an agent whose CLI reports no cost and whose model has no price", () => {
    const cfg = config({
      agents: { primary: codex, fallbacks: [] },
      budgets: { task: { tokens: null, usd: 2 }, session: { tokens: null, usd: null } },
    });
    const first = step(world({ issues: [issue(1)] }), null, { start: { actor: "dev" }, config: cfg });
    const body = only(first.decision.effects, "writeTrackingIssue")[0]!.body;
    expect(body).toContain("The USD budget cannot apply to the codex agent (no model set");
    expect(body).toContain("token budget");
  });

  it("says nothing for a priced model, a self-pricing CLI, or without a USD budget", () => {
    const usd = { task: { tokens: null, usd: 2 }, session: { tokens: null, usd: null } };
    const priced = { ...codex, model: "gpt-5-codex" };
    expect(usdBudgetNotes({ agents: { primary: priced, fallbacks: [] }, budgets: usd, prices: [] })).toEqual(
      [],
    );
    const claude = { ...codex, preset: "claude-code" };
    expect(usdBudgetNotes({ agents: { primary: claude, fallbacks: [] }, budgets: usd, prices: [] })).toEqual(
      [],
    );
    const configured = { ...codex, model: "my-proxy-model" };
    expect(
      usdBudgetNotes({
        agents: { primary: configured, fallbacks: [] },
        budgets: usd,
        prices: [{ model: "my-proxy-model", input: 1, output: 2 }],
      }),
    ).toEqual([]);
    expect(
      usdBudgetNotes({
        agents: { primary: codex, fallbacks: [] },
        budgets: { task: { usd: null }, session: { usd: null } },
        prices: [],
      }),
    ).toEqual([]);
    expect(
      usdBudgetNotes({
        agents: { primary: codex, fallbacks: [{ ...codex, preset: "gemini" }] },
        budgets: usd,
        prices: [],
      }),
    ).toHaveLength(2);
  });
});
