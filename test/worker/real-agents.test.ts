/**
 * The worker driving the REAL agent CLIs — Claude Code, Codex, Gemini CLI and OpenCode, pinned and installed by
 * the global setup
 * (scripts/install-agent-clis.mjs) — against the loopback model stand-in (src/sandbox/scenario/fake-model.ts), which
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
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { agentCliBinDirs } from "../../scripts/install-agent-clis.mjs";
import { classifyAgentOutput } from "../../src/core/classify.js";
import type { AgentConfig, AutopilotConfig } from "../../src/core/config/index.js";
import { parseSignal } from "../../src/core/signals.js";
import {
  type FakeModelScript,
  type FakeModelServer,
  startFakeModelServer,
} from "../../src/sandbox/scenario/fake-model.js";
import { ALL_MODEL_KEYS } from "../../src/worker/agents/index.js";
import { type AgentRunResult, createAgentRunner } from "../../src/worker/agent-iteration.js";
import { createIsolatedParts } from "../../src/worker/boundary.js";
import { runWorker, type WorkerLog, type WorkerRun } from "../../src/worker/job.js";
import { config as workerConfig, FakeGitHub } from "./fakes.js";
import { git, remoteAndClone, testAgentUser } from "./fixtures/real.js";

const CLAUDE_MODEL = "claude-sonnet-4-5";
const CODEX_MODEL = "fake-model";
const GEMINI_MODEL = "gemini-2.5-flash";
/** OpenCode names models `provider/model`; the provider is the stand-in, configured below. */
const OPENCODE_MODEL = "autopilot-test/fake-model";
const BIN_PATH = agentCliBinDirs().join(path.delimiter);
const GITHUB_TOKEN = "ghs_worker_token_never_for_the_agent";
const ANTHROPIC_KEY = "sk-ant-test-key-for-claude-only";
const OPENAI_KEY = "sk-openai-test-key-for-codex-only";
const GEMINI_KEY = "gemini-test-key-for-gemini-only";
/** The task of FakeGitHub's issue #7. */
const ISSUE = 7;
const BRANCH = "autopilot/issue-7";
const GREETING = "Hello from the agent\n";
/** Each CLI run takes a second or two against the stand-in; generous for a loaded CI machine. */
const TEST_TIMEOUT_MS = 120_000;
const AGENT_TIMEOUT_MS = 90_000;

// ---------------------------------------------------------------------------------------------------------
// Everything a test starts is stopped after it, in reverse order: the agent's process tree is killed (abort),
// the model servers are stopped, the temporary directories are removed.

const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "autopilot-real-agents-"));
  // The agent runs as its own OS user: it writes its environment dumps here (sticky, like /tmp).
  await chmod(dir, 0o1777);
  cleanups.push(() => rm(dir, { recursive: true, force: true, maxRetries: 3 }));
  return dir;
}

async function fakeModel(script: FakeModelScript): Promise<FakeModelServer> {
  const server = await startFakeModelServer(script);
  cleanups.push(() => server.stop());
  return server;
}

/** Aborted after the test: kills an agent still running (a failed or timed-out test leaves nothing behind). */
function abortAfterTest(): AbortSignal {
  const controller = new AbortController();
  cleanups.push(async () => controller.abort());
  return controller.signal;
}

// ---------------------------------------------------------------------------------------------------------
// Agent configuration, as `.github/autopilot.yml` would give it.

function claudeAgent(): AgentConfig {
  return {
    preset: "claude-code",
    model: CLAUDE_MODEL,
    args: [],
    env: ["ANTHROPIC_BASE_URL", "CLAUDE_CODE_MAX_RETRIES"],
    command: null,
  };
}

function codexAgent(server: FakeModelServer): AgentConfig {
  return {
    preset: "codex",
    model: CODEX_MODEL,
    args: [
      ...["-c", "model_provider=autopilot-test", "-c", "model_providers.autopilot-test.name=autopilot-test"],
      ...["-c", `model_providers.autopilot-test.base_url="${server.url}/v1"`],
      ...["-c", "model_providers.autopilot-test.env_key=OPENAI_API_KEY"],
      ...["-c", "model_providers.autopilot-test.wire_api=responses"],
      ...["-c", "model_providers.autopilot-test.request_max_retries=0"],
      ...["-c", "model_providers.autopilot-test.stream_max_retries=0"],
    ],
    env: [],
    command: null,
  };
}

