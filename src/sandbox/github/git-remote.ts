/**
 * The sandbox's git remote: bare repositories in a temporary directory, served over git's smart HTTP protocol
 * by `git http-backend` (spawned as a CGI program per request) at `/git/<owner>/<repo>.git`, plus the
 * repository operations the REST API needs (refs, compare, file contents, merges), all done by real git.
 *
 * Authentication is HTTP Basic with any username and a sandbox token as the password, as GitHub accepts
 * `x-access-token:<token>`. Pushes need a token with write access. After every receive-pack the refs are
 * compared with the snapshot taken before it, and each moved ref is reported through `onPush`.
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createGunzip, createInflate } from "node:zlib";
import { gitEnv, KeyedLock, run } from "./proc.js";
import {
  permissionAtLeast,
  type SandboxStore,
  type CommitInfo as StoreCommitInfo,
  StoreError,
  type GitBackend as StoreGitBackend,
} from "./store.js";

export const ZERO_SHA = "0000000000000000000000000000000000000000";

/** Who a token belongs to, as far as git access is concerned. */
export interface GitPrincipal {
  login: string;
  /** May push. */
  write: boolean;
}

export interface PushUpdate {
  owner: string;
  repo: string;
  /** Full ref name, e.g. refs/heads/main. */
  ref: string;
  /** Previous SHA, ZERO_SHA when the ref was created. */
  before: string;
  /** New SHA, ZERO_SHA when the ref was deleted. */
  after: string;
  pusher: string;
}

export interface RefEntry {
  ref: string;
  sha: string;
}

export interface CommitInfo {
  sha: string;
  tree: string;
  parents: string[];
  message: string;
  author: { name: string; email: string; date: string };
  committer: { name: string; email: string; date: string };
}

export type FileStatus = "added" | "removed" | "modified" | "renamed" | "copied" | "changed" | "unchanged";

export interface ChangedFile {
  filename: string;
  previousFilename?: string;
  status: FileStatus;
  additions: number;
  deletions: number;
  changes: number;
  /** Unified diff hunks of the file (GitHub's `patch`), absent for binary files. */
  patch?: string;
  /** Blob SHA at head, absent when removed. */
  sha?: string;
}

export interface CompareResult {
  status: "identical" | "ahead" | "behind" | "diverged";
  aheadBy: number;
  behindBy: number;
  baseSha: string;
  headSha: string;
  mergeBaseSha: string | null;
  files: ChangedFile[];
  commits: CommitInfo[];
}

export type MergeMethod = "merge" | "squash" | "rebase";

export type MergeResult =
  | { merged: true; sha: string; method: MergeMethod }
  | { merged: false; reason: "conflict" | "not_found" | "stale_base"; conflicts: string[]; message: string };

export interface Author {
  name: string;
  email: string;
  /** ISO date; now when absent. */
  date?: string;
}

export interface WriteFileRequest {
  branch: string;
  path: string;
  /** New content; null deletes the file. */
  content: string | Buffer | null;
  message: string;
  author?: Author;
}

/**
 * The repository operations the sandbox's REST and GraphQL layer needs from git. Every `ref` argument accepts
 * a branch name, a full ref name (refs/heads/…, refs/tags/…, refs/pull/…) or a commit SHA.
 */
export interface GitBackend {
  hasRepo(owner: string, repo: string): boolean;
  createRepo(owner: string, repo: string, defaultBranch?: string): Promise<void>;
  seedRepo(
    owner: string,
    repo: string,
    files: Record<string, string>,
    options?: { branch?: string; message?: string; author?: Author },
  ): Promise<string>;
  listRefs(owner: string, repo: string, prefix?: string): Promise<RefEntry[]>;
  resolveRef(owner: string, repo: string, ref: string): Promise<string | null>;
  createRef(owner: string, repo: string, ref: string, sha: string): Promise<void>;
  updateRef(owner: string, repo: string, ref: string, sha: string, force?: boolean): Promise<void>;
  deleteRef(owner: string, repo: string, ref: string): Promise<void>;
  getCommit(owner: string, repo: string, ref: string): Promise<CommitInfo | null>;
  isAncestor(owner: string, repo: string, ancestor: string, descendant: string): Promise<boolean>;
  compare(owner: string, repo: string, base: string, head: string): Promise<CompareResult>;
  readFile(owner: string, repo: string, ref: string, path: string): Promise<string | null>;
  readFileBuffer(owner: string, repo: string, ref: string, path: string): Promise<Buffer | null>;
  /** Blob SHA of a file at a ref (the contents API's `sha`), null when absent. */
  fileSha(owner: string, repo: string, ref: string, path: string): Promise<string | null>;
  listTree(
    owner: string,
    repo: string,
    ref: string,
    path?: string,
  ): Promise<{ path: string; type: "blob" | "tree"; sha: string; size?: number }[]>;
  /** Commits one file change on a branch (the contents API's PUT/DELETE); returns the new commit SHA. */
  writeFile(owner: string, repo: string, request: WriteFileRequest): Promise<string>;
  /** Whether head merges cleanly into base, without writing anything. */
  mergeability(
    owner: string,
    repo: string,
    base: string,
    head: string,
  ): Promise<{ mergeable: boolean; conflicts: string[] }>;
  /**
   * Merges head into the base branch with GitHub's three methods, creating real commits and moving the base
   * branch. `expectedHeadSha` guards against a head that moved (GitHub's `sha` parameter).
   */
  merge(
    owner: string,
    repo: string,
    request: {
      base: string;
      head: string;
      method: MergeMethod;
      /** Commit title; GitHub's default when absent. */
      title?: string;
      /** Commit body. */
      message?: string;
      author?: Author;
      expectedHeadSha?: string;
    },
  ): Promise<MergeResult>;
}

export interface GitRemoteOptions {
  /** Directory for the bare repositories; a fresh temporary directory (removed on stop) when absent. */
  root?: string;
  /** Resolves a token to its owner and rights on one repository; null rejects it. */
  authenticate?: (
    token: string,
    repo: { owner: string; repo: string },
  ) => GitPrincipal | null | Promise<GitPrincipal | null>;
  /** Called once per moved ref after a push over HTTP. */
  onPush?: (update: PushUpdate) => void | Promise<void>;
  /** Anonymous clones and fetches (no credentials) are rejected unless this is true. */
  allowAnonymousRead?: boolean;
}

class GitError extends Error {
  constructor(
    message: string,
    readonly status = 422,
  ) {
    super(message);
  }
}
export { GitError };

