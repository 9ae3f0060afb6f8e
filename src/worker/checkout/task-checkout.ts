/**
 * The task branch as the job sees it (WorkerGit): the worker's private repository (private-git.ts, objects and
 * refs only) on one side, the agent's work tree on the other, and between them only data. The worker moves refs
 * and makes commits; the agent's side (agent-side-git.ts, as the agent's user in its sandbox) moves files and
 * hands the work back as a pack; the worker checks each hand-back from its objects (handback-check.ts) and commits
 * only a tree it checked. The worker's own writes into the tree (its progress notes, a restored file, a removed
 * one) go through the no-follow primitives of tree-files.ts, and its notes go into commits as the worker reads
 * them through those primitives, not as the agent's side staged them.
 */
import { MAX_HANDBACK_BYTES } from "../../core/gates/handback-rules.js";
import type { HumanGateHit } from "../../core/tasks/worker-result.js";
import { AgentGitError, type AgentSideGit, NEEDS_SYNC } from "./agent-side-git.js";
import { bringCommitObjects, type CommitObjects } from "./agent-objects.js";
import { canCommitWithFastImport, commitFiles } from "./files-commit.js";
import { checkHandback } from "./handback-check.js";
import { adoptPublished, type PublishPlan, publishPlan } from "./publish-plan.js";
import {
  blobText,
  branchDiff,
  changedPaths,
  deletedFileContent,
  inHead,
  topLevelFiles,
} from "./git-objects.js";
import type { BranchSetup, Git } from "./private-git.js";
import { readTreeFile, removeTreeFile, treeEntryExists, writeTreeFile } from "./tree-files.js";
import type { ProjectFiles } from "../processes/project-files.js";
import { chmod, rm } from "node:fs/promises";
import path from "node:path";
import type { PassThrough } from "node:stream";

/** HEAD, and what the last hand-back held. */
export interface WorkState {
  head: string;
  /** The agent's last hand-back differs from HEAD outside `.autopilot/`. */
  changed: boolean;
  /** Why the last hand-back cannot be taken (empty: it can); nothing of it is committed. */
  refused: string[];
}

/** The agent's tree changing hands (boundary.ts): the agent's side runs only between these two. */
interface AgentTreeAccess {
  handOver(): Promise<void>;
  takeBack(): Promise<unknown>;
}

interface Capture {
  tree: string;
  changed: boolean;
  refused: string[];
}

export class TaskCheckout {
  private readonly git: Git;
  private readonly side: AgentSideGit;
  private readonly workTree: string;
  private readonly inbox: string;
  /** Files the worker writes into the tree and commits as it reads them (its progress notes). */
  private readonly workerFiles: readonly string[];
  private readonly warn: (message: string) => void;
  private access: AgentTreeAccess | null = null;
  private excludes: string[] = [];
  /** The commit the agent's files are at when the agent's side has not been told (the checkout's, at first). */
  private filesAt: string | null = null;
  /** The commit the agent's `.git` was last brought to (null: never, or it must be checked and rebuilt). */
  private synced: string | null = null;
  /** HEAD as the worker last set it (only the worker moves it), and the trees of commits already asked. */
  private head: string | null = null;
  private readonly trees = new Map<string, string>();
  private captured: Capture | null = null;
  /** The default branch's commit a conflicting merge left to the agent: its next commit is that merge. */
  private pendingMerge: string | null = null;
  /** The task branch, once set up. */
  private branch: string | null = null;
  /** The worker's last commit and the objects it added, while it is the only change the agent's side lacks. */
  private step: (CommitObjects & { files: readonly string[] }) | null = null;
  /** The worker's files the agent's index holds as the last hand-back staged them (index-refresh.ts). */
  private indexBehind: readonly string[] = [];

  constructor(options: {
    git: Git;
    side: AgentSideGit;
    workTree: string;
    inbox: string;
    workerFiles: readonly string[];
    warn: (message: string) => void;
  }) {
    this.git = options.git;
    this.side = options.side;
    this.workTree = options.workTree;
    this.inbox = options.inbox;
    this.workerFiles = options.workerFiles;
    this.warn = options.warn;
  }

