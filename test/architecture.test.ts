import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..");
/** The parts of the two trees (src/: the product; sandbox/: the offline GitHub stand-in), by the name the
 * Layout table's "may import" column uses. */
const PARTS = {
  core: "src/core",
  github: "src/github",
  worker: "src/worker",
  app: "src/app",
  cli: "src/cli",
  emulator: "sandbox/emulator",
  scenario: "sandbox/scenario",
} as const;
type Part = keyof typeof PARTS;
const PART_NAMES = Object.keys(PARTS) as Part[];

interface PathCondition {
  path?: string | string[];
  pathNot?: string | string[];
  dependencyTypes?: string[];
  circular?: boolean;
}
interface Rule {
  name: string;
  from: PathCondition;
  to: PathCondition;
}

const rules = (createRequire(import.meta.url)(join(root, ".dependency-cruiser.cjs")) as { forbidden: Rule[] })
  .forbidden;

/** The "may import" column of docs/ARCHITECTURE.md's Layout table, by part (its row's folder's last name). */
function mayImportRows(): Map<string, string> {
  const rows = new Map<string, string>();
  for (const line of readFileSync(join(root, "docs/ARCHITECTURE.md"), "utf8").split("\n")) {
    const m = /^\| `(?:src|sandbox)\/([a-z]+)\/` \|[^|]*\|(.*)\|\s*$/.exec(line);
    if (m) rows.set(m[1]!, m[2]!);
  }
  return rows;
}

function anyMatch(patterns: string | string[] | undefined, path: string): boolean {
  return [patterns ?? []].flat().some((pattern) => new RegExp(pattern).test(path));
}

/** Whether some rule in .dependency-cruiser.cjs forbids an import from `from` to `to` (resolved paths). */
function forbidden(from: string, to: string): string | null {
  for (const rule of rules) {
    if (rule.to.circular || rule.to.dependencyTypes) continue;
    if (rule.from.path !== undefined && !anyMatch(rule.from.path, from)) continue;
    if (anyMatch(rule.from.pathNot, from)) continue;
    if (rule.to.path !== undefined && !anyMatch(rule.to.path, to)) continue;
    if (anyMatch(rule.to.pathNot, to)) continue;
    return rule.name;
  }
  return null;
}

function filesUnder(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(".ts"))
    .map((entry) => join(entry.parentPath, entry.name));
}

describe("architecture", () => {
  it("keeps the layering rules: pure core, no import cycles, only src/github calls GitHub, the two trees apart", () => {
    // depcruise exits non-zero and lists every violation when a rule in .dependency-cruiser.cjs breaks.
    const run = () =>
      execFileSync(
        join(root, "node_modules/.bin/depcruise"),
        ["src", "sandbox", "--config", ".dependency-cruiser.cjs", "--output-type", "err"],
        { cwd: root, encoding: "utf8", stdio: "pipe" },
      );
    expect(run).not.toThrow();
  });

  it('has a rule for every "may import" row of docs/ARCHITECTURE.md\'s Layout table', () => {
    const rows = mayImportRows();
    expect([...rows.keys()].sort()).toEqual([...PART_NAMES].sort());
    for (const [part, cell] of rows) {
      const everything = /\b(everything|anything)\b/.test(cell);
      const allowed = PART_NAMES.filter(
        (other) => everything || other === part || new RegExp(`\\b${other}\\b`).test(cell),
      );
      const permitted = PART_NAMES.filter(
        (other) => forbidden(`${PARTS[part as Part]}/a.ts`, `${PARTS[other]}/b.ts`) === null,
      );
      expect({ part, may: permitted }).toEqual({ part, may: allowed });
    }
  });

  it("orders every topic folder of src/core, so no two of them import each other", () => {
    const topics = readdirSync(join(root, "src/core"), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
    // Each topic but the highest has a rule forbidding the ones above it; the highest is named in the one below.
    const ordered = new Set(
      rules.flatMap((rule) =>
        rule.name.startsWith("core-topic-") ? [rule.name.slice("core-topic-".length)] : [],
      ),
    );
    const highest = topics.filter((topic) => !ordered.has(topic));
    expect(highest).toHaveLength(1);
    for (const topic of topics)
      for (const other of topics) {
        if (topic === other) continue;
        const up = forbidden(`src/core/${topic}/a.ts`, `src/core/${other}/b.ts`);
        const down = forbidden(`src/core/${other}/b.ts`, `src/core/${topic}/a.ts`);
        expect({ topic, other, oneWayOnly: (up === null) !== (down === null) }).toEqual({
          topic,
          other,
          oneWayOnly: true,
        });
      }
  });

  it("lets src/core use exactly the libraries the Layout table names (and the rule allows)", () => {
    const cell = mayImportRows().get("core")!;
    const named = [...cell.matchAll(/`([a-z0-9-]+)`/g)].map((m) => m[1]!);
    expect(named.length).toBeGreaterThan(0);
    for (const lib of named) expect(forbidden("src/core/a.ts", `node_modules/${lib}/index.js`)).toBeNull();
    expect(forbidden("src/core/a.ts", "node_modules/left-pad/index.js")).toBe("core-is-pure");
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
      "fast-xml-parser",
      "lru-cache",
      "json5",
      "smol-toml",
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
