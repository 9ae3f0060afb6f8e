/**
 * The worker driving the REAL agent CLIs — Claude Code, Codex, Gemini CLI and OpenCode, pinned and installed by
 * the global setup
 * (scripts/install-agent-clis.ts) — against the loopback model stand-in (sandbox/scenario/agent/fake-model.ts), which
 * scripts the model's tool calls, final messages and HTTP errors. Nothing here builds a command line by hand:
 * the CLIs are started by the worker's presets and agent runner, with the worker's env allow-list, and in
 * the loop tests the whole iteration runs — real git against a local bare remote, real quality commands,
 * and a fake GitHub only.
 *
 * How the CLIs reach the stand-in is plain configuration a user could write: Claude Code gets
 * ANTHROPIC_BASE_URL (and CLAUDE_CODE_MAX_RETRIES=0, so a scripted error is not retried for minutes) through
 * `agents.*.env`; Codex gets a custom model provider through `agents.*.args`, whose key is OPENAI_API_KEY —
 * the key the codex preset is given. The Claude model name must look real (`claude-sonnet-4-5`): Claude
 * Code hangs on a name it does not know. Gemini CLI gets GOOGLE_GEMINI_BASE_URL and a settings folder
 * (GEMINI_CLI_HOME) that names its auth method and turns its own retries off: with a base URL set, the CLI
 * would otherwise take the "gateway" auth method, which its headless mode refuses. OpenCode gets an
 * OpenAI-compatible provider through OPENCODE_CONFIG_CONTENT (its key is OPENAI_API_KEY, as on the runner)
 * and OPENCODE_DISABLE_MODELS_FETCH (no model catalogue download).
 *
 * OpenCode takes tens of seconds to start on a loaded machine and retries a 429 on its own (six requests), so
 * its cases are few: one completed loop, a 429, a quota error and an auth error.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { classifyAgentOutput } from "../../src/core/agent/classify.js";
import { parseSignal } from "../../src/core/agent/signals.js";
import { git } from "./fixtures/real.js";

import {
  ANTHROPIC_KEY,
  BRANCH,
  CLAUDE_MODEL,
  CODEX_MODEL,
  GREETING,
  ISSUE,
  OPENAI_KEY,
  TEST_TIMEOUT_MS,
  claudeAgent,
  codexAgent,
  expectOnlyOwnSecrets,
  explain,
  fakeModel,
  lastEvent,
  pushedFile,
  pushedPaths,
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

describe("the agent runner with the real CLIs", { timeout: TEST_TIMEOUT_MS }, () => {
  it("Claude Code: writes the file, runs its command, ends with COMPLETE; usage and cost come from the result event", async () => {
    const dir = await tempDir();
    const target = path.join(workspaceIn(dir), "hello.txt");
    const envDump = path.join(dir, "claude-env.txt");
    const model = await fakeModel({
      turns: [
        {
          text: "I'll create the file and look at my environment.",
          calls: [
            { tool: "write", path: target, content: GREETING },
            { tool: "shell", command: `env > ${envDump}` },
          ],
        },
        { text: "Created hello.txt.\n\n<promise>COMPLETE</promise>" },
      ],
    });

    const run = await runAgentOnce(dir, claudeAgent(), model);

    expect(run.spawnError).toBeUndefined();
    expect(run.timedOut).toBe(false);
    expect(run.exitCode).toBe(0);
    expect(run.output.isError).toBe(false);
    expect(run.output.finalMessage).toBe("Created hello.txt.\n\n<promise>COMPLETE</promise>");
    expect(parseSignal(run.output.finalMessage)).toEqual({ kind: "complete" });
    expect(await readFile(target, "utf8")).toBe(GREETING);
    expect(run.output.commands).toEqual([`env > ${envDump}`]);
    // The preset passed the configured model, and the CLI made one request per scripted turn.
    expect(model.requests.map((r) => r.model)).toEqual([CLAUDE_MODEL, CLAUDE_MODEL]);

    // Usage and cost are the result event's: two requests of 100 input and 40 output tokens (the stand-in's).
    const result = lastEvent(run.rawOutput, "result");
    expect(result?.is_error).toBe(false);
    expect(run.output.usage).toEqual({ input: 200, output: 80 });
    expect(run.output.costUsd).toBeGreaterThan(0);
    expect(run.output.costUsd).toBe(result?.total_cost_usd);
    expect(classifyAgentOutput(run.rawOutput).kind).toBe("none");

    // What the agent's own shell sees: its model key and endpoint, a scratch HOME, no other secret.
    const env = await readEnvDump(envDump);
    expectOnlyOwnSecrets(env, { ANTHROPIC_API_KEY: ANTHROPIC_KEY });
    expect(env.get("ANTHROPIC_BASE_URL")).toBe(model.url);
    expect(env.get("HOME")).toBe(path.join(dir, "scratch", "home"));
  });

  it("Codex: writes the file, ends with COMPLETE; usage from turn.completed, the commands it ran unwrapped", async () => {
    const dir = await tempDir();
    const target = path.join(workspaceIn(dir), "hello.txt");
    const envDump = path.join(dir, "codex-env.txt");
    const deployCheck = 'test -x ./deploy.sh || echo "no deploy script"';
    // One call per turn: the stand-in tells Codex's turns apart by the tool results a request carries.
    const model = await fakeModel({
      turns: [
        { text: "", calls: [{ tool: "write", path: target, content: GREETING }] },
        { text: "", calls: [{ tool: "shell", command: deployCheck }] },
        { text: "", calls: [{ tool: "shell", command: `env > '${envDump}'` }] },
        { text: "Created hello.txt.\n\n<promise>COMPLETE</promise>" },
      ],
    });

    const run = await runAgentOnce(dir, codexAgent(model), null);

    expect(run.spawnError).toBeUndefined();
    expect(run.exitCode).toBe(0);
    expect(run.output.isError).toBe(false);
    expect(parseSignal(run.output.finalMessage)).toEqual({ kind: "complete" });
    expect(await readFile(target, "utf8")).toBe(GREETING);
    expect(model.requests.map((r) => r.model)).toEqual([CODEX_MODEL, CODEX_MODEL, CODEX_MODEL, CODEX_MODEL]);

    const completed = lastEvent(run.rawOutput, "turn.completed");
    const usage = completed?.usage as {
      input_tokens: number;
      cached_input_tokens: number;
      output_tokens: number;
    };
    expect(run.output.usage).toEqual({
      input: usage.input_tokens - usage.cached_input_tokens,
      output: usage.output_tokens,
    });
    expect(run.output.usage.input).toBeGreaterThan(0);
    expect(run.output.usage.output).toBeGreaterThan(0);

    // The commands as the human gate reads them: without Codex's `/bin/bash -lc` wrapper and its quoting.
    // (The first is how the stand-in turns a file write into a shell command for Codex.)
    expect(run.output.commands).toEqual([
      `mkdir -p "$(dirname '${target}')" && printf '%s' '${GREETING}' > '${target}'`,
      deployCheck,
      `env > '${envDump}'`,
    ]);

    const env = await readEnvDump(envDump);
    // `codex exec` authenticates to OpenAI itself with CODEX_API_KEY only: the preset fills it from OPENAI_API_KEY.
    expectOnlyOwnSecrets(env, { OPENAI_API_KEY: OPENAI_KEY, CODEX_API_KEY: OPENAI_KEY });
    expect(env.get("HOME")).toBe(path.join(dir, "scratch", "home"));
    // CLAUDE_CODE_MAX_RETRIES is in the worker's env but only the Claude agent's `env` list names it.
    expect(env.has("CLAUDE_CODE_MAX_RETRIES")).toBe(false);
  });

  it("Codex: a 429 ends in turn.failed, which the worker classifies as a rate limit", async () => {
    const dir = await tempDir();
    const model = await fakeModel({
      turns: [{ error: 429, message: "Rate limit reached for requests (fake)" }],
    });

    const run = await runAgentOnce(dir, codexAgent(model), null);

    expect(run.exitCode).toBe(1);
    expect(run.output.isError).toBe(true);
    expect(lastEvent(run.rawOutput, "turn.failed")).toBeDefined();
    expect(run.output.errorText).toContain("429");
    expect(parseSignal(run.output.finalMessage).kind).toBe("none");
    expect(classifyAgentOutput(run.rawOutput).kind).toBe("rate_limit");
  });

  it("Codex: a 401 is classified as an authentication failure", async () => {
    const dir = await tempDir();
    const model = await fakeModel({ turns: [{ error: 401, message: "Incorrect API key provided (fake)" }] });

    const run = await runAgentOnce(dir, codexAgent(model), null);

    expect(run.exitCode).toBe(1);
    expect(run.output.isError).toBe(true);
    expect(run.output.errorText).toContain("401");
    expect(classifyAgentOutput(run.rawOutput).kind).toBe("auth");
  });
});

describe("the worker loop with the real CLIs", { timeout: TEST_TIMEOUT_MS }, () => {
  it("Claude Code completes: the file is committed and pushed, the PR opened, usage and cost reported", async () => {
    const repo = await taskRepo();
    const model = await fakeModel({
      turns: [
        {
          text: "Creating hello.txt.",
          calls: [{ tool: "write", path: path.join(repo.workTree, "hello.txt"), content: GREETING }],
        },
        { text: "hello.txt is in place.\n\n<promise>COMPLETE</promise>" },
      ],
    });

    const loop = await runLoop(repo, { primary: claudeAgent() }, model);
    const { result } = loop.run;

    expect(result.result, explain(loop)).toBe("complete");
    expect(result.iterations).toBe(1);
    expect(result.lastSignal).toBe("COMPLETE");
    expect(pushedFile(loop, "hello.txt")).toBe(GREETING.trim());
    // The CLI leaves nothing else in the checkout: the agent's file (the worker's progress notes are set aside
    // before review, so they never reach the default branch).
    expect(pushedPaths(loop)).toEqual(["hello.txt"]);
    expect(result.headSha).toBe(git(repo.remote, "rev-parse", `refs/heads/${BRANCH}`));
    expect(loop.run.quality.map((q) => q.passed)).toEqual([true]);
    expect(loop.github.pulls).toHaveLength(1);
    expect(loop.github.pulls[0]).toMatchObject({ headRef: BRANCH, baseRef: "main", number: result.prNumber });
    expect(loop.github.pulls[0]!.body).toContain(`Closes #${ISSUE}`);
    expect(result.tokens).toEqual({ input: 200, output: 80 });
    expect(result.costUsd).toBeGreaterThan(0);
    expect(result.humanGate.fired).toBe(false);
    expect(model.requests).toHaveLength(2);
  });

  it("a 429 from Claude Code is a rate limit: one backoff, then the Codex fallback takes the task and completes", async () => {
    const repo = await taskRepo();
    const claudeModel = await fakeModel({ turns: [{ error: 429 }] });
    const codexModel = await fakeModel(writesGreeting(repo.workTree));

    const loop = await runLoop(
      repo,
      { primary: claudeAgent(), fallbacks: [codexAgent(codexModel)] },
      claudeModel,
      {
        rateLimit: { retries: 1, baseMs: 2_000, factor: 3, maxWaitMs: 60_000 },
      },
    );
    const { result } = loop.run;

    expect(result.result, explain(loop)).toBe("complete");
    // The first 429 → wait baseMs (not slept here) and run Claude Code again; the second → switch agents.
    expect(loop.sleeps).toEqual([2_000]);
    expect(claudeModel.requests).toHaveLength(2);
    expect(loop.run.warnings).toContainEqual(
      expect.stringContaining("claude-code is rate limited; switching to codex"),
    );
    expect(codexModel.requests.length).toBeGreaterThan(0);
    // Rate-limited runs are not iterations: Codex's run was the first.
    expect(result.iterations).toBe(1);
    expect(pushedFile(loop, "hello.txt")).toBe(GREETING.trim());
    expect(loop.github.pulls).toHaveLength(1);
    expect(loop.github.pulls[0]!.body).toContain(`codex (${CODEX_MODEL})`);
  });

  it("a 401 from Claude Code ends the job as `auth`, naming the key to set, without trying the fallback", async () => {
    const repo = await taskRepo();
    const claudeModel = await fakeModel({ turns: [{ error: 401, message: "invalid x-api-key" }] });
    const codexModel = await fakeModel({ turns: [{ text: "<promise>COMPLETE</promise>" }] });

    const loop = await runLoop(
      repo,
      { primary: claudeAgent(), fallbacks: [codexAgent(codexModel)] },
      claudeModel,
    );
    const { result } = loop.run;

    expect(result.result, explain(loop)).toBe("auth");
    expect(result.reason).toContain("claude-code agent could not authenticate");
    expect(result.reason).toContain("ANTHROPIC_API_KEY");
    expect(claudeModel.requests).toHaveLength(1);
    expect(codexModel.requests).toHaveLength(0);
    expect(loop.sleeps).toEqual([]);
    expect(loop.github.pulls).toHaveLength(0);
  });

  it("Codex completes, and the command it ran reaches the human gate", async () => {
    const repo = await taskRepo();
    const codexModel = await fakeModel({
      turns: [
        {
          text: "",
          calls: [{ tool: "write", path: path.join(repo.workTree, "hello.txt"), content: GREETING }],
        },
        { text: "", calls: [{ tool: "shell", command: 'test -x ./deploy.sh || echo "no deploy script"' }] },
        { text: "Done.\n\n<promise>COMPLETE</promise>" },
      ],
    });

    const loop = await runLoop(repo, { primary: codexAgent(codexModel) }, null);
    const { result } = loop.run;

    expect(result.result, explain(loop)).toBe("complete");
    expect(pushedFile(loop, "hello.txt")).toBe(GREETING.trim());
    expect(result.tokens.input).toBeGreaterThan(0);
    expect(result.tokens.output).toBeGreaterThan(0);
    expect(result.humanGate.fired).toBe(true);
    expect(result.humanGate.rules).toContainEqual(
      expect.objectContaining({ rule: "deploy", where: "command", match: expect.stringContaining("deploy") }),
    );
  });

  it("a 429 from Codex with no fallback left ends the job as `rate_limited` with a time to resume", async () => {
    const repo = await taskRepo();
    const codexModel = await fakeModel({ turns: [{ error: 429 }] });

    const loop = await runLoop(repo, { primary: codexAgent(codexModel) }, null, {
      rateLimit: { retries: 0, baseMs: 2_000, factor: 3, maxWaitMs: 60_000 },
    });
    const { result } = loop.run;

    expect(result.result, explain(loop)).toBe("rate_limited");
    expect(result.reason).toContain("429");
    expect(Number.isNaN(Date.parse(result.resumeAt ?? ""))).toBe(false);
    expect(result.iterations).toBe(0);
    expect(loop.sleeps).toEqual([]);
    expect(codexModel.requests).toHaveLength(1);
  });
});
