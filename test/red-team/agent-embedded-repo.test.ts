/**
 * Red team: the agent leaves git repositories of its own in its work tree, each configured to run a payload
 * whenever some git looks into it — a clean filter, `core.fsmonitor`, `core.hooksPath`, `diff.external`, an
 * `include.path` naming a filter, `core.sshCommand` — plus a `.git` *file* pointing at such a repository
 * elsewhere, a `.gitmodules` whose `update` is `!command`, and a gitlink staged by `git update-index` in its own
 * repository. A worker that ran git over the agent's tree would run the payload as itself, outside the sandbox
 * (it did: the worker's `git add --all` recorded the repository as a gitlink, and every later `git status` ran
 * `git status` inside it with that repository's config). The worker runs no tool over the tree
 * (src/worker/checkout/task-checkout.ts), so: no payload ran as the worker (a marker only the worker could write,
 * and a scan for its uid-0 process), no worker git had the agent's tree as its directory or work tree (every
 * call, and GIT_TRACE2's record of every git process including children), and the work was refused, not
 * pushed. Run through the worker in both isolation modes; the sudo path is agent-sudo.test.ts's.
 */
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { observeWorkerGit, type WorkerGitCall } from "../../src/worker/checkout/private-git.js";
import { runWorker } from "../../src/worker/job/job.js";
import { runProcess } from "../../src/worker/processes/process.js";
import { config, FakeGitHub } from "../worker/fakes.js";
import { git, realDeps, remoteAndClone } from "../worker/fixtures/real.js";

const roots: string[] = [];
afterEach(async () => {
  for (const root of roots.splice(0)) await rm(root, { recursive: true, force: true });
});

/** A distinctive sleep the payload leaves running, to be looked for among the worker's (uid 0) processes. */
const SLEEP = "3171";

/** A git repository at `dir` whose config is `config`, committed with a file its attributes send through "x". */
function nestedRepo(dir: string, config: string): string {
  return [
    `mkdir -p ${dir} && cd ${dir} && git init -q`,
    config,
    "echo '* filter=x diff=x' > .gitattributes && echo data > data.txt",
    "(git -c user.name=a -c user.email=a@b add -A && git -c user.name=a -c user.email=a@b commit -qm x) >/dev/null 2>&1 || true",
    "cd - >/dev/null",
  ].join(" && ");
}

/** Each attack: what the agent leaves in its tree for a git that looks into it to run `payload`. */
const ATTACKS: Record<string, (payload: string) => string> = {
  "a clean/smudge filter": (p) =>
    nestedRepo("vendor/kit", `git config filter.x.clean "${p}" && git config filter.x.smudge "${p}"`),
  "core.fsmonitor": (p) => nestedRepo("vendor/kit", `git config core.fsmonitor "${p}"`),
  "core.hooksPath": (p) =>
    nestedRepo(
      "vendor/kit",
      `mkdir -p h && for x in post-index-change pre-commit post-checkout; do printf '#!/bin/sh\\n%s\\n' "${p.replace(/'/g, "")}" > h/$x; chmod +x h/$x; done && git config core.hooksPath "$PWD/h"`,
    ),
  "diff.external": (p) =>
    nestedRepo("vendor/kit", `git config diff.external "${p}" && git config diff.x.command "${p}"`),
  "include.path": (p) =>
    nestedRepo(
      "vendor/kit",
      `printf '[filter "x"]\\n\\tclean = %s\\n[core]\\n\\tfsmonitor = %s\\n' "${p.replace(/'/g, "")}" "${p.replace(/'/g, "")}" > "$TMPDIR/inc.cfg" && git config include.path "$TMPDIR/inc.cfg"`,
    ),
  "core.sshCommand": (p) =>
    nestedRepo("vendor/kit", `git config core.sshCommand "${p}" && git remote add o ssh://h/x`),
  "a .git file pointing elsewhere": (p) =>
    [
      nestedRepo("$TMPDIR/elsewhere", `git config filter.x.clean "${p}" && git config core.fsmonitor "${p}"`),
      'mkdir -p vendor/kit && printf "gitdir: %s/elsewhere/.git\\n" "$TMPDIR" > vendor/kit/.git',
    ].join(" && "),
  ".gitmodules with update = !command": (p) =>
    [
      nestedRepo("vendor/kit", "true"),
      `printf '[submodule "kit"]\\n\\tpath = vendor/kit\\n\\turl = ./kit\\n\\tupdate = !%s\\n' "${p.replace(/'/g, "")}" > .gitmodules`,
    ].join(" && "),
  "a gitlink staged by update-index": () =>
    "mkdir -p vendor/kit && echo x > vendor/kit/file && git update-index --add --cacheinfo 160000,1111111111111111111111111111111111111111,vendor/kit",
};

/** The agent's script: one attack, ordinary work beside it, then a completion claim. */
function attackScript(attack: string, markers: string): string {
  const payload = `sh -c 'touch ${markers}/ran-$(id -u); (sleep ${SLEEP} </dev/null >/dev/null 2>&1 &) ; cat'`;
  return [
    "set -e",
    ATTACKS[attack]!(payload),
    "echo work > work.txt",
    "echo '<promise>COMPLETE</promise>'",
  ].join("\n");
}

async function uidZeroSleepers(): Promise<number[]> {
  const found: number[] = [];
  for (const pid of await readdir("/proc").catch(() => [] as string[])) {
    if (!/^\d+$/.test(pid)) continue;
    const cmdline = await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "");
    if (!cmdline.startsWith(`sleep\0${SLEEP}`)) continue;
    const status = await readFile(`/proc/${pid}/status`, "utf8").catch(() => "");
    if (/^Uid:\s+0\s/m.test(status)) found.push(Number(pid));
  }
  return found;
}

