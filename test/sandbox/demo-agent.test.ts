import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  DEMO_AGENT_PATH,
  type DemoAgentEntryInput,
  DemoAgentEntrySchema,
  demoAgentCommand,
  readDemoAgentState,
  writeDemoScript,
} from "../../sandbox/scenario/agent/demo-agent.js";
import { gitEnv, run } from "../../sandbox/emulator/proc.js";

let dir: string;
let repo: string;
let scriptPath: string;

async function git(args: string[]) {
  const result = await run("git", args, { cwd: repo, env: gitEnv() });
  if (result.code !== 0) throw new Error(result.stderr);
  return result.stdout.trim();
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "demo-agent-"));
  repo = join(dir, "repo");
  await run("git", ["init", "-q", "-b", "main", repo], { env: gitEnv() });
  writeFileSync(join(repo, "README.md"), "# demo\n");
  await git(["add", "."]);
  await git(["commit", "-qm", "init"]);
});

afterEach(() => rmSync(dir, { recursive: true, force: true }));

function script(issues: Record<number, DemoAgentEntryInput>): void {
  const parsed = Object.fromEntries(
    Object.entries(issues).map(([n, e]) => [n, DemoAgentEntrySchema.parse(e)]),
  );
  scriptPath = writeDemoScript(join(dir, "agent"), parsed);
}

/** Runs the agent as the worker's `custom` preset would: the command line with {prompt_file} substituted. */
async function agent(issue: number, prompt: string) {
  await git(["checkout", "-q", "-B", `autopilot/issue-${issue}`]);
  const promptFile = join(dir, "prompt.md");
  writeFileSync(promptFile, prompt);
  const command = demoAgentCommand(scriptPath).replace("{prompt_file}", promptFile);
  const result = await run("sh", ["-c", command], { cwd: repo, env: { PATH: process.env.PATH } });
  const status = await git(["status", "--porcelain"]);
  if (status) {
    await git(["add", "-A"]);
    await git(["commit", "-qm", `iteration for #${issue}`]);
  }
  return { ...result, changed: status };
}

const read = (path: string) => readFileSync(join(repo, path), "utf8");

