/**
 * A task waiting on a person's answer has one next step (src/core/session/alerts.ts `needsHumanNextStep`), named
 * in the same words on the issue's alert, in the session report and on the dashboard's "Needs a human" list; the
 * answer alone puts the task back in the queue (src/core/reconcile/answers.ts), so none of them asks for a label.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { decide } from "../../../src/core/reconcile/decide.js";
import { needsHumanNextStep, taskTodo } from "../../../src/core/session/alerts.js";
import { comment, config, input, issue, minutes, only, result, run, step, world } from "../world.js";

describe("a needs-human task's next step", () => {
  it("is an answer in a comment on the task's issue", () => {
    expect(needsHumanNextStep(3)).toBe("answer the question in a comment on #3");
  });

  it("is what the alert on the issue asks for, and no label to move", () => {
    const todo = taskTodo("needs-human", 3, "autopilot/issue-3");
    expect(todo).toContain(needsHumanNextStep(3));
    expect(todo).toMatch(/back to the queue by itself/);
    expect(todo).not.toMatch(/label|move the issue/i);
  });

  it("is what the dashboard's Needs a human list says beside the retry box", () => {
    const dashboard = readFileSync(join(import.meta.dirname, "../../fixtures/dashboard/running.md"), "utf8");
    const waiting = dashboard.split("\n").find((line) => line.includes("autopilot:retry #16"));
    expect(waiting).toMatch(new RegExp(`_\\(asked [^;]+; ${needsHumanNextStep(16)}\\)_`));
  });

  it("is what the session report says the task waits for, with the question", () => {
    const cfg = config();
    const first = step(world({ issues: [issue(6)] }), null, { config: cfg });
    const w = first.world;
    w.runs = [run(90, 6, { status: "completed", conclusion: "success" })];
    w.workerResults = [
      result(6, {
        result: "needs_human",
        reason: "Before or after tax?",
        prNumber: undefined,
        iterations: 2,
      }),
    ];
    const asked = step(w, first.state, { config: cfg, now: minutes(10) });
    asked.world.comments = [comment(500, 1, "dev", "/autopilot report")];
    const d = decide({ ...input(asked.world), state: asked.state, config: cfg, now: minutes(11) });
    const body = only(d.effects, "comment").find((c) => c.key === "reply-500")!.body;
    const line = body.split("\n").find((l) => l.startsWith("- #6 "));
    expect(line).toContain(`someone with write access to ${needsHumanNextStep(6)}`);
    expect(line).toContain("Before or after tax?");
  });
});
