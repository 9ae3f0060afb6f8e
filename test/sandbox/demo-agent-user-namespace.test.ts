/**
 * The demo agent's own wall on a developer's machine (`--user-namespace BWRAP`, sandbox/scenario/agent/
 * demo-agent.mjs): run as a normal user, it enters bubblewrap in an unprivileged user namespace, where it writes
 * its working directory and its state and nothing else (its processes and network its own besides). The tests
 * run as root, so this makes a normal user and runs the agent as that user.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { trustedBinary } from "../../src/worker/isolation/trusted-binaries.js";

const pool = process.env.VITEST_POOL_ID ?? String(process.pid % 1000);
const USER = `ap-devns${pool}`;
const agent = resolve(import.meta.dirname, "..", "..", "sandbox", "scenario", "agent", "demo-agent.mjs");
let dir: string;
let ids: { uid: number; gid: number };

beforeAll(() => {
  execFileSync("sh", [
    "-c",
    `getent passwd ${USER} >/dev/null || useradd --user-group --no-create-home --home-dir /nonexistent --shell /bin/sh ${USER}`,
  ]);
  const [uid, gid] = ["-u", "-g"].map((flag) =>
    Number(execFileSync("id", [flag, USER], { encoding: "utf8" })),
  );
  ids = { uid: uid!, gid: gid! };
  dir = mkdtempSync(join(tmpdir(), "demo-agent-userns-"));
  for (const sub of ["work", "agent", "agent/state"]) mkdirSync(join(dir, sub));
  for (const sub of ["", "work", "agent", "agent/state"]) chownSync(join(dir, sub), ids.uid, ids.gid);
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Runs the demo agent as the normal user on a script whose issue writes `files`. */
function runAgent(files: Record<string, string>, wall: string[]) {
  const script = join(dir, "agent", "demo-script.json");
  const issues = { "1": { behavior: "complete", files } };
  writeFileSync(script, JSON.stringify({ stateDir: join(dir, "agent", "state"), issues }));
  writeFileSync(join(dir, "prompt.md"), "Work on #1");
  chownSync(script, ids.uid, ids.gid);
  return spawnSync(
    "setpriv",
    [
      `--reuid=${ids.uid}`,
      `--regid=${ids.gid}`,
      "--clear-groups",
      "--",
      process.execPath,
      agent,
      "--script",
      script,
      "--issue",
      "1",
      join(dir, "prompt.md"),
      ...wall,
    ],
    { cwd: join(dir, "work"), encoding: "utf8", env: { PATH: "/usr/bin:/bin", HOME: join(dir, "work") } },
  );
}

describe("the demo agent in an unprivileged user namespace", () => {
  const bwrap = trustedBinary("bwrap")!;

  it("writes its working directory and its state", () => {
    const run = runAgent({ "src/done.txt": "done\n" }, ["--user-namespace", bwrap]);
    expect(run.status, run.stderr).toBe(0);
    expect(readFileSync(join(dir, "work", "src", "done.txt"), "utf8")).toBe("done\n");
    expect(existsSync(join(dir, "agent", "state", "issue-1.json"))).toBe(true);
  });

  it("cannot write beside its working directory, which the same agent without the wall can", () => {
    const outside = join(dir, "escaped.txt");
    const walled = runAgent({ "../escaped.txt": "out\n" }, ["--user-namespace", bwrap]);
    expect(walled.status).not.toBe(0);
    expect(walled.stderr).toMatch(/EROFS|read-only/i);
    expect(existsSync(outside)).toBe(false);
    // The check can fail: without the wall the same script writes there.
    const open = runAgent({ "../escaped.txt": "out\n" }, []);
    expect(open.status, open.stderr).toBe(0);
    expect(existsSync(outside)).toBe(true);
  });
});
