/**
 * What `autopilot init` pins, and what keeps the pins current: every action by commit SHA, Autopilot's own to
 * the commit of the copy that runs, its version as the comment; the `$schema` link at that commit; a Dependabot
 * configuration offered for the pins; and the steps it prints name the command the user ran, never the
 * placeholder `OWNER/autopilot` it refuses. Once, init pinned `@v0.1.0`, a tag that did not exist, and its
 * `$schema` URL was a 404.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Readable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { main } from "../../src/cli/main.js";
import { systemGit } from "../helpers/system-git.js";

const WORKER = ".github/workflows/autopilot-worker.yml";
const CONTROLLER = ".github/workflows/autopilot-controller.yml";
const CONFIG = ".github/autopilot.yml";
const DEPENDABOT = ".github/dependabot.yml";
const ROOT = resolve(".");
const VERSION = (JSON.parse(readFileSync("package.json", "utf8")) as { version: string }).version;
const gitHere = (...args: string[]) => execFileSync(systemGit(), args, { encoding: "utf8" }).trim();
const HEAD = gitHere("rev-parse", "HEAD");

let out: string[];
let err: string[];
let dir: string;
const io = (input?: NodeJS.ReadableStream) => ({
  out: (l: string) => out.push(l),
  err: (l: string) => err.push(l),
  env: { AUTOPILOT_NO_GH: "1", AUTOPILOT_SOURCE: "acme/autopilot" } as NodeJS.ProcessEnv,
  ...(input ? { input } : {}),
});
const read = (file: string) => readFileSync(join(dir, file), "utf8");
const exists = (file: string) => {
  try {
    statSync(join(dir, file));
    return true;
  } catch {
    return false;
  }
};

beforeEach(() => {
  out = [];
  err = [];
  dir = mkdtempSync(join(tmpdir(), "init-pins-"));
  execFileSync(systemGit(), ["init", "-q", dir]);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("autopilot init's pins", { timeout: 120_000 }, () => {
  it("pins every action by commit SHA, Autopilot's own to this checkout's HEAD with the version as a comment", async () => {
    expect(await main(["init", "--mode", "actions", "--yes", "--dir", dir], io()), err.join("\n")).toBe(0);
    for (const file of [WORKER, CONTROLLER]) {
      const uses = read(file)
        .split("\n")
        .filter((line) => /^\s*(- )?uses:/.test(line))
        .map((line) => line.replace(/^\s*(- )?uses:\s*/, ""));
      expect(uses.length).toBeGreaterThan(1);
      for (const ref of uses) expect(ref).toMatch(/^[\w.-]+\/[\w./-]+@[0-9a-f]{40} # v\d+\.\d+\.\d+$/);
      expect(uses.filter((ref) => ref.startsWith("acme/autopilot"))).not.toEqual([]);
      for (const ref of uses.filter((r) => r.startsWith("acme/autopilot")))
        expect(ref).toMatch(new RegExp(`^acme/autopilot(/controller)?@${HEAD} # v${VERSION}$`));
    }
    expect(out.join("\n")).toContain(
      `pin        acme/autopilot@${HEAD} # v${VERSION} (from this checkout's HEAD)`,
    );
    // A commit no release tag points at is named, with how to pin a release instead.
    const released = gitHere("tag", "--points-at", HEAD).split("\n").includes(`v${VERSION}`);
    if (!released) expect(err.join("\n")).toContain(`is not a release: no tag v${VERSION} points at it`);
  });

  it("links the schema and the reference at the pinned commit, where both files exist", async () => {
    expect(await main(["init", "--yes", "--dir", dir], io()), err.join("\n")).toBe(0);
    const [schemaLine, , docsLine] = read(CONFIG).split("\n");
    const schema =
      /\$schema=https:\/\/raw\.githubusercontent\.com\/acme\/autopilot\/([0-9a-f]{40})\/(\S+)$/.exec(
        schemaLine!,
      );
    expect(schema?.[1]).toBe(HEAD);
    const docs = /https:\/\/github\.com\/acme\/autopilot\/blob\/([0-9a-f]{40})\/(\S+) \(v/.exec(docsLine!);
    expect(docs?.[1]).toBe(HEAD);
    // The raw URL serves the file as the commit holds it: the path must be in that commit's tree.
    for (const path of [schema![2]!, docs![2]!]) gitHere("cat-file", "-e", `${HEAD}:${path}`);
    const inTree = JSON.parse(gitHere("show", `${HEAD}:${schema![2]!}`)) as { $schema?: unknown };
    expect(inTree.$schema).toBeTypeOf("string");
  });

  it("offers a Dependabot configuration for the pins; keeps a repository's own and names what it lacks", async () => {
    expect(await main(["init", "--yes", "--dir", dir], io()), err.join("\n")).toBe(0);
    expect(out).toContain(`created    ${DEPENDABOT}`);
    const config = parse(read(DEPENDABOT)) as {
      version: number;
      updates: { "package-ecosystem": string; directory: string; schedule: { interval: string } }[];
    };
    expect(config.version).toBe(2);
    expect(config.updates).toContainEqual(
      expect.objectContaining({ "package-ecosystem": "github-actions", directory: "/" }),
    );

    // A repository's own file is never replaced; one without Actions updates is named.
    const own =
      "version: 2\nupdates:\n  - package-ecosystem: npm\n    directory: /\n    schedule: { interval: daily }\n";
    writeFileSync(join(dir, DEPENDABOT), own);
    out = [];
    expect(await main(["init", "--upgrade", "--yes", "--dir", dir], io())).toBe(0);
    expect(read(DEPENDABOT)).toBe(own);
    expect(out.join("\n")).toContain(`kept       ${DEPENDABOT}: yours; it has no github-actions updates`);

    // Declined when asked: not written, and init says nothing moves the pins.
    rmSync(join(dir, ".github"), { recursive: true });
    out = [];
    const answers = Readable.from(["actions\n", "claude-code\n", "auto\n", "no\n", "no\n"]);
    expect(await main(["init", "--dir", dir], io(answers)), err.join("\n")).toBe(0);
    expect(out.join("\n")).toContain(`Add ${DEPENDABOT}, so Dependabot proposes each new release`);
    expect(exists(DEPENDABOT)).toBe(false);
    expect(out.join("\n")).toContain("pins       nothing moves them");

    // A repository on Renovate is not offered Dependabot.
    rmSync(join(dir, ".github"), { recursive: true });
    writeFileSync(join(dir, "renovate.json"), "{}\n");
    out = [];
    expect(await main(["init", "--yes", "--dir", dir], io())).toBe(0);
    expect(exists(DEPENDABOT)).toBe(false);
    expect(out.join("\n")).toContain("pins       moved by Renovate (renovate.json)");
  });

  it("names, in the steps left, the command the user ran: from a clone, node bin/autopilot.js, never the placeholder", () => {
    // As typed in a shell: none of the variables npm sets for a script (this test may itself run under npx).
    const shell = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)));
    const run = spawnSync(
      process.execPath,
      ["bin/autopilot.js", "init", "--yes", "--mode", "app", "--dir", dir, "--source", "acme/autopilot"],
      {
        cwd: ROOT,
        encoding: "utf8",
        env: { ...shell, AUTOPILOT_NO_GH: "1", GITHUB_TOKEN: "", GH_TOKEN: "" },
      },
    );
    expect(run.status, run.stderr).toBe(0);
    const steps = run.stdout.slice(run.stdout.indexOf("Remaining steps:"));
    expect(steps).toContain("node bin/autopilot.js register --webhook-url");
    expect(steps).toContain("node bin/autopilot.js serve");
    expect(steps).toContain("node bin/autopilot.js doctor --repo");
    // Not the published copy (which is not this clone), and never the placeholder init refuses.
    expect(steps).not.toContain("npx github:");
    expect(`${run.stdout}${run.stderr}`).not.toMatch(/OWNER\/autopilot/i);
  });
});
