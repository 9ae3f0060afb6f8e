/**
 * The worker's git: a repository only the worker can read or write (the checkout's `.git`, moved out of the work
 * tree before the agent ever ran; see boundary.ts), used as a bare repository. No worker git process has a work
 * tree, and none runs with its working directory, `GIT_DIR` or `GIT_WORK_TREE` in the agent's directory: the
 * worker never runs git (nor any other tool) over what the agent wrote. The agent's work reaches this repository
 * only as objects, received through `index-pack --strict` (agent-side-git.ts makes the pack inside the sandbox)
 * and checked from those objects (handback-check.ts) before anything is committed or pushed.
 *
 * `run` is the one place every worker git process starts. Each: is the git binary resolved by absolute path when
 * the worker started, from a directory only root or the worker's user can write (a `git` planted on PATH is
 * never run), with a PATH of such directories only and no askpass program; reads only the worker's own global
 * config (`GIT_CONFIG_GLOBAL` in the worker's private directory, `GIT_CONFIG_NOSYSTEM`); ignores replace objects;
 * runs no hooks, no fsmonitor, no credential helper, no textconv or external diff, no auto-maintenance; and the
 * private `info/attributes` switches off every attribute that changes what a diff shows. Only the worker's own
 * fetch and push carry the token, as an `http.extraheader` in GIT_CONFIG_* variables of that one process (never
 * argv, never a file). Pushes name their one ref explicitly, are never forced and never carry tags.
 */
import { type ChildProcessWithoutNullStreams, execFile, spawn } from "node:child_process";
import { copyFile, mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Readable } from "node:stream";
import { workerBinaries } from "../isolation/trusted-binaries.js";
import { ObjectBatch } from "./object-batch.js";

/** The attributes that change what a diff shows or a commit stores, switched off for the worker's git. */
const NEUTRAL_ATTRIBUTES = "* -text -eol -crlf -ident -filter -working-tree-encoding -diff\n";

/**
 * git's absolute path, looked up once before any agent runs in PATH's directories only root or the worker can
 * write (trusted-binaries.ts): a `git` planted on PATH (`/tmp/node_modules/.bin` under `npm run`) never runs.
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

/** One worker git process as it was started: what the tests of the wall read (worker-git-log). */
export interface WorkerGitCall {
  args: readonly string[];
  cwd: string;
  gitDir: string | undefined;
  workTree: string | undefined;
}

const observers = new Set<(call: WorkerGitCall) => void>();

/** Calls `observer` with every worker git process started from now on; returns the function that stops it. */
export function observeWorkerGit(observer: (call: WorkerGitCall) => void): () => void {
  observers.add(observer);
  return () => observers.delete(observer);
}

interface GitOptions {
  /** The worker's private git directory. */
  gitDir: string;
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

export interface BranchSetup {
  /** True when the task branch already existed on the remote and was taken as it stands. */
  resumed: boolean;
  /** The commit the branch started from on the default branch (for diffs). */
  base: string;
  head: string;
}

const MAX_BUFFER = 256 * 1024 * 1024;

export class Git {
  readonly gitDir: string;
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
  private readonly overlayTree: string;
  private batch: ObjectBatch | null = null;

