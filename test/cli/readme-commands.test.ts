/**
 * The README's first screen promises that two commands work on a fresh machine. CI (.ci/run, and the GitHub
 * workflow that mirrors it) is what proves it, so each of those commands must be one CI runs.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const readme = readFileSync("README.md", "utf8");
const ciRun = readFileSync(".ci/run", "utf8");
const ciYml = readFileSync(".github/workflows/ci.yml", "utf8");

/** The npm commands of the README's first shell block ("npm ci && npm start" is two). */
function firstScreenCommands(): string[] {
  const block = /```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? "";
  return block
    .split("\n")
    .map((line) => line.replace(/#.*$/, "").trim())
    .filter(Boolean)
    .flatMap((line) => line.split("&&").map((c) => c.trim()));
}

/** Whether a script runs `command` (`npm ci` may carry options; nothing else may differ). */
function runs(script: string, command: string): boolean {
  const escaped = command.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const options = command === "npm ci" ? "(?: --[\\w-]+)*" : "";
  // The command as a whole line's command, output possibly sent to a log and run in the background (`.ci/run`
  // runs the demo beside lint and typecheck): `npm start >"$log" 2>&1 &` still runs exactly `npm start`.
  const redirections = `(?:\\s+\\d?>>?(?:&\\d|"[^"]*"|\\S+))*(?:\\s*&)?`;
  return new RegExp(`(?:^|[;"\\s])${escaped}${options}${redirections}\\s*$`, "m").test(script);
}

describe("the README's fresh-machine commands", () => {
  it("are npm ci, npm start and npm test", () => {
    expect(firstScreenCommands()).toEqual(["npm ci", "npm start", "npm test"]);
  });

  it.each(firstScreenCommands())("%s is run by .ci/run and by the CI workflow", (command) => {
    expect(runs(ciRun, command), ".ci/run").toBe(true);
    expect(runs(ciYml, command), ".github/workflows/ci.yml").toBe(true);
  });

  it("a command .ci/run starts in the background is waited for and its failure fails the run", () => {
    // A background `npm start` whose exit status nobody reads would let a broken demo pass CI.
    const background = /^\s*(?:setsid(?: -w)? )?npm start\b[^\n]*&\s*\n\s*(\w+)=\$!/m.exec(ciRun);
    if (!background) return; // run in the foreground: `set -e` fails the run on its own
    const pid = background[1];
    const waited = new RegExp(`wait "\\$${pid}" \\|\\| (\\w+)=\\$\\?`).exec(ciRun);
    expect(waited, `.ci/run waits for "$${pid}" and keeps its status`).not.toBeNull();
    const status = waited?.[1] ?? "";
    expect(ciRun).toMatch(new RegExp(`if \\[ "\\$${status}" -ne 0 \\]; then[^\n]*exit 1`));
  });

  it("a command CI does not run is noticed (the check above can fail)", () => {
    expect(runs(ciRun, "npm run bench")).toBe(false);
    expect(runs("npm start -- --quiet\n", "npm start")).toBe(false);
  });
});
