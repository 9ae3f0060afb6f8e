/**
 * The command line itself (src/cli/program.ts, main.ts): help, version, each command's own help with
 * examples, "did you mean" for unknown commands and options, and options of another command refused.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EXIT, main } from "../../src/cli/main.js";

let out: string[];
let err: string[];
let dir: string;
const io = () => ({ out: (l: string) => out.push(l), err: (l: string) => err.push(l), env: {} });
const version = (JSON.parse(readFileSync("package.json", "utf8")) as { version: string }).version;

beforeEach(() => {
  out = [];
  err = [];
  dir = mkdtempSync(join(tmpdir(), "cli-line-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("the autopilot command line", () => {
  it("a bare autopilot prints the help and exits 0, starting no demo", async () => {
    expect(await main([], io())).toBe(EXIT.ok);
    const text = out.join("\n");
    expect(text).toMatch(/^Usage: /);
    for (const command of ["start", "sandbox", "serve", "status", "init", "register", "doctor"])
      expect(text).toMatch(new RegExp(`^\\s+${command}\\b`, "m"));
    // The demo's first line never came.
    expect(text).not.toContain("running the bundled demo");
    expect(err).toEqual([]);
  });

  it("-v and --version print package.json's version", async () => {
    for (const flag of ["-v", "--version"]) {
      out = [];
      expect(await main([flag], io())).toBe(EXIT.ok);
      expect(out).toEqual([version]);
    }
  });

  it("each command has its own help, with examples", async () => {
    expect(await main(["doctor", "--help"], io())).toBe(EXIT.ok);
    const doctor = out.join("\n");
    out = [];
    expect(await main(["init", "--help"], io())).toBe(EXIT.ok);
    const init = out.join("\n");
    expect(doctor).not.toEqual(init);
    expect(doctor).toMatch(/Usage: .* doctor \[options\]/);
    expect(doctor).toContain("--json");
    expect(doctor).not.toContain("--agent");
    expect(doctor).toMatch(/Examples:\n[\s\S]* doctor --repo acme\/shop/);
    expect(init).toMatch(/Usage: .* init \[options\]/);
    expect(init).toContain("--upgrade");
    expect(init).toMatch(/Examples:\n[\s\S]* init --yes/);
  });

  it("an unknown option gets the nearest one: --repp, did you mean --repo", async () => {
    expect(await main(["doctor", "--repp", "acme/shop"], io())).toBe(EXIT.usage);
    expect(err.join("\n")).toMatch(/did you mean --repo\?/i);
  });

  it("an unknown command gets the nearest one: docter, did you mean doctor", async () => {
    expect(await main(["docter"], io())).toBe(EXIT.usage);
    expect(err.join("\n")).toMatch(/did you mean doctor\?/i);
  });

  it("an option of another command is refused, naming the command it belongs to", async () => {
    expect(await main(["init", "--keep", "--yes", "--dir", dir, "--source", "acme/autopilot"], io())).toBe(
      EXIT.usage,
    );
    expect(err.join("\n")).toContain("unknown option '--keep'");
    expect(err.join("\n")).toContain("--keep is an option of `start` and `sandbox`, not of `init`");
    // Refused before anything ran: init wrote nothing.
    expect(readdirSync(dir)).toEqual([]);
  });
});
