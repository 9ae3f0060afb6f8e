/**
 * Trees the sandbox remote writes for the REST API's file writes and seeded repositories (git-remote.ts), by
 * real git: `read-tree`, `hash-object`, `update-index --index-info` and `write-tree` on a throwaway index.
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { ZERO_SHA } from "./git-constants.js";
import { GitRemoteError } from "./git-remote-error.js";

/** git in one bare repository: its stdout, or a GitRemoteError. */
export type RepoGit = (
  args: string[],
  options?: { input?: string | Buffer; env?: NodeJS.ProcessEnv },
) => Promise<string>;

/**
 * Builds a tree from a parent commit's tree with files added, replaced or (null) removed, through a throwaway
 * index in `scratch`; `git` runs git in the bare repository.
 */
export async function buildTree(
  git: RepoGit,
  scratch: string,
  parent: string | null,
  files: Record<string, string | Buffer | null>,
  executable: string[],
): Promise<string> {
  const indexFile = join(scratch, `.index-${process.pid}-${Math.random().toString(36).slice(2)}`);
  const env = { GIT_INDEX_FILE: indexFile };
  try {
    if (parent) await git(["read-tree", parent], { env });
    else await git(["read-tree", "--empty"], { env });
    const lines: string[] = [];
    for (const [path, content] of Object.entries(files)) {
      const clean = path.replace(/^\/+/, "");
      if (!clean || clean.split("/").some((part) => part === ".." || part === "." || part === ".git")) {
        throw new GitRemoteError(`invalid path: ${path}`);
      }
      if (content === null) {
        lines.push(`0 ${ZERO_SHA}\t${clean}`);
        continue;
      }
      const blob = (await git(["hash-object", "-w", "--stdin"], { input: content })).trim();
      const mode = executable.includes(clean) || /\.sh$/.test(clean) ? "100755" : "100644";
      lines.push(`${mode} ${blob}\t${clean}`);
    }
    if (lines.length > 0) {
      await git(["update-index", "--index-info"], {
        env,
        input: `${lines.join("\n")}\n`,
      });
    }
    return (await git(["write-tree"], { env })).trim();
  } finally {
    rmSync(indexFile, { force: true });
  }
}
