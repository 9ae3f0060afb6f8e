/** The worker driving the real Gemini CLI and OpenCode, and USD budgets for CLIs that report no price (see real-agents.test.ts for how the CLIs reach the model stand-in). */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { classifyAgentOutput } from "../../src/core/agent/classify.js";

import {
  CODEX_MODEL,
  GEMINI_KEY,
  GEMINI_MODEL,
  GREETING,
  TEST_TIMEOUT_MS,
  codexAgent,
  expectOnlyOwnSecrets,
  explain,
  fakeModel,
  geminiAgent,
  geminiEnv,
  lastEvent,
  opencodeAgent,
  opencodeEnv,
  pushedFile,
  readEnvDump,
  runAgentOnce,
  runCleanups,
  runLoop,
  taskRepo,
  tempDir,
  workspaceIn,
  writesGreeting,
} from "./fixtures/real-agent-kit.js";

afterEach(runCleanups);

const GOOGLE_DAILY_QUOTA = {
  error: {
    code: 429,
    message:
      "You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.",
    status: "RESOURCE_EXHAUSTED",
    details: [
      {
        "@type": "type.googleapis.com/google.rpc.QuotaFailure",
        violations: [
          {
            quotaMetric: "generativelanguage.googleapis.com/generate_content_free_tier_requests",
            quotaId: "GenerateRequestsPerDayPerProjectPerModel-FreeTier",
            quotaDimensions: { location: "global", model: GEMINI_MODEL },
            quotaValue: "250",
          },
        ],
      },
      { "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "43s" },
    ],
  },
};

/** OpenAI's documented body for an account without credit (platform.openai.com/docs/guides/error-codes). */
const OPENAI_INSUFFICIENT_QUOTA = {
  error: {
    message:
      "You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.",
    type: "insufficient_quota",
    param: null,
    code: "insufficient_quota",
  },
};

describe("Gemini CLI, for real", { timeout: TEST_TIMEOUT_MS }, () => {
  it("writes the file with its own tool, runs its command, ends with COMPLETE; tokens from the result stats", async () => {
    const dir = await tempDir();
    const target = path.join(workspaceIn(dir), "hello.txt");
    const envDump = path.join(dir, "gemini-env.txt");
    const model = await fakeModel({
      turns: [
        { text: "", calls: [{ tool: "write", path: target, content: GREETING }] },
        { text: "", calls: [{ tool: "shell", command: `env > ${envDump}` }] },
        { text: "Created hello.txt.\n\n<promise>COMPLETE</promise>" },
      ],
    });

    const run = await runAgentOnce(dir, geminiAgent(), null, await geminiEnv(model));

    expect(run.spawnError).toBeUndefined();
    expect(run.exitCode, run.rawOutput).toBe(0);
    expect(run.output.isError).toBe(false);
    expect(run.output.finalMessage).toBe("Created hello.txt.\n\n<promise>COMPLETE</promise>");
    expect(await readFile(target, "utf8")).toBe(GREETING);
    expect(run.output.commands).toEqual([`env > ${envDump}`]);
    expect(model.requests.map((r) => r.model)).toEqual([GEMINI_MODEL, GEMINI_MODEL, GEMINI_MODEL]);
    // Three requests of 300 prompt and 50 answer tokens (the stand-in's usageMetadata), as the result says.
    const stats = lastEvent(run.rawOutput, "result")?.stats as { input: number; output_tokens: number };
    expect(run.output.usage).toEqual({ input: stats.input, output: stats.output_tokens });
    expect(run.output.usage).toEqual({ input: 900, output: 150 });
    // No price from the CLI; the model it names is what the worker prices.
    expect(run.output.costUsd).toBe(0);
    expect(run.output.model).toBe(GEMINI_MODEL);
    expect(classifyAgentOutput(run.rawOutput).kind).toBe("none");

    expectOnlyOwnSecrets(await readEnvDump(envDump), { GEMINI_API_KEY: GEMINI_KEY });
  });

  it("a 429 ends in a failed result that the worker classifies as a rate limit", async () => {
    const dir = await tempDir();
    const model = await fakeModel({
      turns: [{ error: 429, message: "Resource has been exhausted (e.g. check quota)." }],
    });

    const run = await runAgentOnce(dir, geminiAgent(), null, await geminiEnv(model));

    expect(run.exitCode).not.toBe(0);
    expect(run.output.isError).toBe(true);
    expect(lastEvent(run.rawOutput, "result")?.status).toBe("error");
    expect(classifyAgentOutput(run.rawOutput).kind).toBe("rate_limit");
  });

  it("a per-day quota is a usage limit that lifts at midnight Pacific time", async () => {
    const dir = await tempDir();
    const model = await fakeModel({ turns: [{ error: 429, body: GOOGLE_DAILY_QUOTA }] });

    const run = await runAgentOnce(dir, geminiAgent(), null, await geminiEnv(model));
    const now = new Date("2026-11-23T16:00:00Z");
    const found = classifyAgentOutput(run.rawOutput, now);

    expect(run.output.isError).toBe(true);
    expect(run.output.errorText).toContain("daily quota");
    expect(found.kind).toBe("usage_limit");
    // Midnight in Los Angeles (UTC-8 in November).
    expect(found.resetAt?.toISOString()).toBe("2026-11-24T08:00:00.000Z");
  });

  it("a 401 is an authentication failure", async () => {
    const dir = await tempDir();
    const model = await fakeModel({
      turns: [{ error: 401, message: "API key not valid. Please pass a valid API key." }],
    });

    const run = await runAgentOnce(dir, geminiAgent(), null, await geminiEnv(model));

    expect(run.output.isError).toBe(true);
    expect(classifyAgentOutput(run.rawOutput).kind).toBe("auth");
    expect(model.requests).toHaveLength(1);
  });
});

/** OpenCode starts slowly under load and retries on its own: more time per case. */
const OPENCODE_TIMEOUT_MS = 300_000;

describe("OpenCode, for real", { timeout: OPENCODE_TIMEOUT_MS }, () => {
  it("a 429 (after its own retries) ends in an error event that the worker classifies as a rate limit", async () => {
    const dir = await tempDir();
    const model = await fakeModel({
      turns: [{ error: 429, message: "Rate limit reached for requests (fake)" }],
    });

    const run = await runAgentOnce(dir, opencodeAgent(), null, opencodeEnv(model));

    expect(run.exitCode).toBe(1);
    expect(run.output.isError).toBe(true);
    expect(lastEvent(run.rawOutput, "error")).toBeDefined();
    expect(run.output.errorText).toContain("HTTP 429");
    expect(classifyAgentOutput(run.rawOutput).kind).toBe("rate_limit");
  });

  it("OpenAI's insufficient_quota is a quota problem, not a rate limit", async () => {
    const dir = await tempDir();
    const model = await fakeModel({ turns: [{ error: 429, body: OPENAI_INSUFFICIENT_QUOTA }] });

    const run = await runAgentOnce(dir, opencodeAgent(), null, opencodeEnv(model));

    expect(run.output.isError).toBe(true);
    expect(classifyAgentOutput(run.rawOutput).kind).toBe("quota");
  });

  it("a 401 is an authentication failure", async () => {
    const dir = await tempDir();
    const model = await fakeModel({
      turns: [
        {
          error: 401,
          message:
            "Incorrect API key provided: sk-test. You can find your API key at https://platform.openai.com/account/api-keys.",
        },
      ],
    });

    const run = await runAgentOnce(dir, opencodeAgent(), null, opencodeEnv(model));

    expect(run.output.isError).toBe(true);
    expect(classifyAgentOutput(run.rawOutput).kind).toBe("auth");
  });

  it("completes in the worker loop: its bash tool writes the file, which is pushed; tokens priced from `prices`", async () => {
    const repo = await taskRepo();
    const model = await fakeModel(writesGreeting(repo.workTree));

    const loop = await runLoop(
      repo,
      { primary: opencodeAgent() },
      null,
      { prices: [{ model: "fake-model", input: 10, output: 20 }] },
      opencodeEnv(model),
    );
    const { result } = loop.run;

    expect(result.result, explain(loop)).toBe("complete");
    expect(pushedFile(loop, "hello.txt")).toBe(GREETING.trim());
    expect(loop.github.pulls).toHaveLength(1);
    // Two answers of 400 prompt and 60 completion tokens (the stand-in's usage), each a step_finish.
    expect(result.tokens).toEqual({ input: 800, output: 120 });
    // OpenCode reports cost 0 for a model it has no price for: the configured price applies.
    expect(result.costUsd).toBe((800 * 10 + 120 * 20) / 1_000_000);
  });
});

describe("a USD budget stops the agents whose CLI reports no price", { timeout: TEST_TIMEOUT_MS }, () => {
  /** Every answer writes a file and the agent never says COMPLETE: only the budget ends the job. */
  const neverDone = (workTree: string) => writesGreeting(workTree, "Still working on it.");

  it("Codex: its tokens, priced from the configured price of its model, end the job with budget_exceeded", async () => {
    const repo = await taskRepo();
    const model = await fakeModel(neverDone(repo.workTree));

    const loop = await runLoop(repo, { primary: codexAgent(model) }, null, {
      maxIterations: 3,
      prices: [{ model: CODEX_MODEL, input: 100, output: 100 }],
      budgets: { task: { tokens: null, usd: 0.01 }, session: { tokens: null, usd: null } },
    });
    const { result } = loop.run;

    expect(result.result, explain(loop)).toBe("budget_exceeded");
    expect(result.iterations).toBe(1);
    expect(result.costUsd).toBeGreaterThanOrEqual(0.01);
    expect(result.costUsd).toBe(((result.tokens.input + result.tokens.output) * 100) / 1_000_000);
    expect(result.reason).toContain("budget $0.01");
    // The work of the iteration is kept.
    expect(pushedFile(loop, "hello.txt")).toBe(GREETING.trim());
  });

  it("Gemini CLI: its tokens, priced from the built-in table by the model it reports, end the job", async () => {
    const repo = await taskRepo();
    const model = await fakeModel(neverDone(repo.workTree));

    const loop = await runLoop(
      repo,
      { primary: geminiAgent() },
      null,
      {
        maxIterations: 3,
        budgets: { task: { tokens: null, usd: 0.0001 }, session: { tokens: null, usd: null } },
      },
      await geminiEnv(model),
    );
    const { result } = loop.run;

    expect(result.result, explain(loop)).toBe("budget_exceeded");
    expect(result.iterations).toBe(1);
    // Two answers of 300 + 50 tokens at gemini-2.5-flash's list price ($0.30 / $2.50 per million).
    expect(result.tokens).toEqual({ input: 600, output: 100 });
    expect(result.costUsd).toBe((600 * 0.3 + 100 * 2.5) / 1_000_000);
  });
});
