import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EXIT, main, renderSummary } from "../../src/cli/main.js";
import type { ScenarioReport } from "../../src/sandbox/runner.js";

let out: string[];
let err: string[];
let dir: string;
const io = (env: NodeJS.ProcessEnv = {}) => ({
  out: (l: string) => out.push(l),
  err: (l: string) => err.push(l),
  env,
});

beforeEach(() => {
  out = [];
  err = [];
  dir = mkdtempSync(join(tmpdir(), "cli-test-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const report: ScenarioReport = {
  scenario: "demo",
  outcome: "settled",
  issues: [
    {
      number: 1,
      title: "Format prices",
      state: "done",
      labels: [],
      pr: { number: 8, merged: true },
      iterations: 1,
      runs: 1,
      agentRuns: 1,
    },
    {
      number: 2,
      title: "Pay with Acme",
      state: "blocked",
      labels: ["autopilot:blocked"],
      pr: null,
      iterations: 1,
      runs: 1,
      agentRuns: 1,
    },
  ],
  requests: {
    total: 120,
    byEndpoint: { "POST /graphql": 80, "GET /repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs": 40 },
    byTokenKind: { installation: 118, app: 2 },
    humans: 3,
  },
  durationMs: 61_500,
  expectations: { ok: true, mismatches: [] },
  runs: { total: 2, byConclusion: { success: 2 } },
  faults: {},
  validationFailures: [],
  dashboard: "## Autopilot completed",
};

describe("the autopilot command", () => {
  it("prints help and exits 0", async () => {
    expect(await main(["--help"], io())).toBe(EXIT.ok);
    expect(out.join("\n")).toContain("autopilot sandbox [options]");
  });

  it("rejects an unknown command or option with exit 2", async () => {
    expect(await main(["launch"], io())).toBe(EXIT.usage);
    expect(err.join("\n")).toContain("Unknown command: launch");
    expect(await main(["sandbox", "--nope"], io())).toBe(EXIT.usage);
  });

  it("start with App credentials explains serve instead of running the demo", async () => {
    expect(await main(["start"], io({ APP_ID: "1", PRIVATE_KEY: "k" }))).toBe(EXIT.ok);
    expect(out.join("\n")).toContain("autopilot serve");
  });

  it("sandbox with an invalid scenario says what is wrong and exits 2", async () => {
    const file = join(dir, "bad.yml");
    writeFileSync(file, "name: bad\nissues: []\n");
    expect(await main(["sandbox", "--scenario", file, "--quiet"], io())).toBe(EXIT.usage);
    expect(err.join("\n")).toContain("issues: a scenario needs at least one issue");
  });

  it("status summarizes a report: the dashboard, one line per issue, requests and the outcome", async () => {
    const file = join(dir, "report.json");
    writeFileSync(file, JSON.stringify(report));
    expect(await main(["status", "--report", file], io())).toBe(EXIT.ok);
    const text = out.join("\n");
    expect(text).toContain("## Autopilot completed");
    expect(text).toMatch(/1\s+Format prices\s+done\s+#8 merged\s+1/);
    expect(text).toMatch(/2\s+Pay with Acme\s+blocked\s+-\s+1/);
    expect(text).toContain("GitHub requests by Autopilot: 120 (installation 118, app 2)");
    expect(text).toContain("Outcome: settled in 61.5s");
  });

  it("a report that missed its expectations fails", async () => {
    const failed = {
      ...report,
      expectations: {
        ok: false,
        mismatches: [{ number: 2, expected: "done" as const, actual: "blocked" as const }],
      },
    };
    expect(renderSummary(failed).join("\n")).toContain("#2: expected done, got blocked");
    const file = join(dir, "report.json");
    writeFileSync(file, JSON.stringify(failed));
    expect(await main(["status", "--report", file], io())).toBe(EXIT.failed);
  });
});
