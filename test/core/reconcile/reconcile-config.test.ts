/**
 * decide() and a bad `.github/autopilot.yml`: with a last good configuration it decides with that one and hands
 * its digest to every worker; with none it holds — no dispatch, no merge, commands still answered, and the
 * dashboard says what is wrong and that Autopilot waits for a fix. A worker that refused the configuration is
 * dispatched again, not counted as the task's failure.
 */
import { describe, expect, it } from "vitest";
import { configDigest, type LastGoodConfig, parseConfig } from "../../../src/core/config/index.js";
import {
  compactState,
  emptyState,
  newTaskRecord,
  renderDashboard,
  parseDashboard,
  renderStateBlock,
  STATE_CAP,
} from "../../../src/core/dashboard/index.js";
import { decide } from "../../../src/core/reconcile/decide.js";
import { comment, emptyView, input, issue, minutes, only, pull, result, run, step, world } from "../world.js";

const GOOD = "maxParallel: 1\n";
const good: LastGoodConfig = { digest: configDigest(GOOD), commit: "e".repeat(40), text: GOOD };
const bad = (() => {
  const parsed = parseConfig("maxParalel: 1\n");
  if (parsed.ok) throw new Error("expected a bad config");
  return parsed.error;
})();

/** A ready task, a task in review whose PR passes every gate, and a maintainer asking for the status. */
function busyWorld() {
  const w = world({
    issues: [issue(1), issue(2, { labels: ["autopilot:review"] })],
    pulls: [pull(2)],
  });
  w.comments = [comment(300, 1, "dev", "/autopilot status")];
  return w;
}

describe("a bad file with no last good configuration", () => {
  it("dispatches nothing and merges nothing, but answers commands and says Autopilot waits for a fix", () => {
    const w = busyWorld();
    // The same world with a configuration: it dispatches and merges (so the hold below is what stops them).
    const normal = decide(input(w, { now: minutes(40), lastGoodConfig: good }));
    expect(only(normal.effects, "dispatchWorker")).toHaveLength(1);
    expect(only(normal.effects, "mergePr")).toHaveLength(1);

    const held = decide(
      input(w, { now: minutes(40), configError: bad, configHeld: true, lastGoodConfig: null }),
    );
    expect(only(held.effects, "dispatchWorker")).toEqual([]);
    expect(only(held.effects, "mergePr")).toEqual([]);
    expect(only(held.effects, "setStateLabel")).toEqual([]);
    const replies = only(held.effects, "comment").filter((c) => c.key === "reply-300");
    expect(replies).toHaveLength(1);
    const body = only(held.effects, "writeTrackingIssue")[0]!.body;
    expect(body).toContain("maxParalel");
    expect(body).toContain("Autopilot waits for a fix");
    expect(body).toContain("nothing merges until it is fixed");
  });

  it("resumes once the file is fixed: the session starts and the worker gets the fixed file's digest", () => {
    const held = step(busyWorld(), null, { now: minutes(40), configError: bad, configHeld: true });
    const fixed = step(held.world, held.state, { now: minutes(41), lastGoodConfig: good });
    const dispatch = only(fixed.decision.effects, "dispatchWorker");
    expect(dispatch).toHaveLength(1);
    expect(dispatch[0]?.inputs?.["config-digest"]).toBe(good.digest);
    expect(only(fixed.decision.effects, "mergePr")).toHaveLength(1);
    expect(fixed.state.lastGoodConfig).toEqual(good);
  });
});

describe("a worker that refused the configuration", () => {
  it("is dispatched again with the configuration in force, and its task is not failed", () => {
    const first = step(world({ issues: [issue(1)] }), null, { lastGoodConfig: good });
    expect(only(first.decision.effects, "dispatchWorker")[0]?.inputs?.["config-digest"]).toBe(good.digest);
    const newer: LastGoodConfig = { digest: configDigest("maxParallel: 2\n"), commit: "f".repeat(40) };
    const refused = {
      ...first.world,
      runs: [run(50, 1, { status: "completed", conclusion: "success" })],
      workerResults: [
        result(1, { result: "config_refused", reason: "not starting", iterations: 0, prNumber: undefined }),
      ],
    };
    const next = step(refused, first.state, { now: minutes(5), lastGoodConfig: newer });
    const again = only(next.decision.effects, "dispatchWorker");
    expect(again).toHaveLength(1);
    expect(again[0]).toMatchObject({ issue: 1, attempt: 2 });
    expect(again[0]?.inputs?.["config-digest"]).toBe(newer.digest);
    expect(next.state.tasks["1"]!.failures).toBe(0);
    expect(next.state.consecutiveFailures).toBe(0);
  });
});

describe("keeping the last good configuration in the state", () => {
  const text = `# ${"x".repeat(5_000)}\nmaxParallel: 1\n`;
  const record = (commit: string | null): LastGoodConfig => ({ digest: configDigest(text), commit, text });
  /** A state with `n` off-ramped task records carrying long reasons, and the last good configuration. */
  const stateWith = (n: number, lastGoodConfig: LastGoodConfig) => {
    const state = { ...emptyState(minutes(0)), lastGoodConfig };
    for (let i = 1; i <= n; i++) {
      state.tasks[String(i)] = {
        ...newTaskRecord(),
        attempt: 1,
        result: "failed",
        reason: `reason ${i} ${"r".repeat(280)}`,
        label: "failed",
      };
    }
    return state;
  };

  it("drops the text first when the state is too big, keeping the digest and the commit", () => {
    const state = stateWith(60, record("e".repeat(40)));
    expect(renderStateBlock(state).length).toBeGreaterThan(STATE_CAP);
    const compacted = compactState(state).state;
    expect(compacted.lastGoodConfig).toEqual({ digest: configDigest(text), commit: "e".repeat(40) });
    // Nothing else had to go.
    expect(compacted.tasks).toEqual(state.tasks);
  });

  it("keeps the text when it has no commit to fall back on", () => {
    const state = stateWith(60, record(null));
    expect(compactState(state).state.lastGoodConfig?.text).toBe(text);
  });

  it("drops the text before anything else when the whole body does not fit", () => {
    // Grow the state until, with the text, no body fits; without it, it still does.
    let n = 100;
    while (renderStateBlock(stateWith(n, record("e".repeat(40)))).length < 62_500) n += 1;
    const state = stateWith(n, record("e".repeat(40)));
    state.incidents = Array.from({ length: 5 }, (_, i) => ({
      at: minutes(i).toISOString(),
      kind: "note",
      message: `incident ${i}`,
    }));
    const back = parseDashboard(renderDashboard(state, emptyView(), minutes(0))).state!;
    expect(back.lastGoodConfig).toEqual({ digest: configDigest(text), commit: "e".repeat(40) });
    expect(Object.keys(back.tasks)).toHaveLength(n);
    expect(back.tasks["1"]?.reason).toBe(state.tasks["1"]?.reason);
    expect(back.incidents).toHaveLength(5);
  });
});
