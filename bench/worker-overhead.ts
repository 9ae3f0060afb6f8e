/**
 * The worker's own overhead per iteration — everything but the agent: the hand-over of its tree (its `.git`
 * synced in the namespace sandbox), the hand-back of its work (staged in the sandbox, received as a pack and
 * checked), prompt build, commit, signal parse, the completion decision and the progress update — measured with
 * a no-op agent; the push to a local bare remote runs beside the agent's next turn (src/worker/job/commit.ts)
 * and is timed apart; and apart, the index refresh that a short hand-over puts in front
 * of the agent's first command (inside the agent's own sandbox run, so not in the loop's figure);
 * and the action's cold start: `node dist/worker/index.js` to its first line of work (the inputs read, the
 * secrets masked, the line naming the task) and to the end of loading (the rest of the worker imported; the run
 * then stops for want of GITHUB_REPOSITORY), beside bare `node -e 0`.
 *
 *   npx tsx bench/worker-overhead.ts [iterations] [cold starts]
 *
 * Prints two tables (median and spread); asserts nothing. Build dist/ first (`npm run bundle`).
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { markdownTable } from "markdown-table";
import { DEFAULT_CONFIG } from "../src/core/config/index.js";
import { buildPrompt } from "../src/core/agent/prompt.js";
import { parseSignal } from "../src/core/agent/signals.js";
import type { WorkerGitHub } from "../src/github/worker-github.js";
import type { WorkerComment, WorkerPull } from "../src/github/worker-github-data.js";
import type { AgentRunResult } from "../src/worker/job/agent-iteration.js";
import { setupAgentUser } from "../src/worker/isolation/agent-user.js";
import { createIsolatedParts } from "../src/worker/isolation/boundary.js";
import { runWorker } from "../src/worker/job/job.js";
import { runProcess } from "../src/worker/processes/process.js";

const ITERATIONS = Number(process.argv[2] ?? 40);
const COLD_STARTS = Number(process.argv[3] ?? 15);
const WORKER_BUNDLE = join(dirname(fileURLToPath(import.meta.url)), "..", "dist", "worker", "index.js");

/**
 * Starts a process and times it from spawn to the first stdout line containing `marker` (null: to its exit),
 * and to its exit.
 */
function timeProcess(
  args: string[],
  env: NodeJS.ProcessEnv,
  marker: string | null,
): Promise<{ line: number; exit: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let line = Number.NaN;
    let seen = "";
    const child = spawn(process.execPath, args, { env, stdio: ["ignore", "pipe", "ignore"] });
    child.stdout.on("data", (chunk: Buffer) => {
      if (marker === null || !Number.isNaN(line)) return;
      seen += chunk.toString("utf8");
      if (seen.includes(marker)) line = performance.now() - started;
    });
    child.on("error", reject);
    child.on("close", () => {
      const exit = performance.now() - started;
      resolve({ line: Number.isNaN(line) ? exit : line, exit });
    });
  });
}

/** The action's cold start, `node -e 0` and the bundle in turn (so a load that drifts hits both alike). */
async function coldStarts(runs: number): Promise<{ bare: number[]; firstLine: number[]; loaded: number[] }> {
  // This machine's environment as a shell would pass it (NODE_EXTRA_CA_CERTS, where set, makes every node
  // start read a certificate bundle: bare node pays it too), without what would let the run get further.
  const env: NodeJS.ProcessEnv = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^(GITHUB_|RUNNER_|INPUT_)/.test(name)),
  );
  env.INPUT_ISSUE = "1";
  env["INPUT_GITHUB-TOKEN"] = "bench-token";
  const bare: number[] = [];
  const firstLine: number[] = [];
  const loaded: number[] = [];
  await timeProcess([WORKER_BUNDLE], env, null); // warm the file cache
  for (let i = 0; i < runs; i++) {
    bare.push((await timeProcess(["-e", "0"], env, null)).exit);
    const run = await timeProcess([WORKER_BUNDLE], env, "Autopilot worker: issue #1");
    firstLine.push(run.line);
    loaded.push(run.exit);
  }
  return { bare, firstLine, loaded };
}