describe("the demo agent", () => {
  it("edits its files and signals COMPLETE, printing its final message last", async () => {
    script({
      3: {
        behavior: "complete",
        files: { "src/sum.js": "export const sum = (a, b) => a + b;\n" },
        summary: "Added sum.",
      },
    });
    const out = await agent(3, "Task: issue #3");
    expect(out.code).toBe(0);
    expect(read("src/sum.js")).toContain("a + b");
    expect(out.stdout.trimEnd().endsWith("<promise>COMPLETE</promise>")).toBe(true);
    expect(out.stdout).toContain("Added sum.");
    expect(readDemoAgentState(scriptPath, 3).runs).toBe(1);
  });

  it("gives the objective marker with its statement after doing the work", async () => {
    script({
      6: {
        behavior: "objective",
        files: { "src/euros.js": "export const euros = (c) => c / 100;\n" },
        objective: "euros(cents) divides by 100.",
      },
    });
    const out = await agent(6, "Task: issue #6");
    expect(out.code).toBe(0);
    expect(read("src/euros.js")).toContain("c / 100");
    expect(
      out.stdout.trimEnd().endsWith("<promise>OBJECTIVE_MET: euros(cents) divides by 100.</promise>"),
    ).toBe(true);
  });

  it("finds its issue from the branch even when the prompt names others", async () => {
    script({ 4: { behavior: "blocked", reason: "needs the payments API key" }, 5: { behavior: "complete" } });
    const out = await agent(4, "Depends on #5");
    expect(out.stdout).toContain("<promise>BLOCKED: needs the payments API key</promise>");
  });

  it("fails the quality gate once, then fixes it when the failure is in the prompt", async () => {
    script({
      6: {
        behavior: "fail-gate-once",
        files: { "src/tax.js": "export const tax = (n) => n * 0.2;\n" },
        broken: { "src/tax.js": "export const tax = (n) => n * 2;\n" },
      },
    });
    const first = await agent(6, "Implement tax");
    expect(read("src/tax.js")).toContain("n * 2");
    expect(first.stdout).toContain("<promise>COMPLETE</promise>");
    const second = await agent(6, "Implement tax\n\nQuality gate failed:\nnot ok 1 - tax is 20%\n");
    expect(read("src/tax.js")).toContain("n * 0.2");
    expect(second.stdout).toContain("Read the failure: not ok 1 - tax is 20%");
    expect(second.stdout).toContain("<promise>COMPLETE</promise>");
  });

  it("asks a question until the answer is in the prompt, then completes", async () => {
    script({
      7: {
        behavior: "needs-human",
        question: "Should prices round up or down?",
        answerIncludes: "round down",
        files: { "src/round.js": "export const round = Math.floor;\n" },
      },
    });
    const asked = await agent(7, "Implement rounding");
    expect(asked.stdout.trim().split("\n").at(-1)).toBe(
      "<promise>NEEDS_HUMAN: Should prices round up or down?</promise>",
    );
    expect(asked.changed).toBe("");
    const answered = await agent(7, "Implement rounding\n\nHuman answer (@alice): Round down, always.");
    expect(answered.stdout).toContain("<promise>COMPLETE</promise>");
    expect(read("src/round.js")).toContain("floor");
  });

  it("works without a signal until a maintainer's comment is in the prompt, then completes (steered)", async () => {
    script({
      17: {
        behavior: "steered",
        answerIncludes: "negative amounts",
        revisionFile: "notes/amounts.md",
        files: { "src/amount.js": "export const parseAmount = (t) => Math.round(Number(t) * 100);\n" },
      },
    });
    const working = await agent(17, "Parse amounts");
    expect(working.stdout).not.toContain("<promise>");
    expect(read("notes/amounts.md")).toContain("Still working (run 1)");
    const steered = await agent(17, "Parse amounts\n\nComment from @bob: also accept negative amounts.");
    expect(steered.stdout).toContain("<promise>COMPLETE</promise>");
    expect(read("src/amount.js")).toContain("parseAmount");
  });

  it("prints Claude Code's rate-limit text once, then succeeds", async () => {
    script({ 8: { behavior: "rate-limit-once", files: { "a.txt": "a\n" } } });
    const limited = await agent(8, "go");
    expect(limited.code).toBe(1);
    expect(limited.stderr).toBe("");
    expect(limited.stdout).toMatch(/^API Error: Request rejected \(429\) · /);
    const ok = await agent(8, "go");
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain("<promise>COMPLETE</promise>");
  });

  it("prints a usage limit with its reset time", async () => {
    script({ 9: { behavior: "usage-limit", resetInSeconds: 120 } });
    const before = Math.floor(Date.now() / 1000);
    const out = await agent(9, "go");
    expect(out.code).toBe(1);
    const match = /Claude AI usage limit reached\|(\d+)/.exec(out.stdout);
    expect(Number(match?.[1])).toBeGreaterThanOrEqual(before + 119);
  });

  it("never finishes: commits progress but never signals", async () => {
    script({ 10: { behavior: "never-finish" } });
    for (let i = 0; i < 2; i++) {
      const out = await agent(10, "go");
      expect(out.code).toBe(0);
      expect(out.stdout).not.toContain("<promise>");
      expect(out.changed).not.toBe("");
    }
  });

  it("records each run's prompt and agent name, keeps notes in a new folder, and takes its time when told", async () => {
    script({ 12: { behavior: "never-finish", revisionFile: "notes/progress.md", sleepSeconds: 0.5 } });
    const promptFile = join(dir, "prompt.md");
    await git(["checkout", "-q", "-B", "autopilot/issue-12"]);
    writeFileSync(promptFile, "Task: issue #12. A person answered: use cents.");
    const command = `${demoAgentCommand(scriptPath).replace("{prompt_file}", promptFile)} --agent fallback`;
    const started = Date.now();
    const out = await run("sh", ["-c", command], { cwd: repo, env: { PATH: process.env.PATH } });
    expect(out.code).toBe(0);
    expect(Date.now() - started).toBeGreaterThanOrEqual(500);
    expect(read("notes/progress.md")).toBe("Still working (run 1)\n");
    const state = readDemoAgentState(scriptPath, 12);
    expect(state.log).toEqual([
      expect.objectContaining({
        agent: "fallback",
        prompt: "Task: issue #12. A person answered: use cents.",
      }),
    ]);
  });

  it("touches a gated path, and revises it after a review asks for changes", async () => {
    script({ 11: { behavior: "gated" } });
    await agent(11, "Add orders table");
    expect(existsSync(join(repo, "migrations/001_create_orders.sql"))).toBe(true);
    const second = await agent(11, "Review by @bob (changes requested): add an index on id");
    expect(second.changed).not.toBe("");
    expect(read("migrations/001_create_orders.sql")).toContain("-- Revision 2: ");
  });

  it("fixes a CI failure from the summary in its prompt", async () => {
    script({
      12: {
        behavior: "ci-fix",
        files: { "src/cart.js": "export const total = (items) => items.length;\n" },
        broken: { "src/cart.js": "// TODO remove\nexport const total = (items) => items.length;\n" },
      },
    });
    await agent(12, "Add cart total");
    expect(read("src/cart.js")).toContain("TODO");
    const fixed = await agent(
      12,
      "Add cart total\n\nFailing check `ci`:\nlint: src/cart.js:1 error: TODO comments are not allowed\n",
    );
    expect(read("src/cart.js")).not.toContain("TODO");
    expect(fixed.stdout).toContain("CI reported: lint: src/cart.js:1 error: TODO comments are not allowed");
  });

  it("hangs when told to, until killed", async () => {
    script({ 13: { behavior: "hang" } });
    await git(["checkout", "-q", "-B", "autopilot/issue-13"]);
    // Waits for the agent to say it is working (after it recorded its run), not for a timer: a loaded machine
    // may take seconds to start node.
    const agent = spawn(process.execPath, [DEMO_AGENT_PATH, "--script", scriptPath, "prompt"], { cwd: repo });
    const closed = once(agent, "close") as Promise<[number | null, NodeJS.Signals | null]>;
    let said = "";
    for await (const chunk of agent.stdout) {
      said += String(chunk);
      if (said.includes("Working")) break;
    }
    // Still running a while after it spoke: it does not finish on its own.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(agent.exitCode).toBeNull();
    agent.kill("SIGKILL");
    const [, signal] = await closed;
    expect(signal).toBe("SIGKILL");
    expect(readDemoAgentState(scriptPath, 13).runs).toBe(1);
  });

  it("rejects an unknown behaviour with the list of known ones", () => {
    const parsed = DemoAgentEntrySchema.safeParse({ behavior: "dance" });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.message).toMatch(
      /unknown behavior "dance"; expected one of complete, objective, broken/,
    );
  });
});
