/**
 * The test gate where the worker runs it, with real files and real processes: a failing quality command is run
 * again before it counts (a flaky one passes and says so; a hang is not re-run), the test frameworks a project
 * shows are detected with their non-interactive commands, and the coverage report is read through the worker's
 * real parts (boundary.ts) as the agent's own OS user writes it — including the reports an agent could plant to
 * fake a pass (a committed report, a link to another file, an oversized file), each refused.
 */
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createIsolatedParts } from "../../src/worker/isolation/boundary.js";
import type { ProcessResult, RunProcessOptions } from "../../src/worker/processes/process.js";
import { detectQualityCommands, runQualityCommands } from "../../src/worker/processes/quality.js";
import { renderQualityCell } from "../../src/worker/job/progress-comment.js";
import type { QualityRunner } from "../../src/worker/worker-deps.js";
import { remoteAndClone, testAgentUser } from "./fixtures/real.js";

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});
async function temp(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "autopilot-gate-"));
  dirs.push(dir);
  return dir;
}

/** A command that fails until it has run `passOn` times (its count kept in a file), appending each run. */
const countingCommand = (dir: string, passOn: number) =>
  `n=$(($(cat ${dir}/count 2>/dev/null || echo 0) + 1)); echo $n > ${dir}/count; echo "run $n" >> ${dir}/runs; ` +
  `echo "test run $n: $([ $n -ge ${passOn} ] && echo ok || echo 'expected 2 to be 3')"; [ $n -ge ${passOn} ]`;

/** One quality command in `dir`, with the worker's re-run setting and time limit. */
const runOnce = (dir: string, command: string, limits: { timeoutMs: number; reruns: number }) =>
  runQualityCommands({ commands: [command], cwd: dir, env: { PATH: process.env.PATH ?? "" }, ...limits });

describe("re-running a failing quality command (flaky tests)", () => {
  it("passes a command that fails once and passes on its re-run, and says it was flaky", async () => {
    const dir = await temp();
    const [result] = await runOnce(dir, countingCommand(dir, 2), { timeoutMs: 30_000, reruns: 3 });
    expect(result).toMatchObject({ passed: true, flaky: true, runs: 2 });
    expect(result!.output).toContain("[flaky: failed 1 time, passed on run 2; the first failure:]");
    expect(result!.output).toContain("expected 2 to be 3");
    expect(await readFile(join(dir, "runs"), "utf8")).toBe("run 1\nrun 2\n");
  });

  it("fails a command that fails every time after 1 + reruns runs", async () => {
    const dir = await temp();
    const [result] = await runOnce(dir, countingCommand(dir, 99), { timeoutMs: 30_000, reruns: 3 });
    expect(result).toMatchObject({ passed: false, flaky: false, runs: 4 });
    expect(result!.output).toMatch(/^\[failed all 4 runs; the last one:\]\ntest run 4/);
  });

  it("runs each command once with reruns 0 (the flaky command fails)", async () => {
    const dir = await temp();
    const [result] = await runOnce(dir, countingCommand(dir, 2), { timeoutMs: 30_000, reruns: 0 });
    expect(result!.passed).toBe(false);
    expect(result!.runs).toBeUndefined();
    expect(await readFile(join(dir, "runs"), "utf8")).toBe("run 1\n");
  });

  it("does not run again a command its time limit stopped", async () => {
    const dir = await temp();
    const [result] = await runOnce(dir, `echo run >> ${dir}/runs; sleep 30`, { timeoutMs: 300, reruns: 3 });
    expect(result!.timedOut).toBe(true);
    expect(await readFile(join(dir, "runs"), "utf8")).toBe("run\n");
  });
});

describe("the quality step's time, shared by every command and re-run", () => {
  /** A runner that fails every command and takes `ms` of the (fake) clock per run; it records what it was given. */
  function slowFailures(ms: number) {
    let clock = 0;
    const given: { command: string; timeoutMs: number }[] = [];
    const run = async (o: RunProcessOptions): Promise<ProcessResult> => {
      const limit = o.timeoutMs ?? Number.POSITIVE_INFINITY;
      const took = Math.min(ms, limit);
      given.push({ command: o.args?.[1] ?? "", timeoutMs: limit });
      clock += took;
      return {
        exitCode: took < ms ? null : 1,
        signal: null,
        stdout: "FAIL",
        stderr: "",
        timedOut: took < ms,
        aborted: false,
        durationMs: took,
        truncated: false,
        pid: 1,
      };
    };
    return { run, now: () => clock, given };
  }

  it("ends within the step's time however many re-runs and commands are left, and fails what it could not run", async () => {
    const fake = slowFailures(400);
    const results = await runQualityCommands({
      commands: ["npm test", "npm run lint"],
      cwd: "/nowhere",
      env: {},
      timeoutMs: 1_000,
      reruns: 3,
      run: fake.run,
      now: fake.now,
    });
    // 400 + 400 + what was left (200): the last run gets only the rest of the step's time, and lint none.
    expect(fake.given.map((g) => g.timeoutMs)).toEqual([1_000, 600, 200]);
    expect(fake.now()).toBeLessThanOrEqual(1_000);
    expect(results.map((r) => r.passed)).toEqual([false, false]);
    expect(results[1]!.output).toContain("not run: the quality step's 1 s were used up");
  });
});