/** A Gemini CLI settings folder: API-key auth (a base URL alone selects an auth it refuses) and no retries. */
async function geminiHome(): Promise<string> {
  const home = await tempDir();
  await mkdir(path.join(home, ".gemini"), { recursive: true });
  await writeFile(
    path.join(home, ".gemini", "settings.json"),
    JSON.stringify({ security: { auth: { selectedType: "gemini-api-key" } }, general: { maxAttempts: 1 } }),
  );
  // The CLI runs as the agent's OS user and writes its registry beside the settings: the folder must be its to write.
  await chmod(home, 0o1777);
  await chmod(path.join(home, ".gemini"), 0o1777);
  return home;
}

function geminiAgent(): AgentConfig {
  return {
    preset: "gemini",
    model: GEMINI_MODEL,
    args: [],
    env: ["GOOGLE_GEMINI_BASE_URL", "GEMINI_CLI_HOME"],
    command: null,
  };
}

/** The worker env entries that point Gemini CLI at the stand-in. */
async function geminiEnv(server: FakeModelServer): Promise<Record<string, string>> {
  return { GOOGLE_GEMINI_BASE_URL: server.url, GEMINI_CLI_HOME: await geminiHome() };
}

function opencodeAgent(): AgentConfig {
  return {
    preset: "opencode",
    model: OPENCODE_MODEL,
    args: [],
    env: ["OPENCODE_CONFIG_CONTENT", "OPENCODE_DISABLE_MODELS_FETCH"],
    command: null,
  };
}

/** The worker env entries that give OpenCode a provider at the stand-in (as `opencode.json` would). */
function opencodeEnv(server: FakeModelServer): Record<string, string> {
  return {
    OPENCODE_DISABLE_MODELS_FETCH: "1",
    OPENCODE_CONFIG_CONTENT: JSON.stringify({
      provider: {
        "autopilot-test": {
          npm: "@ai-sdk/openai-compatible",
          name: "autopilot-test",
          options: { baseURL: `${server.url}/v1`, apiKey: "{env:OPENAI_API_KEY}" },
          models: { "fake-model": { name: "fake-model" } },
        },
      },
    }),
  };
}

/**
 * The worker's own environment, as on a runner: the GitHub token, both model keys, an unrelated secret, and
 * the Claude endpoint; PATH finds the pinned CLIs. Model keys from the developer's shell are left out.
 */
function workerEnv(anthropic: FakeModelServer | null, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const key of [
    ...ALL_MODEL_KEYS,
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_AUTH_TOKEN",
    "OPENAI_BASE_URL",
    "GOOGLE_GEMINI_BASE_URL",
    "GEMINI_CLI_HOME",
  ])
    delete env[key];
  return {
    ...env,
    ...extra,
    PATH: `${BIN_PATH}${path.delimiter}${process.env.PATH ?? ""}`,
    GITHUB_TOKEN,
    ANTHROPIC_API_KEY: ANTHROPIC_KEY,
    OPENAI_API_KEY: OPENAI_KEY,
    GEMINI_API_KEY: GEMINI_KEY,
    DEPLOY_SECRET: "s3cr3t-not-allow-listed",
    CLAUDE_CODE_MAX_RETRIES: "0",
    ...(anthropic ? { ANTHROPIC_BASE_URL: anthropic.url } : {}),
  };
}

/** The JSON event of `type` that a CLI printed last. */
function lastEvent(raw: string, type: string): Record<string, unknown> | undefined {
  const events = raw
    .split("\n")
    .filter((line) => line.trim().startsWith("{"))
    .map((line) => {
      try {
        return JSON.parse(line) as Record<string, unknown>;
      } catch {
        return {};
      }
    });
  return events.filter((event) => event.type === type).at(-1);
}

/** `NAME=value` lines of an `env` dump. */
async function readEnvDump(file: string): Promise<Map<string, string>> {
  const vars = new Map<string, string>();
  for (const line of (await readFile(file, "utf8")).split("\n")) {
    const eq = line.indexOf("=");
    if (eq > 0 && /^[A-Za-z_][A-Za-z0-9_]*$/.test(line.slice(0, eq)))
      vars.set(line.slice(0, eq), line.slice(eq + 1));
  }
  return vars;
}

// ---------------------------------------------------------------------------------------------------------
// One agent run through the preset and the agent runner.

