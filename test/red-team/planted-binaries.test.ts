/**
 * Red team, another user's side: programs planted on the worker's PATH in a directory someone else can write.
 * `npm run` and `npx` put the `node_modules/.bin` of every parent directory on PATH, so a checkout under /tmp has
 * `/tmp/node_modules/.bin` there, which any user can create; self-hosted runners and tool caches add others. Each
 * planted program records that it ran, and as which uid: the worker (root here, as in CI) must never run one.
 * What the agent's own processes find on their PATH is theirs to run, as the agent's user.
 */
import { existsSync, readdirSync } from "node:fs";
import { chmod, chown, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runWorker } from "../../src/worker/job/job.js";
import type { WorkerInputs } from "../../src/worker/worker-deps.js";
import { Git, resolveGit } from "../../src/worker/checkout/private-git.js";
import { TrustedBinaries } from "../../src/worker/isolation/trusted-binaries.js";
import type { WorkerLog } from "../../src/worker/worker-deps.js";
import { config, FakeGitHub } from "../worker/fakes.js";
import { git, realDeps, remoteAndClone, writeCounterAgent } from "../worker/fixtures/real.js";

const NOBODY = 65534;
const WORKER_UID = process.getuid?.() ?? 0;
/** Every program the worker starts by name, and a few more it might. */
const PLANTED = [
  "git",
  "sh",
  "bash",
  "chown",
  "chmod",
  "kill",
  "env",
  "getent",
  "useradd",
  "setpriv",
  "sudo",
  "id",
  "ssh",
  "cat",
];

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A directory of stand-ins that each leave `RAN-<name>-<uid>` in `markers` and then fail. */
async function plant(dir: string, markers: string, names: readonly string[]): Promise<void> {
  await mkdir(dir, { recursive: true });
  for (const name of names) {
    await writeFile(join(dir, name), `#!/bin/sh\n: > "${markers}/RAN-${name}-$(/usr/bin/id -u)"\nexit 97\n`, {
      mode: 0o777,
    });
  }
}

/** Where the planted programs recorded a run by the worker's uid. */
function ranAsWorker(markers: string): string[] {
  return readdirSync(markers).filter((name) => name.startsWith("RAN-") && name.endsWith(`-${WORKER_UID}`));
}

async function markerDir(root: string): Promise<string> {
  const markers = join(root, "ran");
  await mkdir(markers);
  // Any uid may record that it ran a planted program (the agent's included).
  await chmod(markers, 0o1777);
  return markers;
}

function inputs(workspace: string): WorkerInputs {
  return {
    repo: "acme/widgets",
    issue: 7,
    attempt: 1,
    dispatchId: "7-1-planted",
    trackingIssue: null,
    workspace,
    defaultBranch: "main",
  };
}

function capturingLog(): WorkerLog & { lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    debug() {},
    info: (message) => lines.push(message),
    warning: (message) => lines.push(`warning: ${message}`),
    error: (message) => lines.push(`error: ${message}`),
    group: (title) => lines.push(title),
    endGroup() {},
  };
}

describe("programs planted in a world-writable directory first on the worker's PATH", {
  timeout: 180_000,
}, () => {
  it("never run as the worker through a whole job (agent user, hand-overs, quality command, commits, push), and the log names the directory", async () => {
    const { root, remote, workspace } = await remoteAndClone({
      "README.md": "# demo\n",
      "package.json": JSON.stringify({ name: "demo", scripts: { test: "true" } }),
    });
    cleanups.push(() => rm(root, { recursive: true, force: true }));
    const markers = await markerDir(root);
    // Another user's directory that everyone can write, as a shared tool directory on a self-hosted runner is.
    const planted = join(root, "shared-bin");
    await plant(planted, markers, PLANTED);
    await chown(planted, NOBODY, NOBODY);
    await chmod(planted, 0o777);
    const path = `${planted}:${process.env.PATH}`;
    // The worker's own PATH (where it finds setpriv, chown, …) and the one it hands its parts.
    const saved = process.env.PATH;
    process.env.PATH = path;
    cleanups.push(async () => {
      process.env.PATH = saved;
    });

    const agent = await writeCounterAgent(root);
    const log = capturingLog();
    const github = new FakeGitHub();
    const deps = await realDeps(workspace, github, { log, env: { PATH: path } });
    const cfg = config({
      agents: {
        primary: {
          preset: "custom",
          command: `${process.execPath} ${agent} 1 0 ${join(root, "hang.pid")} ${join(root, "spy.jsonl")} {prompt_file}`,
        },
      },
      qualityCommands: ["true"],
    });
    const run = await runWorker(inputs(workspace), cfg, deps);

    expect(run.result.result, run.result.reason).toBe("complete");
    expect(git(remote, "rev-parse", "refs/heads/autopilot/issue-7")).toBe(run.result.headSha);
    expect(run.quality.map((q) => [q.command, q.passed])).toEqual([["true", true]]);
    expect(ranAsWorker(markers)).toEqual([]);
    // The agent's own git is its business: it found the planted one on its PATH and ran it as itself.
    expect(readdirSync(markers).some((name) => name.startsWith("RAN-git-"))).toBe(true);
    expect(
      log.lines.filter((line) => line.includes(`${planted} (${planted} is owned by uid ${NOBODY}`)),
    ).toEqual([expect.stringMatching(/^warning: the worker ignores these PATH entries/)]);
  });

  it("planted after the worker resolved its programs, or in the directory git runs in, still never runs", async () => {
    const { root, workspace } = await remoteAndClone({ "README.md": "# demo\n" });
    cleanups.push(() => rm(root, { recursive: true, force: true }));
    const markers = await markerDir(root);
    const planted = join(root, "later-bin");
    await mkdir(planted);
    await chmod(planted, 0o777);
    const worker = new Git({
      gitDir: join(workspace, ".git"),
      stateDir: join(root, "state"),
      parentEnv: { PATH: `${planted}:/usr/bin:/bin`, HOME: root },
    });
    await plant(planted, markers, PLANTED);
    await plant(workspace, markers, ["git"]);
    await plant(join(workspace, ".git"), markers, ["git"]);
    await worker.run(["ls-tree", "HEAD"]);
    await worker.run(["log", "-1"]);
    expect(ranAsWorker(markers)).toEqual([]);
  });
});

