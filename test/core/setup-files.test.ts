import { describe, expect, it } from "vitest";
import { lineDiff, pinWorkflow, planFiles, sourceFromRepositoryField } from "../../src/core/setup-files.js";

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
      "        run: npm install -g @anthropic-ai/claude-code",
      "        # Replace OWNER/autopilot with the repository that holds Autopilot, pinned to a release.",
      "        uses: OWNER/autopilot@v1",
      "        uses: OWNER/autopilot/controller@v1",
      "",
    ].join("\n");
    const pinned = pinWorkflow(template, { source: "acme/ap", version: "1.2.3" }, "gemini");
    expect(pinned).toContain("uses: acme/ap@v1.2.3\n");
    expect(pinned).toContain("uses: acme/ap/controller@v1.2.3\n");
    expect(pinned).toContain("run: npm install -g @google/gemini-cli");
    expect(pinned).not.toContain("Replace OWNER");
    expect(pinned).not.toContain("Copy this file");
  });

  it("plans: absent → create, same → unchanged, different → conflict with a diff (overwrite only when forced)", () => {
    const desired = [
      { path: "a", content: "x\n" },
      { path: "b", content: "y\n" },
      { path: "c", content: "one\ntwo\n" },
    ];
    const existing = new Map<string, string | null>([
      ["a", null],
      ["b", "y\n"],
      ["c", "one\nthree\n"],
    ]);
    expect(planFiles(desired, existing, false).map((p) => p.action)).toEqual([
      "create",
      "unchanged",
      "conflict",
    ]);
    expect(planFiles(desired, existing, true).map((p) => p.action)).toEqual([
      "create",
      "unchanged",
      "overwrite",
    ]);
    expect(lineDiff("one\nthree\n", "one\ntwo\n")).toBe("- three\n+ two");
  });
});
