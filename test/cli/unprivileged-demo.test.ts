/**
 * `npm start` by a developer who is not root and has no password-less sudo: the demo runs to the end, its
 * scripted agent behind the strongest wall such a user has (sandbox/scenario/demo-isolation.ts: bubblewrap in an
 * unprivileged user namespace where the kernel allows it, as here, else none), and its first screen says so and
 * what a real agent needs. The tests run as root, so this makes a normal user (no
 * sudoers rule) with a home of its own and runs the README's command as that user.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { accessSync, chmodSync, chownSync, constants, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const pool = process.env.VITEST_POOL_ID ?? String(process.pid % 1000);
const USER = `ap-dev${pool}`;
const repoRoot = resolve(import.meta.dirname, "..", "..");
let home: string;
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
  home = mkdtempSync(join(tmpdir(), "autopilot-dev-home-"));
  chownSync(home, ids.uid, ids.gid);
  chmodSync(home, 0o700);
});

afterAll(() => {
  if (home) rmSync(home, { recursive: true, force: true });
});

describe("npm start as a normal user without sudo", () => {
  it("runs the demo to the end and says which wall its agent ran behind", () => {
    // The checkout must be readable by other users for this test to mean anything (a clone under /root is not).
    accessSync(join(repoRoot, "bin", "autopilot.js"), constants.R_OK);
    const run = spawnSync(
      "setpriv",
      [
        `--reuid=${ids.uid}`,
        `--regid=${ids.gid}`,
        "--clear-groups",
        "--",
        process.execPath,
        join(repoRoot, "bin", "autopilot.js"),
        "start",
      ],
      {
        cwd: repoRoot,
        encoding: "utf8",
        // A developer's environment: no token, no App credentials, a home and temp folder of its own.
        env: { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: home, TMPDIR: home, LANG: "C.UTF-8" },
        timeout: 200_000,
      },
    );
    const output = `${run.stdout}\n${run.stderr}`;
    expect(run.status, output.slice(-3000)).toBe(0);
    const firstScreen = run.stdout.split("\n").slice(0, 8).join("\n");
    expect(firstScreen).toContain("this user is not root and has no password-less sudo");
    // The wall this machine allows such a user: an unprivileged user namespace, if bubblewrap starts one as it.
    const probe = spawnSync(
      "setpriv",
      [`--reuid=${ids.uid}`, `--regid=${ids.gid}`, "--clear-groups", "--", "bwrap", "--unshare-user"]
        .concat(["--unshare-pid", "--unshare-net", "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev"])
        .concat(["--", "/bin/true"]),
      { env: { PATH: "/usr/bin:/bin" } },
    );
    expect(firstScreen).toContain(
      probe.status === 0
        ? "the demo's agent runs as you, in an unprivileged user-namespace sandbox"
        : "the demo's agent runs as you, with no wall",
    );
    expect(firstScreen).toContain("A real agent always runs in the namespace sandbox");
  }, 220_000);
});
