/**
 * The namespace sandbox (`isolation: namespace`, agent-namespace.ts), from inside: what a command of the agent's
 * user sees of the host and what it can do there, each wall tried for real through `bwrap`.
 */
import { execFileSync } from "node:child_process";
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentUser } from "../../src/worker/isolation/agent-user.js";
import { runProcess } from "../../src/worker/processes/process.js";
import { testAgentUser } from "./fixtures/real.js";

let user: AgentUser;
let root: string;
let work: string;
let hidden: string;

/** Runs `script` as the agent in its sandbox, in its work tree. */
async function inside(script: string): Promise<{ code: number | null; out: string; err: string }> {
  const result = await runProcess({
    command: "/bin/sh",
    args: ["-c", script],
    cwd: work,
    env: { PATH: "/usr/bin:/bin" },
    runAs: user,
    timeoutMs: 30_000,
  });
  return { code: result.exitCode, out: result.stdout.trim(), err: result.stderr.trim() };
}

beforeAll(async () => {
  user = await testAgentUser("namespace");
  root = await mkdtemp(join(tmpdir(), "autopilot-ns-"));
  work = join(root, "work");
  hidden = join(root, "worker");
  await mkdir(work);
  await mkdir(hidden);
  await writeFile(join(hidden, "secret"), "worker secret\n");
  await chmod(join(hidden, "secret"), 0o644);
  user.useView({ shared: [], writable: [work], readable: [], hidden: [hidden], openings: [] });
  await user.give([work]);
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("inside the namespace sandbox", { timeout: 60_000 }, () => {
  it("sees no process of the host: /proc holds only the sandbox's own", async () => {
    const seen = await inside(
      `ls /proc | grep -c '^[0-9]*$'; test -e /proc/${process.pid} && echo SEES-WORKER || echo NO-WORKER`,
    );
    const [count, worker] = seen.out.split("\n");
    // bwrap's init, the shell, and the `ls`/`grep` it runs.
    expect(Number(count)).toBeLessThan(6);
    expect(worker).toBe("NO-WORKER");
  });

  it("is the agent's uid, with no new privileges and no groups", async () => {
    const seen = await inside("id -u; id -G; grep NoNewPrivs /proc/self/status");
    expect(seen.out.split("\n")).toEqual([String(user.uid), expect.any(String), "NoNewPrivs:\t1"]);
    expect(seen.out.split("\n")[1]).not.toMatch(/\b0\b/);
  });

  it("writes only its work tree: the host is read-only, and its /tmp is its own", async () => {
    const marker = join(tmpdir(), `autopilot-ns-host-${process.pid}`);
    await writeFile(marker, "host file\n");
    await chmod(marker, 0o666);
    try {
      const seen = await inside(
        [
          "touch ok && echo WORK-OK",
          "touch /etc/autopilot-x 2>/dev/null && echo WROTE-ETC || echo NO-ETC",
          "touch /var/tmp/autopilot-x 2>/dev/null && echo WROTE-VARTMP || echo NO-VARTMP",
          "touch /dev/shm/autopilot-x 2>/dev/null && echo WROTE-SHM || echo NO-SHM",
          `test -e ${marker} && echo SEES-HOST-TMP || echo NO-HOST-TMP`,
          "mkdir -p /tmp/node_modules/.bin && echo OWN-TMP",
        ].join("; "),
      );
      expect(seen.out.split("\n")).toEqual([
        "WORK-OK",
        "NO-ETC",
        "NO-VARTMP",
        "NO-SHM",
        "NO-HOST-TMP",
        "OWN-TMP",
      ]);
      // What it planted in its /tmp went with the sandbox.
      expect(
        execFileSync("sh", ["-c", "test -e /tmp/node_modules/.bin && echo PLANTED || echo GONE"], {
          encoding: "utf8",
        }).trim(),
      ).toBe("GONE");
    } finally {
      await rm(marker, { force: true });
    }
  });

  it("finds the worker's private directory empty, even a file in it any user could read", async () => {
    const seen = await inside(`ls -A ${hidden} 2>&1 | wc -l; cat ${hidden}/secret 2>&1 || true`);
    expect(seen.out).not.toContain("worker secret");
  });

  it("has no network but loopback when closed, and the host's when open", async () => {
    const interfaces = "awk 'NR>2 {print $1}' /proc/net/dev | tr -d : | sort | tr '\\n' ' '";
    expect((await inside(interfaces)).out).toBe("lo");
    user.useNetwork("open");
    try {
      expect((await inside(interfaces)).out.split(" ").length).toBeGreaterThan(1);
    } finally {
      user.useNetwork("closed");
    }
  });

  it("reaches its command wherever it lives: a script inside a directory only root may enter", async () => {
    const locked = await mkdtemp(join(tmpdir(), "autopilot-ns-locked-"));
    try {
      await chmod(locked, 0o700);
      const deep = join(locked, "checkout", "scripts");
      await mkdir(deep, { recursive: true });
      await writeFile(join(deep, "agent.sh"), "#!/bin/sh\necho AGENT-RAN\n", { mode: 0o755 });
      await writeFile(join(locked, "other-file"), "not for the agent\n", { mode: 0o644 });
      const ran = await runProcess({
        command: join(deep, "agent.sh"),
        args: [],
        cwd: work,
        env: { PATH: "/usr/bin:/bin" },
        runAs: user,
        timeoutMs: 30_000,
      });
      expect(ran.stdout.trim()).toBe("AGENT-RAN");
      // Only what it needs was opened: the rest of the locked directory is not there.
      expect((await inside(`ls -A ${locked} 2>&1`)).out).not.toContain("other-file");
    } finally {
      await rm(locked, { recursive: true, force: true });
    }
  });
});

describe("where namespaces are unavailable", () => {
  it("the worker refuses to start, naming the cause and the weaker settings", () => {
    const out = execFileSync(
      "setpriv",
      [
        "--bounding-set=-all",
        "--inh-caps=-all",
        "--",
        process.execPath,
        "--import",
        "tsx",
        join(import.meta.dirname, "fixtures", "namespace-probe.ts"),
        user.name!,
      ],
      { cwd: join(import.meta.dirname, "..", ".."), encoding: "utf8" },
    );
    const result = JSON.parse(out.trim().split("\n").at(-1)!) as {
      ok: boolean;
      name?: string;
      error?: string;
    };
    expect(result.ok).toBe(false);
    expect(result.name).toBe("IsolationError");
    expect(result.error).toContain("namespace sandbox does not start");
    expect(result.error).toContain("isolation: uid");
  }, 60_000);
});