  constructor(options: GitOptions) {
    this.gitDir = options.gitDir;
    this.hooksDir = path.join(options.stateDir, "no-hooks");
    this.overlayTree = path.join(options.stateDir, "overlay-tree");
    this.token = options.token;
    this.remote = options.remote ?? "origin";
    this.globalConfig = path.join(options.stateDir, "gitconfig");
    this.userName = options.userName ?? "autopilot[bot]";
    this.userEmail = options.userEmail ?? "autopilot[bot]@users.noreply.github.com";
    const parent = options.parentEnv ?? process.env;
    this.gitPath = resolveGit(parent.PATH);
    this.homeDir = parent.HOME;
    const env: Record<string, string> = {};
    for (const name of ["LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT", "GIT_TRACE2_EVENT"]) {
      const value = parent[name];
      if (value !== undefined) env[name] = value;
    }
    Object.assign(env, {
      // What git itself looks up by name (ssh, a helper named in the worker user's own config) comes from the
      // trusted directories too. GIT_EXEC_PATH is never passed: git's helpers come from the trusted git's own.
      PATH: workerBinaries(parent.PATH).searchPath,
      // No askpass program (an empty GIT_ASKPASS wins over core.askPass and SSH_ASKPASS), no terminal prompt.
      GIT_ASKPASS: "",
      // Nothing under a home directory is read: the global config is the worker's frozen copy.
      HOME: options.stateDir,
      XDG_CONFIG_HOME: options.stateDir,
      GIT_TERMINAL_PROMPT: "0",
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_NO_REPLACE_OBJECTS: "1",
      GIT_CONFIG_GLOBAL: this.globalConfig,
      GIT_DIR: options.gitDir,
      GIT_EDITOR: "true",
      GIT_PAGER: "cat",
    });
    this.baseEnv = env;
    this.setAuthor(undefined, undefined);
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

  get author(): { name: string; email: string } {
    return { name: this.userName, email: this.userEmail };
  }

  private commandLine(args: string[], network: boolean): { args: string[]; env: Record<string, string> } {
    const env: Record<string, string> = { ...this.baseEnv };
    // A throwaway index (treeWith) is updated by commands that want a work tree: a folder of the worker's own,
    // holding only the files the worker itself put there.
    const indexed = env.GIT_INDEX_FILE !== undefined;
    if (indexed) env.GIT_WORK_TREE = this.overlayTree;
    if (network && this.token) {
      const basic = Buffer.from(`x-access-token:${this.token}`).toString("base64");
      env.GIT_CONFIG_COUNT = "1";
      env.GIT_CONFIG_KEY_0 = "http.extraheader";
      env.GIT_CONFIG_VALUE_0 = `AUTHORIZATION: basic ${basic}`;
    }
    const full = [
      // No work tree, whatever the moved checkout's config says: a command that needs one fails.
      ...(indexed ? ["-c", "core.autocrlf=false", "-c", "core.safecrlf=false"] : ["--bare"]),
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
      // The repository lives for one job: many loose objects make it a little slower to read, never wrong.
      "-c",
      "maintenance.auto=false",
      "-c",
      "gc.auto=0",
      ...args,
    ];
    for (const observer of observers)
      observer({ args, cwd: this.gitDir, gitDir: env.GIT_DIR, workTree: env.GIT_WORK_TREE });
    return { args: full, env };
  }

  /** Runs git with hooks and credential helpers off; `network` adds the token header for this one process. */
  run(
    args: string[],
    options: { network?: boolean; allowFail?: boolean; input?: string; base64?: boolean } = {},
  ): Promise<GitResult> {
    const line = this.commandLine(args, options.network ?? false);
    return new Promise((resolve, reject) => {
      const child = execFile(
        this.gitPath,
        line.args,
        { cwd: this.gitDir, env: line.env, maxBuffer: MAX_BUFFER, encoding: "buffer" },
        (error, stdout, stderr) => {
          const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
          // `base64`: the exact bytes (a binary blob), which a UTF-8 string would not keep.
          const out = stdout.toString(options.base64 ? "base64" : "utf8");
          const result = { code, stdout: out, stderr: this.redact(stderr.toString()) };
          if (code !== 0 && !options.allowFail) reject(new GitError(args, result));
          else resolve(result);
        },
      );
      if (options.input !== undefined) child.stdin?.end(options.input);
    });
  }

  /** Runs git with `input` streamed to its stdin (a pack from the agent's side). */
  runStreaming(args: string[], input: Readable): Promise<GitResult> {
    return new Promise((resolve) => {
      const child = this.start(args);
      let stdout = "";
      let stderr = "";
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
        if (stdout.length < 64 * 1024) stdout += chunk;
      });
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
        if (stderr.length < 64 * 1024) stderr += chunk;
      });
      // A receiver that stops early (a pack over the size bound) closes its stdin: the sender's write fails.
      child.stdin.on("error", () => {});
      input.on("error", () => child.stdin.end());
      input.pipe(child.stdin);
      child.on("error", (error) => resolve({ code: 127, stdout, stderr: String(error) }));
      child.on("close", (code) => resolve({ code: code ?? 1, stdout, stderr }));
    });
  }

  private start(args: string[]): ChildProcessWithoutNullStreams {
    const line = this.commandLine(args, false);
    return spawn(this.gitPath, line.args, {
      cwd: this.gitDir,
      env: line.env,
      stdio: ["pipe", "pipe", "pipe"],
    });
  }

  /** The job's object reader (object-batch.ts), started at its first read; `close` ends it. */
  get objects(): ObjectBatch {
    this.batch ??= new ObjectBatch(() => this.start(["cat-file", "--batch-command"]));
    return this.batch;
  }

  close(): void {
    this.batch?.close();
  }

  private redact(text: string): string {
    const basic = this.token && Buffer.from(`x-access-token:${this.token}`).toString("base64");
    return this.token && basic ? text.split(this.token).join("***").split(basic).join("***") : text;
  }

  /**
   * Freezes the global config (a copy of the user's, taken before any agent runs), removes every credential
   * that actions/checkout may have persisted in the config (`http.<url>.extraheader`, credential includes), sets
   * the local identity, and snapshots the config. Returns the keys removed.
   */
  async prepare(): Promise<string[]> {
    await mkdir(path.dirname(this.globalConfig), { recursive: true, mode: 0o700 });
    await mkdir(this.hooksDir, { recursive: true, mode: 0o700 });
    await mkdir(this.overlayTree, { recursive: true, mode: 0o700 });
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
    const info = path.join(this.gitDir, "info");
    await mkdir(info, { recursive: true });
    await writeFile(path.join(info, "attributes"), NEUTRAL_ATTRIBUTES);
    await this.snapshotConfig();
    return removed;
  }

  /** Records the config as the worker wants it; `restoreConfig` puts it back. */
  async snapshotConfig(): Promise<void> {
    this.configSnapshot = await readFile(path.join(this.gitDir, "config"), "utf8");
  }

  private async includeLooksLikeCredentials(key: string): Promise<boolean> {
    const { stdout } = await this.run(["config", "--local", "--get-all", key], { allowFail: true });
    return /credential|token|auth/i.test(stdout);
  }

  /**
   * Puts the config back as `prepare` left it. Only the worker can write this repository; with `isolation: none`
   * the agent runs as the worker's own user and could, which this undoes.
   */
  async restoreConfig(): Promise<boolean> {
    if (this.configSnapshot === null) return false;
    const file = path.join(this.gitDir, "config");
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
   * Points the task branch (and HEAD) at the remote's branch as it stands when it exists there (an earlier
   * attempt's last push), else at the default branch. Refs only: the agent's side brings its files there.
   */
  async setupBranch(branch: string, defaultBranch: string): Promise<BranchSetup> {
    await this.fetchBranch(defaultBranch);
    const defaultRef = `refs/remotes/${this.remote}/${defaultBranch}`;
    const resumed = await this.remoteBranchExists(branch);
    if (resumed) await this.fetchBranch(branch);
    const start = resumed ? `refs/remotes/${this.remote}/${branch}` : defaultRef;
    const head = await this.revParse(start);
    await this.pointHead(branch, head);
    if (this.configSnapshot !== null) await this.snapshotConfig();
    return { resumed, base: await this.mergeBase(defaultRef, head), head };
  }

  /** The branch made `refs/heads/<branch>` at `commit`, and HEAD a symbolic ref to it. */
  async pointHead(branch: string, commit: string): Promise<void> {
    await this.run(["update-ref", `refs/heads/${branch}`, commit]);
    await this.run(["symbolic-ref", "HEAD", `refs/heads/${branch}`]);
  }

  async revParse(rev: string): Promise<string> {
    return (await this.run(["rev-parse", "--verify", "--end-of-options", rev])).stdout.trim();
  }

  private async mergeBase(ref: string, head: string): Promise<string> {
    const found = await this.run(["merge-base", ref, head], { allowFail: true });
    return found.code === 0 ? found.stdout.trim() : this.revParse(ref);
  }

  async headSha(): Promise<string> {
    return this.revParse("HEAD");
  }

  /** The tree of a commit. */
  async treeOf(commit: string): Promise<string> {
    return this.revParse(`${commit}^{tree}`);
  }

  /** The branch HEAD is on (null: detached), read as the file it is in the worker's repository. */
  async currentBranch(): Promise<string | null> {
    const text = await readFile(path.join(this.gitDir, "HEAD"), "utf8").catch(() => "");
    const onBranch = /^ref: refs\/heads\/([^\s]+)\n?$/.exec(text);
    if (onBranch && onBranch[1] !== ".invalid") return onBranch[1]!;
    if (/^[0-9a-f]{40}([0-9a-f]{24})?\n?$/.test(text)) return null;
    const { stdout, code } = await this.run(["symbolic-ref", "--quiet", "--short", "HEAD"], {
      allowFail: true,
    });
    return code === 0 ? stdout.trim() : null;
  }

  /**
   * Merges the default branch into HEAD from objects alone (`git merge-tree --write-tree`): a clean merge is
   * committed; a conflicting one is not, and its files are returned (the agent resolves them; its next commit
   * records the merge: `mergeParent`). `base` is where the branch now leaves the default branch.
   */
  async mergeDefault(
    defaultBranch: string,
    message: string,
  ): Promise<{ merged: boolean; conflicts: string[]; base: string; mergeParent: string | null }> {
    const ref = `refs/remotes/${this.remote}/${defaultBranch}`;
    const before = await this.headSha();
    const other = await this.revParse(ref);
    const merge = await this.run(
      ["merge-tree", "--write-tree", "--name-only", "--no-messages", "-z", before, other],
      { allowFail: true },
    );
    let conflicts: string[] = [];
    let mergeParent: string | null = null;
    if (merge.code === 0) {
      const tree = merge.stdout.split("\0")[0]!.trim();
      if (tree !== (await this.treeOf(before)) || !(await this.isAncestor(other, before))) {
        if (await this.isAncestor(before, other)) await this.run(["update-ref", "HEAD", other]);
        else await this.commitTree(tree, [before, other], message);
      }
    } else if (merge.code === 1) {
      conflicts = [...new Set(merge.stdout.split("\0").slice(1).filter(Boolean))];
      mergeParent = other;
    } else if (merge.code === 129) {
      // A usage error: a git older than 2.38 has no `merge-tree --write-tree`.
      throw new Error(
        "the worker merges the default branch with `git merge-tree --write-tree`, which needs git 2.38 or later on the runner",
      );
    } else {
      throw new GitError(["merge-tree"], merge);
    }
    const head = await this.headSha();
    return { merged: head !== before, conflicts, base: await this.mergeBase(ref, head), mergeParent };
  }

  private async isAncestor(ancestor: string, of: string): Promise<boolean> {
    return (await this.run(["merge-base", "--is-ancestor", ancestor, of], { allowFail: true })).code === 0;
  }

  /** A commit of `tree` with these parents, made HEAD's branch's new commit; returns it. */
  async commitTree(tree: string, parents: string[], message: string): Promise<string> {
    const args = ["commit-tree", "--no-gpg-sign", tree];
    for (const parent of parents) args.push("-p", parent);
    args.push("-F", "-");
    const commit = (await this.run(args, { input: message })).stdout.trim();
    await this.run(["update-ref", "HEAD", commit]);
    return commit;
  }

  /**
   * `tree` with some files replaced (content) or removed (null), built in a throwaway index of the worker's
   * own: the worker's own files (its progress notes) go into a commit as the worker knows them.
   */
  async treeWith(tree: string, files: ReadonlyMap<string, string | null>): Promise<string> {
    if (files.size === 0) return tree;
    const index = path.join(path.dirname(this.globalConfig), "overlay-index");
    const withIndex = (args: string[]) => this.runIndexed(index, args, {});
    await withIndex(["read-tree", tree]);
    // The contents go through the worker's own overlay folder (private, never the agent's): one update-index
    // hashes and stages them all.
    const added: string[] = [];
    const removed: string[] = [];
    for (const [file, content] of files) {
      if (content === null) {
        removed.push(file);
        continue;
      }
      const at = path.join(this.overlayTree, file);
      await mkdir(path.dirname(at), { recursive: true, mode: 0o700 });
      await writeFile(at, content);
      added.push(file);
    }
    if (added.length) await withIndex(["update-index", "--add", "--", ...added]);
    if (removed.length) await withIndex(["update-index", "--force-remove", "--", ...removed]);
    return (await withIndex(["write-tree"])).stdout.trim();
  }

  private runIndexed(index: string, args: string[], options: { input?: string }): Promise<GitResult> {
    const saved = this.baseEnv.GIT_INDEX_FILE;
    this.baseEnv.GIT_INDEX_FILE = index;
    try {
      return this.run(args, options);
    } finally {
      if (saved === undefined) delete this.baseEnv.GIT_INDEX_FILE;
      else this.baseEnv.GIT_INDEX_FILE = saved;
    }
  }

  /**
   * Takes in a pack from the agent's side: `index-pack --strict` checks every object as git checks a stranger's
   * push (malformed trees, `.git` path components, bad `.gitmodules`: fsck) and refuses more than `maxBytes`.
   */
  async receivePack(pack: Readable, maxBytes: number): Promise<void> {
    const args = ["index-pack", "--stdin", "--strict", `--max-input-size=${maxBytes}`];
    const result = await this.runStreaming(args, pack);
    if (result.code !== 0) throw new GitError(args, result);
  }

  /**
   * Writes a bundle of the branch (and the remote-tracking refs, and `also` when given) for the agent's side;
   * false when it cannot.
   */
  async bundle(
    file: string,
    branch: string,
    since: string | null,
    also: string | null = null,
  ): Promise<boolean> {
    const args = ["bundle", "create", "--quiet", file, `refs/heads/${branch}`, "--remotes"];
    // A commit no bundled ref reaches (the one the checkout's files are at) travels under a ref of its own.
    if (also) {
      await this.run(["update-ref", "refs/autopilot/files-at", also]);
      args.push("refs/autopilot/files-at");
    }
    if (since) args.push(`^${since}`);
    return (await this.run(args, { allowFail: true })).code === 0;
  }

  /**
   * Pushes `head` (HEAD's commit when absent) to the branch and nothing else: one explicit ref, never forced,
   * no tags. Returns the commit pushed.
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
}
