/**
 * The worker's own cost of handing the agent its directories and taking them back, per iteration, on a work tree
 * of 100,000 files (a `node_modules`-sized tree): the boundary's handOver (ownership to the agent's user, the
 * agent-side git sync) and takeBack (every process of the agent's uid killed, the tree made the worker's to
 * read), the start of one namespace sandbox (`bwrap … true`), and the take-back with the agent's work handed back
 * (src/worker/checkout/task-checkout.ts: staged in the sandbox, received as a pack, checked), in `namespace` and
 * `uid` modes. Runs as root
 * (the agent's user is created as the tests' is).
 *
 *   npx tsx bench/handover.ts [files] [iterations]
 *
 * Prints a table (median and spread); asserts nothing.
 */
import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { markdownTable } from "markdown-table";
import { type IsolationMode, setupAgentUser } from "../src/worker/isolation/agent-user.js";
import { createIsolatedParts } from "../src/worker/isolation/boundary.js";
import { runProcess } from "../src/worker/processes/process.js";
import { writeTreeFile } from "../src/worker/checkout/tree-files.js";

const FILES = Number(process.argv[2] ?? 100_000);
const ITERATIONS = Number(process.argv[3] ?? 7);

function stats(samples: number[]): string {
  const sorted = [...samples].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)]!;
  return `${median.toFixed(0)} ms (${sorted[0]!.toFixed(0)}–${sorted.at(-1)!.toFixed(0)})`;
}

/** A checkout of `files` files in directories of 100, committed (as actions/checkout leaves one). */
async function checkout(root: string): Promise<string> {
  const workspace = join(root, "ws");
  for (let d = 0; d < FILES / 100; d++) {
    const dir = join(workspace, "node_modules", `pkg-${d}`);
    await mkdir(dir, { recursive: true });
    await Promise.all(
      Array.from({ length: 100 }, (_, f) => writeFile(join(dir, `f${f}.js`), `module.exports = ${f};\n`)),
    );
  }
  const git = (...args: string[]) =>
    execFileSync("git", args, {
      cwd: workspace,
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: "b",
        GIT_AUTHOR_EMAIL: "b@x",
        GIT_COMMITTER_NAME: "b",
        GIT_COMMITTER_EMAIL: "b@x",
      },
    });
  git("init", "-q", "-b", "main");
  git("add", "-A");
  git("commit", "-qm", "tree");
  return workspace;
}

async function measure(mode: IsolationMode, root: string): Promise<string[]> {
  const workspace = await checkout(join(root, mode));
  const user = await setupAgentUser({ isolation: mode, env: { AUTOPILOT_AGENT_USER: "ap-bench-handover" } });
  const parts = await createIsolatedParts({
    workspace,
    workerDir: join(root, mode, "worker"),
    user,
    parentEnv: process.env,
    secretValues: [],
    warn: () => {},
  });
  const handOver: number[] = [];
  const takeBack: number[] = [];
  const start: number[] = [];
  const handBack: number[] = [];
  // The first hand-over gives the whole tree once; the iterations after it are what each iteration costs.
  await parts.boundary.handOver();
  await parts.boundary.takeBack();
  for (let i = 0; i < ITERATIONS; i++) {
    // The worker wrote something between iterations (its progress notes, through tree-files.ts), as in a job.
    await writeTreeFile(parts.boundary.dirs.workTree, `.autopilot/notes-${i}.md`, "notes\n");
    let t = performance.now();
    await parts.boundary.handOver();
    handOver.push(performance.now() - t);
    t = performance.now();
    await runProcess({
      command: "/bin/true",
      args: [],
      cwd: parts.boundary.dirs.workTree,
      env: {},
      runAs: user,
    });
    start.push(performance.now() - t);
    // The agent changed a few files.
    t = performance.now();
    await parts.boundary.takeBack();
    takeBack.push(performance.now() - t);
    // The same turn again, its work handed back (staged in the sandbox, received as a pack, checked).
    await parts.boundary.handOver();
    await runProcess({
      command: "/bin/sh",
      args: ["-c", `echo change ${i} > changed-${i}.txt`],
      cwd: parts.boundary.dirs.workTree,
      env: {},
      runAs: user,
    });
    t = performance.now();
    await parts.boundary.takeBack({ capture: true });
    handBack.push(performance.now() - t);
  }
  await parts.boundary.close();
  const total = handOver.map((h, i) => h + takeBack[i]!);
  return [mode, stats(handOver), stats(takeBack), stats(total), stats(start), stats(handBack)];
}

const root = await mkdtemp(join(tmpdir(), "autopilot-bench-handover-"));
try {
  const rows = [];
  for (const mode of ["namespace", "uid"] as const) rows.push(await measure(mode, root));
  console.log(`Hand-over per iteration, ${FILES.toLocaleString("en")} files, ${ITERATIONS} iterations\n`);
  console.log(
    markdownTable([
      [
        "isolation",
        "handOver",
        "takeBack",
        "handOver + takeBack",
        "one command in the sandbox (/bin/true)",
        "takeBack with the hand-back",
      ],
      ...rows,
    ]),
  );
} finally {
  await rm(root, { recursive: true, force: true });
}
