import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { ZodError } from "zod";
import { DOC_FILE, EXAMPLE_CONFIG, generatedFiles, SCHEMA_FILE } from "../../scripts/gen-schema.js";
import {
  AGENT_PRESETS,
  type AutopilotConfig,
  applyConfigOverrides,
  type ConfigProblem,
  ConfigError,
  type ConfigResult,
  ConfigSchema,
  configJsonSchema,
  configReference,
  DEFAULT_CONFIG,
  parseConfig,
  renderConfigError,
} from "../../src/core/config/index.js";

const repoFile = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8");

/** `{a: {b: value}}` from "a.b"; `[x]` segments are not needed here. */
function nested(path: string, value: unknown): Record<string, unknown> {
  return path
    .split(".")
    .reverse()
    .reduce<unknown>((inner, key) => ({ [key]: inner }), value) as Record<string, unknown>;
}

function expectOk(result: ConfigResult): { config: AutopilotConfig; warnings: string[] } {
  if (!result.ok) throw new Error(`expected a valid config, got:\n${result.error.message}`);
  return result;
}

function expectError(result: ConfigResult): ConfigError {
  if (result.ok) throw new Error(`expected an invalid config, got ${JSON.stringify(result.config)}`);
  return result.error;
}

function problemAt(error: ConfigError, path: string): ConfigProblem {
  const problem = error.problems.find((p) => p.path === path);
  if (!problem) throw new Error(`no problem at ${path}; problems:\n${error.message}`);
  return problem;
}

describe("defaults", () => {
  it.each([
    ["no file", null],
    ["empty file", ""],
    ["blank file", "  \n\n"],
    ["comments only", "# nothing configured yet\n"],
    ["empty document", "---\n"],
    ["explicit null", "null\n"],
  ])("%s → all defaults", (_name, text) => {
    const { config, warnings } = expectOk(parseConfig(text));
    expect(config).toEqual(DEFAULT_CONFIG);
    expect(warnings).toEqual([]);
  });

  it("are exactly the contract in docs/ARCHITECTURE.md (Configuration shape)", () => {
    const architecture = repoFile("docs/ARCHITECTURE.md");
    const section = architecture.slice(architecture.indexOf("## Configuration shape"));
    const block = /```yaml\n([\s\S]*?)```/.exec(section)?.[1];
    expect(block).toBeDefined();
    const { config } = expectOk(parseConfig(block!));
    expect(config).toEqual(DEFAULT_CONFIG);
    // The contract spells out every key: read as plain YAML, without any default filled in, it is the same.
    expect(parse(block!)).toEqual(DEFAULT_CONFIG);
  });

  it("ConfigSchema itself fills defaults and runs the cross-field checks", () => {
    expect(ConfigSchema.parse({})).toEqual(DEFAULT_CONFIG);
    const result = ConfigSchema.safeParse({ stuckThreshold: 7, maxParallel: 0 });
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((issue) => issue.path.join("."))).toEqual([
      "maxParallel",
      "stuckStopThreshold",
    ]);
  });

  it("has the documented values", () => {
    expect(DEFAULT_CONFIG.maxParallel).toBe(2);
    expect(DEFAULT_CONFIG.labels.ready).toBe("autopilot:ready");
    expect(DEFAULT_CONFIG.agents.primary).toEqual({
      preset: "claude-code",
      model: null,
      args: [],
      env: [],
      command: null,
    });
    expect(DEFAULT_CONFIG.qualityCommands).toBe("auto");
    expect(DEFAULT_CONFIG.merge.method).toBe("squash");
    expect(AGENT_PRESETS).toEqual(["claude-code", "codex", "aider", "opencode", "gemini", "custom"]);
  });

  it("DEFAULT_CONFIG is frozen, and every parse returns a fresh object", () => {
    expect(Object.isFrozen(DEFAULT_CONFIG.merge.requiredChecks)).toBe(true);
    expect(() => {
      (DEFAULT_CONFIG as { maxParallel: number }).maxParallel = 5;
    }).toThrow();
    const first = expectOk(parseConfig(null)).config;
    first.merge.requiredChecks.push("ci");
    first.labels.ready = "changed";
    expect(expectOk(parseConfig(null)).config).toEqual(DEFAULT_CONFIG);
  });
});