  /** The worker's private repository (objects only): what reads of the branch's content use. */
  get repository(): Git {
    return this.git;
  }

  /** The hand-over and take-back around the agent's side's own runs (set once the boundary exists). */
  attach(access: AgentTreeAccess): void {
    this.access = access;
  }

  async prepare(): Promise<string[]> {
    const removed = await this.git.prepare();
    this.filesAt = await this.headSha().catch(() => null);
    await this.side.setExcludes(this.excludes);
    return removed;
  }

  async addExcludes(patterns: string[]): Promise<void> {
    this.excludes = [...new Set([...this.excludes, ...patterns])];
    await this.side.setExcludes(this.excludes);
  }

  async setupBranch(branch: string, defaultBranch: string): Promise<BranchSetup> {
    const setup = await this.git.setupBranch(branch, defaultBranch);
    this.branch = branch;
    this.moved(setup.head);
    await this.materialize();
    return setup;
  }

  async mergeDefault(
    defaultBranch: string,
    message: string,
  ): Promise<{ merged: boolean; conflicts: string[]; base: string }> {
    const before = await this.headSha();
    const merge = await this.git.mergeDefault(defaultBranch, message);
    this.pendingMerge = merge.mergeParent;
    if (merge.merged) {
      this.moved(await this.git.headSha());
      this.filesAt = before;
      await this.materialize();
    }
    return { merged: merge.merged, conflicts: merge.conflicts, base: merge.base };
  }

  /** Brings the agent's files to HEAD now (a sync inside the sandbox), when the worker moved the branch. */
  private async materialize(): Promise<void> {
    if (!this.access) throw new AgentGitError("the agent's side is not attached");
    await this.access.handOver();
    await this.access.takeBack();
  }

  /**
   * At each hand-over, while the tree is still the worker's: when the worker's last commit is all the agent's
   * `.git` lacks, its objects copied there without any git (agent-objects.ts); the sync then has nothing to do.
   */
  async bringCommitted(): Promise<void> {
    const step = this.step;
    this.step = null;
    if (!step || !this.branch || this.filesAt !== null || this.synced !== step.parent) return;
    if (this.head !== step.commit) return;
    const brought = await bringCommitObjects({
      gitDir: this.git.gitDir,
      workTree: this.workTree,
      branch: this.branch,
      step,
    });
    if (brought) {
      this.synced = step.commit;
      this.indexBehind = step.files;
    }
  }

  /** The files the agent's index must take from HEAD before its next command (once: taking them clears them). */
  takeIndexRefresh(): readonly string[] {
    const files = this.indexBehind;
    this.indexBehind = [];
    return files;
  }

  /**
   * At each hand-over, once the agent owns its tree again: its `.git` brought to the worker's HEAD from a
   * bundle (incremental when it can be), and its files too when the worker moved the branch.
   */
  async syncAgent(full = false): Promise<void> {
    const head = await this.headSha();
    if (!full && head === this.synced && this.filesAt === null) return;
    const branch = await this.git.currentBranch();
    if (!branch) return;
    const bundle = path.join(this.inbox, "sync.bundle");
    const attempt = async (since: string | null): Promise<true | string> => {
      await rm(bundle, { force: true });
      const filesAt = this.filesAt === head ? null : this.filesAt;
      if (!(await this.git.bundle(bundle, branch, since, since === null ? filesAt : null)))
        return "no bundle";
      await chmod(bundle, 0o644);
      try {
        await this.side.sync(bundle, branch, filesAt, since === null);
        return true;
      } catch (error) {
        return (error as Error).message;
      }
    };
    let outcome = this.synced && !full && this.synced !== head ? await attempt(this.synced) : "full";
    if (outcome !== true) outcome = await attempt(null);
    await rm(bundle, { force: true });
    if (outcome === true) {
      this.synced = head;
      this.filesAt = null;
      // The sync's own reset brought the whole index to HEAD.
      this.indexBehind = [];
      return;
    }
    // Files the worker moved and the agent's side could not follow: the work would start from the wrong files.
    if (this.filesAt !== null) throw new AgentGitError(outcome);
    this.synced = null;
    this.warn(`the agent's own .git could not be brought up to date: ${outcome.slice(0, 300)}`);
  }

