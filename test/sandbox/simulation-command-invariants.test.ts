/**
 * The simulation's invariant on `fix`, `follow-up` and `rollback` (sandbox/simulation/sim-command-invariants.ts),
 * on worlds built by hand: instructions Autopilot quoted, or a task it opened again, need a writer's command of
 * that task; a non-writer's never counts.
 */
import { describe, expect, it } from "vitest";
import { commandWorkOnlyByWriters } from "../../sandbox/simulation/sim-command-invariants.js";
import { noCommitLost } from "../../sandbox/simulation/sim-work-invariants.js";
import { instructionsMarker } from "../../src/core/contract.js";
import { BOT, dispatch, REPO, world } from "./simulation-world.js";

const names = (found: { invariant: string }[]) => found.map((v) => v.invariant);

function task() {
  const made = world();
  made.store.createIssue(REPO, { title: "Task", labels: ["autopilot:ready"], author: "alice" });
  return made;
}

describe("commandWorkOnlyByWriters", () => {
  it("quoted instructions must name a writer's fix or follow-up of the task", () => {
    const { store, o } = task();
    const tinas = store.createComment(REPO, 1, "/autopilot fix Add a test.", "tina");
    store.createComment(REPO, 1, `Instructions\n\n${instructionsMarker(tinas.id)}`, BOT);
    const found = commandWorkOnlyByWriters(o);
    expect(names(found)).toEqual(["commandWorkOnlyByWriters"]);
    expect(found[0]!.detail).toContain("by tina");

    const fresh = task();
    const alices = fresh.store.createComment(REPO, 1, "/autopilot fix #1 Add a test.", "alice");
    fresh.store.createComment(REPO, 1, `Instructions\n\n${instructionsMarker(alices.id)}`, BOT);
    expect(commandWorkOnlyByWriters(fresh.o)).toEqual([]);
  });

  it("a writer's command of another task does not count", () => {
    const { store, o } = task();
    store.createIssue(REPO, { title: "Other", labels: ["autopilot:ready"], author: "alice" });
    const other = store.createComment(REPO, 1, "/autopilot fix #2 Add a test.", "alice");
    store.createComment(REPO, 1, `Instructions\n\n${instructionsMarker(other.id)}`, BOT);
    expect(names(commandWorkOnlyByWriters(o))).toEqual(["commandWorkOnlyByWriters"]);
  });

  it("a task opened again by Autopilot needs a writer's follow-up or rollback before it", () => {
    const { store, o, clock } = task();
    store.closeIssue(REPO, 1, "alice");
    store.createComment(REPO, 1, "/autopilot follow-up Document it too.", "tina");
    clock.ms += 1000;
    store.reopenIssue(REPO, 1, BOT);
    expect(names(commandWorkOnlyByWriters(o))).toEqual(["commandWorkOnlyByWriters"]);
    clock.ms += 1000;
    store.createComment(REPO, 1, "/autopilot follow-up Document it too.", "alice");
    // Given after the reopen: it did not ask for it.
    expect(names(commandWorkOnlyByWriters(o))).toEqual(["commandWorkOnlyByWriters"]);

    const fresh = task();
    fresh.store.closeIssue(REPO, 1, "alice");
    fresh.store.createComment(REPO, 1, "/autopilot follow-up #1 Document it too.", "alice");
    fresh.clock.ms += 1000;
    fresh.store.reopenIssue(REPO, 1, BOT);
    expect(commandWorkOnlyByWriters(fresh.o)).toEqual([]);
  });

  it("noCommitLost lets go of a push a writer's rollback discarded, not one a non-writer's did", async () => {
    const { store, o, clock } = task();
    const pushed = { ...dispatch(1, 30), pushed: ["a".repeat(40)] };
    o.dispatches.push(pushed);
    clock.ms += 1000;
    store.createComment(REPO, 1, "/autopilot rollback", "tina");
    expect(names(await noCommitLost(o))).toEqual(["noCommitLost"]);
    store.createComment(REPO, 1, "/autopilot rollback", "alice");
    expect(await noCommitLost(o)).toEqual([]);
  });
});