describe("a full valid file", () => {
  const full = `
labels:
  ready: go
  inProgress: doing
  review: reviewing
  blocked: stuck-on-something
  needsHuman: help
  timeout: too-slow
  failed: broken
  critical: P0
  quickWin: easy
  exclude: hands-off
maxParallel: 5
maxIterations: 40
timeoutMinutes: 120
iterationTimeoutMinutes: 30
stuckThreshold: 4
stuckStopThreshold: 8
maxIgnoredCompletionCycles: 3
errorStrategy: skip
maxRetries: 1
retryBaseMs: 1000
retryMaxMs: 10000
consecutiveErrorThreshold: 5
agents:
  primary:
    preset: codex
    model: gpt-5-codex
    args: ["--full-auto"]
    env: [OPENAI_API_KEY]
  fallbacks:
    - preset: custom
      command: my-agent --prompt {prompt_file}
      env: [MY_KEY]
    - { preset: gemini }
rateLimit: { retries: 2, baseMs: 1000, factor: 2, maxWaitMs: 60000 }
qualityCommands: [npm run lint, npm test]
humanGate:
  enabled: false
  patterns: ['kubectl\\s+apply']
  paths: ["infra/**"]
merge:
  auto: false
  method: rebase
  requiredChecks: [ci, e2e]
  deleteBranch: false
  checksTimeoutMinutes: 45
  maxFeedbackRounds: 0
budgets:
  task: { tokens: 2000000, usd: 4.5 }
  session: { tokens: 20000000, usd: 100 }
scoring: { unblocks: 5, critical: 100, quickWin: 10, nearCompleteParent: 0, retryPenalty: 25 }
branchPrefix: bot/
workerWorkflow: worker.yaml
dryRun: true
`;

  it("parses every key", () => {
    const { config, warnings } = expectOk(parseConfig(full));
    expect(warnings).toEqual([]);
    expect(config.labels).toEqual({
      ready: "go",
      inProgress: "doing",
      review: "reviewing",
      blocked: "stuck-on-something",
      needsHuman: "help",
      timeout: "too-slow",
      failed: "broken",
      critical: "P0",
      quickWin: "easy",
      exclude: "hands-off",
    });
    expect(config.agents).toEqual({
      primary: {
        preset: "codex",
        model: "gpt-5-codex",
        args: ["--full-auto"],
        env: ["OPENAI_API_KEY"],
        command: null,
      },
      fallbacks: [
        {
          preset: "custom",
          model: null,
          args: [],
          env: ["MY_KEY"],
          command: "my-agent --prompt {prompt_file}",
        },
        { preset: "gemini", model: null, args: [], env: [], command: null },
      ],
    });
    expect(config.humanGate).toEqual({ enabled: false, patterns: ["kubectl\\s+apply"], paths: ["infra/**"] });
    expect(config.merge).toEqual({
      auto: false,
      method: "rebase",
      requiredChecks: ["ci", "e2e"],
      deleteBranch: false,
      checksTimeoutMinutes: 45,
      maxFeedbackRounds: 0,
    });
    expect(config.budgets).toEqual({
      task: { tokens: 2_000_000, usd: 4.5 },
      session: { tokens: 20_000_000, usd: 100 },
    });
    expect(config).toMatchObject({
      maxParallel: 5,
      maxIterations: 40,
      timeoutMinutes: 120,
      iterationTimeoutMinutes: 30,
      stuckThreshold: 4,
      stuckStopThreshold: 8,
      maxIgnoredCompletionCycles: 3,
      errorStrategy: "skip",
      maxRetries: 1,
      retryBaseMs: 1000,
      retryMaxMs: 10000,
      consecutiveErrorThreshold: 5,
      rateLimit: { retries: 2, baseMs: 1000, factor: 2, maxWaitMs: 60000 },
      qualityCommands: ["npm run lint", "npm test"],
      scoring: { unblocks: 5, critical: 100, quickWin: 10, nearCompleteParent: 0, retryPenalty: 25 },
      branchPrefix: "bot/",
      workerWorkflow: "worker.yaml",
      dryRun: true,
    });
  });

  it("a partial file keeps the defaults of everything else, nested keys included", () => {
    const { config } = expectOk(parseConfig("merge:\n  method: merge\nlabels: { ready: go }\n"));
    expect(config.merge).toEqual({ ...DEFAULT_CONFIG.merge, method: "merge" });
    expect(config.labels).toEqual({ ...DEFAULT_CONFIG.labels, ready: "go" });
    expect(config.maxParallel).toBe(DEFAULT_CONFIG.maxParallel);
  });

  it("the example in docs/CONFIGURATION.md is valid and has no warnings", () => {
    const { warnings, config } = expectOk(parseConfig(EXAMPLE_CONFIG));
    expect(warnings).toEqual([]);
    expect(config.agents.fallbacks.map((a) => a.preset)).toEqual(["codex", "custom"]);
    expect(repoFile(DOC_FILE)).toContain(EXAMPLE_CONFIG);
  });
});