describe("test framework detection without a test script", () => {
  it("finds Vitest, Jest, Playwright and Cypress from package.json dependencies, unit tests first", async () => {
    const dir = await temp();
    await writeFile(
      join(dir, "package.json"),
      JSON.stringify({
        scripts: { lint: "biome check ." },
        devDependencies: { cypress: "^14", "@playwright/test": "^1.50", jest: "^30", vitest: "^4" },
      }),
    );
    expect(await detectQualityCommands(dir)).toEqual([
      "npm run lint",
      "npx --no vitest run",
      "npx --no jest --ci",
      "npx --no playwright test",
      "npx --no cypress run",
    ]);
  });

  it("finds them from their config files and package.json's jest key, through the project's package manager", async () => {
    const dir = await temp();
    await writeFile(
      join(dir, "package.json"),
      JSON.stringify({ name: "x", jest: { testEnvironment: "node" } }),
    );
    await writeFile(join(dir, "playwright.config.ts"), "export default {};\n");
    await writeFile(join(dir, "pnpm-lock.yaml"), "");
    expect(await detectQualityCommands(dir)).toEqual(["pnpm exec jest --ci", "pnpm exec playwright test"]);
    await writeFile(join(dir, "vitest.config.mts"), "export default {};\n");
    await rm(join(dir, "pnpm-lock.yaml"));
    await writeFile(join(dir, "yarn.lock"), "");
    expect(await detectQualityCommands(dir)).toEqual([
      "yarn vitest run",
      "yarn jest --ci",
      "yarn playwright test",
    ]);
  });

  it("leaves the project's own test script alone, and npm's placeholder does not count as one", async () => {
    const dir = await temp();
    await writeFile(
      join(dir, "package.json"),
      JSON.stringify({ scripts: { test: "vitest run --coverage" }, devDependencies: { vitest: "^4" } }),
    );
    expect(await detectQualityCommands(dir)).toEqual(["npm test"]);
    await writeFile(
      join(dir, "package.json"),
      JSON.stringify({
        scripts: { test: 'echo "Error: no test specified" && exit 1' },
        devDependencies: { vitest: "^4" },
      }),
    );
    expect(await detectQualityCommands(dir)).toEqual(["npx --no vitest run"]);
  });

  it("does not take a config file's name from a link or a directory", async () => {
    const dir = await temp();
    await writeFile(join(dir, "package.json"), "{}");
    await mkdir(join(dir, "vitest.config.ts"));
    await symlink("/etc/hostname", join(dir, "cypress.config.js"));
    expect(await detectQualityCommands(dir)).toEqual([]);
  });
});

