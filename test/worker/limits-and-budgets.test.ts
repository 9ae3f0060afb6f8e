/** A running worker stops where the session budget runs out; a usage limit without a reset time waits a configured while. */
import { describe, expect, it } from "vitest";
import { emptyState, renderStateBlock } from "../../src/core/dashboard/index.js";
import { renderSessionBudgetMarker } from "../../src/core/session/session-budget.js";
import { runWorker } from "../../src/worker/job/job.js";
import { config, harness } from "./fakes.js";

const NOTHING = "Made some progress; more to do.";

/** A tracking issue whose session is running with `usdLeft` of its $1 budget, nothing counted of #7 yet. */
function trackingBody(spentElsewhere: number): string {
  const state = emptyState(new Date("2026-11-22T00:00:00Z"));
  state.session.status = "running";
  const marker = renderSessionBudgetMarker(
    { tokens: null, usd: 1 },
    { total: { tokens: 0, usd: spentElsewhere }, counted: {} },
  );
  return `<!-- autopilot:session running -->\n${marker}\n\n${renderStateBlock(state)}`;
}

describe("a session budget stops running workers", () => {
  it("ends the job `paused` at the first boundary where its spend uses up what the session has left", async () => {
    // $0.50 of the session's $1 went elsewhere; each iteration here costs $0.30: after two, $0.10 is over.
    const h = await harness([{ message: NOTHING, costUsd: 0.3 }]);
    h.github.trackingBody = trackingBody(0.5);

    const run = await runWorker(h.inputs, config(), h.deps);

    expect(run.result.result).toBe("paused");
    expect(run.result.iterations).toBe(2);
    expect(run.result.reason).toContain("session is over its budget");
    expect(run.result.costUsd).toBeCloseTo(0.6);
    // The work is checkpointed and pushed before the job ends.
    expect(h.git.pushes.length).toBeGreaterThan(0);
  });

  it("goes on while the session has budget left (the task budget alone is unlimited)", async () => {
    const h = await harness([
      { message: NOTHING, costUsd: 0.3 },
      { message: "Done.\n\n<promise>COMPLETE</promise>" },
    ]);
    h.github.trackingBody = trackingBody(0);

    const run = await runWorker(h.inputs, config(), h.deps);

    expect(run.result.result).toBe("complete");
  });
});

describe("a usage limit that gives no reset time", () => {
  it("ends `usage_limited` with the configured default wait as the time to resume, and says it was assumed", async () => {
    // Claude's bare notice (https://github.com/anthropics/claude-code/issues/51715).
    const text = "Usage limit reached";
    const h = await harness([{ message: text, raw: text, exitCode: 1, work: false }]);

    const run = await runWorker(h.inputs, config({ rateLimit: { usageLimitWaitMs: 2 * 3_600_000 } }), h.deps);

    expect(run.result.result).toBe("usage_limited");
    expect(run.result.resumeAt).toBe(new Date(h.clock.now + 2 * 3_600_000).toISOString());
    expect(run.result.reason).toContain("no reset time given: assumed in 120 min");
    // Not a few seconds of backoff on the runner: the job ends and the task waits.
    expect(h.sleeps).toEqual([]);
  });
});