function sh(cwd: string, ...args: string[]): void {
  execFileSync("git", args, {
    cwd,
    stdio: "ignore",
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: "b",
      GIT_AUTHOR_EMAIL: "b@x",
      GIT_COMMITTER_NAME: "b",
      GIT_COMMITTER_EMAIL: "b@x",
    },
  });
}

async function repo(): Promise<{ root: string; workspace: string }> {
  const root = await mkdtemp(join(tmpdir(), "autopilot-bench-"));
  const remote = join(root, "remote.git");
  const seed = join(root, "seed");
  sh(root, "init", "-q", "--bare", "--initial-branch=main", remote);
  sh(root, "init", "-q", "--initial-branch=main", seed);
  for (let i = 0; i < 200; i++) await writeFile(join(seed, `file${i}.txt`), `line ${i}\n`.repeat(50));
  sh(seed, "add", "-A");
  sh(seed, "commit", "-qm", "seed");
  sh(seed, "push", "-q", remote, "main");
  sh(root, "clone", "-q", `file://${remote}`, join(root, "ws"));
  return { root, workspace: join(root, "ws") };
}

/** GitHub answers instantly: the bench measures the worker, not the network. */
function instantGitHub(): WorkerGitHub {
  const comments: WorkerComment[] = [];
  let requests = 0;
  const now = "2026-11-22T00:00:00Z";
  return {
    get requestCount() {
      return requests;
    },
    async listCommentsSince() {
      return [];
    },
    async reactToComment() {},
    async getIssue(issue) {
      requests++;
      return {
        number: issue,
        title: "Bench task",
        body: "Change files.".repeat(50),
        state: "open",
        labels: [],
        author: "a",
      };
    },
    async listIssueComments() {
      requests++;
      return comments;
    },
    async listIssueCommentsAndSelf() {
      requests++;
      return comments;
    },
    async readIssueWithComments(issue) {
      requests++;
      return {
        comments: [...comments],
        issue: {
          number: issue,
          title: "Bench task",
          body: "Change files.".repeat(50),
          state: "open",
          labels: [],
          author: "a",
        },
      };
    },
    async readIssueAndLabels(issue) {
      requests++;
      return {
        number: issue,
        title: "Bench task",
        body: "Change files.".repeat(50),
        state: "open",
        labels: [],
        author: "a",
      };
    },
    async labelForReview() {
      requests++;
    },
    async getComment(id) {
      requests++;
      return comments.find((c) => c.id === id) ?? null;
    },
    async createComment(_issue, body) {
      requests++;
      const comment = {
        id: comments.length + 1,
        author: "bot",
        authorType: "Bot",
        authorId: 1,
        body,
        createdAt: now,
        updatedAt: now,
      };
      comments.push(comment);
      return comment;
    },
    async updateComment(id, body) {
      requests++;
      const found = comments.find((c) => c.id === id);
      if (found) found.body = body;
    },
    async deleteComment() {},
    async getPermission() {
      return "write";
    },
    async getIssueBody() {
      requests++;
      return null;
    },
    async findOpenPull(): Promise<WorkerPull | null> {
      requests++;
      return null;
    },
    async createPull(): Promise<WorkerPull> {
      throw new Error("no PR in the bench");
    },
    async updatePull() {},
    async postReview() {
      requests++;
    },
    async addLabels() {},
    async removeLabel() {},
    async listFailingChecks() {
      return [];
    },
    async listReviewFeedback() {
      return [];
    },
    async getDefaultBranch() {
      return "main";
    },
    async getSelfId() {
      return 1;
    },
    async moveLabel() {},
    async getSelf() {
      return { id: 1, login: "autopilot[bot]" };
    },
  };
}

