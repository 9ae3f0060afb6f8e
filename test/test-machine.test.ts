/**
 * `npm test` on a machine that lacks what the tests need names each missing piece, with its Debian package,
 * before anything runs (scripts/test-machine.mjs, npm's `pretest`), instead of failing test by test.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

function check(env: Record<string, string>) {
  const run = spawnSync(process.execPath, ["scripts/test-machine.mjs", "--check"], { encoding: "utf8", env });
  return { status: run.status, stderr: run.stderr };
}

describe("the test machine's check", () => {
  it("passes here, where CI installed everything", () => {
    expect(check({ PATH: process.env.PATH ?? "" })).toEqual({ status: 0, stderr: "" });
  });

  it("names each missing program with the package that brings it, and fails", () => {
    const { status, stderr } = check({ PATH: "/nonexistent" });
    expect(status).toBe(1);
    for (const line of [
      "bwrap: install Debian's `bubblewrap`",
      "sudo: install Debian's `sudo`",
      "redis-server: install Debian's `redis-server`",
      "chromium: install Debian's `chromium`",
      "git: install it",
    ])
      expect(stderr).toContain(line);
  });

  it("takes CHROMIUM_PATH for another browser", () => {
    const { stderr } = check({ PATH: "/nonexistent", CHROMIUM_PATH: process.execPath });
    expect(stderr).not.toContain("chromium:");
  });

  it("runs before `npm test` and before CI installs anything", () => {
    const scripts = JSON.parse(readFileSync("package.json", "utf8")).scripts as Record<string, string>;
    expect(scripts.pretest).toBe("node scripts/test-machine.mjs");
    const ci = readFileSync(".ci/run", "utf8");
    expect(ci.indexOf("node scripts/test-machine.mjs")).toBeGreaterThan(-1);
    expect(ci.indexOf("node scripts/test-machine.mjs")).toBeLessThan(ci.indexOf("npm ci"));
  });
});
