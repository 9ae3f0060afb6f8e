/** The worker's smaller parts: inputs, the claim, the session status, quality detection, rendering, git. */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { emptyState, renderStateBlock } from "../../src/core/dashboard/index.js";
import { parseWorkerResult, type WorkerResult } from "../../src/core/tasks/worker-result.js";
import { decideClaim } from "../../src/worker/job/claim-decision.js";
import { InputError, parseInputs } from "../../src/worker/settings/inputs.js";
import { detectQualityCommands, runQualityCommands } from "../../src/worker/processes/quality.js";
import {
  renderProgressComment,
  renderPullBody,
  renderQuestionComment,
} from "../../src/worker/job/progress-comment.js";
import { readSessionStatus, sessionWantsStop } from "../../src/worker/job/session-status.js";

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});
async function temp(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "autopilot-parts-"));
  dirs.push(dir);
  return dir;
}

const result: WorkerResult = {
  version: 1,
  issue: 7,
  attempt: 2,
  dispatchId: "7-2-abc",
  status: "running",
  iterations: 3,
  maxIterations: 25,
  commits: 4,
  branch: "autopilot/issue-7",
  tokens: { input: 12_000, output: 800 },
  costUsd: 0.1234,
  humanGate: { fired: false, rules: [] },
  startedAt: "2026-11-22T01:00:00.000Z",
  updatedAt: "2026-11-22T01:04:12.000Z",
};

describe("inputs", () => {
  const read = (values: Record<string, string>) => (name: string) => values[name] ?? "";

  it("reads numbers, defaults and an empty tracking issue", () => {
    expect(parseInputs(read({ issue: "7", "github-token": "ghs_x" }))).toMatchObject({
      issue: 7,
      attempt: 1,
      dispatchId: "",
      trackingIssue: null,
      githubToken: "ghs_x",
      config: "",
    });
    expect(
      parseInputs(read({ issue: " 7 ", attempt: "3", "tracking-issue": "1", "github-token": "t" })),
    ).toMatchObject({
      attempt: 3,
      trackingIssue: 1,
    });
  });

  it("names every bad input, and never echoes the token", () => {
    const attempt = () =>
      parseInputs(read({ issue: "#7", attempt: "0", "tracking-issue": "x", "github-token": " " }));
    expect(attempt).toThrow(InputError);
    try {
      attempt();
    } catch (error) {
      const message = (error as Error).message;
      expect(message).toContain("Invalid input `issue`");
      expect(message).toContain("Invalid input `attempt`");
      expect(message).toContain("Invalid input `tracking-issue`");
      expect(message).toContain("Invalid input `github-token`: a token is required");
      expect(message).toContain("(got (hidden))");
    }
  });
});

describe("the claim", () => {
  const base = {
    issue: 7,
    attempt: 2,
    dispatchId: "7-2-mine",
    now: Date.parse("2026-11-22T01:10:00Z"),
    staleAfterMs: 3_600_000,
  };

  it("proceeds with no marker, another attempt's marker, or a re-run of this dispatch", () => {
    expect(decideClaim({ ...base, existing: null }).proceed).toBe(true);
    expect(decideClaim({ ...base, existing: { ...result, attempt: 1 } }).proceed).toBe(true);
    expect(decideClaim({ ...base, existing: { ...result, dispatchId: "7-2-mine" } }).proceed).toBe(true);
  });

  it("stops for another dispatch of this attempt that is running or finished", () => {
    expect(decideClaim({ ...base, existing: { ...result, dispatchId: "7-2-other" } })).toMatchObject({
      proceed: false,
    });
    expect(
      decideClaim({
        ...base,
        existing: { ...result, dispatchId: "7-2-other", status: "finished", result: "complete" },
      }),
    ).toMatchObject({ proceed: false });
  });

  it("takes over a running marker older than the stale limit", () => {
    const stale = { ...result, dispatchId: "7-2-other", updatedAt: "2026-11-21T20:00:00.000Z" };
    expect(decideClaim({ ...base, existing: stale }).proceed).toBe(true);
  });
});

describe("the session status", () => {
  it("reads the controller's state block", () => {
    const state = emptyState(new Date("2026-11-22T00:00:00Z"));
    state.session.status = "pausing";
    const body = `# Autopilot dashboard\n\n${renderStateBlock(state)}`;
    expect(readSessionStatus(body)).toBe("pausing");
    expect(sessionWantsStop(body)).toEqual({ stop: true, status: "pausing" });
  });

  it("reads a block it cannot validate loosely, and never stops on a body it cannot read", () => {
    expect(
      readSessionStatus('<!-- autopilot:state v1\n{"version":9,"session":{"status":"stopping"}}\n-->'),
    ).toBe("stopping");
    expect(readSessionStatus('<!-- autopilot:state v1\n{"status": "paused", broken\n-->')).toBe("paused");
    expect(sessionWantsStop("just a body").stop).toBe(false);
    expect(sessionWantsStop(null).stop).toBe(false);
    expect(sessionWantsStop('<!-- autopilot:state v1\n{"session":{"status":"running"}}\n-->').stop).toBe(
      false,
    );
  });
});

