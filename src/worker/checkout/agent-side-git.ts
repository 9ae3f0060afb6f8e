/**
 * The agent's side of the hand-over: every git command that reads or writes the agent's work tree runs here, as
 * the agent's user, inside its sandbox (the same `wrap` the agent runs under, with no network), never as the
 * worker. What it produces reaches the worker only as data through a channel built for untrusted peers:
 *
 * - `sync` brings the agent's own `.git` to the worker's branch from a bundle the worker wrote into the inbox
 *   (git's fetch from a bundle), and, when the worker moved the branch (its checkout, a clean merge of the
 *   default branch), brings the files there too: a two-way `read-tree -m -u` from the commit the files were at;
 * - `capture` stages the whole work tree (the worker's excludes aside), writes its tree and sends what that tree
 *   adds to the worker's HEAD's as a pack on stdout, which the worker
 *   takes in with `index-pack --strict` (private-git.ts `receivePack`) and checks from the objects
 *   (handback-check.ts);
 * - `reset` puts the files back to HEAD (after the project's setup or the quality commands), tracked files
 *   restored and untracked ones removed (ignored and excluded files kept).
 *
 * Each script runs with no system or global config, hooks off, fsmonitor off, and attributes that turn every
 * filter off written into the agent repository's `info/attributes` first. The agent could have planted anything
 * else in its `.git`: whatever runs runs as the agent, in the sandbox, and all that leaves is objects.
 */
import { chmod, writeFile } from "node:fs/promises";
import path from "node:path";
import { PassThrough, Transform, type TransformCallback } from "node:stream";
import type { AgentUser } from "../isolation/agent-user.js";
import { trustedShell, workerBinaries } from "../isolation/trusted-binaries.js";
import { runProcess } from "../processes/process.js";

const PREAMBLE = [
  "set -e",
  "ATTRS='* -text -eol -crlf -ident -filter -working-tree-encoding'",
  'g() { "$GIT" -c core.hooksPath=/dev/null -c core.fsmonitor=false -c maintenance.auto=false -c gc.auto=0 -c "core.excludesFile=$EXCLUDES" "$@"; }',
  // The agent may have broken or replaced its repository (no repository, or not one whose work tree is here).
  'repaired() { [ "$("$GIT" rev-parse --show-toplevel 2>/dev/null)" = "$PWD" ]; }',
  // Every filter off, written only when it is not there already (read with the shell's own `read`).
  'neutral() { { read -r a < .git/info/attributes && [ "$a" = "$ATTRS" ]; } 2>/dev/null || { mkdir -p .git/info && printf \'%s\\n\' "$ATTRS" > .git/info/attributes; }; }',
].join("\n");

/**
 * $1 bundle, $2 branch, $3 the commit the files are at when the worker moved the branch since (else empty), $4 "1"
 * for a first or repairing sync (the repository checked, rebuilt when broken, and the agent's identity set), $5 "1"
 * when the bundle carries $3 under refs/autopilot/files-at.
 */
const SYNC_SCRIPT = [
  PREAMBLE,
  'if [ "$4" = 1 ]; then repaired || { rm -rf .git; "$GIT" init -q; }; fi',
  "neutral",
  'if [ "$5" = 1 ]; then at="+refs/autopilot/files-at:refs/autopilot/files-at"; else at=""; fi',
  'g fetch -q --no-tags --update-head-ok "$1" "+refs/heads/$2:refs/heads/$2" "+refs/remotes/*:refs/remotes/*" $at',
  'g symbolic-ref HEAD "refs/heads/$2"',
  'if [ -n "$3" ]; then',
  '  g read-tree "$3"',
  "  g update-index -q --refresh >/dev/null 2>&1 || true",
  '  g read-tree -m -u "$3" "refs/heads/$2"',
  "else",
  "  g reset -q",
  "fi",
  // The agent's own commits need an identity (the worker's commits have their own).
  'if [ "$4" = 1 ]; then "$GIT" config user.name "$GIT_AUTHOR_NAME"; "$GIT" config user.email "$GIT_AUTHOR_EMAIL"; fi',
].join("\n");

