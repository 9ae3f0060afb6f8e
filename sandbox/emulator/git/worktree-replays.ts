/**
 * The sandbox remote's operations that replay commits (git-remote.ts): a rebase merge's cherry-picks and the
 * web's Revert button, each in a temporary worktree of the bare repository, by real git. No ref moves here;
 * the caller moves one under its lock. A conflict reports the conflicting paths and makes nothing.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { GitRemoteError } from "./git-remote-error.js";
import type { Author } from "./git-remote-types.js";
import { gitEnv, run } from "../proc.js";

type Replayed = { ok: true; sha: string } | { ok: false; conflicts: string[]; message: string };

/** Runs `work` in a detached worktree of `bare` at `at`, removed afterwards whatever happens. */
async function inWorktree<T>(
  bare: string,
  at: string,
  name: string,
  work: (worktree: string) => Promise<T>,
): Promise<T> {
  const worktree = mkdtempSync(join(tmpdir(), `autopilot-${name}-`));
  try {
    const added = await run("git", ["worktree", "add", "--detach", "--force", worktree, at], {
      cwd: bare,
      env: gitEnv(),
    });
    if (added.code !== 0) throw new GitRemoteError(`git worktree failed: ${added.stderr.trim()}`);
    return await work(worktree);
  } finally {
    await run("git", ["worktree", "remove", "--force", worktree], { cwd: bare, env: gitEnv() });
    rmSync(worktree, { recursive: true, force: true });
    await run("git", ["worktree", "prune"], { cwd: bare, env: gitEnv() });
  }
}

/** The paths left conflicting in `worktree`, after which `abort` (`cherry-pick` or `revert`) is undone. */
async function conflictsThenAbort(
  worktree: string,
  env: NodeJS.ProcessEnv,
  abort: string,
): Promise<string[]> {
  const status = await run("git", ["diff", "--name-only", "--diff-filter=U"], { cwd: worktree, env });
  await run("git", [abort, "--abort"], { cwd: worktree, env });
  return status.stdout.split("\n").filter(Boolean);
}

/** `commits` (oldest first) cherry-picked onto `base`: the last one's copy. */
export async function replayCommits(
  bare: string,
  base: string,
  commits: readonly string[],
): Promise<Replayed> {
  if (commits.length === 0) return { ok: true, sha: base };
  return inWorktree(bare, base, "rebase", async (worktree) => {
    const env = gitEnv();
    for (const commit of commits) {
      const picked = await run("git", ["cherry-pick", "--allow-empty", "--keep-redundant-commits", commit], {
        cwd: worktree,
        env,
      });
      if (picked.code !== 0)
        return {
          ok: false,
          conflicts: await conflictsThenAbort(worktree, env, "cherry-pick"),
          message: "This branch can't be rebased",
        };
    }
    return { ok: true, sha: (await run("git", ["rev-parse", "HEAD"], { cwd: worktree, env })).stdout.trim() };
  });
}

/**
 * A commit on top of `onto` that undoes `commit` (a merge commit against its first parent, as the web's Revert
 * button does), with `message` and, when given, `author` as author and committer.
 */
export async function revertCommit(
  bare: string,
  request: { onto: string; commit: string; isMerge: boolean; message: string; author?: Author },
): Promise<Replayed> {
  const { author } = request;
  const env = gitEnv(
    author
      ? {
          GIT_AUTHOR_NAME: author.name,
          GIT_AUTHOR_EMAIL: author.email,
          GIT_COMMITTER_NAME: author.name,
          GIT_COMMITTER_EMAIL: author.email,
        }
      : undefined,
  );
  return inWorktree(bare, request.onto, "revert", async (worktree) => {
    const mainline = request.isMerge ? ["-m", "1"] : [];
    const reverted = await run("git", ["revert", "--no-commit", ...mainline, request.commit], {
      cwd: worktree,
      env,
    });
    if (reverted.code !== 0)
      return {
        ok: false,
        conflicts: await conflictsThenAbort(worktree, env, "revert"),
        message: reverted.stderr.trim() || "the revert does not apply",
      };
    const committed = await run("git", ["commit", "--allow-empty", "-q", "-F", "-"], {
      cwd: worktree,
      env,
      input: request.message,
    });
    if (committed.code !== 0) throw new GitRemoteError(`git commit failed: ${committed.stderr.trim()}`);
    return { ok: true, sha: (await run("git", ["rev-parse", "HEAD"], { cwd: worktree, env })).stdout.trim() };
  });
}
