import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { DOC_FILE, EXAMPLE_CONFIG, generatedFiles, SCHEMA_FILE } from "../../scripts/gen-schema.js";
import { PRESET_NAMES } from "../../src/core/presets/index.js";
import {
  type AutopilotConfig,
  applyConfigOverrides,
  type ConfigProblem,
  type ConfigError,
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
    const result = ConfigSchema.safeParse({ stuckThreshold: 12, maxParallel: 0 });
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
    expect(PRESET_NAMES).toEqual(["claude-code", "codex", "aider", "opencode", "gemini", "custom"]);
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
    - { preset: gemini, model: gemini-2.5-flash }
rateLimit: { retries: 2, baseMs: 1000, factor: 2, maxWaitMs: 60000 }
qualityCommands: [npm run lint, npm test]
humanGate:
  enabled: false
  patterns: ['kubectl\\s+apply']
  paths: ["infra/**"]
  supplyChain: { lockfileSources: false, registries: [npm.acme.internal, "pypi.acme.internal:8443"] }
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
        { preset: "gemini", model: "gemini-2.5-flash", args: [], env: [], command: null },
      ],
    });
    expect(config.humanGate).toEqual({
      enabled: false,
      patterns: ["kubectl\\s+apply"],
      paths: ["infra/**"],
      supplyChain: {
        lifecycleScripts: true,
        registrySettings: true,
        lockfileSources: false,
        registries: ["npm.acme.internal", "pypi.acme.internal:8443"],
      },
    });
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

describe("names that must differ", () => {
  it("refuses two labels that are one label on GitHub, and two workspaces with one name or routing label", () => {
    const labels = expectError(parseConfig("labels:\n  ready: Go\n  review: ' go '\n"));
    expect(problemAt(labels, "labels.review").message).toContain("a label name different from labels.ready");
    const workspaces = expectError(
      parseConfig(
        [
          "workspaces:",
          "  - { name: api, paths: ['api/**'], label: area-api }",
          "  - { name: API, paths: ['web/**'], label: area-web }",
          "  - { name: docs, paths: ['docs/**'], label: Area-Api }",
        ].join("\n"),
      ),
    );
    expect(problemAt(workspaces, "workspaces[1].name").message).toContain('found "API"');
    expect(problemAt(workspaces, "workspaces[1].name").message).toContain("a name no other workspace has");
    expect(problemAt(workspaces, "workspaces[2].label").message).toContain("a label no other workspace has");
    expect(workspaces.problems.map((p) => p.path)).toEqual(["workspaces[1].name", "workspaces[2].label"]);
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