/**
 * $1 the worker's HEAD. Prints the work's tree id, then a pack of what that tree adds to $1's. Exit 10: the
 * repository cannot serve (no repository, or $1's tree missing from it or incomplete).
 */
const CAPTURE_SCRIPT = [
  PREAMBLE,
  // The repository named outright, no discovery (whatever `.git` or its config says), and checked by the shell
  // rather than by one more git process on every hand-back: a `.git` that is not a directory of its own, or one
  // git cannot stage into, is rebuilt first.
  "{ [ -d .git ] && [ ! -h .git ]; } || exit 10",
  'export GIT_DIR="$PWD/.git" GIT_WORK_TREE="$PWD"',
  "neutral",
  "g add --all -- . || exit 10",
  "tree=$(g write-tree) || exit 10",
  'printf "%s\\n" "$tree"',
  'printf "%s\\n--not\\n%s^{tree}\\n" "$tree" "$1" | g pack-objects --revs --stdout -q || exit 10',
].join("\n");

const RESET_SCRIPT = [
  PREAMBLE,
  "repaired || exit 10",
  "neutral",
  "g reset -q --hard HEAD",
  "g clean -fdq",
].join("\n");

export class AgentGitError extends Error {
  override readonly name = "AgentGitError";
}

/** The capture's exit code when the agent's repository must be rebuilt (a sync from a full bundle) first. */
export const NEEDS_SYNC = 10;

interface AgentSideOptions {
  user: Pick<AgentUser, "wrap" | "killAll">;
  workTree: string;
  home: string;
  /** The worker's files the agent may read (the bundle, the excludes). */
  inbox: string;
  /** The worker's environment (PATH and LANG for the agent-side git). */
  parentEnv: NodeJS.ProcessEnv;
  /** The identity of the agent's own commits (set in its repository at a first sync; never pushed). */
  author: () => { name: string; email: string };
}

export class AgentSideGit {
  private readonly options: AgentSideOptions;
  readonly excludesFile: string;

  constructor(options: AgentSideOptions) {
    this.options = options;
    this.excludesFile = path.join(options.inbox, "exclude");
  }

  /** Writes the worker's excludes (scratch never committed) where the agent's side reads them. */
  async setExcludes(patterns: readonly string[]): Promise<void> {
    await writeFile(this.excludesFile, `${patterns.join("\n")}\n`, { mode: 0o644 });
    await chmod(this.excludesFile, 0o644);
  }

  private env(): Record<string, string> {
    const author = this.options.author();
    return {
      // git and what it runs by name come from directories only root or the worker can write (a program
      // planted on the worker's PATH would run as the agent only, but runs nowhere).
      PATH: workerBinaries(this.options.parentEnv.PATH).searchPath,
      GIT: workerBinaries(this.options.parentEnv.PATH).require("git"),
      LANG: this.options.parentEnv.LANG ?? "C.UTF-8",
      HOME: this.options.home,
      GIT_TERMINAL_PROMPT: "0",
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_CONFIG_GLOBAL: "/dev/null",
      GIT_AUTHOR_NAME: author.name,
      GIT_AUTHOR_EMAIL: author.email,
      GIT_COMMITTER_NAME: author.name,
      GIT_COMMITTER_EMAIL: author.email,
      EXCLUDES: this.excludesFile,
    };
  }

  /** The agent's user with no network, whatever the agent's own runs get. */
  private closedUser(): Pick<AgentUser, "wrap" | "killAll"> {
    const { user } = this.options;
    return {
      wrap: (command, args, env) => user.wrap(command, args, env, { network: "closed" }),
      killAll: () => user.killAll(),
    };
  }