const SAFE_NAME = /^[A-Za-z0-9_.-]+$/;

function assertName(kind: string, value: string): void {
  if (!SAFE_NAME.test(value) || value.startsWith(".") || value.includes(".."))
    throw new GitError(`invalid ${kind}: ${value}`, 404);
}

function assertRefArg(value: string): void {
  if (!value || value.startsWith("-") || /[\s\0~^:?*[\\]/.test(value.replace(/\^\{commit\}$/, ""))) {
    throw new GitError(`invalid ref: ${value}`);
  }
}

/** Normalizes a branch name or short ref to a full ref name. */
export function fullRef(ref: string): string {
  if (ref.startsWith("refs/")) return ref;
  if (ref.startsWith("heads/") || ref.startsWith("tags/") || ref.startsWith("pull/")) return `refs/${ref}`;
  return `refs/heads/${ref}`;
}

export class GitRemote implements GitBackend {
  readonly root: string;
  private readonly ownsRoot: boolean;
  private readonly lock = new KeyedLock();
  private readonly children = new Set<ReturnType<typeof spawn>>();
  private readonly repos = new Set<string>();
  private stopped = false;
  authenticate: NonNullable<GitRemoteOptions["authenticate"]>;
  onPush: NonNullable<GitRemoteOptions["onPush"]>;
  allowAnonymousRead: boolean;

  constructor(options: GitRemoteOptions = {}) {
    this.ownsRoot = !options.root;
    this.root = options.root ?? mkdtempSync(join(tmpdir(), "autopilot-git-"));
    mkdirSync(this.root, { recursive: true });
    this.authenticate = options.authenticate ?? (() => null);
    this.onPush = options.onPush ?? (() => {});
    this.allowAnonymousRead = options.allowAnonymousRead ?? false;
  }

  /** Absolute path of a bare repository. */
  repoPath(owner: string, repo: string): string {
    assertName("owner", owner);
    assertName("repository", repo);
    return join(this.root, owner, `${repo}.git`);
  }

  private key(owner: string, repo: string): string {
    return `${owner}/${repo}`.toLowerCase();
  }

  hasRepo(owner: string, repo: string): boolean {
    return this.repos.has(this.key(owner, repo));
  }

  private requireRepo(owner: string, repo: string): string {
    if (!this.hasRepo(owner, repo)) throw new GitError(`repository ${owner}/${repo} not found`, 404);
    return this.repoPath(owner, repo);
  }

  /** Runs git in a bare repository; rejects with git's stderr on a non-zero exit. */
  private async git(
    owner: string,
    repo: string,
    args: string[],
    options: { input?: string | Buffer; env?: NodeJS.ProcessEnv; allowFail?: boolean } = {},
  ): Promise<string> {
    const cwd = this.requireRepo(owner, repo);
    const result = await run("git", args, { cwd, env: gitEnv(options.env), input: options.input });
    if (result.code !== 0 && !options.allowFail) {
      throw new GitError(`git ${args[0]} failed: ${result.stderr.trim() || result.stdout.trim()}`);
    }
    return result.stdout;
  }

  async createRepo(owner: string, repo: string, defaultBranch = "main"): Promise<void> {
    const path = this.repoPath(owner, repo);
    mkdirSync(dirname(path), { recursive: true });
    const init = await run("git", ["init", "--bare", "--quiet", `--initial-branch=${defaultBranch}`, path], {
      env: gitEnv(),
    });
    if (init.code !== 0) throw new GitError(`git init failed: ${init.stderr}`);
    this.repos.add(this.key(owner, repo));
    // http-backend refuses receive-pack without REMOTE_USER unless enabled; we authorize in front of it.
    await this.git(owner, repo, ["config", "http.receivepack", "true"]);
    await this.git(owner, repo, ["config", "uploadpack.allowAnySHA1InWant", "true"]);
    await this.git(owner, repo, ["config", "receive.denyDeleteCurrent", "true"]);
  }

  async seedRepo(
    owner: string,
    repo: string,
    files: Record<string, string>,
    options: { branch?: string; message?: string; author?: Author } = {},
  ): Promise<string> {
    if (!this.hasRepo(owner, repo)) await this.createRepo(owner, repo, options.branch ?? "main");
    const branch = options.branch ?? (await this.defaultBranch(owner, repo));
    return this.lock.with(this.key(owner, repo), async () => {
      const parent = await this.resolveRef(owner, repo, fullRef(branch));
      const tree = await this.buildTree(owner, repo, parent, files, []);
      const sha = await this.commitTree(owner, repo, tree, parent ? [parent] : [], {
        message: options.message ?? "Initial commit",
        author: options.author,
      });
      await this.git(owner, repo, ["update-ref", fullRef(branch), sha, parent ?? ZERO_SHA]);
      return sha;
    });
  }

  /** The branch HEAD points at in the bare repository. */
  async defaultBranch(owner: string, repo: string): Promise<string> {
    const head = (await this.git(owner, repo, ["symbolic-ref", "HEAD"])).trim();
    return head.replace(/^refs\/heads\//, "");
  }

  async setDefaultBranch(owner: string, repo: string, branch: string): Promise<void> {
    await this.git(owner, repo, ["symbolic-ref", "HEAD", fullRef(branch)]);
  }

  /** Builds a tree from a parent commit's tree with files added, replaced or (null) removed. */
  private async buildTree(
    owner: string,
    repo: string,
    parent: string | null,
    files: Record<string, string | Buffer | null>,
    executable: string[],
  ): Promise<string> {
    const indexFile = join(this.root, `.index-${process.pid}-${Math.random().toString(36).slice(2)}`);
    const env = { GIT_INDEX_FILE: indexFile };
    try {
      if (parent) await this.git(owner, repo, ["read-tree", parent], { env });
      else await this.git(owner, repo, ["read-tree", "--empty"], { env });
      const lines: string[] = [];
      for (const [path, content] of Object.entries(files)) {
        const clean = path.replace(/^\/+/, "");
        if (!clean || clean.split("/").some((part) => part === ".." || part === "." || part === ".git")) {
          throw new GitError(`invalid path: ${path}`);
        }
        if (content === null) {
          lines.push(`0 ${ZERO_SHA}\t${clean}`);
          continue;
        }
        const blob = (
          await this.git(owner, repo, ["hash-object", "-w", "--stdin"], { input: content })
        ).trim();
        const mode = executable.includes(clean) || /\.sh$/.test(clean) ? "100755" : "100644";
        lines.push(`${mode} ${blob}\t${clean}`);
      }
      if (lines.length > 0) {
        await this.git(owner, repo, ["update-index", "--index-info"], {
          env,
          input: `${lines.join("\n")}\n`,
        });
      }
      return (await this.git(owner, repo, ["write-tree"], { env })).trim();
    } finally {
      rmSync(indexFile, { force: true });
    }
  }

  private async commitTree(
    owner: string,
    repo: string,
    tree: string,
    parents: string[],
    options: { message: string; author?: Author; committer?: Author },
  ): Promise<string> {
    const args = ["commit-tree", tree];
    for (const parent of parents) args.push("-p", parent);
    const env: NodeJS.ProcessEnv = {};
    if (options.author) {
      env.GIT_AUTHOR_NAME = options.author.name;
      env.GIT_AUTHOR_EMAIL = options.author.email;
      if (options.author.date) env.GIT_AUTHOR_DATE = options.author.date;
    }
    if (options.committer) {
      env.GIT_COMMITTER_NAME = options.committer.name;
      env.GIT_COMMITTER_EMAIL = options.committer.email;
      if (options.committer.date) env.GIT_COMMITTER_DATE = options.committer.date;
    }
    return (await this.git(owner, repo, args, { input: options.message, env })).trim();
  }

  async listRefs(owner: string, repo: string, prefix = "refs/"): Promise<RefEntry[]> {
    const out = await this.git(owner, repo, ["for-each-ref", "--format=%(objectname) %(refname)", prefix]);
    return out
      .split("\n")
      .filter(Boolean)
      .map((line) => {
        const space = line.indexOf(" ");
        return { sha: line.slice(0, space), ref: line.slice(space + 1) };
      });
  }

  private async refSnapshot(owner: string, repo: string): Promise<Map<string, string>> {
    return new Map((await this.listRefs(owner, repo)).map((entry) => [entry.ref, entry.sha]));
  }

  async resolveRef(owner: string, repo: string, ref: string): Promise<string | null> {
    assertRefArg(ref);
    const candidates = /^[0-9a-f]{4,40}$/i.test(ref) ? [ref, fullRef(ref)] : [fullRef(ref), ref];
    for (const candidate of candidates) {
      const out = await this.git(owner, repo, ["rev-parse", "--verify", "--quiet", `${candidate}^{commit}`], {
        allowFail: true,
      });
      if (out.trim()) return out.trim();
    }
    return null;
  }

  private async requireCommit(owner: string, repo: string, ref: string): Promise<string> {
    const sha = await this.resolveRef(owner, repo, ref);
    if (!sha) throw new GitError(`No commit found for ${ref}`, 404);
    return sha;
  }

  private async checkRefName(owner: string, repo: string, ref: string): Promise<void> {
    assertRefArg(ref);
    const ok = await run("git", ["check-ref-format", ref], { env: gitEnv() });
    if (ok.code !== 0) throw new GitError(`invalid ref name: ${ref}`);
    void owner;
    void repo;
  }

  async createRef(owner: string, repo: string, ref: string, sha: string): Promise<void> {
    const name = fullRef(ref);
    await this.checkRefName(owner, repo, name);
    await this.lock.with(this.key(owner, repo), async () => {
      const target = await this.requireCommit(owner, repo, sha);
      const existing = await this.resolveRef(owner, repo, name);
      if (existing) throw new GitError("Reference already exists");
      await this.git(owner, repo, ["update-ref", name, target, ZERO_SHA]);
    });
  }

  async updateRef(owner: string, repo: string, ref: string, sha: string, force = false): Promise<void> {
    const name = fullRef(ref);
    await this.checkRefName(owner, repo, name);
    await this.lock.with(this.key(owner, repo), async () => {
      const target = await this.requireCommit(owner, repo, sha);
      const current = await this.resolveRef(owner, repo, name);
      if (!current) throw new GitError("Reference does not exist");
      if (!force && !(await this.isAncestor(owner, repo, current, target))) {
        throw new GitError("Update is not a fast forward");
      }
      await this.git(owner, repo, ["update-ref", name, target, current]);
    });
  }

  async deleteRef(owner: string, repo: string, ref: string): Promise<void> {
    const name = fullRef(ref);
    await this.checkRefName(owner, repo, name);
    await this.lock.with(this.key(owner, repo), async () => {
      const current = await this.resolveRef(owner, repo, name);
      if (!current) throw new GitError("Reference does not exist");
      await this.git(owner, repo, ["update-ref", "-d", name, current]);
    });
  }

  async isAncestor(owner: string, repo: string, ancestor: string, descendant: string): Promise<boolean> {
    assertRefArg(ancestor);
    assertRefArg(descendant);
    const result = await run("git", ["merge-base", "--is-ancestor", ancestor, descendant], {
      cwd: this.requireRepo(owner, repo),
      env: gitEnv(),
    });
    return result.code === 0;
  }

  async getCommit(owner: string, repo: string, ref: string): Promise<CommitInfo | null> {
    const sha = await this.resolveRef(owner, repo, ref);
    if (!sha) return null;
    const [commit] = await this.logCommits(owner, repo, ["-1", sha]);
    return commit ?? null;
  }

  private async logCommits(owner: string, repo: string, range: string[]): Promise<CommitInfo[]> {
    const format = ["%H", "%T", "%P", "%an", "%ae", "%aI", "%cn", "%ce", "%cI", "%B"].join("%x1f");
    const out = await this.git(owner, repo, ["log", `--format=${format}%x1e`, ...range]);
    return out
      .split("\x1e")
      .map((record) => record.replace(/^\n/, ""))
      .filter((record) => record.includes("\x1f"))
      .map((record) => {
        const [sha, tree, parents, an, ae, ad, cn, ce, cd, ...message] = record.split("\x1f");
        return {
          sha: sha!,
          tree: tree!,
          parents: parents ? parents.split(" ").filter(Boolean) : [],
          message: message.join("\x1f").replace(/\n+$/, ""),
          author: { name: an!, email: ae!, date: ad! },
          committer: { name: cn!, email: ce!, date: cd! },
        };
      });
  }

  async compare(owner: string, repo: string, base: string, head: string): Promise<CompareResult> {
    const baseSha = await this.requireCommit(owner, repo, base);
    const headSha = await this.requireCommit(owner, repo, head);
    const mergeBase =
      (await this.git(owner, repo, ["merge-base", baseSha, headSha], { allowFail: true })).trim() || null;
    const counts = (
      await this.git(owner, repo, ["rev-list", "--left-right", "--count", `${baseSha}...${headSha}`])
    ).trim();
    const [behindBy = 0, aheadBy = 0] = counts.split(/\s+/).map(Number);
    const status =
      aheadBy === 0 && behindBy === 0
        ? "identical"
        : behindBy === 0
          ? "ahead"
          : aheadBy === 0
            ? "behind"
            : "diverged";
    const from =
      mergeBase ?? (await this.git(owner, repo, ["hash-object", "-t", "tree", "/dev/null"])).trim();
    const files = await this.diffFiles(owner, repo, from, headSha);
    const commits =
      aheadBy > 0 ? await this.logCommits(owner, repo, ["--reverse", `${baseSha}..${headSha}`]) : [];
    return { status, aheadBy, behindBy, baseSha, headSha, mergeBaseSha: mergeBase, files, commits };
  }

  private async diffFiles(owner: string, repo: string, from: string, to: string): Promise<ChangedFile[]> {
    const nameStatus = (await this.git(owner, repo, ["diff", "--name-status", "-z", "-M", from, to])).split(
      "\0",
    );
    const numstat = (await this.git(owner, repo, ["diff", "--numstat", "-z", "-M", from, to])).split("\0");
    const files: ChangedFile[] = [];
    for (let i = 0; i < nameStatus.length - 1; ) {
      const code = nameStatus[i++]!;
      if (!code) continue;
      const letter = code[0];
      if (letter === "R" || letter === "C") {
        const previous = nameStatus[i++]!;
        const filename = nameStatus[i++]!;
        files.push({
          filename,
          previousFilename: previous,
          status: letter === "R" ? "renamed" : "copied",
          additions: 0,
          deletions: 0,
          changes: 0,
        });
      } else {
        const filename = nameStatus[i++]!;
        const status: FileStatus =
          letter === "A" ? "added" : letter === "D" ? "removed" : letter === "M" ? "modified" : "changed";
        files.push({ filename, status, additions: 0, deletions: 0, changes: 0 });
      }
    }
    // numstat -z: "add\tdel\tpath\0" or for renames "add\tdel\t\0old\0new\0".
    for (let i = 0; i < numstat.length; ) {
      const entry = numstat[i++];
      if (!entry) continue;
      const [add, del, path] = entry.split("\t");
      let filename = path;
      if (path === "") {
        i++;
        filename = numstat[i++];
      }
      const file = files.find((f) => f.filename === filename);
      if (!file) continue;
      file.additions = add === "-" ? 0 : Number(add);
      file.deletions = del === "-" ? 0 : Number(del);
      file.changes = file.additions + file.deletions;
    }
    const patch = await this.git(owner, repo, ["diff", "-M", "--no-color", "--no-ext-diff", from, to]);
    const sections = patch.split(/^(?=diff --git )/m);
    for (const file of files) {
      const section = sections.find(
        (s) => s.startsWith("diff --git ") && s.split("\n", 1)[0]!.endsWith(` b/${file.filename}`),
      );
      if (section && !/^Binary files /m.test(section)) {
        const hunk = section.indexOf("\n@@");
        if (hunk >= 0) file.patch = section.slice(hunk + 1).replace(/\n$/, "");
      }
      if (file.status !== "removed") {
        const sha = await this.git(
          owner,
          repo,
          ["rev-parse", "--verify", "--quiet", `${to}:${file.filename}`],
          {
            allowFail: true,
          },
        );
        if (sha.trim()) file.sha = sha.trim();
      }
    }
    return files;
  }

  async readFileBuffer(owner: string, repo: string, ref: string, path: string): Promise<Buffer | null> {
    const sha = await this.resolveRef(owner, repo, ref);
    if (!sha) return null;
    const clean = path.replace(/^\/+/, "");
    const cwd = this.requireRepo(owner, repo);
    const type = await run("git", ["cat-file", "-t", `${sha}:${clean}`], { cwd, env: gitEnv() });
    if (type.code !== 0 || type.stdout.trim() !== "blob") return null;
    return new Promise((resolve, reject) => {
      const child = spawn("git", ["cat-file", "blob", `${sha}:${clean}`], { cwd, env: gitEnv() });
      const chunks: Buffer[] = [];
      child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
      child.on("error", reject);
      child.on("close", (code) => resolve(code === 0 ? Buffer.concat(chunks) : null));
    });
  }

  async readFile(owner: string, repo: string, ref: string, path: string): Promise<string | null> {
    const buffer = await this.readFileBuffer(owner, repo, ref, path);
    return buffer ? buffer.toString("utf8") : null;
  }

  async fileSha(owner: string, repo: string, ref: string, path: string): Promise<string | null> {
    const sha = await this.resolveRef(owner, repo, ref);
    if (!sha) return null;
    const out = await this.git(
      owner,
      repo,
      ["rev-parse", "--verify", "--quiet", `${sha}:${path.replace(/^\/+/, "")}`],
      { allowFail: true },
    );
    return out.trim() || null;
  }

  async listTree(
    owner: string,
    repo: string,
    ref: string,
    path = "",
  ): Promise<{ path: string; type: "blob" | "tree"; sha: string; size?: number }[]> {
    const sha = await this.requireCommit(owner, repo, ref);
    const clean = path.replace(/^\/+|\/+$/g, "");
    const out = await this.git(owner, repo, ["ls-tree", "-l", "-z", clean ? `${sha}:${clean}` : sha], {
      allowFail: true,
    });
    return out
      .split("\0")
      .filter(Boolean)
      .map((line) => {
        const [meta = "", name = ""] = line.split("\t");
        const [, type, objectSha, size] = meta.split(/\s+/);
        return {
          path: clean ? `${clean}/${name}` : name,
          type: type === "tree" ? ("tree" as const) : ("blob" as const),
          sha: objectSha!,
          ...(size && size !== "-" ? { size: Number(size) } : {}),
        };
      });
  }

  /** Every entry below a commit's (or tree's) root with its git mode, as `ls-tree -r -t` lists them. */
  async listTreeRecursive(
    owner: string,
    repo: string,
    ref: string,
  ): Promise<
    { path: string; mode: string; type: "blob" | "tree" | "commit"; sha: string; size?: number }[] | null
  > {
    const type = await this.git(owner, repo, ["cat-file", "-t", ref], { allowFail: true });
    if (type.trim() !== "commit" && type.trim() !== "tree") return null;
    const out = await this.git(owner, repo, ["ls-tree", "-r", "-t", "-l", "-z", ref], { allowFail: true });
    return out
      .split("\0")
      .filter(Boolean)
      .map((line) => {
        const tab = line.indexOf("\t");
        const [mode = "", kind = "", objectSha = "", size = ""] = line.slice(0, tab).split(/\s+/);
        return {
          path: line.slice(tab + 1),
          mode,
          type:
            kind === "tree" ? ("tree" as const) : kind === "commit" ? ("commit" as const) : ("blob" as const),
          sha: objectSha,
          ...(size && size !== "-" ? { size: Number(size) } : {}),
        };
      });
  }

  async writeFile(owner: string, repo: string, request: WriteFileRequest): Promise<string> {
    const ref = fullRef(request.branch);
    return this.lock.with(this.key(owner, repo), async () => {
      const parent = await this.resolveRef(owner, repo, ref);
      const tree = await this.buildTree(owner, repo, parent, { [request.path]: request.content }, []);
      const sha = await this.commitTree(owner, repo, tree, parent ? [parent] : [], {
        message: request.message,
        author: request.author,
      });
      await this.git(owner, repo, ["update-ref", ref, sha, parent ?? ZERO_SHA]);
      return sha;
    });
  }

  /** Runs `git merge-tree --write-tree`: the merged tree, or the conflicting paths. */
  private async mergeTree(
    owner: string,
    repo: string,
    base: string,
    head: string,
  ): Promise<{ tree: string; conflicts: string[] }> {
    const result = await run(
      "git",
      ["merge-tree", "--write-tree", "--name-only", "--no-messages", base, head],
      {
        cwd: this.requireRepo(owner, repo),
        env: gitEnv(),
      },
    );
    if (result.code !== 0 && result.code !== 1) {
      throw new GitError(`git merge-tree failed: ${result.stderr.trim()}`);
    }
    const [tree = "", ...rest] = result.stdout.split("\n");
    return { tree: tree.trim(), conflicts: result.code === 1 ? [...new Set(rest.filter(Boolean))] : [] };
  }

  async mergeability(
    owner: string,
    repo: string,
    base: string,
    head: string,
  ): Promise<{ mergeable: boolean; conflicts: string[] }> {
    const baseSha = await this.requireCommit(owner, repo, base);
    const headSha = await this.requireCommit(owner, repo, head);
    const { conflicts } = await this.mergeTree(owner, repo, baseSha, headSha);
    return { mergeable: conflicts.length === 0, conflicts };
  }

  async merge(
    owner: string,
    repo: string,
    request: {
      base: string;
      head: string;
      method: MergeMethod;
      title?: string;
      message?: string;
      author?: Author;
      expectedHeadSha?: string;
    },
  ): Promise<MergeResult> {
    const baseRef = fullRef(request.base);
    return this.lock.with(this.key(owner, repo), async (): Promise<MergeResult> => {
      const baseSha = await this.resolveRef(owner, repo, baseRef);
      const headSha = await this.resolveRef(owner, repo, request.head);
      if (!baseSha || !headSha) {
        return { merged: false, reason: "not_found", conflicts: [], message: "Base or head not found" };
      }
      if (request.expectedHeadSha && request.expectedHeadSha !== headSha) {
        return {
          merged: false,
          reason: "stale_base",
          conflicts: [],
          message: "Head branch was modified. Review and try the merge again.",
        };
      }
      const { tree, conflicts } = await this.mergeTree(owner, repo, baseSha, headSha);
      if (conflicts.length > 0) {
        return { merged: false, reason: "conflict", conflicts, message: "Pull Request is not mergeable" };
      }
      const message = (title: string) => (request.message ? `${title}\n\n${request.message}` : title);
      const headName = request.head.replace(/^refs\/heads\//, "");
      let sha: string;
      if (request.method === "merge") {
        sha = await this.commitTree(owner, repo, tree, [baseSha, headSha], {
          message: message(
            request.title ?? `Merge ${headName} into ${request.base.replace(/^refs\/heads\//, "")}`,
          ),
          author: request.author,
        });
      } else if (request.method === "squash") {
        const commits = await this.logCommits(owner, repo, ["--reverse", `${baseSha}..${headSha}`]);
        const title = request.title ?? commits[0]?.message.split("\n")[0] ?? `Squashed ${headName}`;
        const body = request.message ?? commits.map((c) => `* ${c.message.split("\n")[0]}`).join("\n");
        sha = await this.commitTree(owner, repo, tree, [baseSha], {
          message: body ? `${title}\n\n${body}` : title,
          author: request.author ?? commits[0]?.author,
        });
      } else {
        const rebased = await this.rebaseOnto(owner, repo, baseSha, headSha);
        if (!rebased.ok) {
          return {
            merged: false,
            reason: "conflict",
            conflicts: rebased.conflicts,
            message: "This branch can't be rebased",
          };
        }
        sha = rebased.sha;
      }
      await this.git(owner, repo, ["update-ref", baseRef, sha, baseSha]);
      return { merged: true, sha, method: request.method };
    });
  }

  /** Replays head's commits (not on base, merges skipped) onto base in a temporary worktree. */
  private async rebaseOnto(
    owner: string,
    repo: string,
    baseSha: string,
    headSha: string,
  ): Promise<{ ok: true; sha: string } | { ok: false; conflicts: string[] }> {
    const commits = (
      await this.git(owner, repo, ["rev-list", "--reverse", "--no-merges", `${baseSha}..${headSha}`])
    )
      .split("\n")
      .filter(Boolean);
    if (commits.length === 0) return { ok: true, sha: baseSha };
    const worktree = mkdtempSync(join(tmpdir(), "autopilot-rebase-"));
    const bare = this.requireRepo(owner, repo);
    try {
      await this.git(owner, repo, ["worktree", "add", "--detach", "--force", worktree, baseSha]);
      for (const commit of commits) {
        const picked = await run(
          "git",
          ["cherry-pick", "--allow-empty", "--keep-redundant-commits", commit],
          {
            cwd: worktree,
            env: gitEnv(),
          },
        );
        if (picked.code !== 0) {
          const status = await run("git", ["diff", "--name-only", "--diff-filter=U"], {
            cwd: worktree,
            env: gitEnv(),
          });
          await run("git", ["cherry-pick", "--abort"], { cwd: worktree, env: gitEnv() });
          return { ok: false, conflicts: status.stdout.split("\n").filter(Boolean) };
        }
      }
      const sha = (await run("git", ["rev-parse", "HEAD"], { cwd: worktree, env: gitEnv() })).stdout.trim();
      return { ok: true, sha };
    } finally {
      await run("git", ["worktree", "remove", "--force", worktree], { cwd: bare, env: gitEnv() });
      rmSync(worktree, { recursive: true, force: true });
      await run("git", ["worktree", "prune"], { cwd: bare, env: gitEnv() });
    }
  }

  /**
   * The commits a ref update brought, oldest first, as a push payload lists them (at most `limit`): for a new
   * branch, the commits no other ref had; with the files each one added, removed and modified.
   */
  async pushCommits(
    owner: string,
    repo: string,
    update: { ref: string; before: string; after: string },
    limit = 20,
  ): Promise<Array<CommitInfo & { added: string[]; removed: string[]; modified: string[] }>> {
    if (update.after === ZERO_SHA) return [];
    const range =
      update.before === ZERO_SHA
        ? [
            update.after,
            "--not",
            ...(await this.listRefs(owner, repo))
              .filter((r) => r.ref !== update.ref && r.sha !== update.after)
              .map((r) => r.sha),
          ]
        : [`${update.before}..${update.after}`];
    const commits = (await this.logCommits(owner, repo, ["--reverse", ...range])).slice(-limit);
    const out: Array<CommitInfo & { added: string[]; removed: string[]; modified: string[] }> = [];
    for (const commit of commits) {
      const changes = await this.git(owner, repo, [
        "diff-tree",
        "--no-commit-id",
        "--name-status",
        "-r",
        "--root",
        "-z",
        commit.sha,
      ]);
      const parts = changes.split("\0").filter(Boolean);
      const added: string[] = [];
      const removed: string[] = [];
      const modified: string[] = [];
      for (let i = 0; i + 1 < parts.length; i += 2) {
        const status = parts[i]!;
        const path = parts[i + 1]!;
        if (status.startsWith("A")) added.push(path);
        else if (status.startsWith("D")) removed.push(path);
        else modified.push(path);
      }
      out.push({ ...commit, added, removed, modified });
    }
    return out;
  }

  // ---------------------------------------------------------------------------------------------------------
  // Smart HTTP

  /**
   * The HTTP handler for `/git/<owner>/<repo>.git/...` (the path may also omit `.git`). Mount it with
   * `sandbox.registerHandler("/git/", remote.handler)`. Returns false when the path is not a git path.
   */
  readonly handler = async (req: IncomingMessage, res: ServerResponse): Promise<boolean> => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const match = /^\/git\/([^/]+)\/([^/]+?)(?:\.git)?(\/.*)$/.exec(url.pathname);
    if (!match) return false;
    const [, owner = "", repo = "", rest = ""] = match;
    try {
      await this.serve(req, res, owner, repo, rest, url);
    } catch (error) {
      if (!res.headersSent) {
        const status = error instanceof GitError ? error.status : 500;
        res.writeHead(status, { "content-type": "text/plain" });
        res.end(`${(error as Error).message}\n`);
      } else {
        res.destroy(error as Error);
      }
    }
    return true;
  };

  private async serve(
    req: IncomingMessage,
    res: ServerResponse,
    owner: string,
    repo: string,
    rest: string,
    url: URL,
  ): Promise<void> {
    if (this.stopped) throw new GitError("sandbox is stopping", 503);
    const service = url.searchParams.get("service");
    const isReceive =
      rest === "/git-receive-pack" || (rest === "/info/refs" && service === "git-receive-pack");
    const isUpload = rest === "/git-upload-pack" || (rest === "/info/refs" && service === "git-upload-pack");
    if (!isReceive && !isUpload) throw new GitError("only the smart HTTP protocol is served", 403);

    const principal = await this.principalFor(req, owner, repo);
    if (!principal && !(isUpload && this.allowAnonymousRead)) {
      res.writeHead(401, {
        "www-authenticate": 'Basic realm="GitHub"',
        "content-type": "text/plain",
      });
      res.end("Invalid username or token. Password authentication is not supported for Git operations.\n");
      return;
    }
    if (!this.hasRepo(owner, repo)) throw new GitError("Repository not found.", 404);
    if (isReceive && !principal?.write) {
      throw new GitError(
        `Permission to ${owner}/${repo}.git denied to ${principal?.login ?? "anonymous"}.`,
        403,
      );
    }

    const pathInfo = `/${owner}/${repo}.git${rest}`;
    if (isReceive && req.method === "POST") {
      // Serialized with the API's ref writes so the before/after comparison sees only this push.
      // The response ends only after the push is recorded, so a client that pushes and then reads the API
      // sees the new head, as on GitHub.
      const { before, after } = await this.lock.with(this.key(owner, repo), async () => {
        const before = await this.refSnapshot(owner, repo);
        await this.cgi(req, res, pathInfo, url, principal!.login, true);
        return { before, after: await this.refSnapshot(owner, repo) };
      });
      try {
        await this.reportPush(owner, repo, before, after, principal!.login);
      } finally {
        res.end();
      }
    } else {
      await this.cgi(req, res, pathInfo, url, principal?.login ?? "");
    }
  }

  private async principalFor(
    req: IncomingMessage,
    owner: string,
    repo: string,
  ): Promise<GitPrincipal | null> {
    const header = req.headers.authorization;
    if (!header) return null;
    let token: string | undefined;
    const [scheme = "", value = ""] = header.split(/\s+/, 2);
    if (/^basic$/i.test(scheme)) {
      const decoded = Buffer.from(value, "base64").toString("utf8");
      const colon = decoded.indexOf(":");
      token = colon >= 0 ? decoded.slice(colon + 1) : decoded;
      // GitHub also accepts the token as the username with an empty password.
      if (!token) token = colon >= 0 ? decoded.slice(0, colon) : decoded;
    } else if (/^(bearer|token)$/i.test(scheme)) {
      token = value;
    }
    if (!token) return null;
    return (await this.authenticate(token, { owner, repo })) ?? null;
  }

  private async reportPush(
    owner: string,
    repo: string,
    before: Map<string, string>,
    after: Map<string, string>,
    pusher: string,
  ): Promise<void> {
    const refs = new Set([...before.keys(), ...after.keys()]);
    for (const ref of [...refs].sort()) {
      const from = before.get(ref) ?? ZERO_SHA;
      const to = after.get(ref) ?? ZERO_SHA;
      if (from === to) continue;
      try {
        await this.onPush({ owner, repo, ref, before: from, after: to, pusher });
      } catch (error) {
        process.emitWarning(`sandbox git: push hook failed for ${ref}: ${(error as Error).message}`);
      }
    }
  }

  /** Runs `git http-backend` as a CGI program for one request, streaming both ways. */
  private cgi(
    req: IncomingMessage,
    res: ServerResponse,
    pathInfo: string,
    url: URL,
    user: string,
    keepOpen = false,
  ): Promise<void> {
    return new Promise((resolve, reject) => {
      const env = gitEnv({
        GIT_PROJECT_ROOT: this.root,
        GIT_HTTP_EXPORT_ALL: "1",
        PATH_INFO: pathInfo,
        QUERY_STRING: url.search.replace(/^\?/, ""),
        REQUEST_METHOD: req.method ?? "GET",
        CONTENT_TYPE: req.headers["content-type"] ?? "",
        REMOTE_USER: user,
        REMOTE_ADDR: req.socket.remoteAddress ?? "127.0.0.1",
        GATEWAY_INTERFACE: "CGI/1.1",
        SERVER_PROTOCOL: "HTTP/1.1",
        ...(req.headers["git-protocol"] ? { GIT_PROTOCOL: String(req.headers["git-protocol"]) } : {}),
      });
      const child = spawn("git", ["http-backend"], { env, stdio: ["pipe", "pipe", "pipe"] });
      this.children.add(child);
      let stderr = "";
      child.stderr.on("data", (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      child.stdin.on("error", () => {});

      // Request body, inflated when the client compressed it (git gzips large fetch negotiations).
      const encoding = String(req.headers["content-encoding"] ?? "").toLowerCase();
      if (encoding === "gzip" || encoding === "x-gzip") req.pipe(createGunzip()).pipe(child.stdin);
      else if (encoding === "deflate") req.pipe(createInflate()).pipe(child.stdin);
      else req.pipe(child.stdin);

      // CGI response: headers, a blank line, then the body.
      let head = Buffer.alloc(0);
      let headersDone = false;
      child.stdout.on("data", (chunk: Buffer) => {
        if (headersDone) {
          res.write(chunk);
          return;
        }
        head = Buffer.concat([head, chunk]);
        let end = head.indexOf("\r\n\r\n");
        let sep = 4;
        if (end < 0) {
          end = head.indexOf("\n\n");
          sep = 2;
        }
        if (end < 0) return;
        headersDone = true;
        let status = 200;
        let reason = "OK";
        const headers: Record<string, string> = {};
        for (const line of head.subarray(0, end).toString("latin1").split(/\r?\n/)) {
          const colon = line.indexOf(":");
          if (colon < 0) continue;
          const name = line.slice(0, colon).trim();
          const value = line.slice(colon + 1).trim();
          if (name.toLowerCase() === "status") {
            const [code, ...text] = value.split(" ");
            status = Number(code) || 200;
            reason = text.join(" ") || reason;
          } else {
            headers[name] = value;
          }
        }
        res.writeHead(status, reason, headers);
        const body = head.subarray(end + sep);
        if (body.length > 0) res.write(body);
      });
      child.on("error", (error) => {
        this.children.delete(child);
        reject(error);
      });
      child.on("close", (code) => {
        this.children.delete(child);
        if (!headersDone) {
          if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" });
          res.end(`git http-backend failed (${code}): ${stderr}`);
        } else if (!keepOpen) {
          res.end();
        }
        resolve();
      });
    });
  }

  /** Kills running backends and removes the repositories (when the directory was created here). */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const child of this.children) child.kill("SIGKILL");
    this.children.clear();
    if (this.ownsRoot) rmSync(this.root, { recursive: true, force: true });
  }
}

/** The remote URL of a sandbox repository, with a token embedded for clients that cannot be configured. */
export function gitUrl(baseUrl: string, owner: string, repo: string, token?: string): string {
  const url = new URL(`/git/${owner}/${repo}.git`, baseUrl);
  if (token) {
    url.username = "x-access-token";
    url.password = token;
  }
  return url.toString();
}

// -----------------------------------------------------------------------------------------------------------
// Wiring into the sandbox's store

/** What the git remote needs of a running sandbox (see index.ts). */
export interface GitHost {
  url: string;
  store: SandboxStore;
  registerHandler(
    prefix: string,
    handler: (req: IncomingMessage, res: ServerResponse, url: URL) => void | Promise<void>,
  ): unknown;
}

/** Adapts the remote to the store's {@link StoreGitBackend} interface. */
export function storeBackend(remote: GitRemote): StoreGitBackend {
  const toInfo = (c: CommitInfo): StoreCommitInfo => ({
    sha: c.sha,
    message: c.message,
    authorName: c.author.name,
    authorEmail: c.author.email,
    authorDate: c.author.date,
    committerName: c.committer.name,
    committerEmail: c.committer.email,
    committerDate: c.committer.date,
    parents: c.parents,
    tree: c.tree,
  });
  const wrap = async <T>(fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (error) {
      if (error instanceof GitError) throw new StoreError(error.status, error.message);
      throw error;
    }
  };
  return {
    listRefs: (repo) => wrap(() => remote.listRefs(repo.owner, repo.name)),
    resolveRef: (repo, ref) => wrap(() => remote.resolveRef(repo.owner, repo.name, ref)),
    compare: (repo, base, head) =>
      wrap(async () => {
        const result = await remote.compare(repo.owner, repo.name, base, head);
        return {
          files: result.files.map((f) => ({
            filename: f.filename,
            status: f.status,
            additions: f.additions,
            deletions: f.deletions,
            changes: f.changes,
            ...(f.patch !== undefined ? { patch: f.patch } : {}),
            ...(f.previousFilename ? { previous_filename: f.previousFilename } : {}),
          })),
          ahead_by: result.aheadBy,
          behind_by: result.behindBy,
          ...(result.mergeBaseSha ? { merge_base_sha: result.mergeBaseSha } : {}),
          commits: result.commits.map(toInfo),
        };
      }),
    createRef: (repo, ref, sha) => wrap(() => remote.createRef(repo.owner, repo.name, ref, sha)),
    updateRef: (repo, ref, sha, force) =>
      wrap(() => remote.updateRef(repo.owner, repo.name, ref, sha, force)),
    deleteRef: (repo, ref) => wrap(() => remote.deleteRef(repo.owner, repo.name, ref)),
    mergeBranches: (repo, base, head, method, message) =>
      wrap(async () => {
        const split = message.indexOf("\n\n");
        const title = split >= 0 ? message.slice(0, split) : message;
        const body = split >= 0 ? message.slice(split + 2) : "";
        const result = await remote.merge(repo.owner, repo.name, {
          base,
          head,
          method,
          title,
          ...(body ? { message: body } : {}),
        });
        if (result.merged) return { sha: result.sha };
        if (result.reason === "not_found") throw new StoreError(404, result.message);
        return { conflict: true as const, message: result.message };
      }),
    canMerge: (repo, base, head) =>
      wrap(async () => (await remote.mergeability(repo.owner, repo.name, base, head)).mergeable),
    readFile: (repo, ref, path) => wrap(() => remote.readFileBuffer(repo.owner, repo.name, ref, path)),
    listDirectory: (repo, ref, path) =>
      wrap(async () => {
        const sha = await remote.resolveRef(repo.owner, repo.name, ref);
        if (!sha) return null;
        const clean = path.replace(/^\/+|\/+$/g, "");
        if (clean) {
          const type = await run("git", ["cat-file", "-t", `${sha}:${clean}`], {
            cwd: remote.repoPath(repo.owner, repo.name),
            env: gitEnv(),
          });
          if (type.stdout.trim() !== "tree") return null;
        }
        const entries = await remote.listTree(repo.owner, repo.name, sha, clean);
        return entries.map((e) => ({
          name: e.path.slice(e.path.lastIndexOf("/") + 1),
          path: e.path,
          type: e.type === "tree" ? ("dir" as const) : ("file" as const),
          sha: e.sha,
          size: e.size ?? 0,
        }));
      }),
    treeEntries: (repo, ref) =>
      wrap(async () => {
        const sha = /^[0-9a-f]{40}$/.test(ref) ? ref : await remote.resolveRef(repo.owner, repo.name, ref);
        return sha ? remote.listTreeRecursive(repo.owner, repo.name, sha) : null;
      }),
    getCommit: (repo, sha) =>
      wrap(async () => {
        const commit = await remote.getCommit(repo.owner, repo.name, sha);
        return commit ? toInfo(commit) : null;
      }),
  };
}

/**
 * Creates the git remote for a sandbox: bare repositories for every repository the store knows (and for
 * those added later through {@link SandboxGit.ensureRepo}), registered as the store's git backend, served at
 * `/git/`, with token rights taken from the store and every push recorded through `store.recordPush`.
 */
export async function attachGit(host: GitHost, options: { root?: string } = {}): Promise<SandboxGit> {
  const { store } = host;
  const remote = new GitRemote({
    ...(options.root ? { root: options.root } : {}),
    authenticate: (token, { owner, repo }) => {
      const info = store.authenticate(token);
      const record = store.getRepo({ owner, name: repo });
      if (!info || !record) return null;
      if (
        info.repositories &&
        !info.repositories.some((r) => r.toLowerCase() === record.fullName.toLowerCase())
      ) {
        return null;
      }
      if (info.kind === "installation" || info.kind === "worker") return { login: info.login, write: true };
      const permission = store.getPermission(record.fullName, info.login);
      if (record.private && !permissionAtLeast(permission, "read")) return null;
      return { login: info.login, write: permissionAtLeast(permission, "write") };
    },
    onPush: async (update) => {
      const forced =
        update.before !== ZERO_SHA &&
        update.after !== ZERO_SHA &&
        !(await remote.isAncestor(update.owner, update.repo, update.before, update.after));
      const commits = await remote.pushCommits(update.owner, update.repo, update);
      await store.recordPush({
        repo: { owner: update.owner, name: update.repo },
        ref: update.ref,
        before: update.before,
        after: update.after,
        pusher: update.pusher,
        forced,
        commits: commits.map((c) => ({
          id: c.sha,
          message: c.message,
          timestamp: c.committer.date,
          author: { name: c.author.name, email: c.author.email },
          added: c.added,
          removed: c.removed,
          modified: c.modified,
        })),
      });
    },
  });
  for (const repo of store.listRepos()) {
    if (!remote.hasRepo(repo.owner, repo.name))
      await remote.createRepo(repo.owner, repo.name, repo.defaultBranch);
  }
  store.setGitBackend(storeBackend(remote));
  host.registerHandler("/git/", async (req, res) => {
    if (!(await remote.handler(req, res))) {
      res.writeHead(404, { "content-type": "text/plain" });
      res.end("Not Found\n");
    }
  });
  return new SandboxGit(host, remote);
}

/** The sandbox's git remote with the store-aware conveniences the runner and tests use. */
export class SandboxGit {
  constructor(
    private readonly host: GitHost,
    readonly remote: GitRemote,
  ) {}

  /** The clone URL of a repository (no credentials). */
  url(owner: string, repo: string, token?: string): string {
    return gitUrl(this.host.url, owner, repo, token);
  }

  /** Creates the store record (if needed) and the bare repository. */
  async ensureRepo(owner: string, name: string, defaultBranch = "main"): Promise<void> {
    if (!this.host.store.getRepo({ owner, name })) this.host.store.createRepo({ owner, name, defaultBranch });
    if (!this.remote.hasRepo(owner, name)) await this.remote.createRepo(owner, name, defaultBranch);
  }

  /**
   * Commits files on a branch (default: the repository's default branch) and records the push, so the store
   * emits `push` as if someone had pushed the commit. Returns the new commit SHA.
   */
  async seedRepo(
    owner: string,
    name: string,
    files: Record<string, string>,
    options: { branch?: string; message?: string; author?: Author; pusher?: string } = {},
  ): Promise<string> {
    const record = this.host.store.getRepo({ owner, name });
    const branch = options.branch ?? record?.defaultBranch ?? "main";
    await this.ensureRepo(owner, name, branch);
    const before = (await this.remote.resolveRef(owner, name, fullRef(branch))) ?? ZERO_SHA;
    const sha = await this.remote.seedRepo(owner, name, files, { ...options, branch });
    await this.host.store.recordPush({
      repo: { owner, name },
      ref: fullRef(branch),
      before,
      after: sha,
      pusher: options.pusher ?? owner,
    });
    return sha;
  }

  stop(): Promise<void> {
    return this.remote.stop();
  }
}