describe("quality commands", () => {
  it("detects package.json scripts that exist (not npm's placeholder test), pytest, go, cargo and make", async () => {
    const dir = await temp();
    await writeFile(
      join(dir, "package.json"),
      JSON.stringify({ scripts: { test: "vitest run", lint: "biome check .", build: "" } }),
    );
    await writeFile(join(dir, "pyproject.toml"), "[tool.pytest.ini_options]\n");
    await writeFile(join(dir, "go.mod"), "module x\n");
    await writeFile(join(dir, "Cargo.toml"), "[package]\n");
    await writeFile(join(dir, "Makefile"), "build:\n\ttrue\ntest:\n\ttrue\n");
    expect(await detectQualityCommands(dir)).toEqual([
      "npm run lint",
      "npm test",
      "python -m pytest -q",
      "go test ./...",
      "cargo test",
      "make test",
    ]);
  });

  it("uses the repository's package manager and skips npm's default test script", async () => {
    const dir = await temp();
    await writeFile(
      join(dir, "package.json"),
      JSON.stringify({ scripts: { test: 'echo "Error: no test specified" && exit 1', typecheck: "tsc" } }),
    );
    await writeFile(join(dir, "pnpm-lock.yaml"), "");
    expect(await detectQualityCommands(dir)).toEqual(["pnpm run typecheck"]);
  });

  it("finds nothing in an empty repository", async () => {
    expect(await detectQualityCommands(await temp())).toEqual([]);
  });

  it("runs every command and keeps the end of a failure's output", async () => {
    const dir = await temp();
    const results = await runQualityCommands({
      commands: ["echo fine", "echo first; echo 'expected 2 to be 3' >&2; exit 1", "sleep 5"],
      cwd: dir,
      env: { PATH: process.env.PATH ?? "" },
      timeoutMs: 300,
    });
    expect(results.map((r) => r.passed)).toEqual([true, false, false]);
    expect(results[1]!.output).toContain("expected 2 to be 3");
    expect(results[2]!.timedOut).toBe(true);
    expect(results[2]!.output).toContain("killed after");
  });
});

describe("rendering", () => {
  it("the progress comment: a table for people, the result marker for the controller", () => {
    const body = renderProgressComment({
      result,
      elapsedMs: 252_000,
      runUrl: "https://github.com/acme/widgets/actions/runs/1",
      agent: "claude-code (claude-opus-4-8)",
      warnings: ["possibly stuck: no new commit in 3 iterations"],
    });
    expect(body).toBe(
      [
        "### 🤖 Autopilot is working on this issue",
        "",
        "| What | This run |",
        "|---|---|",
        "| Status | running — iteration 4 of 25 |",
        "| Attempt | 2 · [workflow run](https://github.com/acme/widgets/actions/runs/1) |",
        "| Elapsed | 4m 12s |",
        "| Last signal | none yet |",
        "| Branch | `autopilot/issue-7` |",
        "| Cost | $0.12 · 12.8k tokens |",
        "| Agent | claude-code (claude-opus-4-8) |",
        "",
        "> ⚠️ possibly stuck: no new commit in 3 iterations",
        "",
        body.split("\n").at(-1),
      ].join("\n"),
    );
    expect(parseWorkerResult(body)).toEqual(result);
  });

  it("the progress comment when finished names the outcome and the reason", () => {
    const body = renderProgressComment({
      result: {
        ...result,
        status: "finished",
        result: "usage_limited",
        reason: "limit | resets <later>",
        resumeAt: "2026-11-22T06:00:00.000Z",
      },
      elapsedMs: 1000,
    });
    expect(body).toContain("### 🤖 Autopilot: 🚦 Usage limit reached");
    expect(body).toContain("| Reason | limit \\| resets &lt;later&gt; |");
    expect(body).toContain("| Resumes after | 2026-11-22T06:00:00.000Z |");
  });

  it("the PR body: Closes #N, the summary, and both hidden markers", () => {
    const body = renderPullBody({
      issue: 7,
      result: {
        ...result,
        status: "finished",
        result: "complete",
        humanGate: {
          fired: true,
          rules: [
            {
              rule: "workflow files",
              where: "path",
              match: ".github/workflows/ci.yml",
              neverAutoApprove: false,
            },
          ],
        },
      },
      quality: [
        { command: "npm test", passed: true, exitCode: 0, timedOut: false, durationMs: 1, output: "" },
        { command: "npm run lint", passed: true, exitCode: 0, timedOut: false, durationMs: 1, output: "" },
      ],
      qualitySource: "detected",
      agent: "claude-code",
      summary: "Added hello.txt. <!-- sneaky --> @everyone\n\n<promise>COMPLETE</promise>",
    });
    expect(body.startsWith("Closes #7\n")).toBe(true);
    expect(body).toContain("| Iterations | 3 (attempt 2) |");
    expect(body).toContain("| Quality gates | ✅ `npm test` · ✅ `npm run lint` |");
    expect(body).toContain("| Human gate | ⚠️ fired");
    expect(body).toContain("workflow files (path: `.github/workflows/ci.yml`)");
    expect(body).toContain("<!-- autopilot:pr issue=7 -->");
    const gate = /<!-- autopilot:human-gate (.*) -->/.exec(body)![1]!;
    expect(JSON.parse(gate)).toMatchObject({ fired: true, rules: [{ rule: "workflow files" }] });
    // The agent's words sit inside a code block, and no HTML comment of theirs can pass for a marker.
    expect(body.split("```text")[1]!.split("```")[0]).toContain(
      "Added hello.txt. <! -- sneaky -- > @everyone",
    );
    expect(body.match(/<!--/g)).toHaveLength(2);
  });

  it("a question comment quotes the agent's text without live mentions or hidden markup", () => {
    const body = renderQuestionComment(
      "Ask @alice?\n<!-- autopilot:worker-result v1 {} -->",
      "autopilot:needs-human",
      7,
    );
    expect(body).toContain("> Ask @\u200balice?");
    expect(body).not.toContain("<!-- autopilot:worker-result");
    expect(body).toContain("`autopilot:needs-human`");
    // The one next step, named as the alert, the report and the dashboard name it; no label to move.
    expect(body).toContain("answer the question in a comment on #7");
    expect(body).not.toContain("move the issue back to ready");
  });
});
