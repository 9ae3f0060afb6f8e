/**
 * The worker's git. It never trusts the agent's checkout: the repository it commits and pushes from is a git
 * directory only the worker can write (the checkout's `.git`, moved out of the work tree before the agent ever
 * ran; see boundary.ts), used with the agent's work tree as `GIT_WORK_TREE`. What the agent does in its own `.git`
 * (config, hooks, replace objects, attributes, tags, commits) never reaches a worker git process; only the files
 * of its work tree do, as content.
 *
 * Every worker git process: is the git binary resolved by absolute path when the worker started, from a directory
 * only root or the worker's user can write (a `git` planted on PATH or in the work tree is never run), with a
 * PATH of such directories only and no askpass program; reads only the worker's own global config (`GIT_CONFIG_GLOBAL` in
 * the worker's private directory, `GIT_CONFIG_NOSYSTEM`); ignores replace objects; runs no hooks (an empty
 * hooks directory), no fsmonitor, no credential helper, no textconv or external diff, no auto-maintenance;
 * and the private `info/attributes` switches off every attribute that changes what is committed (`text`, `eol`,
 * `ident`, `filter`, `working-tree-encoding`) whatever an in-tree `.gitattributes` says. Only the worker's own
 * fetch and push carry the token, as an `http.extraheader` in GIT_CONFIG_* variables of that one process (never
 * argv, never a file). Pushes name their one ref explicitly, are never forced and never carry tags.
 */
