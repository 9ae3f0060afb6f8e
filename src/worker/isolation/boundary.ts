/**
 * The line between the worker and the agent, on disk. Before any agent runs:
 * - the checkout's `.git` (made by actions/checkout, so still trustworthy) is moved into the worker's private
 *   directory (mode 0700): it becomes the repository the worker commits and pushes from, used with no work tree,
 *   and only the worker can read or write it;
 * - the agent gets its own directory under the system temp dir: `work/` (a copy of the checkout's files, its
 *   work tree), `home/` and `tmp/`, owned by the agent user while it runs and by the worker while the worker
 *   holds them; prompt files sit beside them, readable but not writable by the agent;
 * - the agent's work tree gets a `.git` of its own, filled from a bundle of the task branch by a git process
 *   running as the agent user in its sandbox (checkout/agent-side-git.ts). The agent may do anything in it.
 * Before each agent or quality run the agent's directories are handed over (chown, then the bundle sync); after
 * it, every process of the agent's uid is killed, the agent's side hands the work back as a pack of objects the
 * worker checks (checkout/task-checkout.ts), and the directories are taken back. No worker git ever runs over
 * the agent's tree.
 */
import { chmod, cp, mkdir, mkdtemp, rename, rm, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { treeDirectory } from "./tree-directory.js";
import type { AgentUser } from "./agent-user.js";
import { buildAgentEnv } from "./agent-env.js";
import { type AgentRunner, createAgentRunner } from "../job/agent-iteration.js";
import { Git } from "../checkout/private-git.js";
import { AgentSideGit } from "../checkout/agent-side-git.js";
import { TaskCheckout } from "../checkout/task-checkout.js";
import { PROGRESS_NOTES_PATH } from "../../core/agent/prompt.js";
import type { QualityRunner } from "../worker-deps.js";
import { clearCoverageReports, readCoverageGate } from "../processes/coverage-gate.js";
import {
  detectQualityCommands,
  type QualityCommandResult,
  runQualityCommands,
} from "../processes/quality.js";
import { toolchainDirs, unreachableToolchainDirs, unreachableToolchainText } from "./toolchain-reach.js";
import { reportIgnoredPath, trustedShell, workerBinaries } from "./trusted-binaries.js";
import { refreshingIndex } from "../checkout/index-refresh.js";
import { distrustTreeWritesSoFar, noteTreeUnknown, takeTreeWrites } from "../checkout/tree-writes.js";

export interface BoundaryDirs {
  /** The original checkout (GITHUB_WORKSPACE): its `.git` is moved out while the worker runs. */
  workspace: string;
  /** The worker's private git directory (the checkout's `.git`, moved). */
  gitDir: string;
  /** The agent's directory: prompt files, and the three directories below. */
  agentDir: string;
  workTree: string;
  home: string;
  tmp: string;
  /** Files the worker hands the agent to read (prompts, the sync bundle): the worker's, readable by the agent. */
  inbox: string;
}

class CheckoutError extends Error {
  override readonly name = "CheckoutError";
}

async function isDirectory(dir: string): Promise<boolean> {
  try {
    return (await stat(dir)).isDirectory();
  } catch {
    return false;
  }
}

/** Renames `from` to `to`, copying then removing it when they are on different file systems. */
async function move(from: string, to: string): Promise<void> {
  try {
    await rename(from, to);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EXDEV") throw error;
    await cp(from, to, { recursive: true, verbatimSymlinks: true });
    await rm(from, { recursive: true, force: true });
  }
}

/** Moves the checkout's `.git` into `workerDir` and makes the agent's directory with a copy of the files. */
async function isolateCheckout(options: {
  workspace: string;
  /** The worker's private directory (created 0700 if missing). */
  workerDir: string;
  /** Where the agent's directory is made (default: the system temp dir, reachable by any user). */
  agentBase?: string;
  /** The agent's directory itself (tests that must know the work tree's path in advance); made if missing. */
  agentDir?: string;
  /**
   * The agent reaches its directories only through the namespace sandbox's binds: the agent's directory is then
   * 0700, so no other user on the host (another job's agent, a set-user-ID file of the agent's run by someone
   * else) reaches the tree the worker reads.
   */
  sandboxed?: boolean;
}): Promise<BoundaryDirs> {
  const { workspace, workerDir } = options;
  const source = path.join(workspace, ".git");
  if (!(await isDirectory(source)))
    throw new CheckoutError(
      `${workspace} is not a git checkout (no .git directory): run actions/checkout before the Autopilot step`,
    );
  await mkdir(workerDir, { recursive: true, mode: 0o700 });
  await chmod(workerDir, 0o700);
  const gitDir = path.join(workerDir, "repo.git");
  await move(source, gitDir);
  let agentDir = options.agentDir;
  if (agentDir) await mkdir(agentDir, { recursive: true });
  else agentDir = await mkdtemp(path.join(options.agentBase ?? os.tmpdir(), "autopilot-agent-"));
  // Without a sandbox, traversable, so the agent can reach its work tree and read its prompt; only the worker
  // writes it.
  await chmod(agentDir, options.sandboxed ? 0o700 : 0o755);
  const workTree = path.join(agentDir, "work");
  // Untracked files the workflow made before this step (installed dependencies) come along.
  await cp(workspace, workTree, { recursive: true, verbatimSymlinks: true });
  const home = path.join(agentDir, "home");
  const tmp = path.join(agentDir, "tmp");
  await mkdir(home, { recursive: true });
  await mkdir(tmp, { recursive: true });
  const inbox = path.join(agentDir, "inbox");
  await mkdir(inbox, { recursive: true, mode: 0o755 });
  await chmod(inbox, 0o755);
  return { workspace, gitDir, agentDir, workTree, home, tmp, inbox };
}

/** Puts the private `.git` back into the checkout (for the job's later steps) and removes the agent's directory. */
async function restoreCheckout(dirs: BoundaryDirs): Promise<void> {
  const target = path.join(dirs.workspace, ".git");
  if (!(await isDirectory(target)) && (await isDirectory(dirs.gitDir))) await move(dirs.gitDir, target);
  await rm(dirs.agentDir, { recursive: true, force: true });
}

export interface Boundary {
  dirs: BoundaryDirs;
  user: AgentUser;
  /** Gives the agent its directories and brings its own `.git` (and, when the worker moved the branch, its files). */
  handOver(): Promise<void>;
  /**
   * Kills every process of the agent's uid and takes its directories back; with `capture`, first has the agent's
   * side hand its work back as objects (task-checkout.ts), while the tree is still its own.
   */
  takeBack(options?: { capture?: boolean }): Promise<number>;
  /** The end of the job: everything of the agent killed, the checkout's `.git` put back. */
  close(): Promise<void>;
}

function createBoundary(options: {
  dirs: BoundaryDirs;
  user: AgentUser;
  checkout: TaskCheckout;
  parentEnv: NodeJS.ProcessEnv;
}): Boundary {
  const { dirs, user, checkout } = options;
  const owned = [dirs.workTree, dirs.home, dirs.tmp];
  // Every command of the agent's user goes through this one (the agent's, the setup's, the quality commands').
  const tools = { git: workerBinaries(options.parentEnv.PATH).require("git"), shell: trustedShell() };
  const commandUser = refreshingIndex(user, tools, () => checkout.takeIndexRefresh());
  return {
    dirs,
    user: commandUser,
    async handOver() {
      // The worker's last commit into the agent's `.git` while the tree is still the worker's: what that writes
      // is among the writes the give below hands over.
      await checkout.bringCommitted();
      // What the worker wrote into the work tree since the last hand-over (tree-writes.ts); home and tmp, small
      // and written by the worker without a record (an agent's config directory), are walked.
      const written = takeTreeWrites(dirs.workTree);
      try {
        await user.give(owned, new Map([[dirs.workTree, written]]));
      } catch (error) {
        noteTreeUnknown(dirs.workTree);
        throw error;
      }
      await checkout.syncAgent();
    },
    async takeBack(takeOptions) {
      const capture = takeOptions?.capture ?? false;
      // Outside a namespace the agent's processes outlive its command: none may change the tree while its side
      // stages it. In a namespace the kernel ended them with the sandbox, and the capture runs in a sandbox of its
      // own: the one scan after it is the belt for both.
      let killed = capture && user.mode === "namespace" ? 0 : await user.killAll();
      distrustTreeWritesSoFar(dirs.workTree);
      try {
        if (capture) await checkout.capture();
      } finally {
        killed += await user.killAll();
        await user.take(owned);
      }
      return killed;
    },
    async close() {
      checkout.close();
      await user.killAll().catch(() => 0);
      await user.take(owned).catch(() => {});
      await restoreCheckout(dirs);
    },
  };
}

export interface IsolatedParts {
  git: TaskCheckout;
  agent: AgentRunner;
  quality: QualityRunner;
  boundary: Boundary;
  /**
   * The commits' author from now on, for the worker's git and the agent-side sync (neither commits before the
   * job's claim, when src/worker/run-job.ts learns the token's own account). Empty values keep what was set.
   */
  setAuthor(userName: string | undefined, userEmail: string | undefined): void;
}

/** Everything of the worker that touches the agent's side, wired once for the runner and the tests. */
export async function createIsolatedParts(options: {
  workspace: string;
  workerDir: string;
  agentBase?: string;
  agentDir?: string;
  user: AgentUser;
  /** Names of the worker's environment passed to the quality commands (the primary agent's `env`). */
  qualityEnvNames?: readonly string[];
  parentEnv: NodeJS.ProcessEnv;
  token?: string;
  /** Values that must never reach the agent (the token). */
  secretValues: string[];
  userName?: string;
  userEmail?: string;
  onLine?: (line: string) => void;
  killGraceMs?: number;
  warn: (message: string) => void;
}): Promise<IsolatedParts> {
  // Every program the worker starts comes from a directory nobody else can change; the others are named once.
  reportIgnoredPath(options.parentEnv.PATH, options.warn);
  const dirs = await isolateCheckout({
    workspace: options.workspace,
    workerDir: options.workerDir,
    sandboxed: options.user.mode === "namespace",
    ...(options.agentBase ? { agentBase: options.agentBase } : {}),
    ...(options.agentDir ? { agentDir: options.agentDir } : {}),
  });
  const userName = options.userName || "autopilot[bot]";
  const userEmail = options.userEmail || "autopilot[bot]@users.noreply.github.com";
  const privateGit = new Git({
    gitDir: dirs.gitDir,
    stateDir: path.join(options.workerDir, "git"),
    parentEnv: options.parentEnv,
    userName,
    userEmail,
    ...(options.token ? { token: options.token } : {}),
  });
  const side = new AgentSideGit({
    user: options.user,
    workTree: dirs.workTree,
    home: dirs.home,
    inbox: dirs.inbox,
    parentEnv: options.parentEnv,
    author: () => privateGit.author,
  });
  const git = new TaskCheckout({
    git: privateGit,
    side,
    workTree: dirs.workTree,
    inbox: dirs.inbox,
    workerFiles: [PROGRESS_NOTES_PATH],
    warn: options.warn,
  });
  const boundary = createBoundary({ dirs, user: options.user, checkout: git, parentEnv: options.parentEnv });
  git.attach(boundary);
  // What the sandbox shows (agent-namespace.ts): the agent's own directories, its inbox read-only, and neither the
  // worker's private directory nor the runner's temp directory (the job's file commands, the event payload).
  const runnerTemp = options.parentEnv.RUNNER_TEMP;
  const holdsAgent = (dir: string) => `${dirs.agentDir}/`.startsWith(`${path.resolve(dir)}/`);
  options.user.useView({
    shared: [],
    writable: [dirs.workTree, dirs.home, dirs.tmp],
    readable: [dirs.inbox],
    hidden: [options.workerDir, ...(runnerTemp && !holdsAgent(runnerTemp) ? [runnerTemp] : [])],
    openings: [],
  });
  const agent = createAgentRunner({
    workdir: dirs.workTree,
    scratchDir: dirs.inbox,
    home: dirs.home,
    tmpdir: dirs.tmp,
    parentEnv: options.parentEnv,
    secretValues: options.secretValues,
    boundary,
    ...(options.killGraceMs !== undefined ? { killGraceMs: options.killGraceMs } : {}),
    ...(options.onLine ? { onLine: options.onLine } : {}),
  });
  const built = buildAgentEnv({
    parentEnv: options.parentEnv,
    presetKeys: [],
    extraNames: options.qualityEnvNames ?? [],
    home: dirs.home,
    tmpdir: dirs.tmp,
    additions: { CI: "true" },
    secretValues: options.secretValues,
  });
  const qualityEnv = built.env;
  if (built.withheld.length) {
    options.warn(
      `not passed to the agent or the quality commands (the names look like secrets; list one in ` +
        `agents.primary.env to pass it): ${built.withheld.join(", ")}`,
    );
  }
  const unreachable = await unreachableToolchainDirs(toolchainDirs(qualityEnv), options.user, dirs.agentDir);
  if (unreachable.length) options.warn(unreachableToolchainText(unreachable, options.user.name));
  const quality: QualityRunner = {
    // From the committed tree's objects (the quality commands run after the work is committed), not the directory.
    detect: () => detectQualityCommands(git.committedFiles()),
    async run(commands, timeoutMs, gate, directory) {
      // A workspace's commands run in its directory only when it is a real one of the tree; else they fail, saying so.
      const where = directory ? await treeDirectory(dirs.workTree, directory) : { dir: dirs.workTree };
      if ("refused" in where)
        return commands.map((command) => ({
          command,
          passed: false,
          exitCode: null,
          timedOut: false,
          durationMs: 0,
          output: `[not run: ${where.refused}]`,
        }));
      const cwd = where.dir;
      // Only a report these commands write counts (coverage-gate.ts): old ones go while the worker holds the tree.
      if (gate?.coverage) await clearCoverageReports(dirs.workTree, gate.coverage);
      let results: QualityCommandResult[];
      await boundary.handOver();
      try {
        results = await runQualityCommands({
          commands,
          cwd,
          env: qualityEnv,
          timeoutMs,
          reruns: gate?.reruns ?? 0,
          runAs: boundary.user,
        });
      } finally {
        await boundary.takeBack();
      }
      // Read once the agent's processes are gone (takeBack): nothing can swap the file while it is read.
      if (gate?.coverage && results.length > 0 && results.every((r) => r.passed))
        results.push(await readCoverageGate(dirs.workTree, gate.coverage));
      return results;
    },
  };
  const setAuthor = (name: string | undefined, email: string | undefined) =>
    privateGit.setAuthor(name, email);
  return { git, agent, quality, boundary, setAuthor };
}