/** The agent's working directory inside a test's temporary directory. */
function workspaceIn(dir: string): string {
  return path.join(dir, "workspace");
}

async function runAgentOnce(
  dir: string,
  agent: AgentConfig,
  anthropic: FakeModelServer | null,
  extraEnv: Record<string, string> = {},
): Promise<AgentRunResult> {
  const workspace = workspaceIn(dir);
  await mkdir(workspace, { recursive: true });
  const scratch = path.join(dir, "scratch");
  const home = path.join(scratch, "home");
  const tmp = path.join(scratch, "tmp");
  await mkdir(home, { recursive: true });
  await mkdir(tmp, { recursive: true });
  // As the worker runs it: as the agent's OS user, every process of which is killed afterwards.
  const user = await testAgentUser();
  const owned = [workspace, home, tmp];
  const runner = createAgentRunner({
    workdir: workspace,
    scratchDir: scratch,
    home,
    tmpdir: tmp,
    boundary: {
      user,
      handOver: () => user.give(owned),
      takeBack: async () => {
        await user.killAll();
        await user.take(owned);
      },
    },
    parentEnv: workerEnv(anthropic, extraEnv),
    secretValues: [GITHUB_TOKEN],
    killGraceMs: 1_000,
  });
  return runner({
    agent,
    prompt: "Create hello.txt with a greeting, then end with the COMPLETE signal.",
    issue: ISSUE,
    iteration: 1,
    timeoutMs: AGENT_TIMEOUT_MS,
    signal: abortAfterTest(),
  });
}

// ---------------------------------------------------------------------------------------------------------
// The whole worker loop: real git against a bare remote, the real agent runner and quality commands.

interface TaskRepo {
  /** Holds the remote, the checkout and the worker's scratch space. */
  root: string;
  /** The bare repository standing in for GitHub. */
  remote: string;
  /** The job's checkout (a clone of the remote). */
  workspace: string;
  /** Where `main` starts. */
  initialCommit: string;
  /** The agent's work tree (boundary.ts copies the checkout there). */
  workTree: string;
}

/** A bare remote with `main` and a clone of it as the job's checkout (W1's fixture); removed after the test. */
async function taskRepo(): Promise<TaskRepo> {
  const repo = await remoteAndClone({ "README.md": "# widgets\n" });
  cleanups.push(() => rm(repo.root, { recursive: true, force: true, maxRetries: 3 }));
  return {
    ...repo,
    initialCommit: git(repo.remote, "rev-parse", "refs/heads/main"),
    workTree: path.join(repo.root, "agent", "work"),
  };
}

interface LoopRun {
  run: WorkerRun;
  github: FakeGitHub;
  /** Waits the loop asked for (rate-limit backoff), in ms; nothing actually sleeps. */
  sleeps: number[];
  log: string[];
  repo: TaskRepo;
}

/** Runs the worker for issue #7 as run-action.ts wires it, with a fake GitHub and a recording sleep. */
async function runLoop(
  repo: TaskRepo,
  agents: { primary: AgentConfig; fallbacks?: AgentConfig[] },
  anthropic: FakeModelServer | null,
  overrides: Record<string, unknown> = {},
  extraEnv: Record<string, string> = {},
): Promise<LoopRun> {
  const scratch = path.join(repo.root, "scratch");
  const config: AutopilotConfig = workerConfig({
    agents: { primary: agents.primary, fallbacks: agents.fallbacks ?? [] },
    // The task counts as done only when the agent's file is in the checkout with the right content.
    qualityCommands: [`grep -qx '${GREETING.trim()}' hello.txt`],
    maxIterations: 3,
    iterationTimeoutMinutes: 2,
    ...overrides,
  });
  const github = new FakeGitHub();
  const sleeps: number[] = [];
  const log: string[] = [];
  const logger: WorkerLog = {
    debug: () => {},
    info: (message) => log.push(message),
    warning: (message) => log.push(`warning: ${message}`),
    error: (message) => log.push(`error: ${message}`),
  };
  const env = workerEnv(anthropic, extraEnv);
  // As run-action.ts wires it: the checkout's .git moved out, the agent in its own work tree as its own OS user.
  const parts = await createIsolatedParts({
    workspace: repo.workspace,
    workerDir: scratch,
    agentDir: path.join(repo.root, "agent"),
    user: await testAgentUser(),
    parentEnv: env,
    secretValues: [GITHUB_TOKEN],
    killGraceMs: 1_000,
    warn: (message) => log.push(`warning: ${message}`),
  });
  const run = await runWorker(
    {
      repo: "acme/widgets",
      issue: ISSUE,
      attempt: 1,
      dispatchId: "7-1-real-agents",
      trackingIssue: null,
      workspace: repo.workspace,
      defaultBranch: "main",
      runUrl: null,
    },
    config,
    {
      git: parts.git,
      agent: parts.agent,
      quality: parts.quality,
      workTree: parts.boundary.dirs.workTree,
      github,
      clock: () => Date.now(),
      sleep: async (ms) => {
        sleeps.push(ms);
      },
      log: logger,
      signal: abortAfterTest(),
    },
  );
  return { run, github, sleeps, log, repo };
}

