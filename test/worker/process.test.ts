import { existsSync, readFileSync } from "node:fs";
import { chmod, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { AgentConfig } from "../../src/core/config/index.js";
import { buildAgentEnv } from "../../src/worker/isolation/agent-env.js";
import { createAgentRunner } from "../../src/worker/job/agent-iteration.js";
import { CappedBuffer, runProcess } from "../../src/worker/processes/process.js";
import { runQualityCommands } from "../../src/worker/processes/quality.js";
import { testAgentUser } from "./fixtures/real.js";

/** Alive = exists and is not a zombie (a container's PID 1 may never reap orphans). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}

async function waitFor(check: () => boolean | Promise<boolean>, ms = 5_000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return check();
}

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "autopilot-process-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const baseEnv = { PATH: process.env.PATH ?? "/usr/bin:/bin" };

describe("runProcess", () => {
  it("kills the whole process tree when an iteration times out: the child and its grandchild", async () => {
    const pids = join(dir, "pids");
    const script = `sleep 300 & echo $! > '${pids}'; echo $$ >> '${pids}'; wait`;
    const started = Date.now();
    const result = await runProcess({
      command: "/bin/sh",
      args: ["-c", script],
      cwd: dir,
      env: baseEnv,
      timeoutMs: 500,
      killGraceMs: 500,
    });
    expect(result.timedOut).toBe(true);
    expect(Date.now() - started).toBeLessThan(5_000);
    const [grandchild, child] = (await readFile(pids, "utf8")).trim().split("\n").map(Number);
    expect(await waitFor(() => !alive(child!) && !alive(grandchild!))).toBe(true);
  });

  it("escalates to SIGKILL for a child that ignores SIGTERM", async () => {
    const pidFile = join(dir, "pid");
    const script = `trap '' TERM; echo $$ > '${pidFile}'; while true; do sleep 0.1; done`;
    const result = await runProcess({
      command: "/bin/sh",
      args: ["-c", script],
      cwd: dir,
      env: baseEnv,
      timeoutMs: 300,
      killGraceMs: 300,
    });
    expect(result.timedOut).toBe(true);
    expect(result.signal).toBe("SIGKILL");
    expect(alive(Number((await readFile(pidFile, "utf8")).trim()))).toBe(false);
  });

  it("does not wait for a background job the agent left running, and ends it", async () => {
    const pidFile = join(dir, "bg");
    const result = await runProcess({
      command: "/bin/sh",
      args: ["-c", `sleep 300 & echo $! > '${pidFile}'; echo done`],
      cwd: dir,
      env: baseEnv,
      timeoutMs: 60_000,
    });
    expect(result.exitCode).toBe(0);
    expect(result.stdout.trim()).toBe("done");
    const bg = Number((await readFile(pidFile, "utf8")).trim());
    expect(await waitFor(() => !alive(bg))).toBe(true);
  });

  it("as the agent's user: the kill that ends one command never kills the next command of that user", async () => {
    const user = await testAgentUser();
    await chmod(dir, 0o1777);
    // The first command leaves `setsid` daemons, so the kill of the user's processes that follows its end takes
    // several rounds; the second, started right after, must run to its end all the same.
    const daemons = "for i in 1 2 3 4 5; do setsid sleep 300 >/dev/null 2>&1 </dev/null & done; true";
    for (let round = 0; round < 5; round++) {
      const results = await runQualityCommands({
        commands: [daemons, "sleep 0.3; echo second-ran"],
        cwd: dir,
        env: baseEnv,
        timeoutMs: 60_000,
        runAs: user,
      });
      expect(results.map((r) => r.passed)).toEqual([true, true]);
      expect(results[1]!.output).toContain("second-ran");
    }
    expect(await user.killAll()).toBe(0);
  }, 60_000);

  it("kills the tree when aborted", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const result = await runProcess({
      command: "/bin/sh",
      args: ["-c", "sleep 300"],
      cwd: dir,
      env: baseEnv,
      signal: controller.signal,
      killGraceMs: 200,
    });
    expect(result.aborted).toBe(true);
    expect(result.exitCode).toBeNull();
  });

  it("caps output, keeping the head and the tail", async () => {
    const result = await runProcess({
      command: process.execPath,
      args: ["-e", "process.stdout.write('HEAD' + 'x'.repeat(100000) + 'TAIL')"],
      cwd: dir,
      env: baseEnv,
      maxOutputBytes: 1000,
    });
    expect(result.truncated).toBe(true);
    expect(result.stdout.startsWith("HEAD")).toBe(true);
    expect(result.stdout.endsWith("TAIL")).toBe(true);
    expect(result.stdout.length).toBeLessThan(1200);
  });

  it("reports a command that does not exist", async () => {
    const result = await runProcess({ command: "no-such-agent-cli", args: [], cwd: dir, env: baseEnv });
    expect(result.spawnError).toMatch(/ENOENT/);
  });

  it("writes stdin for CLIs that read the prompt from it", async () => {
    const result = await runProcess({
      command: "/bin/cat",
      args: [],
      cwd: dir,
      env: baseEnv,
      stdin: "the prompt",
    });
    expect(result.stdout).toBe("the prompt");
  });
});

describe("CappedBuffer", () => {
  it("keeps everything under the limit", () => {
    const buffer = new CappedBuffer(100);
    buffer.push(Buffer.from("hello "));
    buffer.push(Buffer.from("world"));
    expect(buffer.toString()).toBe("hello world");
    expect(buffer.truncated).toBe(false);
  });
});

describe("the agent's environment", () => {
  const parentEnv: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: "/home/runner",
    LANG: "C.UTF-8",
    GITHUB_TOKEN: "ghs_defaulttoken123",
    "INPUT_GITHUB-TOKEN": "ghs_apptoken456",
    ACTIONS_RUNTIME_TOKEN: "runtime-secret",
    ACTIONS_ID_TOKEN_REQUEST_TOKEN: "oidc-secret",
    AWS_SECRET_ACCESS_KEY: "aws-secret",
    ANTHROPIC_API_KEY: "sk-ant-123",
    OPENAI_API_KEY: "sk-openai-456",
    GEMINI_API_KEY: "gemini-789",
    DATABASE_URL: "postgres://localhost/test",
    LEAKY: "prefix ghs_apptoken456 suffix",
  };

  it("is an allow-list: base variables, the preset's own key, configured names; never a token", () => {
    const { env, refused } = buildAgentEnv({
      parentEnv,
      presetKeys: ["ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN"],
      extraNames: ["DATABASE_URL", "GITHUB_TOKEN", "OPENAI_API_KEY", "INPUT_GITHUB-TOKEN", "LEAKY"],
      home: "/tmp/scratch/home",
      tmpdir: "/tmp/scratch/tmp",
      secretValues: ["ghs_apptoken456"],
    });
    expect(Object.keys(env).sort()).toEqual(
      ["ANTHROPIC_API_KEY", "DATABASE_URL", "HOME", "LANG", "PATH", "TERM", "TMPDIR"].sort(),
    );
    expect(env.HOME).toBe("/tmp/scratch/home");
    expect(refused.map((r) => r.name).sort()).toEqual([
      "GITHUB_TOKEN",
      "INPUT_GITHUB-TOKEN",
      "LEAKY",
      "OPENAI_API_KEY",
    ]);
  });

  async function fakeCli(name: string, body: string): Promise<string> {
    const bin = join(dir, "bin");
    await mkdir(bin, { recursive: true });
    const file = join(bin, name);
    await writeFile(file, `#!${process.execPath}\n${body}\n`);
    await chmod(file, 0o755);
    return bin;
  }

  const agent = (over: Partial<AgentConfig>): AgentConfig => ({
    preset: "custom",
    model: null,
    args: [],
    env: [],
    command: null,
    ...over,
  });

  it("stops a run mid-way when its streamed usage reaches what is left of the budget, keeping what it counted", async () => {
    const runner = createAgentRunner({
      workdir: dir,
      scratchDir: join(dir, "scratch"),
      parentEnv,
      secretValues: [],
    });
    // A usage report every 100 ms, $0.12 each, for 30 s unless stopped; it writes a file first.
    const script = join(dir, "spender.mjs");
    await writeFile(
      script,
      [
        'import { writeFileSync } from "node:fs";',
        'writeFileSync("work.txt", "partial\\n");',
        "for (let i = 0; i < 300; i++) {",
        '  console.log(\'autopilot-usage: {"input":1000,"output":100,"costUsd":0.12}\');',
        "  await new Promise((r) => setTimeout(r, 100));",
        "}",
        'console.log("<promise>COMPLETE</promise>");',
      ].join("\n"),
    );
    const result = await runner({
      agent: agent({ command: `${process.execPath} ${script} {prompt_file}` }),
      prompt: "spend",
      issue: 7,
      iteration: 1,
      timeoutMs: 60_000,
      cap: { tokens: null, usd: 0.5, prices: [] },
    });
    expect(result.budgetStop).toBe("the run's usage reached $0.60 (budget $0.50 left)");
    expect(result.output.costUsd).toBeCloseTo(0.6, 6);
    expect(result.output.usage).toEqual({ input: 5000, output: 500 });
    expect(readFileSync(join(dir, "work.txt"), "utf8")).toBe("partial\n");
    // A token cap stops it the same way; no cap lets a run go on (its own end ends it).
    const byTokens = await runner({
      agent: agent({ command: `${process.execPath} ${script} {prompt_file}` }),
      prompt: "spend",
      issue: 7,
      iteration: 2,
      timeoutMs: 60_000,
      cap: { tokens: 2500, usd: null, prices: [] },
    });
    expect(byTokens.budgetStop).toBe("the run's usage reached 3300 tokens (budget 2500 tokens left)");
  });

  it("starts the agent in its workspace's directory, and at the root when a link stands in for a part of it", async () => {
    const runner = createAgentRunner({
      workdir: dir,
      scratchDir: join(dir, "scratch"),
      parentEnv,
      secretValues: [],
    });
    const pwd = agent({ command: `${process.execPath} -e "console.log(process.cwd())" {prompt_file}` });
    await mkdir(join(dir, "packages", "api"), { recursive: true });
    const inside = await runner({
      agent: pwd,
      prompt: "p",
      issue: 7,
      iteration: 1,
      timeoutMs: 30_000,
      directory: "packages/api",
    });
    expect(inside.output.finalMessage.trim()).toBe(join(dir, "packages", "api"));
    expect(inside.directoryRefused).toBeUndefined();
    // The agent replaced `packages` with a link out of the tree: the worker neither follows nor creates anything there.
    const outside = await mkdtemp(join(tmpdir(), "autopilot-outside-"));
    await rm(join(dir, "packages"), { recursive: true });
    await symlink(outside, join(dir, "packages"));
    const linked = await runner({
      agent: pwd,
      prompt: "p",
      issue: 7,
      iteration: 2,
      timeoutMs: 30_000,
      directory: "packages/web",
    });
    expect(linked.output.finalMessage.trim()).toBe(dir);
    expect(linked.directoryRefused).toContain("packages/web is not a directory of the work tree");
    expect(existsSync(join(outside, "web"))).toBe(false);
    await rm(outside, { recursive: true, force: true });
  });

  it("reaches a real custom agent process with neither the token nor unrelated secrets", async () => {
    const runner = createAgentRunner({
      workdir: dir,
      scratchDir: join(dir, "scratch"),
      parentEnv,
      secretValues: ["ghs_apptoken456"],
    });
    const result = await runner({
      agent: agent({
        command: `${process.execPath} -e "console.log(JSON.stringify(process.env))" {prompt_file}`,
        env: ["DATABASE_URL"],
      }),
      prompt: "print your environment",
      issue: 7,
      iteration: 1,
      timeoutMs: 30_000,
    });
    expect(result.exitCode).toBe(0);
    const seen = JSON.parse(result.output.finalMessage) as Record<string, string>;
    const text = JSON.stringify(seen);
    for (const secret of [
      "ghs_defaulttoken123",
      "ghs_apptoken456",
      "runtime-secret",
      "oidc-secret",
      "aws-secret",
    ]) {
      expect(text).not.toContain(secret);
    }
    // A custom agent gets no model key unless the configuration lists it.
    expect(seen.ANTHROPIC_API_KEY).toBeUndefined();
    expect(seen.OPENAI_API_KEY).toBeUndefined();
    expect(seen.DATABASE_URL).toBe("postgres://localhost/test");
    expect(seen.AUTOPILOT_ISSUE).toBe("7");
    expect(seen.HOME).toBe(join(dir, "scratch", "home"));
    expect(existsSync(seen.AUTOPILOT_PROMPT_FILE!)).toBe(true);
    expect(await readFile(seen.AUTOPILOT_PROMPT_FILE!, "utf8")).toBe("print your environment");
  });

  it("gives claude-code its Anthropic key and no other model key (through a stand-in claude binary)", async () => {
    const bin = await fakeCli(
      "claude",
      `const result = { type: "result", subtype: "success", is_error: false, result: JSON.stringify(process.env), usage: {}, total_cost_usd: 0 };
console.log(JSON.stringify(result));`,
    );
    const runner = createAgentRunner({
      workdir: dir,
      scratchDir: join(dir, "scratch"),
      parentEnv: { ...parentEnv, PATH: `${bin}:${parentEnv.PATH}` },
      secretValues: ["ghs_apptoken456"],
    });
    const result = await runner({
      agent: agent({ preset: "claude-code" }),
      prompt: "hello",
      issue: 7,
      iteration: 1,
      timeoutMs: 30_000,
    });
    expect(result.output.isError).toBe(false);
    const seen = JSON.parse(result.output.finalMessage) as Record<string, string>;
    expect(seen.ANTHROPIC_API_KEY).toBe("sk-ant-123");
    expect(seen.OPENAI_API_KEY).toBeUndefined();
    expect(seen.GEMINI_API_KEY).toBeUndefined();
    expect(seen.GITHUB_TOKEN).toBeUndefined();
    expect(seen["INPUT_GITHUB-TOKEN"]).toBeUndefined();
    expect(seen.IS_SANDBOX).toBe("1");
  });
});

describe("a child's stdout sent to a stream (the hand-back's pack)", () => {
  it("arrives whole, and is not kept as text", async () => {
    const chunks: Buffer[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        chunks.push(chunk);
        done();
      },
    });
    const result = await runProcess({
      command: "/bin/sh",
      args: ["-c", "head -c 300000 /dev/zero | tr '\\0' x"],
      cwd: "/",
      env: { PATH: "/usr/bin:/bin" },
      stdoutTo: sink,
    });
    expect(result.exitCode).toBe(0);
    expect(Buffer.concat(chunks).length).toBe(300_000);
    expect(result.stdout).toBe("");
  });

  it("ends a child still writing when the stream closes early, instead of leaving it blocked", async () => {
    const sink = new Writable({
      write(_chunk, _encoding, done) {
        done();
        sink.destroy();
      },
    });
    const result = await runProcess({
      command: "/usr/bin/yes",
      args: [],
      cwd: "/",
      env: { PATH: "/usr/bin:/bin" },
      stdoutTo: sink,
      timeoutMs: 60_000,
    });
    expect(result.timedOut).toBe(false);
    expect(result.signal ?? result.exitCode).not.toBe(0);
  });
});
