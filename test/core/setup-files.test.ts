import { describe, expect, it } from "vitest";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseConfig } from "../../src/core/config/index.js";
import { getPreset } from "../../src/core/presets/index.js";
import {
  agentInstallLine,
  lineDiff,
  pinWorkflow,
  type FileRefresh,
  planFiles,
  renderConfigFile,
  sourceFromRepositoryField,
} from "../../src/core/setup-files.js";
import { detectSetupCommands } from "../../src/worker/processes/setup-commands.js";

describe("setup files (pure)", () => {
  it("reads where Autopilot is published from package.json's repository field, in every form npm allows", () => {
    expect(sourceFromRepositoryField("github:acme/autopilot")).toBe("acme/autopilot");
    expect(sourceFromRepositoryField("acme/autopilot")).toBe("acme/autopilot");
    expect(sourceFromRepositoryField({ type: "git", url: "git+https://github.com/acme/autopilot.git" })).toBe(
      "acme/autopilot",
    );
    expect(sourceFromRepositoryField("https://gitlab.com/acme/autopilot")).toBeNull();
    expect(sourceFromRepositoryField(undefined)).toBeNull();
  });

  it("pins both action references and installs the chosen agent", () => {
    const template = [
      "# Autopilot worker: does one task's work. Copy this file to .github/workflows/autopilot-worker.yml.",
      "      - name: Install the agent CLI",
      "        run: npm install -g @anthropic-ai/claude-code@2.1.330",
      "        # Replace OWNER/autopilot with the repository that holds Autopilot, pinned to a release.",
      "        uses: OWNER/autopilot@v1",
      "        uses: OWNER/autopilot/controller@v1",
      "",
    ].join("\n");
    const commit = "0123456789abcdef0123456789abcdef01234567";
    const pinned = pinWorkflow(template, { source: "acme/ap", version: "1.2.3", commit }, "gemini");
    // By the commit's SHA, the version beside it as Dependabot reads and moves it.
    expect(pinned).toContain(`uses: acme/ap@${commit} # v1.2.3\n`);
    expect(pinned).toContain(`uses: acme/ap/controller@${commit} # v1.2.3\n`);
    expect(pinned).toContain(
      `run: npm install -g @google/gemini-cli@${getPreset("gemini").install?.version}\n`,
    );
    expect(pinned).not.toContain("Replace OWNER");
    expect(pinned).not.toContain("Copy this file");
  });

  it("installs every agent CLI at the exact version its record pins", () => {
    expect(agentInstallLine("claude-code")).toBe(
      `npm install -g @anthropic-ai/claude-code@${getPreset("claude-code").install?.version}`,
    );
    expect(agentInstallLine("codex")).toMatch(/^npm install -g @openai\/codex@\d+\.\d+\.\d+$/);
    expect(agentInstallLine("opencode")).toMatch(/^npm install -g opencode-ai@\d+\.\d+\.\d+$/);
    expect(agentInstallLine("aider")).toMatch(/^pipx install aider-chat==\d+\.\d+\.\d+$/);
    expect(agentInstallLine("custom")).toBeNull();
  });

  it("writes the detected setup into .github/autopilot.yml, one install per ecosystem the lockfiles show", async () => {
    const dir = await mkdtemp(join(tmpdir(), "setup-detect-"));
    try {
      expect(await detectSetupCommands(dir)).toEqual([]);
      for (const [file, text] of [
        ["package.json", "{}"],
        ["package-lock.json", "{}"],
        ["requirements.txt", "requests==2.32.3\n"],
        ["go.mod", "module x\n"],
      ])
        await writeFile(join(dir, file!), text!);
      const setup = await detectSetupCommands(dir);
      expect(setup).toEqual([
        "npm ci",
        "python -m pip install --user -r requirements.txt",
        "go mod download",
      ]);
      const release = { source: "acme/ap", version: "1.0.0", commit: "a".repeat(40) };
      const text = renderConfigFile({ release, agent: "claude-code", qualityCommands: ["npm test"], setup });
      const parsed = parseConfig(text);
      expect(parsed.ok && parsed.config.setup).toEqual(setup);
      // The agent's firewall lets the setup reach the registries it downloads from, and nothing else.
      expect(parsed.ok && parsed.config.network).toEqual({
        allow: [
          "registry.npmjs.org",
          "pypi.org",
          "files.pythonhosted.org",
          "proxy.golang.org",
          "sum.golang.org",
        ],
      });
      // Nothing found: a commented example, and the file still parses.
      const none = renderConfigFile({ release, agent: "claude-code", qualityCommands: [] });
      expect(none).toContain('# setup: ["npm ci"]');
      expect(parseConfig(none).ok).toBe(true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("plans: absent → create, same → unchanged, different → conflict with a diff (overwrite only when refreshed); the settings and a repository's own Dependabot file are never replaced", () => {
    const desired = [
      { path: "a", content: "x\n", kind: "workflow" as const },
      { path: "b", content: "y\n", kind: "workflow" as const },
      { path: "c", content: "one\ntwo\n", kind: "workflow" as const },
      { path: "form", content: "new form\n", kind: "template" as const },
      { path: "settings", content: "mode: auto\n", kind: "settings" as const },
      { path: "dependabot", content: "version: 2\n", kind: "offer" as const },
    ];
    const existing = new Map<string, string | null>([
      ["a", null],
      ["b", "y\n"],
      ["c", "one\nthree\n"],
      ["form", "my form\n"],
      ["settings", "mode: semi-auto\n"],
      ["dependabot", "version: 2\nupdates: []\n"],
    ]);
    const actions = (refresh: FileRefresh) => planFiles(desired, existing, refresh).map((p) => p.action);
    expect(actions("none")).toEqual(["create", "unchanged", "conflict", "conflict", "kept", "kept"]);
    expect(actions("workflows")).toEqual(["create", "unchanged", "overwrite", "kept", "kept", "kept"]);
    expect(actions("workflows-and-templates")).toEqual([
      "create",
      "unchanged",
      "overwrite",
      "overwrite",
      "kept",
      "kept",
    ]);
    expect(lineDiff("one\nthree\n", "one\ntwo\n")).toBe("- three\n+ two");
  });
});
