import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { ZodError } from "zod";
import {
  type AutopilotConfig,
  type ConfigProblem,
  ConfigError,
  type ConfigResult,
  configReference,
  parseConfig,
} from "../../src/core/config/index.js";

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
  { path: "completion", bad: "done", expected: 'one of "promise", "objective"' },
  { path: "iterationDelayMs", bad: -1, expected: "an integer from 0 to 3600000" },
  { path: "recoverPrimary", bad: "yes", expected: "true or false" },
  { path: "errorStrategy", bad: "retyr", expected: 'one of "retry", "skip", "abort"' },
  { path: "mode", bad: "manual", expected: 'one of "auto", "semi-auto"' },
  { path: "session", bad: "manual", expected: "a mapping with the key autoStart" },
  {
    path: "alerts",
    bad: "alice",
    expected: "a mapping with the keys notify, webhook, reviewReminderHours, approvalTimeoutHours",
  },
  { path: "alerts.notify", bad: ["@alice"], expected: "without `@`", at: "alerts.notify[0]" },
  {
    path: "alerts.webhook",
    bad: "https://hooks.example/x",
    expected: "a mapping with the keys urlEnv, secretEnv, events",
  },
  { path: "alerts.reviewReminderHours", bad: 0, expected: "a number > 0 and ≤ 720 or null" },
  { path: "alerts.approvalTimeoutHours", bad: -1, expected: "a number > 0 and ≤ 2160 or null" },
  { path: "session.autoStart", bad: "no", expected: "true or false" },
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
  {
    path: "humanGate",
    bad: false,
    expected: "a mapping with the keys enabled, patterns, paths, supplyChain",
  },
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
  {
    path: "humanGate.supplyChain",
    bad: "off",
    expected: "a mapping with the keys lifecycleScripts, registrySettings, lockfileSources, registries",
  },
  { path: "humanGate.supplyChain.lifecycleScripts", bad: "no", expected: "true or false" },
  { path: "humanGate.supplyChain.registrySettings", bad: 0, expected: "true or false" },
  { path: "humanGate.supplyChain.lockfileSources", bad: "off", expected: "true or false" },
  {
    path: "humanGate.supplyChain.registries",
    bad: ["https://registry.npmjs.org/"],
    at: "humanGate.supplyChain.registries[0]",
    expected: "a host name such as `registry.npmjs.org`",
  },
  { path: "merge", bad: "squash", expected: "a mapping with the keys auto, method, requiredChecks" },
  { path: "merge.auto", bad: "true", expected: "true or false" },
  { path: "merge.method", bad: "sqash", expected: 'one of "merge", "squash", "rebase"' },
  { path: "merge.requiredChecks", bad: "ci", expected: "a list; each a check name (not blank)" },
  { path: "merge.deleteBranch", bad: 1, expected: "true or false" },
  { path: "cleanup", bad: 3, expected: "a mapping with the key staleBranchDays" },
  { path: "epics", bad: true, expected: "a mapping with the key closeParent" },
  { path: "epics.closeParent", bad: "yes", expected: "true or false" },
  { path: "definitionOfReady", bad: true, expected: "a mapping with the keys minWords, sections" },
  { path: "planGate", bad: true, expected: "a mapping with the keys enabled, label" },
  { path: "planGate.enabled", bad: "yes", expected: "true or false" },
  { path: "planGate.label", bad: "", expected: "a non-empty string of at most 50 characters" },
  {
    path: "bestOf",
    bad: 2,
    expected: "a mapping with the keys candidates, label, onRetry, checksWaitMinutes",
  },
  {
    path: "bestOf.candidates",
    bad: [{ preset: "codex" }],
    expected: "no entries, or 2 to 4 agents, each a mapping with the same keys as `agents.primary`",
  },
  { path: "bestOf.label", bad: "", expected: "a non-empty string of at most 50 characters" },
  { path: "bestOf.onRetry", bad: "yes", expected: "true or false" },
  { path: "bestOf.checksWaitMinutes", bad: 500, expected: "an integer from 0 to 240" },
  {
    path: "workspaces",
    bad: "api",
    expected: "a list of { name, paths, directory, qualityCommands, label }",
  },
  { path: "definitionOfReady.minWords", bad: -1, expected: "an integer from 0 to 10000" },
  {
    path: "definitionOfReady.sections",
    bad: ["Goal", ""],
    at: "definitionOfReady.sections[1]",
    expected: "a non-empty string of at most 100 characters",
  },
  { path: "cleanup.staleBranchDays", bad: 0, expected: "`off` or a number of days greater than 0" },
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
  { path: "quality", bad: "strict", expected: "a mapping" },
  { path: "quality.reruns", bad: 11, expected: "an integer from 0 to 10" },
  { path: "quality.coverage", bad: 80, expected: "a mapping" },
  { path: "quality.coverage.threshold", bad: 120, expected: "a number from 0 to 100" },
  {
    path: "quality.coverage.report",
    bad: "../other/lcov.info",
    expected: "a relative path inside the repository",
  },
  { path: "quality.coverage.report", bad: "/etc/passwd", expected: "a relative path inside the repository" },
  { path: "setup", bad: "npm ci", expected: "a list of shell commands" },
  { path: "setupTimeoutMinutes", bad: 0, expected: "an integer from 1 to 240" },
  { path: "dryRun", bad: "no", expected: "true or false" },
  { path: "commits", bad: "gpg", expected: '"unsigned"' },
  { path: "isolation", bad: "off", expected: '"namespace"' },
  { path: "network", bad: "closed", expected: '"open" or a mapping { allow: [hosts] }' },
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

  it("refuses a USD budget an agent could spend past: a CLI that reports no cost, for a model of no known price", () => {
    const codex = { preset: "codex" };
    const error = expectError(
      parseConfig(
        stringify({ agents: { primary: codex }, budgets: { task: { usd: 2 }, session: { usd: 20 } } }),
      ),
    );
    for (const path of ["budgets.task.usd", "budgets.session.usd"]) {
      const problem = problemAt(error, path);
      expect(problem.message).toContain("a known price for codex (no model set), whose CLI reports no cost");
      expect(problem.expected).toContain("budgets.");
    }
    const unknownModel = {
      primary: { preset: "claude-code" },
      fallbacks: [{ preset: "gemini", model: "my-gemini" }],
    };
    expect(
      problemAt(
        expectError(parseConfig(stringify({ agents: unknownModel, budgets: { task: { usd: 2 } } }))),
        "budgets.task.usd",
      ).message,
    ).toContain("gemini (no price is known for model my-gemini)");
    // A best-of candidate spends the task's budget too.
    const candidates = [{ preset: "claude-code" }, { preset: "codex" }];
    expect(
      problemAt(
        expectError(parseConfig(stringify({ bestOf: { candidates }, budgets: { task: { usd: 2 } } }))),
        "budgets.task.usd",
      ).message,
    ).toContain("codex (no model set)");
    // A priced model, a price of one's own, a CLI that prices itself, or a token budget: accepted.
    expectOk(
      parseConfig(
        stringify({
          agents: { primary: { preset: "codex", model: "gpt-5-codex" } },
          budgets: { task: { usd: 2 } },
        }),
      ),
    );
    expectOk(
      parseConfig(
        stringify({
          agents: unknownModel,
          prices: [{ model: "my-gemini", input: 1, output: 2 }],
          budgets: { task: { usd: 2 } },
        }),
      ),
    );
    expectOk(
      parseConfig(
        stringify({ agents: { primary: { preset: "claude-code" } }, budgets: { task: { usd: 2 } } }),
      ),
    );
    expectOk(parseConfig(stringify({ agents: { primary: codex }, budgets: { task: { tokens: 100000 } } })));
  });

  it("refuses a workspace directory that leaves the repository, and two workspaces of one name or label", () => {
    const ws = (name: string, extra: Record<string, unknown> = {}) => ({
      name,
      paths: [`packages/${name}/`],
      ...extra,
    });
    const error = expectError(
      parseConfig(
        stringify({
          workspaces: [
            ws("api", { directory: "../elsewhere", label: "area" }),
            ws("API", { directory: "/etc" }),
            ws("web", { label: "Area" }),
          ],
        }),
      ),
    );
    expect(problemAt(error, "workspaces[0].directory").expected).toContain("without `..`");
    expect(problemAt(error, "workspaces[1].directory").expected).toContain("without `..`");
    expect(problemAt(error, "workspaces[1].name").expected).toContain("a name no other workspace has");
    expect(problemAt(error, "workspaces[2].label").expected).toContain("a label no other workspace has");
    const ok = expectOk(parseConfig(stringify({ workspaces: [ws("api", { directory: "packages/api" })] })));
    expect(ok.config.workspaces[0]).toEqual({
      name: "api",
      paths: ["packages/api/"],
      directory: "packages/api",
      qualityCommands: [],
      label: null,
    });
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
stuckThreshold: 12
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
      "`stuckStopThreshold`: found 10 (number), the default; expected an integer greater than stuckThreshold (12)",
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
