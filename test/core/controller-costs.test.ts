/**
 * The billed minutes init and docs/INSTALL.md state for each controller mode (src/core/controller-costs.ts),
 * and what init prints where the mode is chosen.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.js";
import {
  ALWAYS_ON_SCHEDULE_MINUTES,
  actionsControllerMinutes,
  controllerCostLines,
  EXAMPLE_MONTH,
} from "../../src/core/controller-costs.js";

describe("the controller's billed minutes a month", () => {
  it("are none for an idle month in Actions mode, where the always-on schedule billed 4,320", () => {
    expect(actionsControllerMinutes({ activeHoursPerDay: 0, activeDays: 0, tasks: 0 })).toBe(0);
    expect(ALWAYS_ON_SCHEDULE_MINUTES).toBe(4320);
  });

  it("count 6 a busy hour and about 1.2 a completed task", () => {
    expect(actionsControllerMinutes({ activeHoursPerDay: 1, activeDays: 1, tasks: 0 })).toBe(6);
    expect(actionsControllerMinutes(EXAMPLE_MONTH)).toBe(6 * 4 * 20 + 48);
  });

  it("are what docs/INSTALL.md states", () => {
    const install = readFileSync("docs/INSTALL.md", "utf8");
    expect(install).toContain(`${actionsControllerMinutes(EXAMPLE_MONTH)} billed minutes`);
    expect(install).toContain(ALWAYS_ON_SCHEDULE_MINUTES.toLocaleString("en-US"));
  });

  it("are printed by init for the mode it sets up", async () => {
    const dir = mkdtempSync(join(tmpdir(), "autopilot-costs-"));
    const out: string[] = [];
    const io = {
      out: (l: string) => out.push(l),
      err: (l: string) => out.push(l),
      env: { AUTOPILOT_NO_GH: "1" },
    };
    try {
      for (const mode of ["actions", "app"] as const) {
        out.length = 0;
        await main(["init", "--mode", mode, "--yes", "--dir", dir, "--source", "acme/autopilot"], io);
        const text = out.join("\n");
        for (const line of controllerCostLines(mode)) expect(text).toContain(line);
      }
      expect(controllerCostLines("actions").join(" ")).toMatch(
        /0 billed minutes a month while the repository is idle/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