/**
 * One row per key (and a few extra values for some): the value written at `path`, where the problem is
 * reported (`at`, when it is inside a list) and a fragment of what the error says is expected.
 */
const BAD_VALUES: { path: string; bad: unknown; expected: string; at?: string }[] = [
  ...(
    [
      "ready",
      "inProgress",
      "review",
      "blocked",
      "needsHuman",
      "timeout",
      "failed",
      "critical",
      "quickWin",
      "exclude",
    ] as const
  ).map((key) => ({
    path: `labels.${key}`,
    bad: "",
    expected: "a label name: not blank, at most 50 characters",
  })),
  { path: "labels.ready", bad: "   ", expected: "a label name" },
  { path: "labels.ready", bad: "x".repeat(51), expected: "at most 50 characters" },
  { path: "labels.ready", bad: 7, expected: "a label name" },
  { path: "labels", bad: "autopilot", expected: "a mapping with the keys ready, inProgress" },
  { path: "maxParallel", bad: 0, expected: "an integer from 1 to 20" },
  { path: "maxParallel", bad: 21, expected: "an integer from 1 to 20" },
  { path: "maxParallel", bad: 2.5, expected: "an integer from 1 to 20" },
  { path: "maxParallel", bad: "two", expected: "an integer from 1 to 20" },
  { path: "maxIterations", bad: 0, expected: "an integer from 1 to 500" },
  { path: "timeoutMinutes", bad: "1h", expected: "an integer from 1 to 4320" },
  { path: "iterationTimeoutMinutes", bad: 0, expected: "an integer from 1 to 1440" },
  { path: "stuckThreshold", bad: 0, expected: "an integer from 1 to 100" },
  { path: "stuckStopThreshold", bad: 1, expected: "an integer from 2 to 200" },
  { path: "maxIgnoredCompletionCycles", bad: 0, expected: "an integer from 1 to 20" },
  { path: "errorStrategy", bad: "retyr", expected: 'one of "retry", "skip", "abort"' },
  { path: "maxRetries", bad: -1, expected: "an integer from 0 to 20" },
  { path: "retryBaseMs", bad: 1.5, expected: "an integer from 0 to 86400000" },
  { path: "retryMaxMs", bad: -5, expected: "an integer from 0 to 604800000" },
  { path: "consecutiveErrorThreshold", bad: 0, expected: "an integer from 1 to 100" },
  { path: "agents", bad: ["codex"], expected: "a mapping with the keys primary, fallbacks" },
  {
    path: "agents.primary",
    bad: "codex",
    expected: "a mapping with the keys preset, model, args, env, command",
  },
  {
    path: "agents.primary.preset",
    bad: "claude",
    expected: 'one of "claude-code", "codex", "aider", "opencode", "gemini", "custom"',
  },
  { path: "agents.primary.model", bad: "", expected: "a model name (not blank) or null" },
  { path: "agents.primary.args", bad: "--yes", expected: "a list; each a string" },
  { path: "agents.primary.args", bad: [1], at: "agents.primary.args[0]", expected: "a string" },
  {
    path: "agents.primary.env",
    bad: ["1BAD"],
    at: "agents.primary.env[0]",
    expected: "an environment variable name (letters, digits and _, not starting with a digit)",
  },
  {
    path: "agents.primary.env",
    bad: "ANTHROPIC_API_KEY",
    expected: "a list; each an environment variable name",
  },
  {
    path: "agents.primary.env",
    bad: ["GITHUB_TOKEN"],
    at: "agents.primary.env[0]",
    expected: "the GitHub token is never passed to the agent",
  },
  { path: "agents.primary.command", bad: 5, expected: "a shell command containing {prompt_file} or null" },
  { path: "agents.fallbacks", bad: "codex", expected: "a list (at most 5) of agents" },
  { path: "agents.fallbacks", bad: Array(6).fill({}), expected: "a list (at most 5) of agents" },
  {
    path: "agents.fallbacks",
    bad: [{ preset: "x" }],
    at: "agents.fallbacks[0].preset",
    expected: 'one of "claude-code"',
  },
  { path: "rateLimit", bad: 3, expected: "a mapping with the keys retries, baseMs, factor, maxWaitMs" },
  { path: "rateLimit.retries", bad: 21, expected: "an integer from 0 to 20" },
  { path: "rateLimit.baseMs", bad: -1, expected: "an integer from 0 to 3600000" },
  { path: "rateLimit.factor", bad: 0.5, expected: "a number from 1 to 10" },
  { path: "rateLimit.maxWaitMs", bad: "5m", expected: "an integer from 0 to 86400000" },
  { path: "rateLimit.usageLimitWaitMs", bad: 1000, expected: "an integer from 60000 to 604800000" },
  { path: "qualityCommands", bad: [], expected: '"auto" or a non-empty list of shell commands' },
  { path: "qualityCommands", bad: "npm test", expected: '"auto" or a non-empty list of shell commands' },
  { path: "qualityCommands", bad: true, expected: '"auto" or a non-empty list of shell commands' },
  {
    path: "qualityCommands",
    bad: ["npm test", " "],
    at: "qualityCommands[1]",
    expected: "a shell command (not blank)",
  },
  { path: "humanGate", bad: false, expected: "a mapping with the keys enabled, patterns, paths" },
  { path: "humanGate.enabled", bad: "yes", expected: "true or false" },
  {
    path: "humanGate.patterns",
    bad: ["ok", "(unclosed"],
    at: "humanGate.patterns[1]",
    expected: "a regular expression the linear-time (RE2) engine accepts: missing closing ): `(unclosed`",
  },
  {
    path: "humanGate.patterns",
    bad: ["(?<!no)deploy"],
    at: "humanGate.patterns[0]",
    expected:
      "a regular expression the linear-time (RE2) engine accepts: lookahead and lookbehind (`(?=`, `(?!`, " +
      "`(?<=`, `(?<!`) need a backtracking engine; write match the neighbouring text itself, or use `\\b` for a word boundary",
  },
  {
    path: "humanGate.patterns",
    bad: ["(a)\\1"],
    at: "humanGate.patterns[0]",
    expected: "a regular expression the linear-time (RE2) engine accepts: backreferences",
  },
  { path: "humanGate.patterns", bad: "rm -rf", expected: "a list; each a regular expression in RE2 syntax" },
  { path: "humanGate.paths", bad: [""], at: "humanGate.paths[0]", expected: "a glob pattern" },
  { path: "merge", bad: "squash", expected: "a mapping with the keys auto, method, requiredChecks" },
  { path: "merge.auto", bad: "true", expected: "true or false" },
  { path: "merge.method", bad: "sqash", expected: 'one of "merge", "squash", "rebase"' },
  { path: "merge.requiredChecks", bad: "ci", expected: "a list; each a check name (not blank)" },
  { path: "merge.deleteBranch", bad: 1, expected: "true or false" },
  { path: "merge.checksTimeoutMinutes", bad: 0, expected: "an integer from 1 to 1440" },
  { path: "merge.maxFeedbackRounds", bad: 21, expected: "an integer from 0 to 20" },
  { path: "budgets", bad: 5, expected: "a mapping with the keys task, session" },
  { path: "budgets.task", bad: 5, expected: "a mapping with the keys tokens, usd" },
  { path: "budgets.task.tokens", bad: 0, expected: "an integer ≥ 1 or null" },
  { path: "budgets.task.usd", bad: -1, expected: "a number > 0 or null" },
  { path: "budgets.session", bad: [], expected: "a mapping with the keys tokens, usd" },
  { path: "budgets.session.tokens", bad: 1.5, expected: "an integer ≥ 1 or null" },
  { path: "budgets.session.usd", bad: "10$", expected: "a number > 0 or null" },
  {
    path: "prices",
    bad: { "gpt-5": { input: 1, output: 2 } },
    expected: "a list (at most 100) of { model, input, output }",
  },
  { path: "scoring", bad: "default", expected: "a mapping with the keys unblocks, critical" },
  { path: "scoring.unblocks", bad: -1, expected: "a number from 0 to 1000" },
  { path: "scoring.critical", bad: "high", expected: "a number from 0 to 1000" },
  { path: "scoring.quickWin", bad: 1001, expected: "a number from 0 to 1000" },
  { path: "scoring.nearCompleteParent", bad: null, expected: "a number from 0 to 1000" },
  { path: "scoring.retryPenalty", bad: -15, expected: "a number from 0 to 1000" },
  { path: "branchPrefix", bad: "my branch/", expected: "a git branch-name prefix" },
  { path: "branchPrefix", bad: "../up", expected: "a git branch-name prefix" },
  { path: "branchPrefix", bad: "-x/", expected: "a git branch-name prefix" },
  { path: "branchPrefix", bad: "a..b/", expected: "a git branch-name prefix" },
  { path: "branchPrefix", bad: "", expected: "a git branch-name prefix" },
  { path: "workerWorkflow", bad: "worker", expected: "a workflow file name such as `autopilot-worker.yml`" },
  { path: "workerWorkflow", bad: ".github/workflows/w.yml", expected: "a workflow file name" },
  { path: "dryRun", bad: "no", expected: "true or false" },
  { path: "isolation", bad: "off", expected: '"user"' },
];