import { execFile } from "node:child_process";
import { copyFile, mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { treeEntryExists, writeTreeFile } from "./tree-files.js";
import { gitMayWriteTree, noteTreeUnknown } from "./tree-writes.js";
import { workerBinaries } from "../isolation/trusted-binaries.js";

/** The attributes that change what `git add` stores, switched off for the worker's git. */
const NEUTRAL_ATTRIBUTES = "* -text -eol -crlf -ident -filter -working-tree-encoding\n";

/**
 * The absolute path of git, looked up once in the worker's PATH before any agent runs, and only in directories
 * nobody but root or the worker's user can write (trusted-binaries.ts): a `git` another user planted on PATH
 * (`/tmp/node_modules/.bin`, which `npm run` adds for a checkout under /tmp) is never run.
 */
export function resolveGit(pathVar: string | undefined): string {
  return workerBinaries(pathVar).require("git");
}

interface GitResult {
  code: number;
  stdout: string;
  stderr: string;
}

class GitError extends Error {
  constructor(
    readonly args: string[],
    readonly result: GitResult,
  ) {
    super(
      `git ${args.filter((a) => !a.startsWith("http.")).join(" ")} failed (${result.code}): ${result.stderr.trim() || result.stdout.trim()}`,
    );
    this.name = "GitError";
  }
}

interface GitOptions {
  /** The work tree (the agent's checkout). */
  cwd: string;
  /** The worker's private git directory; absent: the work tree's own `.git` (unit tests of git alone). */
  gitDir?: string;
  /** The token for fetch and push; omitted for file:// remotes in tests. */
  token?: string;
  /** Where the worker keeps its frozen global git config (outside the workspace). */
  stateDir: string;
  /** The worker's environment, from which PATH and the like are taken. */
  parentEnv?: NodeJS.ProcessEnv;
  userName?: string;
  userEmail?: string;
  remote?: string;
}

/** What `git status` says after an agent run: where HEAD is, and whether the work tree holds new work. */
export interface WorkState {
  head: string;
  /** The work tree (tracked or untracked, excluded files aside) differs from HEAD outside .autopilot/. */
  changed: boolean;
}

export interface BranchSetup {
  /** True when the task branch already existed on the remote and was checked out as it stands. */
  resumed: boolean;
  /** The commit the branch started from on the default branch (for diffs). */
  base: string;
  head: string;
}

const MAX_BUFFER = 256 * 1024 * 1024;

export class Git {
  readonly cwd: string;
  private readonly token: string | undefined;
  private readonly remote: string;
  private readonly baseEnv: Record<string, string>;
  private configSnapshot: string | null = null;
  private readonly globalConfig: string;
  private userName: string;
  private userEmail: string;
  private readonly gitPath: string;
  private readonly hooksDir: string;
  private readonly homeDir: string | undefined;
  /** The default branch's commit a conflicting merge left to the agent: its next commit is that merge. */
  private pendingMerge: string | null = null;
  /** The git directory, asked once: it does not move while the worker runs (only the worker writes it). */
  private knownGitDir: string | null = null;

  constructor(options: GitOptions) {
    this.cwd = options.cwd;
    this.hooksDir = path.join(options.stateDir, "no-hooks");
    this.token = options.token;
    this.remote = options.remote ?? "origin";
    this.globalConfig = path.join(options.stateDir, "gitconfig");
    this.userName = options.userName ?? "autopilot[bot]";
    this.userEmail = options.userEmail ?? "autopilot[bot]@users.noreply.github.com";
    const parent = options.parentEnv ?? process.env;
    this.gitPath = resolveGit(parent.PATH);
    this.homeDir = parent.HOME;
    const env: Record<string, string> = {};
    for (const name of ["LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT"]) {
      const value = parent[name];
      if (value !== undefined) env[name] = value;
    }
    Object.assign(env, {
      // What git itself looks up by name (ssh, a pager, a helper named in the worker user's own config) comes
      // from the trusted directories too. GIT_EXEC_PATH is never passed: git's helpers come from the exec path
      // built into the trusted git.
      PATH: workerBinaries(parent.PATH).searchPath,
      // No askpass program, whatever the worker user's config or environment names (an empty GIT_ASKPASS wins
      // over core.askPass and SSH_ASKPASS): with no terminal prompt either, a missing credential fails at once.
      GIT_ASKPASS: "",
      // Nothing under a home directory is read: the global config is the worker's frozen copy.
      HOME: options.stateDir,
      XDG_CONFIG_HOME: options.stateDir,
      GIT_TERMINAL_PROMPT: "0",
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_NO_REPLACE_OBJECTS: "1",
      GIT_CONFIG_GLOBAL: this.globalConfig,
      GIT_AUTHOR_NAME: this.userName,
      GIT_AUTHOR_EMAIL: this.userEmail,
      GIT_COMMITTER_NAME: this.userName,
      GIT_COMMITTER_EMAIL: this.userEmail,
      GIT_EDITOR: "true",
      GIT_PAGER: "cat",
    });
    if (options.gitDir) {
      env.GIT_DIR = options.gitDir;
      env.GIT_WORK_TREE = options.cwd;
    }
    this.baseEnv = env;
  }

  /**
   * The author and committer of the commits from now on (the job learns its own account only once it has
   * claimed the task: src/worker/run-job.ts). Empty values keep the defaults.
   */
  setAuthor(userName: string | undefined, userEmail: string | undefined): void {
    if (userName) this.userName = userName;
    if (userEmail) this.userEmail = userEmail;
    Object.assign(this.baseEnv, {
      GIT_AUTHOR_NAME: this.userName,
      GIT_AUTHOR_EMAIL: this.userEmail,
      GIT_COMMITTER_NAME: this.userName,
      GIT_COMMITTER_EMAIL: this.userEmail,
    });
  }

  /** Runs git with hooks and credential helpers off; `network` adds the token header for this one process. */
  run(
    args: string[],
    options: { network?: boolean; allowFail?: boolean; input?: string } = {},
  ): Promise<GitResult> {
    const env: Record<string, string> = { ...this.baseEnv };
    if (options.network && this.token) {
      const basic = Buffer.from(`x-access-token:${this.token}`).toString("base64");
      env.GIT_CONFIG_COUNT = "1";
      env.GIT_CONFIG_KEY_0 = "http.extraheader";
      env.GIT_CONFIG_VALUE_0 = `AUTHORIZATION: basic ${basic}`;
    }
    const fullArgs = [
      "--no-replace-objects",
      "-c",
      `core.hooksPath=${this.hooksDir}`,
      "-c",
      "credential.helper=",
      "-c",
      "core.fsmonitor=false",
      "-c",
      "core.attributesFile=/dev/null",
      "-c",
      "push.followTags=false",
      "-c",
      "diff.external=",
      // No `git maintenance run --auto` child after each commit, fetch or merge: one process less each time.
      // The repository lives for one job: many loose objects make it a little slower to read, never wrong.
      "-c",
      "maintenance.auto=false",
      ...args,
    ];
    // A command that may write the work tree: the next hand-over walks it all (tree-writes.ts).
    if (gitMayWriteTree(args)) noteTreeUnknown(this.cwd);
    return new Promise((resolve, reject) => {
      const child = execFile(
        this.gitPath,
        fullArgs,
        { cwd: this.cwd, env, maxBuffer: MAX_BUFFER, encoding: "utf8" },
        (error, stdout, stderr) => {
          const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
          const result = { code, stdout: String(stdout), stderr: this.redact(String(stderr)) };
          if (code !== 0 && !options.allowFail) reject(new GitError(args, result));
          else resolve(result);
        },
      );
      if (options.input !== undefined) child.stdin?.end(options.input);
    });
  }

  private redact(text: string): string {
    if (!this.token) return text;
    const basic = Buffer.from(`x-access-token:${this.token}`).toString("base64");
    return text.split(this.token).join("***").split(basic).join("***");
  }

  async gitDir(): Promise<string> {
    if (this.knownGitDir === null) {
      const { stdout } = await this.run(["rev-parse", "--absolute-git-dir"]);
      this.knownGitDir = stdout.trim();
    }
    return this.knownGitDir;
  }

  /**
   * Freezes the global config (a copy of the user's, taken before any agent runs), removes every credential
   * that actions/checkout may have persisted in .git/config (`http.<url>.extraheader`, credential includes), sets
   * the local identity, and snapshots .git/config. Returns the keys removed.
   */
  async prepare(): Promise<string[]> {
    await mkdir(path.dirname(this.globalConfig), { recursive: true, mode: 0o700 });
    await mkdir(this.hooksDir, { recursive: true, mode: 0o700 });
    const home = this.homeDir;
    let copied = false;
    if (home) {
      try {
        await copyFile(path.join(home, ".gitconfig"), this.globalConfig);
        copied = true;
      } catch {
        /* no global config */
      }
    }
    if (!copied) await writeFile(this.globalConfig, "");

    const removed: string[] = [];
    const listed = await this.run(["config", "--local", "--name-only", "--list"], { allowFail: true });
    const keys = [
      ...new Set(
        listed.stdout
          .split("\n")
          .map((k) => k.trim())
          .filter(Boolean),
      ),
    ];
    for (const key of keys) {
      const lower = key.toLowerCase();
      const credentialInclude =
        (lower.startsWith("includeif.") || lower === "include.path") &&
        (await this.includeLooksLikeCredentials(key));
      if (/^http\..*extraheader$/.test(lower) || lower.startsWith("credential.") || credentialInclude) {
        await this.run(["config", "--local", "--unset-all", key], { allowFail: true });
        removed.push(key);
      }
    }
    await this.run(["config", "--local", "user.name", this.userName]);
    await this.run(["config", "--local", "user.email", this.userEmail]);
    const info = path.join(await this.gitDir(), "info");
    await mkdir(info, { recursive: true });
    await writeFile(path.join(info, "attributes"), NEUTRAL_ATTRIBUTES);
    await this.snapshotConfig();
    return removed;
  }

  /** Records .git/config as the worker wants it; `restoreConfig` puts it back. */
  async snapshotConfig(): Promise<void> {
    this.configSnapshot = await readFile(path.join(await this.gitDir(), "config"), "utf8");
  }

  private async includeLooksLikeCredentials(key: string): Promise<boolean> {
    const { stdout } = await this.run(["config", "--local", "--get-all", key], { allowFail: true });
    return /credential|token|auth/i.test(stdout);
  }

  /** Puts .git/config back as `prepare` left it (after an agent ran). */
  async restoreConfig(): Promise<boolean> {
    if (this.configSnapshot === null) return false;
    const file = path.join(await this.gitDir().catch(() => path.join(this.cwd, ".git")), "config");
    let current = "";
    try {
      current = await readFile(file, "utf8");
    } catch {
      /* removed */
    }
    if (current === this.configSnapshot) return false;
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, this.configSnapshot);
    return true;
  }

  /** Adds patterns to .git/info/exclude (scratch files that must never be committed). */
  async addExcludes(patterns: string[]): Promise<void> {
    const file = path.join(await this.gitDir(), "info", "exclude");
    let current = "";
    try {
      current = await readFile(file, "utf8");
    } catch {
      await mkdir(path.dirname(file), { recursive: true });
    }
    const lines = new Set(current.split("\n"));
    const missing = patterns.filter((p) => !lines.has(p));
    if (missing.length === 0) return;
    await writeFile(
      file,
      `${current}${current.endsWith("\n") || current === "" ? "" : "\n"}${missing.join("\n")}\n`,
    );
  }

  async remoteBranchExists(branch: string): Promise<boolean> {
    const { stdout } = await this.run(["ls-remote", "--heads", this.remote, `refs/heads/${branch}`], {
      network: true,
    });
    return stdout.trim().length > 0;
  }

  async fetchBranch(branch: string): Promise<void> {
    await this.run(
      [
        "fetch",
        "--no-tags",
        "--quiet",
        this.remote,
        `+refs/heads/${branch}:refs/remotes/${this.remote}/${branch}`,
      ],
      { network: true },
    );
  }

  /**
   * Checks out the task branch: from the remote as it stands when it exists there (an earlier attempt's last
   * push), else new from the default branch.
   */
  async setupBranch(branch: string, defaultBranch: string): Promise<BranchSetup> {
    await this.fetchBranch(defaultBranch);
    const defaultRef = `refs/remotes/${this.remote}/${defaultBranch}`;
    const resumed = await this.remoteBranchExists(branch);
    if (resumed) {
      await this.fetchBranch(branch);
      await this.run([
        "checkout",
        "--quiet",
        "--no-track",
        "-B",
        branch,
        `refs/remotes/${this.remote}/${branch}`,
      ]);
    } else {
      await this.run(["checkout", "--quiet", "--no-track", "-B", branch, defaultRef]);
    }
    if (this.configSnapshot !== null) await this.snapshotConfig();
    const head = await this.headSha();
    const mergeBase = await this.run(["merge-base", defaultRef, "HEAD"], { allowFail: true });
    const base =
      mergeBase.code === 0
        ? mergeBase.stdout.trim()
        : (await this.run(["rev-parse", defaultRef])).stdout.trim();
    return { resumed, base, head };
  }

  async headSha(): Promise<string> {
    const { stdout } = await this.run(["rev-parse", "HEAD"]);
    return stdout.trim();
  }

  /**
   * The branch HEAD is on (null: detached). HEAD is read as the file it is in the worker's repository (no
   * process); anything but a plain `ref: refs/heads/…` or a commit id (another ref storage, a symbolic ref to
   * elsewhere) is left to git to answer.
   */
  async currentBranch(): Promise<string | null> {
    const text = await readFile(path.join(await this.gitDir(), "HEAD"), "utf8").catch(() => "");
    const onBranch = /^ref: refs\/heads\/([^\s]+)\n?$/.exec(text);
    if (onBranch && onBranch[1] !== ".invalid") return onBranch[1]!;
    if (/^[0-9a-f]{40}([0-9a-f]{24})?\n?$/.test(text)) return null;
    const { stdout, code } = await this.run(["symbolic-ref", "--quiet", "--short", "HEAD"], {
      allowFail: true,
    });
    return code === 0 ? stdout.trim() : null;
  }

  /**
   * After an agent run: make sure HEAD is the task branch again (an agent that switched branches or detached HEAD
   * has its work carried over to the task branch), and abort any half-done rebase, merge or cherry-pick.
   */
  async recoverBranch(branch: string): Promise<string[]> {
    const notes: string[] = [];
    const gitDir = await this.gitDir();
    for (const [marker, args] of [
      ["rebase-merge", ["rebase", "--abort"]],
      ["rebase-apply", ["rebase", "--abort"]],
      ["MERGE_HEAD", ["merge", "--abort"]],
      ["CHERRY_PICK_HEAD", ["cherry-pick", "--abort"]],
    ] as const) {
      const exists = await readFile(path.join(gitDir, marker)).then(
        () => true,
        (error: NodeJS.ErrnoException) => error.code === "EISDIR",
      );
      if (exists) {
        await this.run([...args], { allowFail: true });
        notes.push(`aborted an unfinished ${args[0]}`);
      }
    }
    const current = await this.currentBranch();
    if (current !== branch) {
      await this.run(["checkout", "--quiet", "-B", branch]);
      notes.push(`HEAD was ${current ? `on ${current}` : "detached"}; moved ${branch} to it`);
    }
    return notes;
  }

  /** True when the work tree (tracked or untracked, excluded files aside) differs from HEAD outside .autopilot/. */
  async hasWorkChanges(): Promise<boolean> {
    return (await this.workState()).changed;
  }

  /** HEAD and whether there is new work, from one `git status` (its branch header names HEAD's commit). */
  async workState(): Promise<WorkState> {
    const { stdout } = await this.run([
      "status",
      "--porcelain=v2",
      "--branch",
      "-z",
      "--untracked-files=all",
      "--",
      ".",
      ":(exclude).autopilot",
    ]);
    const records = stdout.split("\0").filter(Boolean);
    const oid = records.find((r) => r.startsWith("# branch.oid "))?.slice("# branch.oid ".length);
    const head = oid && /^[0-9a-f]+$/.test(oid) ? oid : await this.headSha();
    return { head, changed: records.some((r) => !r.startsWith("# ")) };
  }

  /** Back to HEAD: tracked files restored, untracked files removed (ignored and excluded files are kept). */
  async resetWorkTree(): Promise<void> {
    await this.run(["reset", "--quiet", "--hard", "HEAD"]);
    await this.run(["clean", "-fdq"]);
  }

  /** Stages everything (excluded scratch files stay out) and commits; null when nothing changed. */
  async commitAll(message: string): Promise<string | null> {
    await this.run(["add", "--all", "--", "."]);
    const nothingStaged = async () =>
      (await this.run(["diff", "--cached", "--quiet"], { allowFail: true })).code === 0;
    if (this.pendingMerge) {
      if (await nothingStaged()) return null;
      // The agent was asked to merge the default branch (its own .git is not read): its resolution is
      // recorded as that merge, so the default branch becomes an ancestor of the task branch.
      const tree = (await this.run(["write-tree"])).stdout.trim();
      const commit = (
        await this.run(["commit-tree", tree, "-p", "HEAD", "-p", this.pendingMerge, "-F", "-"], {
          input: message,
        })
      ).stdout.trim();
      await this.run(["update-ref", "HEAD", commit]);
      this.pendingMerge = null;
      return commit;
    }
    // Committing first and asking why only when it fails saves a process in the usual case (there is work).
    const args = ["commit", "--quiet", "--no-verify", "--no-gpg-sign", "-F", "-"];
    const committed = await this.run(args, { input: message, allowFail: true });
    if (committed.code !== 0) {
      if (await nothingStaged()) return null;
      throw new GitError(args, committed);
    }
    return this.headSha();
  }

  /**
   * Brings the default branch into a resumed task branch (it may have moved on since the branch was made). A clean
   * merge is committed; a conflicting one is aborted and its files returned, for the agent to resolve. `base` is
   * where the branch now leaves the default branch.
   */
  async mergeDefault(
    defaultBranch: string,
    message: string,
  ): Promise<{ merged: boolean; conflicts: string[]; base: string }> {
    const ref = `refs/remotes/${this.remote}/${defaultBranch}`;
    const before = await this.headSha();
    const merge = await this.run(["merge", "--no-edit", "--no-gpg-sign", "-m", message, ref], {
      allowFail: true,
    });
    let conflicts: string[] = [];
    if (merge.code !== 0) {
      const unmerged = await this.run(["diff", "--name-only", "--diff-filter=U"], { allowFail: true });
      conflicts = unmerged.stdout
        .split("\n")
        .map((l) => l.trim())
        .filter(Boolean);
      await this.run(["merge", "--abort"], { allowFail: true });
      this.pendingMerge = (await this.run(["rev-parse", ref])).stdout.trim();
      if (conflicts.length === 0)
        conflicts = [
          "(the merge failed: " + (merge.stderr.trim() || merge.stdout.trim()).slice(0, 200) + ")",
        ];
    }
    const mergeBase = await this.run(["merge-base", ref, "HEAD"], { allowFail: true });
    const base =
      mergeBase.code === 0 ? mergeBase.stdout.trim() : (await this.run(["rev-parse", ref])).stdout.trim();
    return { merged: (await this.headSha()) !== before, conflicts, base };
  }

  /** Deletes a file from the branch in its own commit (the progress notes, before review); null when absent. */
  async removeFile(file: string, message: string): Promise<string | null> {
    const tracked = await this.run(["ls-files", "--error-unmatch", "--", file], { allowFail: true });
    if (tracked.code !== 0) return null;
    await this.run(["rm", "--quiet", "--", file]);
    await this.run(["commit", "--quiet", "--no-verify", "--no-gpg-sign", "-F", "-"], { input: message });
    return this.headSha();
  }

  /** Writes back a file that a commit on the branch deleted (the notes set aside for review); false when none. */
  async restoreDeletedFile(file: string): Promise<boolean> {
    if (await treeEntryExists(this.cwd, file)) return false;
    const log = await this.run(["log", "-1", "--format=%H", "--diff-filter=D", "HEAD", "--", file], {
      allowFail: true,
    });
    const sha = log.stdout.trim();
    if (log.code !== 0 || !sha) return false;
    const content = await this.run(["show", `${sha}^:${file}`], { allowFail: true });
    if (content.code !== 0) return false;
    await writeTreeFile(this.cwd, file, content.stdout);
    return true;
  }

  /**
   * Pushes HEAD's commit (`head`, when the caller knows it) to the task branch and nothing else: one explicit
   * ref, never forced, no tags. Returns the commit pushed.
   */
  async push(branch: string, head?: string): Promise<string> {
    const sha = head ?? (await this.headSha());
    await this.run(
      ["push", "--quiet", "--no-verify", "--no-follow-tags", this.remote, `${sha}:refs/heads/${branch}`],
      { network: true },
    );
    return sha;
  }

  async countCommits(from: string, to = "HEAD"): Promise<number> {
    const { stdout, code } = await this.run(["rev-list", "--count", `${from}..${to}`], { allowFail: true });
    return code === 0 ? Number(stdout.trim()) || 0 : 0;
  }

  /** The diff of the task branch against where it left the default branch, without Autopilot's own notes. */
  async diffFrom(base: string, maxBytes = 2 * 1024 * 1024): Promise<string> {
    const { stdout } = await this.run([
      "diff",
      "--no-color",
      "--no-ext-diff",
      // Every file as text: a `-diff` attribute or a binary-looking byte must not hide a change from the gate.
      "--text",
      "--no-textconv",
      base,
      "HEAD",
      "--",
      ".",
      ":(exclude).autopilot",
    ]);
    return stdout.length > maxBytes ? stdout.slice(0, maxBytes) : stdout;
  }

  async changedPaths(base: string): Promise<string[]> {
    const { stdout } = await this.run([
      "diff",
      "--name-only",
      "--no-renames",
      // NUL-separated: a path with a newline or non-ASCII bytes is listed as it is, not quoted.
      "-z",
      base,
      "HEAD",
      "--",
      ".",
      ":(exclude).autopilot",
    ]);
    return stdout.split("\0").filter(Boolean);
  }
}