  private async script(text: string, args: string[]): Promise<{ code: number | null; stderr: string }> {
    const result = await runProcess({
      command: trustedShell(),
      args: ["-c", text, "agent-git", ...args],
      cwd: this.options.workTree,
      env: this.env(),
      runAs: this.closedUser(),
      timeoutMs: 10 * 60_000,
    });
    return { code: result.exitCode, stderr: result.stderr };
  }

  /**
   * The agent's `.git` at the worker's branch from `bundle`; with `filesAt`, the files moved from there too; `first`:
   * the repository checked (rebuilt when broken) and the agent's identity set.
   */
  async sync(bundle: string, branch: string, filesAt: string | null, first: boolean): Promise<void> {
    const carried = first && filesAt !== null ? "1" : "";
    const done = await this.script(SYNC_SCRIPT, [bundle, branch, filesAt ?? "", first ? "1" : "", carried]);
    if (done.code !== 0)
      throw new AgentGitError(
        `the agent's checkout could not be brought to ${branch}: ${done.stderr.trim().slice(0, 400) || `exit ${done.code}`}`,
      );
  }

  /** Files back to HEAD (the agent's `.git` is at the worker's HEAD: a sync ran first). */
  async reset(): Promise<void> {
    const done = await this.script(RESET_SCRIPT, []);
    if (done.code !== 0)
      throw new AgentGitError(
        `the agent's files could not be reset: ${done.stderr.trim().slice(0, 400) || `exit ${done.code}`}`,
      );
  }

  /**
   * Stages the work tree on top of `head` and streams the new objects into `receive`; returns the work's tree id
   * (the worker checks that it has it and everything below it), or NEEDS_SYNC when the agent's repository cannot
   * serve until it is rebuilt.
   */
  async capture(
    head: string,
    receive: (pack: PassThrough) => Promise<void>,
  ): Promise<string | typeof NEEDS_SYNC> {
    const split = new HeaderSplit();
    let receiveError: unknown = null;
    // A receiver that stops (fsck refused an object, the size bound) ends the stream: the sender's writes fail.
    const received = split.started.then(() =>
      receive(split.pack).catch((error: unknown) => {
        receiveError = error;
        split.destroy();
      }),
    );
    const done = await runProcess({
      command: trustedShell(),
      args: ["-c", CAPTURE_SCRIPT, "agent-git", head],
      cwd: this.options.workTree,
      env: this.env(),
      runAs: this.closedUser(),
      timeoutMs: 10 * 60_000,
      stdoutTo: split,
    });
    const tree = split.header;
    if (tree !== null) await received;
    // What was received of a hand-back that stopped for want of $1's objects is dropped with it (index-pack keeps
    // nothing of a pack it could not finish).
    if (done.exitCode === NEEDS_SYNC) return NEEDS_SYNC;
    if (receiveError) throw receiveError;
    if (done.exitCode !== 0 || tree === null || !/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(tree))
      throw new AgentGitError(
        `the agent's work could not be handed back: ${done.stderr.trim().slice(0, 400) || `exit ${done.exitCode}`}`,
      );
    return tree;
  }
}

/**
 * The hand-back's stdout: its first line (the tree id, at most 80 bytes) kept as `header`, the rest (the pack)
 * passed on to `pack`; `started` settles once the header is read.
 */
class HeaderSplit extends Transform {
  header: string | null = null;
  readonly pack = new PassThrough();
  readonly started: Promise<void>;
  private seen = "";
  private begin!: () => void;

  constructor() {
    super();
    this.started = new Promise((resolve) => {
      this.begin = resolve;
    });
    this.pipe(this.pack);
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    if (this.header !== null) {
      callback(null, chunk);
      return;
    }
    const newline = chunk.indexOf(0x0a);
    if (newline < 0) {
      this.seen += chunk.toString("latin1");
      callback(this.seen.length > 80 ? new AgentGitError("the hand-back sent no tree id") : null);
      return;
    }
    this.header = (this.seen + chunk.subarray(0, newline).toString("latin1")).trim();
    this.begin();
    callback(null, chunk.subarray(newline + 1));
  }
}