describe("the error for every key", () => {
  it("the table has a row for every key of the schema", () => {
    const tested = new Set(BAD_VALUES.map((row) => row.path));
    const keys = configReference().map((row) => row.path);
    expect(keys.filter((key) => !tested.has(key))).toEqual([]);
  });

  it.each(BAD_VALUES)("$path: $bad", ({ path, bad, expected, at }) => {
    const text = stringify(nested(path, bad));
    const error = expectError(parseConfig(text));
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message.startsWith("Invalid config in .github/autopilot.yml:\n")).toBe(true);
    const problem = problemAt(error, at ?? path);
    expect(problem.expected).toContain(expected);
    expect(problem.line).toBeGreaterThanOrEqual(1);
    // The one-line message names the key, what was found and what is expected.
    expect(problem.message).toContain(`\`${at ?? path}\``);
    expect(problem.message).toContain(`found ${problem.found}`);
    expect(problem.message).toContain(`expected ${problem.expected}`);
    expect(error.message).toContain(problem.message);
    expect(problem.found).not.toBe("");
  });

  it("says what was found: value and type, truncated", () => {
    const cases: [unknown, string][] = [
      ["sqash", '"sqash" (string)'],
      [0, "0 (number)"],
      [true, "true (boolean)"],
      [null, "null"],
      [["a"], '["a"] (list)'],
      [{ a: 1 }, '{"a":1} (mapping)'],
      ["", '"" (empty string)'],
    ];
    for (const [value, found] of cases) {
      const error = expectError(parseConfig(stringify({ merge: { method: value } })));
      expect(problemAt(error, "merge.method").found).toBe(found);
    }
    const long = "x".repeat(200);
    const found = problemAt(
      expectError(parseConfig(stringify({ merge: { method: long } }))),
      "merge.method",
    ).found;
    expect(found.length).toBeLessThan(60);
    expect(found).toContain("…");
  });
});

