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
import { BAD_VALUES } from "./config-bad-values.js";

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
