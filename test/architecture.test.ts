import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..");

function filesUnder(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(".ts"))
    .map((entry) => join(entry.parentPath, entry.name));
}

describe("architecture", () => {
  it("keeps the layering rules: pure core, no import cycles, only src/github calls GitHub", () => {
    // depcruise exits non-zero and lists every violation when a rule in .dependency-cruiser.cjs breaks.
    const run = () =>
      execFileSync(
        join(root, "node_modules/.bin/depcruise"),
        ["src", "--config", ".dependency-cruiser.cjs", "--output-type", "err"],
        { cwd: root, encoding: "utf8", stdio: "pipe" },
      );
    expect(run).not.toThrow();
  });

  it("lets src/core import only its own files and the pure libraries on the allow-list", () => {
    // Keep in step with the core-is-pure rule in .dependency-cruiser.cjs and docs/ARCHITECTURE.md.
    const allowed = new Set([
      "zod",
      "yaml",
      "markdown-table",
      "re2js",
      "mdast-util-from-markdown",
      "mdast-util-gfm",
      "micromark-extension-gfm",
      "mdast",
    ]);
    const outside: string[] = [];
    for (const file of filesUnder("src/core")) {
      for (const match of readFileSync(file, "utf8").matchAll(
        /^\s*(?:import|export)\b[^;]*?\sfrom\s+"([^"]+)"/gm,
      )) {
        const specifier = match[1]!;
        if (specifier.startsWith(".")) continue;
        const name = specifier.startsWith("@")
          ? specifier.split("/").slice(0, 2).join("/")
          : specifier.split("/")[0]!;
        if (!allowed.has(name)) outside.push(`${file.slice(root.length + 1)}: ${specifier}`);
      }
    }
    expect(outside).toEqual([]);
  });

  it("never reads the clock or randomness inside src/core (time is passed in)", () => {
    const offending: string[] = [];
    for (const file of filesUnder("src/core")) {
      readFileSync(file, "utf8")
        .split("\n")
        .forEach((line, index) => {
          const code = line.replace(/\/\/.*$/, "");
          if (/Date\.now\(|new Date\(\s*\)|Math\.random\(|performance\.now\(|process\./.test(code)) {
            offending.push(`${file.slice(root.length + 1)}:${index + 1}: ${line.trim()}`);
          }
        });
    }
    expect(offending).toEqual([]);
  });
});