describe("unknown keys", () => {
  it.each([
    ["maxParalel: 3", "maxParalel", "maxParallel"],
    ["max_parallel: 3", "max_parallel", "maxParallel"],
    ["MaxParallel: 3", "MaxParallel", "maxParallel"],
    ["dry-run: true", "dry-run", "dryRun"],
    ["qualityCommand: auto", "qualityCommand", "qualityCommands"],
    ["timeout: 30", "timeout", "timeoutMinutes"],
    ["merge:\n  methd: squash", "merge.methd", "merge.method"],
    ["method: squash", "method", "merge.method"],
    ["labels:\n  in_progress: doing", "labels.in_progress", "labels.inProgress"],
    ["agents:\n  primary:\n    modle: x", "agents.primary.modle", "agents.primary.model"],
    ["agents:\n  fallback: []", "agents.fallback", "agents.fallbacks"],
    [
      "agents:\n  fallbacks:\n    - presett: codex",
      "agents.fallbacks[0].presett",
      "agents.fallbacks[0].preset",
    ],
    ["budgets:\n  task:\n    dollars: 5", "budgets.task.dollars", null],
    ["rateLimit:\n  maxRetries: 2", "rateLimit.maxRetries", "maxRetries"],
  ])("%j → problem at %s, suggests %s", (text, path, suggestion) => {
    const error = expectError(parseConfig(`${text}\n`));
    expect(error.problems).toHaveLength(1);
    const problem = problemAt(error, path);
    expect(problem.found).toContain("unknown key");
    expect(problem.line).toBeGreaterThanOrEqual(1);
    if (suggestion) expect(problem.message).toContain(`did you mean \`${suggestion}\`?`);
    else expect(problem.message).not.toContain("did you mean");
  });

  it("without a close match, lists the keys of a small mapping", () => {
    const problem = problemAt(expectError(parseConfig("merge:\n  zzz: 1\n")), "merge.zzz");
    expect(problem.expected).toBe(
      "one of the keys auto, method, requiredChecks, deleteBranch, checksTimeoutMinutes, maxFeedbackRounds",
    );
    const top = problemAt(expectError(parseConfig("zzzzzz: 1\n")), "zzzzzz");
    expect(top.expected).toBe("a key listed in docs/CONFIGURATION.md");
  });

  it("__proto__ is an unknown key and pollutes nothing", () => {
    const error = expectError(parseConfig("__proto__:\n  polluted: true\n"));
    expect(error.problems.map((p) => p.path)).toEqual(["__proto__"]);
    expect(({} as { polluted?: boolean }).polluted).toBeUndefined();
  });
});