  /**
   * After an agent run, while its tree is still its own and none of its processes is left: the work handed back
   * as objects, and checked. A repository the agent broke is rebuilt (a full sync) and asked once more.
   */
  async capture(): Promise<void> {
    const head = await this.headSha();
    const receive = (pack: PassThrough) => this.git.receivePack(pack, MAX_HANDBACK_BYTES);
    const headTree = await this.treeOf(head);
    try {
      let tree = await this.side.capture(head, receive);
      if (tree === NEEDS_SYNC) {
        await this.syncAgent(true);
        tree = await this.side.capture(head, receive);
        if (tree === NEEDS_SYNC) throw new AgentGitError("the agent's repository could not be rebuilt");
      }
      // The tree id is the agent side's word: diff-tree reads every tree that differs from HEAD's, and the check
      // every object below them, so a tree or blob the pack did not bring refuses the hand-back.
      const check = await checkHandback(this.git, headTree, tree);
      this.captured = { tree, changed: check.changed, refused: check.verdict.refused };
    } catch (error) {
      // A hand-back that cannot be made or taken in (a pack fsck refuses, a tree git cannot stage) is refused.
      const message = (error as Error).message.replace(/\s+/g, " ").slice(0, 500);
      this.captured = { tree: headTree, changed: false, refused: [message] };
    }
  }

  private async treeOf(commit: string): Promise<string> {
    const known = this.trees.get(commit);
    if (known) return known;
    const tree = await this.git.treeOf(commit);
    this.trees.set(commit, tree);
    return tree;
  }

  /** HEAD moved by the worker (a commit, a checkout, a merge). */
  private moved(head: string, tree?: string): void {
    this.head = head;
    this.step = null;
    if (tree) this.trees.set(head, tree);
  }

  /** Ends what the worker's repository keeps running (its object reader). */
  close(): void {
    this.git.close();
  }

  async restoreConfig(): Promise<boolean> {
    return this.git.restoreConfig();
  }

  /** HEAD on the task branch again (only the worker moves it; with `isolation: none` the agent could too). */
  async recoverBranch(branch: string): Promise<string[]> {
    const current = await this.git.currentBranch();
    if (current === branch) return [];
    await this.git.pointHead(branch, await this.headSha());
    this.branch = branch;
    return [`HEAD was ${current ? `on ${current}` : "detached"}; moved ${branch} to it`];
  }

  async headSha(): Promise<string> {
    this.head ??= await this.git.headSha();
    return this.head;
  }

  async workState(): Promise<WorkState> {
    const head = await this.headSha();
    return {
      head,
      changed: this.captured?.changed ?? false,
      refused: this.captured?.refused ?? [],
    };
  }

  /** The worker's own files as it reads them now (no-follow); a file it cannot read safely is left as it is. */
  private async workerFileContents(): Promise<Map<string, string>> {
    const files = new Map<string, string>();
    for (const file of this.workerFiles) {
      const text = await readTreeFile(this.workTree, file, { maxBytes: 1024 * 1024 }).catch(() => null);
      if (text !== null) files.set(file, text);
    }
    return files;
  }

  /**
   * Commits the last hand-back (never a refused one) with the worker's own files; null when HEAD already has
   * all of it.
   */
  async commitAll(message: string): Promise<string | null> {
    const head = await this.headSha();
    const headTree = await this.treeOf(head);
    const usable = this.captured && this.captured.refused.length === 0 ? this.captured.tree : headTree;
    const files = await this.workerFileContents();
    const parents = [head];
    if (this.pendingMerge && usable !== headTree) parents.push(this.pendingMerge);
    let commit: string;
    let tree: string;
    let step: (CommitObjects & { files: readonly string[] }) | null = null;
    if (canCommitWithFastImport(files, this.git.author)) {
      // One process, straight onto the branch (HEAD's); a commit that changed nothing is taken back at once.
      const ref = this.branch ? `refs/heads/${this.branch}` : undefined;
      const made = await commitFiles(this.git, { tree: usable, files, parents, message, ref });
      if (made.tree === headTree) {
        if (ref) await this.git.run(["update-ref", ref, head, made.commit]);
        return null;
      }
      if (!ref) await this.git.run(["update-ref", "HEAD", made.commit, head]);
      ({ commit, tree } = made);
      if (parents.length === 1)
        step = { parent: head, commit, objects: made.objects, files: [...files.keys()] };
    } else {
      tree = await this.git.treeWith(usable, files);
      if (tree === headTree) return null;
      commit = await this.git.commitTree(tree, parents, message);
    }
    this.moved(commit, tree);
    this.step = step;
    if (parents.length > 1) this.pendingMerge = null;
    this.captured = null;
    return commit;
  }

