/**
 * The commit of the Autopilot that runs: what `autopilot init` pins the workflows to, so the action a repository
 * runs is the code that wrote its workflows, and a moved tag cannot change it. Read, in this order, from:
 * 1. `AUTOPILOT_COMMIT`, a value recorded at build time (the Docker image sets it from its `REVISION` build
 *    argument) or named by the user;
 * 2. git, when the package root is the top of a checkout (a clone of Autopilot, `npm start`): HEAD, whether the
 *    tracked files differ from it, and the tags that point at it;
 * 3. npm's record of a git install (`npx github:OWNER/NAME`, `npm install github:OWNER/NAME`): npm installs a
 *    git dependency from a packed copy without `.git`, and writes the commit it resolved in the hidden lockfile
 *    beside it, `node_modules/.package-lock.json`, as `resolved: "git+ssh://…#<sha>"`
 *    (https://docs.npmjs.com/cli/configuring-npm/package-lock-json#hidden-lockfiles).
 * A copy none of them names (a tarball, a registry install) has no commit to pin: init refuses rather than pin
 * a tag.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { basename, dirname, join, relative, sep } from "node:path";
import { z } from "zod";

const SHA = /^[0-9a-f]{40}$/;

export interface RunningCommit {
  sha: string;
  /** Where the SHA was read. */
  from: "AUTOPILOT_COMMIT" | "checkout" | "npm";
  /** The tags pointing at it, when the checkout says (null: not known here; GitHub is asked instead). */
  tags: string[] | null;
  /** A checkout whose tracked files differ from the commit: the pin does not hold what runs. */
  modified: boolean;
}

type CommitReading = { ok: true; commit: RunningCommit } | { ok: false; reason: string };

export function readRunningCommit(packageRoot: string, env: NodeJS.ProcessEnv): CommitReading {
  const named = env.AUTOPILOT_COMMIT?.trim();
  if (named) {
    if (!SHA.test(named))
      return {
        ok: false,
        reason: `AUTOPILOT_COMMIT is "${named}", not a full commit SHA (40 lowercase hexadecimal digits)`,
      };
    return { ok: true, commit: { sha: named, from: "AUTOPILOT_COMMIT", tags: null, modified: false } };
  }
  const checkout = checkoutCommit(packageRoot);
  if (checkout) return { ok: true, commit: checkout };
  const installed = npmRecordedCommit(packageRoot);
  if (installed) return { ok: true, commit: { sha: installed, from: "npm", tags: null, modified: false } };
  return {
    ok: false,
    reason: `the copy of Autopilot at ${packageRoot} is neither a git checkout nor a git install npm recorded`,
  };
}

function git(dir: string, args: string[]): string | null {
  try {
    return execFileSync("git", ["-C", dir, ...args], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
      timeout: 10_000,
    }).trim();
  } catch {
    return null;
  }
}

/** HEAD of the checkout whose top is `root` (not of a repository that merely contains it, such as a project's). */
function checkoutCommit(root: string): RunningCommit | null {
  const top = git(root, ["rev-parse", "--show-toplevel"]);
  if (!top || realpathSync(top) !== realpathSync(root)) return null;
  const sha = git(root, ["rev-parse", "HEAD"]);
  if (!sha || !SHA.test(sha)) return null;
  const tags = git(root, ["tag", "--points-at", sha]);
  const status = git(root, ["status", "--porcelain", "--untracked-files=no"]);
  return {
    sha,
    from: "checkout",
    tags: tags ? tags.split("\n").filter(Boolean) : [],
    modified: status === null || status !== "",
  };
}

/** npm's hidden lockfile, as far as it is read here. */
const HiddenLockfile = z.object({
  packages: z.record(z.string(), z.object({ resolved: z.string().optional() }).loose()),
});

/** The commit npm resolved when it installed this copy from git, from the lockfile of the tree it is in. */
function npmRecordedCommit(root: string): string | null {
  const modules = dirname(root);
  if (basename(modules) !== "node_modules") return null;
  const lockfile = join(modules, ".package-lock.json");
  if (!existsSync(lockfile)) return null;
  let parsed: z.infer<typeof HiddenLockfile>;
  try {
    const read = HiddenLockfile.safeParse(JSON.parse(readFileSync(lockfile, "utf8")));
    if (!read.success) return null;
    parsed = read.data;
  } catch {
    return null;
  }
  const key = relative(dirname(modules), root).split(sep).join("/");
  const resolved = parsed.packages[key]?.resolved ?? "";
  const sha = /^git\+.*#([0-9a-f]{40})$/.exec(resolved)?.[1];
  return sha ?? null;
}

/** Where a SHA was read, in words for init's output. */
export function describeOrigin(from: RunningCommit["from"]): string {
  if (from === "AUTOPILOT_COMMIT") return "AUTOPILOT_COMMIT";
  if (from === "checkout") return "this checkout's HEAD";
  return "npm's record of the git install";
}