describe("helpers git would run for a credential", { timeout: 60_000 }, () => {
  it("an askpass or credential helper named in the worker user's own git config or environment never runs", async () => {
    const { root, workspace } = await remoteAndClone({ "README.md": "# demo\n" });
    cleanups.push(() => rm(root, { recursive: true, force: true }));
    const markers = await markerDir(root);
    const planted = join(root, "helpers");
    await plant(planted, markers, ["askpass", "ssh-askpass", "credential-helper"]);
    await chmod(planted, 0o777);
    // The runner user's ~/.gitconfig (the worker freezes a copy of it) names programs another user can replace.
    const home = join(root, "home");
    await mkdir(home);
    await writeFile(
      join(home, ".gitconfig"),
      `[core]\n\taskPass = ${planted}/askpass\n[credential]\n\thelper = ${planted}/credential-helper\n`,
    );
    // A server that asks for credentials: git would ask a helper, then askpass, for a user name and password.
    const server = createServer((_request, response) => {
      response.statusCode = 401;
      response.setHeader("www-authenticate", 'Basic realm="x"');
      response.end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const port = (server.address() as AddressInfo).port;
    const worker = new Git({
      gitDir: join(workspace, ".git"),
      stateDir: join(root, "state"),
      parentEnv: {
        PATH: "/usr/bin:/bin",
        HOME: home,
        GIT_ASKPASS: `${planted}/askpass`,
        SSH_ASKPASS: `${planted}/ssh-askpass`,
      },
    });
    await worker.prepare();
    const listed = await worker.run(["ls-remote", `http://127.0.0.1:${port}/repo.git`], {
      network: true,
      allowFail: true,
    });
    expect(listed.code).not.toBe(0);
    expect(readdirSync(markers)).toEqual([]);
  });
});

describe("a git in /tmp/node_modules/.bin made by another user", { timeout: 60_000 }, () => {
  it("is not the worker's git, though npm puts that directory on PATH for a checkout under /tmp", async () => {
    // The real /tmp when nothing is there yet; else (another test's agent made it) a sticky, world-writable
    // stand-in for /tmp, owned by root as /tmp is, so the test never removes what it did not make.
    const real = !existsSync("/tmp/node_modules");
    const tmp = real ? "/tmp" : await mkdtemp(join(tmpdir(), "autopilot-sticky-tmp-"));
    if (!real) await chmod(tmp, 0o1777);
    const nodeModules = join(tmp, "node_modules");
    cleanups.push(() => rm(real ? nodeModules : tmp, { recursive: true, force: true }));
    const scratch = await mkdtemp(join(tmpdir(), "autopilot-npm-path-"));
    cleanups.push(() => rm(scratch, { recursive: true, force: true }));
    const markers = await markerDir(scratch);
    // What any user can do: make /tmp/node_modules/.bin (theirs) and put a `git` there.
    const bin = join(nodeModules, ".bin");
    await plant(bin, markers, ["git"]);
    await chown(nodeModules, NOBODY, NOBODY);
    await chown(bin, NOBODY, NOBODY);
    await chown(join(bin, "git"), NOBODY, NOBODY);
    // The PATH `npm run` gives a script of a checkout at /tmp/ci-clone: each parent's node_modules/.bin first.
    const path = `/tmp/ci-clone/node_modules/.bin:${bin}:/node_modules/.bin:/usr/bin:/bin`;

    expect(resolveGit(path)).toMatch(/^\/(usr\/)?bin\/git$/);
    const worker = new Git({ gitDir: scratch, stateDir: join(scratch, "state"), parentEnv: { PATH: path } });
    await worker.run(["--version"]);
    expect(ranAsWorker(markers)).toEqual([]);

    // Even the same directory owned by root is trusted only because nobody else can change it: made so, it is.
    await chown(nodeModules, 0, 0);
    await chown(bin, 0, 0);
    await chown(join(bin, "git"), 0, 0);
    await chmod(join(bin, "git"), 0o755);
    await chmod(bin, 0o755);
    await chmod(nodeModules, 0o755);
    expect(new TrustedBinaries(path, { cache: new Map() }).find("git")).toBe(join(bin, "git"));
  });
});
