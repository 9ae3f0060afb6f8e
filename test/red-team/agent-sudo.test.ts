/**
 * The sudo path of the agent's isolation, as on a GitHub-hosted runner (a non-root `runner` user with
 * password-less sudo). The tests run as root, so they make a non-root "worker" user with a sudoers rule of its
 * own (removed afterwards) and run fixtures/sudo-probe.ts as that user; then they take the rule away and check
 * the worker refuses to run the agent unisolated.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, copyFile, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const pool = process.env.VITEST_POOL_ID ?? String(process.pid % 1000);
const WORKER = `ap-sudo-w${pool}`;
const AGENT = `ap-sudo-a${pool}`;
const SUDOERS = `/etc/sudoers.d/autopilot-red-team-${pool}`;
const repoRoot = join(import.meta.dirname, "..", "..");
const probe = join(import.meta.dirname, "fixtures", "sudo-probe.ts");
const handbackProbe = join(import.meta.dirname, "fixtures", "sudo-handback-probe.ts");
let dir: string;

function runProbe(
  isolation: "namespace" | "uid",
  script = probe,
): {
  ok: boolean;
  error?: string;
  workerUid?: number;
  agentUid?: number;
  lines?: string[];
  left?: number[];
  markers?: string[];
  workerSleepers?: number[];
  refused?: string[];
  committed?: string[];
  chainStopped?: boolean;
} {
  const uid = execFileSync("id", ["-u", WORKER], { encoding: "utf8" }).trim();
  const out = execFileSync(
    "setpriv",
    [
      `--reuid=${uid}`,
      `--regid=${uid}`,
      "--clear-groups",
      "--",
      process.execPath,
      "--import",
      "tsx",
      script,
      dir,
      AGENT,
      isolation,
    ],
    {
      cwd: repoRoot,
      encoding: "utf8",
      // The "worker"'s initial environment holds a token, as a runner's does (INPUT_GITHUB-TOKEN).
      env: { PATH: "/usr/bin:/bin", HOME: dir, "INPUT_GITHUB-TOKEN": "ghs_sudoPathTokenMustStayPrivate" },
    },
  );
  return JSON.parse(out.trim().split("\n").at(-1)!);
}

beforeAll(async () => {
  execFileSync("sh", [
    "-c",
    `getent passwd ${WORKER} >/dev/null || useradd --system --user-group --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin ${WORKER}`,
  ]);
  dir = await mkdtemp(join(tmpdir(), "autopilot-sudo-"));
  await chmod(dir, 0o1777);
  // A setuid-root program any user can run (a system has several: su, passwd, mount…); an agent that could
  // gain root through one would own the runner.
  await copyFile("/usr/bin/id", join(dir, "suid-id"));
  await chmod(join(dir, "suid-id"), 0o4755);
  // A fork chain for the agent to leave behind (each process forks its successor and exits).
  execFileSync("gcc", [
    "-O0",
    "-o",
    join(dir, "fork-chain"),
    join(import.meta.dirname, "fixtures", "fork-chain.c"),
  ]);
  await chmod(join(dir, "fork-chain"), 0o755);
  await writeFile(SUDOERS, `${WORKER} ALL=(ALL:ALL) NOPASSWD: ALL\n`, { mode: 0o440 });
});

afterAll(async () => {
  await rm(SUDOERS, { force: true });
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("a non-root worker with password-less sudo", () => {
  it.each(["namespace", "uid"] as const)(
    "%s: runs the agent as another user that cannot read its environment, use sudo or a setuid-root binary, and kills its daemon and its fork chain",
    (isolation) => {
      const result = runProbe(isolation);
      expect(result.ok, result.error).toBe(true);
      expect(result.workerUid).not.toBe(0);
      expect(result.agentUid).not.toBe(result.workerUid);
      expect(result.lines).toEqual([String(result.agentUid), "NO-ENV", "NO-SUDO", "NO-SETUID-ROOT"]);
      expect(result.left).toEqual([]);
      expect(result.chainStopped).toBe(true);
    },
    120_000,
  );

  it.each(["namespace", "uid"] as const)(
    "%s: an embedded repository's filter and fsmonitor run nothing as the worker, and the work is refused",
    (isolation) => {
      const result = runProbe(isolation, handbackProbe);
      expect(result.ok, result.error).toBe(true);
      expect(result.workerUid).not.toBe(0);
      expect(result.markers).toEqual([]);
      expect(result.workerSleepers).toEqual([]);
      expect(result.refused?.join("\n")).toMatch(/gitlink|could not be handed back/);
      expect(result.committed).toEqual(["README.md"]);
    },
    120_000,
  );

  it("refuses to start with a clear error once it has no sudo (and is not root)", async () => {
    await rm(SUDOERS, { force: true });
    expect(existsSync(SUDOERS)).toBe(false);
    const result = runProbe("namespace");
    expect(result.ok).toBe(false);
    expect(result.error).toContain("the agent cannot be isolated");
    expect(result.error).toContain("isolation: none");
  }, 120_000);
});