interface Stats {
  median: number;
  p10: number;
  p90: number;
  min: number;
  max: number;
}

function stats(samples: number[]): Stats {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * (sorted.length - 1)))]!;
  return { median: at(0.5), p10: at(0.1), p90: at(0.9), min: sorted[0]!, max: sorted.at(-1)! };
}

async function main(): Promise<void> {
  const { root, workspace } = await repo();
  const scratch = await mkdtemp(join(tmpdir(), "autopilot-bench-scratch-"));
  // The worker's real parts, as the runner wires them: the agent's tree in its namespace sandbox, its work handed
  // back as objects (src/worker/checkout/task-checkout.ts). Runs as root, like the tests.
  const user = await setupAgentUser({
    isolation: "namespace",
    env: { AUTOPILOT_AGENT_USER: "ap-bench-overhead" },
  });
  const parts = await createIsolatedParts({
    workspace,
    workerDir: join(scratch, "worker"),
    user,
    parentEnv: process.env,
    secretValues: [],
    warn: () => {},
  });
  const { git, boundary } = parts;
  const workTree = boundary.dirs.workTree;
  const agentStarts: number[] = [];
  const agentEnds: number[] = [];

  // The loop, end to end, with a no-op agent that changes one file.
  const started = performance.now();
  await runWorker(
    {
      repo: "bench/bench",
      issue: 1,
      attempt: 1,
      dispatchId: "bench",
      trackingIssue: 2,
      workspace,
      defaultBranch: "main",
    },
    {
      ...structuredClone(DEFAULT_CONFIG),
      maxIterations: ITERATIONS,
      stuckThreshold: 100,
      stuckStopThreshold: 200,
    },
    {
      git,
      agent: async (request): Promise<AgentRunResult> => {
        // What the agent runner does around the agent's process (iterations/agent-iteration.ts).
        await boundary.handOver();
        agentStarts.push(performance.now());
        await writeFile(
          join(workTree, `file${request.iteration % 200}.txt`),
          `changed in ${request.iteration}\n`,
        );
        agentEnds.push(performance.now());
        await boundary.takeBack({ capture: true });
        return {
          preset: "custom",
          output: {
            finalMessage: "working",
            isError: false,
            errorText: "",
            usage: { input: 0, output: 0 },
            costUsd: 0,
            commands: [],
          },
          exitCode: 0,
          signal: null,
          timedOut: false,
          durationMs: 0,
          refusedEnv: [],
          rawOutput: "working",
        };
      },
      quality: { detect: async () => [], run: async () => [] },
      github: instantGitHub(),
      clock: () => Date.now(),
      sleep: async () => {},
      log: { debug() {}, info() {}, warning() {}, error() {}, group() {}, endGroup() {} },
      workTree,
    },
  );
  const total = performance.now() - started;
  // Overhead of iteration i = from the agent's end in i to its start in i+1.
  const perIteration = agentEnds.slice(0, -1).map((end, i) => agentStarts[i + 1]! - end);

  // The pieces, one at a time.
  const promptTimes: number[] = [];
  const signalTimes: number[] = [];
  const commitTimes: number[] = [];
  const handOverTimes: number[] = [];
  const handBackTimes: number[] = [];
  const pushTimes: number[] = [];
  const notes = "- attempt 1, iteration 1: signal none\n".repeat(200);
  for (let i = 0; i < ITERATIONS; i++) {
    let t = performance.now();
    buildPrompt({
      repo: "bench/bench",
      issue: { number: 1, title: "Bench", body: "Change files.".repeat(500) },
      branch: "autopilot/issue-1",
      iteration: i + 1,
      maxIterations: ITERATIONS,
      humanAnswers: [{ author: "a", body: "answer ".repeat(100) }],
      reviewComments: [],
      failingChecks: [],
      qualityFailures: [{ command: "npm test", output: "FAIL ".repeat(1000) }],
      progressNotes: notes,
    });
    promptTimes.push(performance.now() - t);
    t = performance.now();
    parseSignal(
      "Done with the work.\n\n```\n<promise>COMPLETE</promise>\n```\n\n<promise>COMPLETE</promise>",
    );
    signalTimes.push(performance.now() - t);
    t = performance.now();
    await boundary.handOver();
    handOverTimes.push(performance.now() - t);
    await writeFile(join(workTree, "bench.txt"), `round ${i}\n`);
    t = performance.now();
    await boundary.takeBack({ capture: true });
    handBackTimes.push(performance.now() - t);
    t = performance.now();
    await git.commitAll(`bench ${i}`);
    commitTimes.push(performance.now() - t);
    t = performance.now();
    await git.push("autopilot/issue-1");
    pushTimes.push(performance.now() - t);
  }

  // The index refresh after a short hand-over runs in front of the agent's first command, inside its sandbox run
  // (src/worker/checkout/index-refresh.ts): its cost is that command's time with it minus its time without.
  const refreshTimes: number[] = [];
  const sandboxed = async () => {
    const t = performance.now();
    await runProcess({
      command: "/bin/true",
      args: [],
      cwd: workTree,
      env: { PATH: "/usr/bin:/bin" },
      runAs: boundary.user,
    });
    return performance.now() - t;
  };
  for (let i = 0; i < ITERATIONS; i++) {
    await boundary.handOver();
    await writeFile(join(workTree, "bench.txt"), `refresh ${i}\n`);
    await boundary.takeBack({ capture: true });
    await mkdir(join(workTree, ".autopilot"), { recursive: true });
    await writeFile(join(workTree, ".autopilot", "progress.md"), `- refresh ${i}\n`);
    await git.commitAll(`refresh ${i}`);
    await boundary.handOver();
    const withRefresh = await sandboxed();
    const without = await sandboxed();
    refreshTimes.push(withRefresh - without);
    await boundary.takeBack();
  }

  const ms = (value: number) => (value < 1 ? value.toFixed(3) : value.toFixed(1));
  const row = (name: string, samples: number[]) => {
    const s = stats(samples);
    return [name, String(samples.length), ms(s.median), ms(s.p10), ms(s.p90), ms(s.min), ms(s.max)];
  };
  console.log(`Worker overhead per iteration (no-op agent, local bare remote, 200-file repository), ms\n`);
  console.log(
    markdownTable([
      ["phase", "n", "median", "p10", "p90", "min", "max"],
      row("whole iteration (loop, end to end)", perIteration),
      row("prompt build", promptTimes),
      row("signal parse", signalTimes),
      row("hand-over (ownership; the last commit into the agent's .git, the short way)", handOverTimes),
      row("take-back with the hand-back (staged in the sandbox, pack received, checked)", handBackTimes),
      row("commit (objects only)", commitTimes),
      row("index refresh in front of the agent's first command (inside its sandbox run)", refreshTimes),
      row("git push (file://; runs beside the agent's next turn, so not in the whole iteration)", pushTimes),
    ]),
  );
  console.log(`\n${ITERATIONS} iterations in ${(total / 1000).toFixed(2)} s end to end.`);

  const cold = await coldStarts(COLD_STARTS);
  console.log(`\nWorker action cold start (\`node dist/worker/index.js\`, ${COLD_STARTS} runs), ms\n`);
  console.log(
    markdownTable([
      ["what", "n", "median", "p10", "p90", "min", "max"],
      row("bare `node -e 0`", cold.bare),
      row("to the first line of work (inputs read, secrets masked)", cold.firstLine),
      row("to the end of loading (the whole worker imported)", cold.loaded),
    ]),
  );
  await boundary.close();
  await rm(root, { recursive: true, force: true });
  await rm(scratch, { recursive: true, force: true });
}

await main();