  async push(branch: string, head?: string): Promise<string> {
    return this.git.push(branch, head);
  }

  /** What `commits: signed` publishes: the commits up to `head` the remote lacks (publish-plan.ts). */
  async publishPlan(branch: string, head: string): Promise<PublishPlan> {
    return publishPlan(this.git, branch, head);
  }

  /** The branch moved onto GitHub's copy of `local` (same tree); the agent's `.git` follows at the next sync. */
  async adoptPublished(branch: string, published: string, local: string): Promise<void> {
    await adoptPublished(this.git, { branch, published, local });
    this.moved(published, await this.treeOf(local));
  }

  /** Files back to HEAD, by the agent's side in its sandbox. */
  async resetWorkTree(): Promise<void> {
    if (!this.access) throw new AgentGitError("the agent's side is not attached");
    await this.access.handOver();
    try {
      await this.side.reset();
    } finally {
      await this.access.takeBack();
    }
  }

  /**
   * A run whose work is not kept (the reviewer's): its hand-back forgotten, so no commit takes it; the agent's
   * `.git` rebuilt to HEAD from a full bundle at the next hand-over (it may have committed there), and its files
   * reset to HEAD (tracked files restored, untracked ones removed).
   */
  async discardWork(): Promise<void> {
    this.captured = null;
    this.synced = null;
    this.step = null;
    await this.resetWorkTree();
  }

  async countCommits(from: string, to?: string): Promise<number> {
    return this.git.countCommits(from, to);
  }

  /** Deletes a file from the branch in its own commit (objects only) and from the tree (no-follow). */
  async removeFile(file: string, message: string): Promise<string | null> {
    if (!(await inHead(this.git, file))) return null;
    const head = await this.headSha();
    const tree = await this.git.treeWith(await this.treeOf(head), new Map([[file, null]]));
    const commit = await this.git.commitTree(tree, [head], message);
    this.moved(commit, tree);
    await removeTreeFile(this.workTree, file).catch((error: unknown) =>
      this.warn(`${file} could not be removed from the work tree: ${(error as Error).message}`),
    );
    return commit;
  }

  /** Writes back a file that a commit on the branch deleted (the notes set aside for review); false when none. */
  async restoreDeletedFile(file: string): Promise<boolean> {
    if (await treeEntryExists(this.workTree, file)) return false;
    const content = await deletedFileContent(this.git, file);
    if (content === null) return false;
    await writeTreeFile(this.workTree, file, content);
    return true;
  }

  /**
   * The committed tree's top-level files (HEAD's, read from objects when first asked), for the quality-command
   * detection: what the gate runs is read from the work the worker checked and committed, not from the directory.
   */
  committedFiles(): ProjectFiles {
    let listed: Promise<{ head: string; names: Set<string> }> | null = null;
    const list = () => {
      listed ??= this.headSha().then(async (head) => ({ head, names: await topLevelFiles(this.git, head) }));
      return listed;
    };
    return {
      has: async (name) => (await list()).names.has(name),
      text: async (name) => {
        const { head, names } = await list();
        return names.has(name) ? blobText(this.git, `${head}:${name}`) : null;
      },
    };
  }

  async diffFrom(base: string): Promise<string> {
    return branchDiff(this.git, base);
  }

  async changedPaths(base: string): Promise<string[]> {
    return changedPaths(this.git, base);
  }

  /** What the branch's change holds that a person must see (symbolic links, `.gitmodules`), from objects. */
  async gateHits(base: string): Promise<HumanGateHit[]> {
    const head = await this.headSha();
    const check = await checkHandback(this.git, await this.treeOf(base), await this.treeOf(head));
    return check.verdict.gated;
  }
}