describe("several problems at once", () => {
  const text = `maxParallel: 0
merge:
  method: sqash
  deleteBranch: "yes"
agents:
  primary: { preset: custom }
labels: { review: Autopilot:Ready }
humanGate:
  patterns: ["[a-"]
maxParalel: 2
stuckThreshold: 9
`;

  it("one error lists every problem, in file order, each on its own line", () => {
    const error = expectError(parseConfig(text));
    expect(error.problems.map((p) => [p.path, p.line])).toEqual([
      ["maxParallel", 1],
      ["merge.method", 3],
      ["merge.deleteBranch", 4],
      ["agents.primary.command", 6],
      ["labels.review", 7],
      ["humanGate.patterns[0]", 9],
      ["maxParalel", 10],
      ["stuckStopThreshold", undefined],
    ]);
    const lines = error.message.split("\n");
    expect(lines[0]).toBe("Invalid config in .github/autopilot.yml:");
    expect(lines.slice(1)).toEqual(error.problems.map((p) => `- ${p.message}`));
    expect(problemAt(error, "stuckStopThreshold").message).toBe(
      "`stuckStopThreshold`: found 6 (number), the default; expected an integer greater than stuckThreshold (9)",
    );
    expect(problemAt(error, "merge.method").message).toBe(
      '`merge.method` (line 3): found "sqash" (string); expected one of "merge", "squash", "rebase"',
    );
    expect(error.cause).toBeInstanceOf(ZodError);
    expect((error.cause as ZodError).issues.length).toBeGreaterThanOrEqual(error.problems.length);
  });

  it("uses the path it was given in the header", () => {
    const error = expectError(parseConfig("maxParallel: 0\n", "config/autopilot.yaml"));
    expect(error.message.split("\n")[0]).toBe("Invalid config in config/autopilot.yaml:");
    expect(error.source).toBe("config/autopilot.yaml");
  });
});

describe("cross-field checks", () => {
  it.each([
    [
      "custom agent without a command",
      "agents:\n  primary: { preset: custom }",
      "agents.primary.command",
      "{prompt_file}",
    ],
    [
      "custom command without {prompt_file}",
      "agents:\n  primary: { preset: custom, command: my-agent --go }",
      "agents.primary.command",
      'a shell command containing {prompt_file} (required by preset "custom")',
    ],
    [
      "custom fallback without a command",
      "agents:\n  fallbacks: [{ preset: custom }]",
      "agents.fallbacks[0].command",
      "{prompt_file}",
    ],
    [
      "stuckStopThreshold = stuckThreshold",
      "stuckThreshold: 4\nstuckStopThreshold: 4",
      "stuckStopThreshold",
      "greater than stuckThreshold (4)",
    ],
    [
      "retryMaxMs < retryBaseMs",
      "retryBaseMs: 5000\nretryMaxMs: 4000",
      "retryMaxMs",
      "an integer ≥ retryBaseMs (5000)",
    ],
    [
      "rateLimit.maxWaitMs < rateLimit.baseMs",
      "rateLimit: { baseMs: 10000, maxWaitMs: 5000 }",
      "rateLimit.maxWaitMs",
      "an integer ≥ rateLimit.baseMs (10000)",
    ],
    [
      "duplicate labels",
      "labels: { blocked: autopilot:failed }",
      "labels.failed",
      "different from labels.blocked",
    ],
    [
      "duplicate labels, other case",
      "labels: { critical: Quick-Win }",
      "labels.quickWin",
      "different from labels.critical",
    ],
    [
      "the GitHub token in env",
      "agents:\n  primary: { env: [gh_token] }",
      "agents.primary.env[0]",
      "never passed",
    ],
  ])("%s", (_name, text, path, expected) => {
    const error = expectError(parseConfig(`${text}\n`));
    expect(error.problems).toHaveLength(1);
    expect(problemAt(error, path).expected).toContain(expected);
  });

  it("accepts a custom agent whose command contains {prompt_file} (stdin via redirection)", () => {
    const { config } = expectOk(
      parseConfig('agents:\n  primary: { preset: custom, command: "tool < {prompt_file}" }\n'),
    );
    expect(config.agents.primary.command).toBe("tool < {prompt_file}");
  });

  it("does not pile a cross-field problem on a key that is already wrong", () => {
    const error = expectError(
      parseConfig("stuckThreshold: many\nretryBaseMs: -1\nlabels: { ready: '', review: '' }\n"),
    );
    expect(error.problems.map((p) => p.path)).toEqual([
      "stuckThreshold",
      "retryBaseMs",
      "labels.ready",
      "labels.review",
    ]);
  });
});