describe("the coverage gate through the worker's real parts, as the agent's user", () => {
  let root: string;
  let workTree: string;
  let quality: QualityRunner;
  let resetWorkTree: () => Promise<void>;
  const lcov = (hit: number, of: number) =>
    `SF:src/a.js\\n${Array.from({ length: of }, (_, i) => `DA:${i + 1},${i < hit ? 1 : 0}`).join("\\n")}\\nend_of_record\\n`;
  const writeReport = (hit: number, of: number, path = "coverage/lcov.info") =>
    `mkdir -p coverage && printf '${lcov(hit, of)}' > ${path}`;
  const gate = (threshold: number, report = "auto") => ({ reruns: 0, coverage: { threshold, report } });
  const TIMEOUT = 60_000;

  beforeAll(async () => {
    const repo = await remoteAndClone({
      "README.md": "# gate\n",
      // A report the agent committed: 100 % of lines, written by no test.
      "coverage/lcov.info": "SF:src/a.js\nDA:1,1\nDA:2,1\nend_of_record\n",
    });
    root = repo.root;
    const parts = await createIsolatedParts({
      workspace: repo.workspace,
      workerDir: join(root, "worker"),
      agentBase: root,
      user: await testAgentUser(),
      parentEnv: { PATH: process.env.PATH ?? "/usr/bin:/bin", LANG: "C.UTF-8" },
      secretValues: [],
      killGraceMs: 500,
      warn: () => {},
    });
    quality = parts.quality;
    resetWorkTree = () => parts.git.resetWorkTree();
    workTree = parts.boundary.dirs.workTree;
  }, 120_000);

  afterAll(async () => {
    if (root) await rm(root, { recursive: true, force: true });
  });

  it("passes when the report the commands wrote meets the threshold, and shows the measure", async () => {
    const results = await quality.run(["true", writeReport(9, 10)], TIMEOUT, gate(80));
    expect(results.map((r) => [r.command, r.passed])).toEqual([
      ["true", true],
      [writeReport(9, 10), true],
      ["coverage ≥ 80%", true],
    ]);
    expect(results[2]!.detail).toBe("90% of lines");
    expect(results[2]!.output).toContain("coverage 90% of lines (9/10, lcov coverage/lcov.info) meets");
  });

  it("fails under the threshold with the measured coverage and what to do", async () => {
    const [, coverage] = await quality.run([writeReport(7, 10)], TIMEOUT, gate(80));
    expect(coverage).toMatchObject({ command: "coverage ≥ 80%", passed: false });
    expect(coverage!.output).toContain("70% of lines (7/10");
    expect(coverage!.output).toContain("below the threshold of 80%: add tests");
  });

  it("does not count a report the agent committed or left behind: only one the commands write", async () => {
    await resetWorkTree();
    expect(await readFile(join(workTree, "coverage/lcov.info"), "utf8")).toContain("DA:2,1");
    const [, coverage] = await quality.run(["echo tests pass"], TIMEOUT, gate(80));
    expect(coverage!.passed).toBe(false);
    expect(coverage!.output).toMatch(/^no coverage report found after the quality commands/);
  });

  it("reads the configured path, and refuses a report that is a link to another file", async () => {
    const fake = join(root, "fake-lcov.info");
    await writeFile(fake, "SF:a.js\nDA:1,1\nend_of_record\n");
    const results = await quality.run(
      [`mkdir -p out && ln -sf ${fake} out/cov.info`],
      TIMEOUT,
      gate(80, "out/cov.info"),
    );
    expect(results[1]!.passed).toBe(false);
    expect(results[1]!.output).toMatch(
      /coverage report out\/cov\.info cannot be read: out\/cov\.info is not a regular file/,
    );
  });

  it("refuses a report through a linked directory", async () => {
    const elsewhere = join(root, "elsewhere");
    await mkdir(elsewhere, { recursive: true });
    await writeFile(join(elsewhere, "lcov.info"), "SF:a.js\nDA:1,1\nend_of_record\n");
    const results = await quality.run(
      [`rm -rf cov && ln -s ${elsewhere} cov`],
      TIMEOUT,
      gate(80, "cov/lcov.info"),
    );
    expect(results[1]!.passed).toBe(false);
    expect(results[1]!.output).toMatch(/cannot be read: cov is not a plain directory/);
  });

  it("refuses a report over the size limit without reading it", async () => {
    const results = await quality.run(
      ["mkdir -p coverage && : > coverage/lcov.info && truncate -s 40M coverage/lcov.info"],
      TIMEOUT,
      gate(80),
    );
    expect(results[1]!.passed).toBe(false);
    expect(results[1]!.output).toMatch(/coverage\/lcov\.info is 41943040 bytes, over the limit of 33554432/);
  });

  it("fails a malformed report with the problem, not a crash", async () => {
    const results = await quality.run(
      ["mkdir -p coverage && printf 'SF:a.js\\nDA:1,lots\\nend_of_record\\n' > coverage/lcov.info"],
      TIMEOUT,
      gate(50),
    );
    expect(results[1]!.passed).toBe(false);
    expect(results[1]!.output).toContain("lcov line 2: not an lcov line");
  });

  it("does not judge coverage when a command failed (the failure is what the agent must fix first)", async () => {
    const results = await quality.run([writeReport(10, 10), "exit 1"], TIMEOUT, gate(80));
    expect(results.map((r) => r.passed)).toEqual([true, false]);
  });
});

describe("the pull request says what the gate saw", () => {
  it("marks a flaky command and shows the coverage measured", () => {
    const cell = renderQualityCell([
      {
        command: "npm test",
        passed: true,
        exitCode: 0,
        timedOut: false,
        durationMs: 5,
        output: "",
        runs: 3,
        flaky: true,
      },
      {
        command: "coverage ≥ 80%",
        passed: true,
        exitCode: null,
        timedOut: false,
        durationMs: 1,
        output: "",
        detail: "91.5% of lines",
      },
    ]);
    expect(cell).toBe("⚠️ `npm test` (flaky: passed on run 3) · ✅ `coverage ≥ 80%` (91.5% of lines)");
  });

  it("shows a command as it is typed: a code span shows no HTML entity decoded, and a pipe stays in its cell", () => {
    const result = (command: string) => ({
      command,
      passed: false,
      exitCode: 1,
      timedOut: false,
      durationMs: 1,
      output: "",
    });
    expect(renderQualityCell([result("cd packages/api && npm test -- --grep '<slow>' | tee `log`")])).toBe(
      "❌ `cd packages/api && npm test -- --grep '<slow>' \\| tee 'log'`",
    );
  });
});