describe("embedded repositories the agent leaves for the worker's git", { timeout: 120_000 }, () => {
  const cases = (["namespace", "uid"] as const).flatMap((isolation) =>
    Object.keys(ATTACKS).map((attack) => ({ isolation, attack })),
  );
  for (const { isolation, attack } of cases) {
    it(`${attack}: runs nothing as the worker, and the work is refused (${isolation})`, async () => {
      const { root, remote, workspace } = await remoteAndClone({ "README.md": "# demo\n" });
      roots.push(root);
      // Only the worker (root) can write here; the agent's user cannot, in or out of its sandbox.
      const markers = await mkdtemp(join(tmpdir(), "autopilot-markers-"));
      roots.push(markers);
      await chmod(markers, 0o755);
      const script = join(root, "attack.sh");
      await writeFile(script, attackScript(attack, markers));
      await chmod(script, 0o755);
      const trace = join(root, "trace2");
      await mkdir(trace);
      const calls: WorkerGitCall[] = [];
      const stop = observeWorkerGit((call) => calls.push(call));
      const github = new FakeGitHub();
      const deps = await realDeps(workspace, github, { isolation, env: { GIT_TRACE2_EVENT: trace } });
      let run: Awaited<ReturnType<typeof runWorker>>;
      try {
        run = await runWorker(
          {
            repo: "acme/widgets",
            issue: 7,
            attempt: 1,
            dispatchId: "7-1-embedded",
            trackingIssue: null,
            workspace,
            defaultBranch: "main",
          },
          config({
            agents: { primary: { preset: "custom", command: `sh ${script}` } },
            qualityCommands: ["true"],
          }),
          deps,
        );
      } finally {
        stop();
        await deps.boundary.close();
      }

      // Nothing ran as the worker: no marker of uid 0 (the agent's own runs cannot write there at all).
      expect(await readdir(markers)).toEqual([]);
      expect(await uidZeroSleepers()).toEqual([]);

      // The work was refused and named, and nothing of it reached the remote.
      expect(run.result.result).toBe("failed");
      expect(run.result.reason).toMatch(
        /the agent's work was refused.*(gitlink|could not be handed back|fsck error)/,
      );
      const pushed = git(remote, "for-each-ref", "--format=%(refname)", "refs/heads/autopilot/issue-7");
      if (pushed)
        expect(git(remote, "ls-tree", "-r", "--name-only", "autopilot/issue-7")).not.toMatch(
          /work\.txt|vendor/,
        );

      // No worker git ran in the agent's directory, as its working directory, GIT_DIR or GIT_WORK_TREE ...
      const agentDir = deps.boundary.dirs.agentDir;
      expect(calls.length).toBeGreaterThan(5);
      const inside = (p: string | undefined) => p !== undefined && `${p}/`.startsWith(`${agentDir}/`);
      expect(calls.filter((c) => inside(c.cwd) || inside(c.gitDir) || inside(c.workTree))).toEqual([]);
      // ... and no git process they started (GIT_TRACE2 follows children) had a work tree but the worker's own
      // overlay folder (its throwaway index for the notes: private-git.ts).
      const events = (await Promise.all((await readdir(trace)).map((f) => readFile(join(trace, f), "utf8"))))
        .join("\n")
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line) as { event: string; worktree?: string; argv?: string[] });
      expect(events.filter((e) => e.event === "start").length).toBeGreaterThan(5);
      const overlay = join(dirname(deps.gitDir), "git", "overlay-tree");
      expect(events.filter((e) => e.worktree !== undefined && e.worktree !== overlay)).toEqual([]);
      expect(events.filter((e) => e.event === "start" && /^(status|add)$/.test(e.argv?.[1] ?? ""))).toEqual(
        [],
      );
    });
  }
});

describe("a link out of the tree in the agent's work", { timeout: 120_000 }, () => {
  for (const isolation of ["namespace", "uid"] as const) {
    it(`refuses the work, naming the link, and commits none of it (${isolation})`, async () => {
      const { root, workspace } = await remoteAndClone({ "README.md": "# demo\n" });
      roots.push(root);
      const deps = await realDeps(workspace, new FakeGitHub(), { isolation });
      try {
        await deps.git.prepare();
        await deps.git.setupBranch("autopilot/issue-7", "main");
        await deps.boundary.handOver();
        try {
          await runProcess({
            command: "/bin/sh",
            args: ["-c", "ln -s /proc/1/environ leak-environ && echo work > work.txt"],
            cwd: deps.workTree,
            env: { PATH: "/usr/bin:/bin" },
            runAs: deps.boundary.user,
          });
        } finally {
          await deps.boundary.takeBack({ capture: true });
        }
        const state = await deps.git.workState();
        expect(state.refused).toEqual([
          'leak-environ: a symbolic link that leaves the tree ("/proc/1/environ")',
        ]);
        const head = state.head;
        // What the worker commits then is only its own notes, never the refused tree.
        await deps.git.commitAll("after a refusal");
        expect(git(deps.gitDir, "ls-tree", "-r", "--name-only", "HEAD")).not.toMatch(
          /leak-environ|work\.txt/,
        );
        expect(head).toMatch(/^[0-9a-f]{40}$/);
      } finally {
        await deps.boundary.close();
      }
    });
  }
});