describe("warnings", () => {
  it.each([
    [
      'agents:\n  primary: { preset: codex, command: "x {prompt_file}" }',
      "agents.primary.command is ignored",
    ],
    [
      "timeoutMinutes: 30\niterationTimeoutMinutes: 45",
      "iterationTimeoutMinutes (45) is longer than timeoutMinutes (30)",
    ],
    [
      "timeoutMinutes: 600\niterationTimeoutMinutes: 20",
      "GitHub-hosted runners stop a job after 360 minutes",
    ],
    [
      "budgets: { task: { usd: 20 }, session: { usd: 10 } }",
      "budgets.task.usd (20) is larger than budgets.session.usd (10)",
    ],
  ])("%j", (text, warning) => {
    const { warnings } = expectOk(parseConfig(`${text}\n`));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(warning);
  });
});

describe("YAML problems", () => {
  it("a syntax error is one problem with line and column", () => {
    const error = expectError(parseConfig("maxParallel: 2\nmerge:\n  requiredChecks: [ci, e2e\n"));
    expect(error.problems).toHaveLength(1);
    const [problem] = error.problems;
    expect(problem!.path).toBe("");
    expect(problem!.line).toBe(4);
    expect(problem!.column).toBe(1);
    expect(problem!.message).toMatch(/^YAML syntax error at line 4, column 1: /);
    expect(error.message.split("\n")[0]).toBe("Invalid config in .github/autopilot.yml:");
  });

  it.each([
    ["a tab used as indentation", "merge:\n\tmethod: squash\n", 2],
    ["a duplicate key", "maxParallel: 2\nmaxParallel: 3\n", 2],
    ["an unclosed quote", 'branchPrefix: "autopilot/\n', 2], // reported where the file ends
  ])("%s", (_name, text, line) => {
    const error = expectError(parseConfig(text));
    expect(error.problems[0]!.line).toBe(line);
    expect(error.problems[0]!.expected).toMatch(/^valid YAML/);
  });

  it.each([
    ["a list", "- maxParallel: 2\n", "(list)"],
    ["a scalar", "hello\n", '"hello" (string)'],
  ])("a top level that is %s is one problem", (_name, text, found) => {
    const error = expectError(parseConfig(text));
    expect(error.problems).toEqual([
      {
        path: "",
        found: expect.stringContaining(found),
        expected: "a mapping of settings (`key: value` lines)",
        message: expect.stringContaining("(top level): found"),
      },
    ]);
  });
});

describe("applyConfigOverrides", () => {
  const base = expectOk(
    parseConfig("merge:\n  method: rebase\n  requiredChecks: [ci]\nmaxParallel: 4\n"),
  ).config;

  it.each([
    ["undefined", undefined],
    ["null", null],
    ["empty string", ""],
    ["blank string", "  "],
  ])("%s leaves the config unchanged", (_name, overrides) => {
    expect(expectOk(applyConfigOverrides(base, overrides)).config).toEqual(base);
  });

  it("deep-merges a JSON string: mappings merge key by key, lists and values replace", () => {
    const { config } = expectOk(
      applyConfigOverrides(
        base,
        '{"maxParallel": 1, "merge": {"auto": false, "requiredChecks": ["e2e"]}, "dryRun": true}',
      ),
    );
    expect(config.maxParallel).toBe(1);
    expect(config.dryRun).toBe(true);
    expect(config.merge).toEqual({ ...base.merge, auto: false, requiredChecks: ["e2e"] });
    expect(config.merge.method).toBe("rebase");
    expect(base.merge.auto).toBe(true); // the base is not changed
  });

  it("takes an object too, and null for a nullable key", () => {
    const withModel = expectOk(applyConfigOverrides(base, { agents: { primary: { model: "opus" } } })).config;
    expect(withModel.agents.primary).toEqual({ ...base.agents.primary, model: "opus" });
    const cleared = expectOk(
      applyConfigOverrides(withModel, { agents: { primary: { model: null } } }),
    ).config;
    expect(cleared.agents.primary.model).toBeNull();
  });

  it("validates the merged result, with every problem and a suggestion for typos", () => {
    const error = expectError(
      applyConfigOverrides(base, { maxParallel: 50, merge: { methd: "squash" }, stuckThreshold: 10 }),
    );
    expect(error.message.split("\n")[0]).toBe("Invalid config in config overrides:");
    expect(error.problems.map((p) => p.path)).toEqual(["maxParallel", "merge.methd", "stuckStopThreshold"]);
    expect(problemAt(error, "merge.methd").message).toContain("did you mean `merge.method`?");
    expect(error.problems.every((p) => p.line === undefined)).toBe(true);
  });

  it("names its source", () => {
    const error = expectError(applyConfigOverrides(base, { dryRun: "yes" }, "workflow input `config`"));
    expect(error.message.split("\n")[0]).toBe("Invalid config in workflow input `config`:");
  });

  it.each([
    ["invalid JSON", "{maxParallel: 1}", "not valid JSON"],
    ["a JSON list", "[1]", "(top level): found [1] (list)"],
    ["a number", 5, "(top level): found 5 (number)"],
  ])("rejects %s", (_name, overrides, message) => {
    const error = expectError(applyConfigOverrides(base, overrides));
    expect(error.problems).toHaveLength(1);
    expect(error.problems[0]!.message).toContain(message);
  });

  it("a __proto__ key is reported, not merged into the prototype", () => {
    const error = expectError(applyConfigOverrides(base, '{"__proto__": {"polluted": true}}'));
    expect(error.problems.map((p) => p.path)).toEqual(["__proto__"]);
    expect(({} as { polluted?: boolean }).polluted).toBeUndefined();
  });
});

