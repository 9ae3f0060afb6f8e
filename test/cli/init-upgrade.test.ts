/**
 * Upgrading keeps every setting: `init --upgrade` (and `--force`) re-pins and refreshes the workflows and never
 * rewrites `.github/autopilot.yml`, whose new defaults are reported instead. Once, `init --force` as the
 * upgrade step replaced a team's file and deleted its human-gate paths and session budget.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.js";
import { parseConfig } from "../../src/core/config/index.js";
import { systemGit } from "../helpers/system-git.js";

const WORKER = ".github/workflows/autopilot-worker.yml";
const CONTROLLER = ".github/workflows/autopilot-controller.yml";
const CONFIG = ".github/autopilot.yml";
const ISSUE_FORM = ".github/ISSUE_TEMPLATE/autopilot-task.yml";
const VERSION = (JSON.parse(readFileSync("package.json", "utf8")) as { version: string }).version;
/** What init pins Autopilot's actions to: the commit of this checkout, its version beside it. */
const PIN = `@${execFileSync(systemGit(), ["rev-parse", "HEAD"], { encoding: "utf8" }).trim()} # v${VERSION}`;
const OLD_PIN = `@${"0".repeat(40)} # v0.0.1`;

/** A team's settings, set over months: none of them is what init writes. */
const CUSTOMIZED = `# Our settings — reviewed by the platform team.
agents:
  primary:
    preset: codex
    model: gpt-5
qualityCommands:
  - "make check"
humanGate:
  paths: ["infra/**", "db/migrations/**"]
  supplyChain:
    registrySettings: false
budgets:
  session:
    usd: 40
maxParallel: 2
mode: semi-auto
`;

let out: string[];
let err: string[];
let dir: string;
const io = () => ({
  out: (l: string) => out.push(l),
  err: (l: string) => err.push(l),
  env: { AUTOPILOT_NO_GH: "1", AUTOPILOT_SOURCE: "acme/autopilot" } as NodeJS.ProcessEnv,
});
const read = (file: string) => readFileSync(join(dir, file), "utf8");

/** A repository set up by an older Autopilot (hosted controller, codex), whose team then edited its settings. */
async function customizedRepo(): Promise<void> {
  expect(await main(["init", "--mode", "app", "--agent", "codex", "--yes", "--dir", dir], io())).toBe(0);
  writeFileSync(join(dir, CONFIG), CUSTOMIZED);
  // What an older release's init wrote: the workflow pinned to v0.0.1.
  writeFileSync(join(dir, WORKER), read(WORKER).replaceAll(PIN, OLD_PIN));
  out = [];
  err = [];
}

beforeEach(() => {
  out = [];
  err = [];
  dir = mkdtempSync(join(tmpdir(), "init-upgrade-"));
  execFileSync(systemGit(), ["init", "-q", dir]);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("autopilot init --upgrade", { timeout: 120_000 }, () => {
  it("re-pins the workflows and keeps every setting: .github/autopilot.yml byte for byte, the mode and the agent", async () => {
    await customizedRepo();
    const fresh = read(WORKER).replaceAll(OLD_PIN, PIN);
    expect(fresh).not.toBe(read(WORKER));
    expect(await main(["init", "--upgrade", "--yes", "--dir", dir], io()), err.join("\n")).toBe(0);
    expect(read(CONFIG)).toBe(CUSTOMIZED);
    expect(read(WORKER)).toBe(fresh);
    expect(read(WORKER)).toContain("npm install -g @openai/codex");
    // The hosted mode is kept: no controller workflow appears.
    expect(() => statSync(join(dir, CONTROLLER))).toThrow();
    const parsed = parseConfig(read(CONFIG));
    if (!parsed.ok) throw new Error("the kept settings no longer parse");
    expect(parsed.config.humanGate.paths).toEqual(["infra/**", "db/migrations/**"]);
    expect(parsed.config.budgets.session.usd).toBe(40);
    const text = out.join("\n");
    expect(text).toContain(`overwrote  ${WORKER}`);
    expect(text).toContain(`kept       ${CONFIG}: your settings; init never rewrites this file`);
    // New defaults are reported, not written: what init now writes and the file lacks, then the defaults it leaves.
    expect(text).toMatch(/new settings available in this version .*: definitionOfReady\n/);
    expect(text).toMatch(
      /left at their defaults \(docs\/CONFIGURATION\.md\): labels, session, .*humanGate\.enabled, .*humanGate\.supplyChain\.lifecycleScripts/,
    );
    expect(text).not.toMatch(/left at their defaults.*\bbudgets\.session(,|\n)/);
    expect(text).toMatch(/left at their defaults.*budgets\.session\.tokens/);
  });

  it("--force never rewrites .github/autopilot.yml either: it replaces the workflows and the issue form", async () => {
    await customizedRepo();
    const form = read(ISSUE_FORM);
    writeFileSync(join(dir, ISSUE_FORM), form.replace("Goal", "Objective"));
    expect(await main(["init", "--force", "--yes", "--dir", dir], io()), err.join("\n")).toBe(0);
    expect(read(CONFIG)).toBe(CUSTOMIZED);
    expect(read(WORKER)).toContain(PIN);
    expect(read(ISSUE_FORM)).toBe(form);
  });

  it("--upgrade keeps an edited issue form (reported, not a conflict); a plain run keeps the settings without a conflict", async () => {
    await customizedRepo();
    const edited = read(ISSUE_FORM).replace("Goal", "Objective");
    writeFileSync(join(dir, ISSUE_FORM), edited);
    expect(await main(["init", "--upgrade", "--yes", "--dir", dir], io())).toBe(0);
    expect(read(ISSUE_FORM)).toBe(edited);
    expect(out.join("\n")).toContain(
      `kept       ${ISSUE_FORM}: it differs from this version's (--force replaces it)`,
    );
    out = [];
    // Without --upgrade the workflows are current now, and the team's settings are no conflict.
    expect(await main(["init", "--yes", "--dir", dir], io())).toBe(1);
    expect(read(CONFIG)).toBe(CUSTOMIZED);
    expect(out.join("\n")).toContain(`kept       ${CONFIG}: your settings`);
    expect(out.join("\n")).toContain(`kept       ${ISSUE_FORM}: it differs from what init writes`);
  });
});
