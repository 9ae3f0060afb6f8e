/**
 * The agent presets' registry is the one list: these checks fail when a record and what is derived from it (or
 * what cannot be derived, a document) drift apart.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { AGENT_CLIS, agentCliBin } from "../../../scripts/install-agent-clis.js";
import { parseConfig } from "../../../src/core/config/index.js";
import { parseAllowList } from "../../../src/core/agent/network-allow.js";
import { ALL_MODEL_KEYS, DEFAULT_PRESET, PRESET_NAMES, PRESETS } from "../../../src/core/presets/index.js";
import { DEFAULT_PRICES, SELF_PRICING_PRESETS } from "../../../src/core/agent/pricing.js";

const root = join(import.meta.dirname, "..", "..", "..");
const invocation = {
  prompt: "p",
  promptFile: "/tmp/p",
  workdir: "/w",
  home: "/h",
  command: "x {prompt_file}",
};

describe("the agent presets' registry", () => {
  it("names each preset once, and the configuration takes exactly those names with the default first", () => {
    expect(new Set(PRESET_NAMES).size).toBe(PRESETS.length);
    expect(PRESET_NAMES[0]).toBe(DEFAULT_PRESET);
    for (const name of PRESET_NAMES) {
      const result = parseConfig(
        `agents:\n  primary:\n    preset: ${name}\n    command: "x {prompt_file}"\n`,
      );
      expect(result.ok, name).toBe(true);
    }
    expect(parseConfig("agents:\n  primary:\n    preset: copilot\n").ok).toBe(false);
    const defaults = parseConfig("");
    expect(defaults.ok && defaults.config.agents.primary.preset).toBe(DEFAULT_PRESET);
  });

  it("starts the command each record says its install provides", () => {
    for (const preset of PRESETS) {
      if (!preset.install) continue;
      expect(preset.buildInvocation(invocation).command, preset.name).toBe(preset.install.command);
      expect(preset.install.version, preset.name).toMatch(/^\d+\.\d+\.\d+$/);
    }
    expect(PRESETS.filter((preset) => !preset.install).map((preset) => preset.name)).toEqual(["custom"]);
  });

  it("gives every preset but custom a key to set, and fills an alias only from the preset's own keys", () => {
    for (const preset of PRESETS) {
      if (preset.install) expect(preset.keyEnv.length, preset.name).toBeGreaterThan(0);
      for (const [name, source] of Object.entries(preset.keyAliases ?? {})) {
        expect(preset.keyEnv, preset.name).toContain(name);
        expect(preset.keyEnv, preset.name).toContain(source);
      }
    }
    expect(ALL_MODEL_KEYS).toEqual([...new Set(PRESETS.flatMap((preset) => preset.keyEnv))]);
  });

  it("lists model API hosts the egress allow-list accepts as they are", () => {
    for (const preset of PRESETS) {
      const parsed = parseAllowList(preset.apiHosts);
      expect(parsed.errors, preset.name).toEqual([]);
    }
  });

  it("prices a model in one record only, and derives the price table and the self-pricing presets", () => {
    const seen = new Map<string, string>();
    for (const preset of PRESETS) {
      for (const model of Object.keys(preset.prices)) {
        expect(seen.get(model), `${model} in ${preset.name}`).toBeUndefined();
        seen.set(model, preset.name);
      }
    }
    expect(Object.keys(DEFAULT_PRICES).sort()).toEqual([...seen.keys()].sort());
    expect([...SELF_PRICING_PRESETS].sort()).toEqual(["aider", "claude-code", "custom", "opencode"]);
  });

  it("is the price table docs/WORKER.md shows, model for model", () => {
    const worker = readFileSync(join(root, "docs", "WORKER.md"), "utf8");
    const start = worker.indexOf("\n| model | input | output |");
    expect(start).toBeGreaterThan(0);
    const shown: Record<string, { input: number; output: number }> = {};
    // A row is `a, b | 1 | 2` (same price) or `a / b | 1 / 2 | 3 / 4` (one price per group).
    for (const row of worker.slice(start, worker.indexOf("\n\n", start)).split("\n").slice(3)) {
      const [models, inputs, outputs] = row
        .split("|")
        .slice(1, 4)
        .map((cell) => cell.trim().split(" / "));
      models!.forEach((group, i) => {
        for (const model of group.split(", "))
          shown[model] = { input: Number(inputs![i]), output: Number(outputs![i]) };
      });
    }
    expect(shown).toEqual(DEFAULT_PRICES);
  });

  it("installs for the real-CLI tests every npm CLI at its record's pin", () => {
    const npm = PRESETS.filter((preset) => preset.install?.manager === "npm");
    expect(AGENT_CLIS.map((cli) => [cli.preset, cli.install])).toEqual(
      npm.map((preset) => [preset.name, preset.install]),
    );
    for (const preset of npm) expect(agentCliBin(preset.install!.command)).toContain(`/${preset.name}/`);
  });

  it("is documented: docs/WORKER.md's agent table has one row per preset, docs/INSTALL.md names each", () => {
    const worker = readFileSync(join(root, "docs", "WORKER.md"), "utf8");
    const start = worker.indexOf("\n| preset | command line | reads |");
    expect(start).toBeGreaterThan(0);
    const table = worker.slice(start, worker.indexOf("\n\n", start));
    const rows = [...table.matchAll(/^\| `([a-z0-9-]+)` \| `/gm)].map((match) => match[1]);
    expect(rows).toEqual(PRESET_NAMES);
    expect(rows).toEqual(PRESET_NAMES);
    const install = readFileSync(join(root, "docs", "INSTALL.md"), "utf8");
    const agentOption = install.split("\n").find((line) => line.startsWith("| `--agent NAME` |"));
    const named = [...(agentOption ?? "").matchAll(/`([a-z0-9-]+)`/g)].map((match) => match[1]);
    expect(named.sort()).toEqual([...PRESET_NAMES].sort());
  });
});