describe("renderConfigError", () => {
  it("is a markdown table of key, line, found and expected", () => {
    const error = expectError(parseConfig("maxParalel: 3\nmerge:\n  method: sqash\n"));
    const markdown = renderConfigError(error);
    expect(markdown).toContain("### ⚠️ Invalid config in `.github/autopilot.yml`");
    expect(markdown).toContain("Autopilot found 2 problems:");
    expect(markdown).toContain("| Key | Line | Found | Expected |");
    expect(markdown).toContain("`maxParalel`");
    expect(markdown).toContain("`merge.method`");
    expect(markdown).toContain("did you mean `maxParallel`?");
    expect(markdown).toContain("docs/CONFIGURATION.md");
  });

  it("cannot be broken or abused by what the file contains", () => {
    const error = expectError(
      parseConfig(
        stringify({ merge: { method: "a | b <!-- autopilot:state v1 @octocat `x`" }, "we|ird": 1 }),
      ),
    );
    const markdown = renderConfigError(error);
    expect(markdown).not.toContain("<!--");
    expect(markdown).not.toContain("@octocat");
    expect(markdown).not.toMatch(/a \| b/);
    // Every table row still has exactly its cells.
    const rows = markdown.split("\n").filter((line) => line.startsWith("|"));
    const cells = (row: string) => row.split(/(?<!\\)\|/).length;
    expect(new Set(rows.map(cells)).size).toBe(1);
  });

  it("leaves the Line column out when no line is known", () => {
    const error = expectError(applyConfigOverrides(DEFAULT_CONFIG, { maxParallel: 0 }));
    const markdown = renderConfigError(error);
    expect(markdown).not.toContain("Line");
    expect(markdown).toContain("an integer from 1 to 20");
  });
});

describe("JSON Schema and reference", () => {
  it("the committed schema/autopilot.schema.json and docs/CONFIGURATION.md are fresh (npm run schema)", () => {
    for (const [path, content] of Object.entries(generatedFiles())) {
      expect(repoFile(path), `${path} is stale: run npm run schema`).toBe(content);
    }
    expect(Object.keys(generatedFiles())).toEqual([SCHEMA_FILE, DOC_FILE]);
  });

  it("every key has a description and a default, and unknown keys are not allowed", () => {
    const missing: string[] = [];
    const walk = (node: Record<string, unknown>, path: string) => {
      expect(node.additionalProperties, `${path || "root"} allows unknown keys`).toBe(false);
      for (const [key, child] of Object.entries(node.properties as Record<string, Record<string, unknown>>)) {
        const childPath = path ? `${path}.${key}` : key;
        if (typeof child.description !== "string" || child.description.length < 10)
          missing.push(`${childPath}: description`);
        if (!("default" in child)) missing.push(`${childPath}: default`);
        if (child.type === "object") walk(child, childPath);
      }
    };
    const schema = configJsonSchema();
    walk(schema, "");
    expect(missing).toEqual([]);
    expect(JSON.stringify(schema)).not.toContain("x-expected");
  });

  it("the reference lists every key with its type and default", () => {
    const rows = configReference();
    expect(rows.find((row) => row.path === "merge.method")).toEqual({
      path: "merge.method",
      type: 'one of "merge", "squash", "rebase"',
      default: '"squash"',
      description: "How pull requests are merged.",
    });
    expect(rows.find((row) => row.path === "maxParallel")?.type).toBe("an integer from 1 to 20");
    const doc = repoFile(DOC_FILE);
    for (const row of rows) expect(doc).toContain(`| \`${row.path}\` |`);
  });
});
