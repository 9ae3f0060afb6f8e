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
