/**
 * Keeps the `.env` that `autopilot register` writes out of git: in a work tree, the file must be ignored before
 * the App's private key goes into it (README: "In a checkout of your repository" is where people run register,
 * and `git add .` would publish the key). git runs by argument list, never through a shell.
 */
import { spawnSync } from "node:child_process";
import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { CredentialsTargetError } from "./credentials-target-error.js";

interface GitAnswer {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** null when git is not installed (then no work tree can commit the file either). */
function git(dir: string, args: readonly string[]): GitAnswer | null {
  const result = spawnSync("git", ["-C", dir, ...args], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    timeout: 30_000,
  });
  if (result.error && (result.error as NodeJS.ErrnoException).code === "ENOENT") return null;
  if (result.error)
    throw new CredentialsTargetError(`git ${args[0]} failed in ${dir}: ${result.error.message}`);
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** A path as a .gitignore line that matches exactly that file from the work tree's root. */
function ignoreLine(relativePath: string): string {
  const escaped = relativePath
    .split(sep)
    .join("/")
    .replace(/[\\*?[\]]/g, (c) => `\\${c}`);
  return `/${escaped}`;
}

function isIgnored(top: string, relativePath: string): boolean {
  const answer = git(top, ["check-ignore", "-q", "--no-index", "--", relativePath]);
  if (answer === null || answer.status === 0) return true;
  if (answer.status === 1) return false;
  throw new CredentialsTargetError(
    `git check-ignore could not tell whether ${relativePath} is ignored in ${top}: ${answer.stderr.trim()}. Nothing was registered.`,
  );
}

/**
 * Makes sure git will not commit `file` (in the real directory `dir`): nothing to do outside a work tree or when
 * it is ignored already; a tracked file is refused; otherwise its exact path is added to the work tree's
 * `.gitignore` and `say` is told so. Throws CredentialsTargetError (before anything is registered) when it cannot.
 */
export function keepOutOfGit(dir: string, fileName: string, say: (line: string) => void): void {
  const root = git(dir, ["rev-parse", "--show-toplevel"]);
  if (root === null || root.status !== 0) return;
  const top = root.stdout.trim();
  const relativePath = relative(top, join(dir, fileName));
  if (git(top, ["ls-files", "--error-unmatch", "--", relativePath])?.status === 0)
    throw new CredentialsTargetError(
      `${join(top, relativePath)} is tracked by git: the App's private key written there would be committed. Pass --dir a directory outside the repository, or untrack the file first (git rm --cached ${relativePath}, and commit). Nothing was registered.`,
    );
  if (isIgnored(top, relativePath)) return;
  const gitignore = join(top, ".gitignore");
  const before = existsSync(gitignore) ? readFileSync(gitignore, "utf8") : "";
  const line = ignoreLine(relativePath);
  try {
    appendFileSync(gitignore, `${before === "" || before.endsWith("\n") ? "" : "\n"}${line}\n`);
  } catch (error) {
    throw new CredentialsTargetError(
      `${relativePath} is not ignored by git in ${top}, and adding it to ${gitignore} failed (${(error as Error).message}): add the line ${line} there yourself, or pass --dir a directory outside the repository. Nothing was registered.`,
    );
  }
  if (!isIgnored(top, relativePath))
    throw new CredentialsTargetError(
      `${relativePath} is still not ignored by git after adding ${line} to ${gitignore} (a later rule, or one in a nested .gitignore, takes it back): make git ignore it, or pass --dir a directory outside the repository. Nothing was registered.`,
    );
  say(
    `Added ${line} to ${gitignore}, so git never commits the App's private key register writes there (commit the .gitignore).`,
  );
}
