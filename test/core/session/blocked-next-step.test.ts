/**
 * A blocked task's one next step (src/core/session/alerts.ts `blockedNextStep`), named in the same words on the
 * issue's alert and the dashboard's Blocked list (and the session report: report-reply.ts); the worker posts
 * no comment of its own about the blocker (test/worker/main.test.ts), scenarios/02-blocked.yml checks it all
 * on the sandbox.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { blockedNextStep, taskTodo } from "../../../src/core/session/alerts.js";

describe("a blocked task's next step", () => {
  it("is the retry command once the blocker is cleared", () => {
    expect(blockedNextStep(3)).toBe("clear the blocker, then `/autopilot retry #3`");
  });

  it("is what the alert on the issue asks for, and no other step", () => {
    const todo = taskTodo("blocked", 3, "autopilot/issue-3");
    expect(todo).toContain(blockedNextStep(3));
    expect(todo).not.toMatch(/label the issue/);
  });

  it("is what the dashboard's Blocked list says beside the retry box", () => {
    const dashboard = readFileSync(join(import.meta.dirname, "../../fixtures/dashboard/running.md"), "utf8");
    const blocked = dashboard.split("\n").find((line) => line.includes("autopilot:retry #17"));
    expect(blocked).toContain(`_(${blockedNextStep(17)})_`);
  });
});
