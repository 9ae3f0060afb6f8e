/**
 * Red team: the symlink-swap race against the worker's own commit. Git's `add` does `lstat` then a plain `open`;
 * a process of the agent's that outlives its run and keeps swapping a decoy file with a symbolic link to a file
 * only the worker can read would, when it wins the race, have the worker store that file's content as a blob,
 * push it and hand it back to the agent. The "agent" here starts exactly that survivor (in a session of its own,
 * so its process group's kill misses it) at every iteration, through the worker's real boundary
 * (createIsolatedParts: hand-over, agent run, take-back, then the worker's git commits the tree), many times over,
 * in both isolation modes; no blob the worker commits may hold the secret.
 */
import { execFileSync } from "node:child_process";
import { chmod, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { IsolationMode } from "../../src/worker/isolation/agent-user.js";
import { runProcess } from "../../src/worker/processes/process.js";
import { FakeGitHub } from "../worker/fakes.js";
import { realDeps, remoteAndClone } from "../worker/fixtures/real.js";

const SECRET = "WORKER-ONLY-SECRET-5b7c1e";
const ITERATIONS = 12;

/**
 * Swaps 40 decoy files (40 chances at each `git add`) between a regular file and a link to the secret, as fast as it can, forever; the tree's
 * top directory made writable by all first, as a survivor would to keep writing once the worker owns it again.
 */
const SURVIVOR = `
import os, sys
d, target = sys.argv[1], sys.argv[2]
# Open to all, so that the tree stays writable to it once the worker owns it again.
os.chmod(d, 0o777)
while True:
    for n in range(40):
        decoy = d + "/decoy-" + str(n) + ".txt"
        try:
            with open(d + "/.f", "w") as f:
                f.write("decoy\\n")
            os.replace(d + "/.f", decoy)
            try:
                os.symlink(target, d + "/.l")
            except FileExistsError:
                pass
            os.replace(d + "/.l", decoy)
        except OSError:
            pass
`;

const roots: string[] = [];
afterAll(async () => {
  for (const root of roots) await rm(root, { recursive: true, force: true });
});

describe.each<IsolationMode>(["namespace", "uid"])("isolation %s", (mode) => {
  it("no blob the worker commits holds a file only the worker can read", { timeout: 240_000 }, async () => {
    const { root, workspace } = await remoteAndClone({ "README.md": "# demo\n" });
    roots.push(root);
    const secret = join(root, "worker-secret");
    await writeFile(secret, `${SECRET}\n`);
    await chmod(secret, 0o600);
    const survivor = join(root, "survivor.py");
    await writeFile(survivor, SURVIVOR);
    await chmod(survivor, 0o644);
    const deps = await realDeps(workspace, new FakeGitHub(), { isolation: mode });
    await deps.git.prepare();
    await deps.git.setupBranch("autopilot/issue-7", "main");

    const refusals: string[] = [];
    for (let i = 0; i < ITERATIONS; i++) {
      await deps.boundary.handOver();
      try {
        // The agent's run: it starts the survivor, lets it spin a little, and ends.
        const run = await runProcess({
          command: "/bin/sh",
          args: [
            "-c",
            `echo ${i} > counter.txt; setsid python3 ${survivor} "$PWD" ${secret} >/dev/null 2>&1 </dev/null & sleep 0.2`,
          ],
          cwd: deps.workTree,
          env: { PATH: "/usr/bin:/bin" },
          runAs: deps.boundary.user,
          timeoutMs: 30_000,
        });
        expect(run.exitCode).toBe(0);
      } finally {
        await deps.boundary.takeBack({ capture: true });
      }
      refusals.push(...(await deps.git.workState()).refused);
      await deps.git.commitAll(`iteration ${i}`);
    }

    const objects = execFileSync(
      "sh",
      [
        "-c",
        `git --git-dir="$1" rev-list --objects --all | git --git-dir="$1" cat-file --batch`,
        "sh",
        deps.gitDir,
      ],
      { encoding: "latin1", maxBuffer: 64 * 1024 * 1024 },
    );
    expect(objects).not.toContain(SECRET);
    // The survivor did run: a decoy is in the commits (a file), or its link out of the tree refused the work.
    const log = execFileSync("git", ["--git-dir", deps.gitDir, "log", "--all", "--name-only"], {
      encoding: "utf8",
    });
    expect(`${log}\n${refusals.join("\n")}`).toMatch(
      /decoy-\d+\.txt(: a symbolic link that leaves the tree)?/,
    );
    await deps.boundary.close();
  });
});
