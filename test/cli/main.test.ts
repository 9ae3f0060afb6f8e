import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EXIT, main } from "../../src/cli/main.js";
import { renderSummary } from "../../sandbox/scenario/sandbox-command.js";
import type { ScenarioReport } from "../../sandbox/scenario/run-scenario.js";

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
    charged: 100,
    chargedPerCompletedTask: 100,
    byEndpoint: { "POST /graphql": 80, "GET /repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs": 40 },
    chargedByEndpoint: {
      "POST /graphql": 80,
      "GET /repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs": 20,
    },
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
    expect(out.join("\n")).toMatch(/^\s+sandbox \[options\]/m);
  });

  it("rejects an unknown command or option with exit 2", async () => {
    expect(await main(["launch"], io())).toBe(EXIT.usage);
    expect(err.join("\n")).toContain("unknown command 'launch'");
    expect(await main(["sandbox", "--nope"], io())).toBe(EXIT.usage);
  });

  it("start with App credentials explains serve instead of running the demo", async () => {
    expect(await main(["start"], io({ APP_ID: "1", PRIVATE_KEY: "k" }))).toBe(EXIT.ok);
    expect(out.join("\n")).toContain("`node bin/autopilot.js serve`");
  });

  it("serve refuses to start without a webhook secret (deliveries could not be verified)", async () => {
    const env = {
      APP_ID: "1",
      PRIVATE_KEY: "-----BEGIN RSA PRIVATE KEY-----\\nx\\n-----END RSA PRIVATE KEY-----",
    };
    expect(await main(["serve"], io(env))).toBe(EXIT.usage);
    expect(err.join("\n")).toContain("WEBHOOK_SECRET");
  });

  it("serve runs the controller as docs/CONTROLLER.md configures it, until Ctrl-C", async () => {
    const key = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({
      type: "pkcs1",
      format: "pem",
    });
    const env: NodeJS.ProcessEnv = {
      APP_ID: "1",
      PRIVATE_KEY: Buffer.from(key).toString("base64"),
      WEBHOOK_SECRET: "s3cret",
      PORT: "0",
      GITHUB_API_URL: "http://127.0.0.1:9",
      AUTOPILOT_TICK_SECONDS: "0",
      LOG_LEVEL: "fatal",
    };
    const exited = main(["serve"], io(env));
    await expect.poll(() => out.join("\n"), { timeout: 20_000 }).toContain("Ctrl-C stops");
    const webhooks = /webhooks at (http:\/\/127\.0\.0\.1:\d+\/\S+)/.exec(out.join("\n"))?.[1];
    expect(webhooks).toBeDefined();
    // Deliveries are checked against WEBHOOK_SECRET: an unsigned one is refused.
    const unsigned = await fetch(webhooks!, {
      method: "POST",
      headers: { "content-type": "application/json", "x-github-event": "ping", "x-github-delivery": "1" },
      body: "{}",
    });
    expect(unsigned.status).toBe(400);
    process.emit("SIGINT");
    expect(await exited).toBe(EXIT.ok);
    await expect(fetch(webhooks!)).rejects.toThrow();
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