/** A file on the task branch as the remote holds it: what was pushed, not what lies in the checkout. */
function pushedFile(loop: LoopRun, file: string): string {
  return git(loop.repo.remote, "show", `refs/heads/${BRANCH}:${file}`);
}

/** Paths the pushed task branch changes against where `main` started. */
function pushedPaths(loop: LoopRun): string[] {
  return git(loop.repo.remote, "diff", "--name-only", loop.repo.initialCommit, `refs/heads/${BRANCH}`)
    .split("\n")
    .filter(Boolean)
    .sort();
}

/** Shown when an expectation on the outcome fails: the worker's reason and log. */
function explain(loop: LoopRun): string {
  return `${loop.run.result.result}: ${loop.run.result.reason}\n${loop.log.join("\n")}`;
}

// ---------------------------------------------------------------------------------------------------------

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
    expect(env.get("ANTHROPIC_API_KEY")).toBe(ANTHROPIC_KEY);
    expect(env.get("ANTHROPIC_BASE_URL")).toBe(model.url);
    expect(env.get("HOME")).toBe(path.join(dir, "scratch", "home"));
    for (const name of ["OPENAI_API_KEY", "GITHUB_TOKEN", "DEPLOY_SECRET"]) {
      expect(env.has(name), name).toBe(false);
    }
    expect([...env.values()].some((value) => value.includes(GITHUB_TOKEN))).toBe(false);
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
    expect(env.get("OPENAI_API_KEY")).toBe(OPENAI_KEY);
    // `codex exec` authenticates to OpenAI itself with CODEX_API_KEY only: the preset fills it from OPENAI_API_KEY.
    expect(env.get("CODEX_API_KEY")).toBe(OPENAI_KEY);
    expect(env.get("HOME")).toBe(path.join(dir, "scratch", "home"));
    // CLAUDE_CODE_MAX_RETRIES is in the worker's env but only the Claude agent's `env` list names it.
    for (const name of ["ANTHROPIC_API_KEY", "GITHUB_TOKEN", "DEPLOY_SECRET", "CLAUDE_CODE_MAX_RETRIES"]) {
      expect(env.has(name), name).toBe(false);
    }
    expect([...env.values()].some((value) => value.includes(GITHUB_TOKEN))).toBe(false);
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
    const codexModel = await fakeModel({
      turns: [
        {
          text: "",
          calls: [{ tool: "write", path: path.join(repo.workTree, "hello.txt"), content: GREETING }],
        },
        { text: "Done.\n\n<promise>COMPLETE</promise>" },
      ],
    });

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

// ---------------------------------------------------------------------------------------------------------
// Gemini CLI and OpenCode.

/** Google's documented body for a per-day free-tier quota (ai.google.dev/gemini-api/docs/rate-limits). */
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

    const env = await readEnvDump(envDump);
    expect(env.get("GEMINI_API_KEY")).toBe(GEMINI_KEY);
    for (const name of ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GITHUB_TOKEN", "DEPLOY_SECRET"]) {
      expect(env.has(name), name).toBe(false);
    }
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
    const model = await fakeModel({
      turns: [
        {
          text: "",
          calls: [{ tool: "write", path: path.join(repo.workTree, "hello.txt"), content: GREETING }],
        },
        { text: "Done.\n\n<promise>COMPLETE</promise>" },
      ],
    });

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
  function neverDone(workspace: string): FakeModelScript {
    return {
      turns: [
        { text: "", calls: [{ tool: "write", path: path.join(workspace, "hello.txt"), content: GREETING }] },
        { text: "Still working on it." },
      ],
    };
  }

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
