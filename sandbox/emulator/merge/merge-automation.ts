/**
 * GitHub's own merge mechanisms: auto-merge and the merge queue. The GraphQL mutations
 * (sandbox/emulator/graphql.ts) call the functions here; an engine per store then watches the store's events
 * and merges, enqueues, builds merge groups and dequeues as GitHub does. Its state lives in
 * sandbox/emulator/merge/merge-automation-state.ts.
 *
 * One entry of a queue is in flight at a time (GitHub's "build concurrency" of 1): the front entry gets a merge
 * group, the other entries wait their turn as QUEUED.
 *
 * Refusal messages GitHub's answers are known by are used verbatim ("Auto merge is not allowed for this
 * repository", "Pull request Pull request is in clean status", as quoted in cli/cli#13398 and
 * peter-evans/enable-pull-request-automerge#343); for a mismatched `expectedHeadOid`, a branch without a queue and
 * a pull request not in the queue no GitHub wording was found, so the sandbox's own says what is wrong.
 */
import { protectionOf } from "./branch-rules-state.js";
import { checkState, mergeRefusal, mergeRequirementsOf } from "./merge-requirements.js";
import {
  type AutoMergeRequest,
  type MergeQueueEntry,
  autoMergeRequestOf,
  isAutoMergeAllowed,
  mergeAutomationStateOf,
  pullKey,
  queueEntryOf,
  queueKey,
} from "./merge-automation-state.js";
import {
  type Issue,
  type MergeMethod,
  type PullFields,
  type Repo,
  type SandboxStore,
  type StoreEvent,
  StoreError,
  ZERO_SHA,
  permissionAtLeast,
  repoKeyOf,
  syntheticSha,
} from "../store.js";

type Pull = Issue & { pull: PullFields };

/** The account GitHub's merge queue pushes merge groups as. */
const MERGE_QUEUE_ACTOR = "github-merge-queue[bot]";

/** A refusal of a mutation, answered as a GraphQL error. */
function refuse(message: string): never {
  throw new StoreError(422, message);
}

/**
 * Write access, which enabling auto-merge and using the queue need; an App's bot pushes only with
 * `contents: write`, so a `[bot]` account counts as a writer.
 */
function canWrite(store: SandboxStore, repo: Repo, login: string): boolean {
  if (login.toLowerCase().endsWith("[bot]")) return true;
  return permissionAtLeast(store.getPermission(repo.fullName, login), "write");
}

/**
 * The merge queue's settings: a ruleset's `merge_queue` parameters, GitHub's defaults otherwise (merge commits,
 * 60 minutes of check response timeout).
 * https://docs.github.com/repositories/configuring-branches-and-merges-in-your-repository/managing-rulesets/available-rules-for-rulesets#require-merge-queue
 */
function queueSettingsOf(store: SandboxStore, repo: Repo, base: string) {
  const rule = protectionOf(store, repo, base).rules.find((r) => r.type === "merge_queue");
  const method = String(rule?.parameters?.merge_method ?? "MERGE").toLowerCase();
  const timeout = rule?.parameters?.check_response_timeout_minutes;
  return {
    method: (["merge", "squash", "rebase"].includes(method) ? method : "merge") as MergeMethod,
    timeoutMinutes: typeof timeout === "number" && timeout > 0 ? timeout : 60,
  };
}

/** Whether the pull request could merge right now (requirements met, no conflict). */
async function readyToMerge(store: SandboxStore, repo: Repo, pull: Pull): Promise<boolean> {
  await store.refreshPull(repo.fullName, pull.number);
  if (pull.state !== "open" || pull.pull.draft || pull.pull.mergeable === false) return false;
  return (await mergeRefusal(store, repo, pull, true)) === null;
}

function checkOpen(pull: Pull): void {
  // The message GitHub answers for a closed pull request (peter-evans/enable-pull-request-automerge#1060).
  if (pull.state !== "open") refuse("Pull request Pull request is closed");
}

function checkHead(pull: Pull, expectedHeadOid: string | null | undefined): void {
  // `expectedHeadOid`: "The expected head OID of the pull request."
  // https://docs.github.com/graphql/reference/input-objects#enablepullrequestautomergeinput
  if (expectedHeadOid && expectedHeadOid !== pull.pull.head.sha)
    refuse(
      `The expected head OID ${expectedHeadOid} does not match the pull request's head ${pull.pull.head.sha}.`,
    );
}

/**
 * `enablePullRequestAutoMerge`. GitHub refuses it when "Allow auto-merge" is off and when the pull request
 * could merge now ("Pull request is in clean status", or "unstable" when only optional checks are pending or
 * failing); with a required merge queue, a pull request whose requirements are met goes into the queue at once.
 * https://docs.github.com/pull-requests/collaborating-with-pull-requests/incorporating-changes-from-a-pull-request/automatically-merging-a-pull-request
 */
export async function enableAutoMerge(
  store: SandboxStore,
  repo: Repo,
  pull: Pull,
  actor: string,
  input: {
    mergeMethod?: string | null;
    expectedHeadOid?: string | null;
    commitHeadline?: string | null;
    commitBody?: string | null;
    authorEmail?: string | null;
  },
): Promise<void> {
  const engine = engineOf(store);
  await engine.idle();
  if (!isAutoMergeAllowed(store, repo.fullName)) refuse("Auto merge is not allowed for this repository");
  checkOpen(pull);
  checkHead(pull, input.expectedHeadOid);
  const req = mergeRequirementsOf(store, repo, pull.pull.base.ref);
  const ready = await readyToMerge(store, repo, pull);
  if (ready && !req.mergeQueue) {
    refuse(
      `Pull request Pull request is in ${pull.pull.mergeableState === "unstable" ? "unstable" : "clean"} status`,
    );
  }
  if (ready && req.mergeQueue) {
    if (!queueEntryOf(store, repo.fullName, pull.number)) engine.addToQueue(repo, pull, actor, false);
    return;
  }
  const request: AutoMergeRequest = {
    enabledAt: store.clock(),
    enabledBy: actor,
    method: (input.mergeMethod ?? "MERGE").toLowerCase() as MergeMethod,
    commitHeadline: input.commitHeadline ?? null,
    commitBody: input.commitBody ?? null,
    authorEmail: input.authorEmail ?? null,
  };
  mergeAutomationStateOf(store).requests.set(pullKey(repo.fullName, pull.number), request);
  store.announce({ name: "pull_request", action: "auto_merge_enabled", repo, sender: actor, pull });
}

/** `disablePullRequestAutoMerge`: a pull request without auto-merge is answered as it is. */
export async function disableAutoMerge(
  store: SandboxStore,
  repo: Repo,
  pull: Pull,
  actor: string,
): Promise<void> {
  await engineOf(store).idle();
  engineOf(store).dropRequest(repo, pull, actor, `auto-merge disabled by ${actor}`);
}

/**
 * `enqueuePullRequest`: only on a branch that requires a merge queue, and only once the pull request meets the
 * branch's requirements ("Once a pull request has passed all required branch protection checks, a user with
 * write access to the repository can add the pull request to the queue").
 * https://docs.github.com/repositories/configuring-branches-and-merges-in-your-repository/configuring-pull-request-merges/managing-a-merge-queue
 */
export async function enqueue(
  store: SandboxStore,
  repo: Repo,
  pull: Pull,
  actor: string,
  input: { expectedHeadOid?: string | null; jump?: boolean | null },
): Promise<MergeQueueEntry> {
  const engine = engineOf(store);
  await engine.idle();
  checkOpen(pull);
  checkHead(pull, input.expectedHeadOid);
  if (!mergeRequirementsOf(store, repo, pull.pull.base.ref).mergeQueue)
    refuse(`The merge queue is not enabled for the ${pull.pull.base.ref} branch.`);
  const existing = queueEntryOf(store, repo.fullName, pull.number);
  if (existing) return existing.entry;
  await store.refreshPull(repo.fullName, pull.number);
  if (pull.pull.draft) refuse("Pull request Pull request is in draft status");
  if (pull.pull.mergeable === false) refuse("Pull request Pull request is in dirty status");
  const refusal = await mergeRefusal(store, repo, pull, true);
  if (refusal) refuse(refusal.message.replace(/^Repository rule violations found\n\n|\n\n$/g, ""));
  return engine.addToQueue(repo, pull, actor, input.jump === true);
}

/** `dequeuePullRequest`. */
export async function dequeue(
  store: SandboxStore,
  repo: Repo,
  pull: Pull,
  actor: string,
): Promise<MergeQueueEntry> {
  const engine = engineOf(store);
  await engine.idle();
  const found = queueEntryOf(store, repo.fullName, pull.number);
  if (!found) refuse("Pull request is not in the merge queue");
  await engine.removeEntry(repo, found.entry, "MANUAL", actor);
  return found.entry;
}

/** Resolves once GitHub's merge mechanisms have acted on every event so far (tests and scenarios wait on it). */
export function mergeAutomationIdle(store: SandboxStore): Promise<void> {
  return engines.get(store)?.idle() ?? Promise.resolve();
}

const engines = new WeakMap<SandboxStore, MergeAutomationEngine>();

function engineOf(store: SandboxStore): MergeAutomationEngine {
  let engine = engines.get(store);
  if (!engine) {
    engine = new MergeAutomationEngine(store);
    engines.set(store, engine);
  }
  return engine;
}

class MergeAutomationEngine {
  private chain: Promise<void> = Promise.resolve();
  private timers = new Map<string, NodeJS.Timeout>();

  constructor(private readonly store: SandboxStore) {
    store.onEvent((event) => this.onEvent(event));
  }

  /** Resolves when no step is left, including the steps that the steps themselves scheduled. */
  async idle(): Promise<void> {
    let seen: Promise<void> | null = null;
    while (seen !== this.chain) {
      seen = this.chain;
      await seen;
    }
  }

  private state() {
    return mergeAutomationStateOf(this.store);
  }

  /** Runs `step` after everything scheduled before it; a failure is kept out of the chain. */
  private schedule(step: () => Promise<void>): void {
    this.chain = this.chain.then(step).catch(() => {});
  }

  private onEvent(event: StoreEvent): void {
    const repo = event.repo;
    // https://docs.github.com/pull-requests/collaborating-with-pull-requests/incorporating-changes-from-a-pull-request/automatically-merging-a-pull-request
    // — "if someone who does not have write permissions to the repository pushes new changes to the head
    // branch or switches the base branch of the pull request, auto-merge will be disabled."
    if (event.name === "pull_request" && (event.action === "synchronize" || event.action === "edited")) {
      const pull = event.pull as Pull;
      const baseSwitched = event.action === "edited" && event.changes?.base !== undefined;
      if (
        (event.action === "synchronize" || baseSwitched) &&
        autoMergeRequestOf(this.store, repo.fullName, pull.number) &&
        !canWrite(this.store, repo, event.sender)
      ) {
        this.dropRequest(
          repo,
          pull,
          event.sender,
          baseSwitched
            ? "base branch changed by a user without write access"
            : "new commits pushed by a user without write access",
        );
      }
      // A queued pull request whose head moved (or whose base switched) leaves the queue: the group that was
      // tested is not what would merge. GitHub's pages found do not spell this rule out; the sandbox takes the
      // strict reading (never land an untested head), so a caller must be ready to enqueue again.
      const found = queueEntryOf(this.store, repo.fullName, pull.number);
      if (
        found &&
        (baseSwitched || (event.action === "synchronize" && found.entry.headSha !== pull.pull.head.sha))
      ) {
        const entry = found.entry;
        this.schedule(() => this.removeEntry(repo, entry, "UNKNOWN_REMOVAL_REASON", MERGE_QUEUE_ACTOR));
      }
    }
    if (event.name === "pull_request" && event.action === "closed") {
      const pull = event.pull as Pull;
      this.state().requests.delete(pullKey(repo.fullName, pull.number));
      const found = queueEntryOf(this.store, repo.fullName, pull.number);
      if (found && !pull.pull.merged) {
        const entry = found.entry;
        this.schedule(() => this.removeEntry(repo, entry, "UNKNOWN_REMOVAL_REASON", MERGE_QUEUE_ACTOR));
      }
    }
    // What can change whether requirements are met: reviews, checks, statuses, pushes, base changes.
    if (
      ["pull_request", "pull_request_review", "check_run", "check_suite", "status", "push"].includes(
        event.name,
      )
    ) {
      this.schedule(() => this.evaluate(repo));
    }
  }

  /** Acts on every auto-merge request and merge queue of a repository. */
  private async evaluate(repo: Repo): Promise<void> {
    const prefix = `${repo.fullName.toLowerCase()}#`;
    for (const [key, request] of [...this.state().requests]) {
      if (!key.startsWith(prefix)) continue;
      const pull = this.store.getPull(repo.fullName, Number(key.slice(prefix.length))) as Pull | undefined;
      if (pull?.state !== "open") {
        this.state().requests.delete(key);
        continue;
      }
      await this.tryAutoMerge(repo, pull, request);
    }
    for (const [key, entries] of [...this.state().queues]) {
      if (key.startsWith(prefix) && entries.length > 0) await this.advanceQueue(repo, entries[0]!);
    }
  }

  /**
   * An enabled auto-merge merges as soon as the requirements are met, as the person who enabled it and with
   * their method; with a required merge queue it enters the queue instead.
   */
  private async tryAutoMerge(repo: Repo, pull: Pull, request: AutoMergeRequest): Promise<void> {
    if (!(await readyToMerge(this.store, repo, pull))) return;
    this.state().requests.delete(pullKey(repo.fullName, pull.number));
    if (mergeRequirementsOf(this.store, repo, pull.pull.base.ref).mergeQueue) {
      if (!queueEntryOf(this.store, repo.fullName, pull.number))
        this.addToQueue(repo, pull, request.enabledBy, false);
      return;
    }
    try {
      await this.store.mergePull(
        repo.fullName,
        pull.number,
        {
          method: request.method,
          sha: pull.pull.head.sha,
          ...(request.commitHeadline ? { commitTitle: request.commitHeadline } : {}),
          ...(request.commitBody ? { commitMessage: request.commitBody } : {}),
        },
        request.enabledBy,
      );
    } catch {
      // The head moved or a conflict appeared between the check and the merge: the request stays.
      this.state().requests.set(pullKey(repo.fullName, pull.number), request);
    }
  }

  dropRequest(repo: Repo, pull: Pull, actor: string, reason: string): void {
    if (!this.state().requests.delete(pullKey(repo.fullName, pull.number))) return;
    this.store.announce({
      name: "pull_request",
      action: "auto_merge_disabled",
      repo,
      sender: actor,
      pull,
      reason,
    });
  }

  addToQueue(repo: Repo, pull: Pull, actor: string, jump: boolean): MergeQueueEntry {
    const state = this.state();
    const key = queueKey(repo.fullName, pull.pull.base.ref);
    const entries = state.queues.get(key) ?? [];
    const entry: MergeQueueEntry = {
      id: `MQE_sandbox${state.nextEntry++}`,
      repo: repo.fullName,
      base: pull.pull.base.ref,
      pull: pull.number,
      enqueuedAt: this.store.clock(),
      enqueuer: actor,
      jump,
      headSha: pull.pull.head.sha,
      state: "QUEUED",
      group: null,
    };
    // `jump`: "Add the pull request to the front of the queue." — behind the entry already being built.
    if (jump && entries.length > 0) entries.splice(entries[0]!.group ? 1 : 0, 0, entry);
    else entries.push(entry);
    state.queues.set(key, entries);
    // https://docs.github.com/webhooks/webhook-events-and-payloads#pull_request — `enqueued`.
    this.store.announce({ name: "pull_request", action: "enqueued", repo, sender: actor, pull });
    this.schedule(() => this.evaluate(repo));
    return entry;
  }

  /** Takes an entry out of its queue: `pull_request` `dequeued` (with GitHub's reason) and its group destroyed. */
  async removeEntry(repo: Repo, entry: MergeQueueEntry, reason: string, actor: string): Promise<void> {
    const entries = this.state().queues.get(queueKey(repo.fullName, entry.base)) ?? [];
    const index = entries.indexOf(entry);
    if (index < 0) return;
    entries.splice(index, 1);
    await this.destroyGroup(repo, entry, reason === "MERGE" ? "merged" : "dequeued");
    const pull = this.store.getPull(repo.fullName, entry.pull);
    if (pull)
      this.store.announce({ name: "pull_request", action: "dequeued", repo, sender: actor, pull, reason });
    if (entries.length > 0) this.schedule(() => this.evaluate(repo));
  }

  private async destroyGroup(
    repo: Repo,
    entry: MergeQueueEntry,
    reason: "merged" | "invalidated" | "dequeued",
  ) {
    const group = entry.group;
    if (!group) return;
    entry.group = null;
    entry.state = "QUEUED";
    const timer = this.timers.get(entry.id);
    if (timer) clearTimeout(timer);
    this.timers.delete(entry.id);
    // The merge group branch goes away with its group (GitHub deletes the `gh-readonly-queue/…` branch).
    await this.store
      .getGitBackend()
      ?.deleteRef(repoKeyOf(repo.fullName), `refs/heads/${group.branch}`)
      .catch(() => {});
    this.store.announce({
      name: "merge_group",
      action: "destroyed",
      repo,
      sender: MERGE_QUEUE_ACTOR,
      reason,
      group: this.groupRecord(entry.base, group.sha, group.branch, group.baseSha, ""),
    });
  }

  private groupRecord(base: string, sha: string, branch: string, baseSha: string, message: string) {
    return {
      headSha: sha,
      headRef: `refs/heads/${branch}`,
      baseSha,
      baseRef: `refs/heads/${base}`,
      message,
      timestamp: this.store.clock().toISOString(),
      author: { name: "GitHub", email: "noreply@github.com" },
    };
  }

  /**
   * The front entry of a queue: build its merge group (the pull request on top of the latest base, on a
   * `gh-readonly-queue/{base}/pr-{number}-{sha}` branch, announced with `merge_group` `checks_requested`), then
   * merge it when the required checks pass on the group's commit, or remove it when one fails or none answers
   * within the check response timeout.
   * https://docs.github.com/repositories/configuring-branches-and-merges-in-your-repository/configuring-pull-request-merges/managing-a-merge-queue
   */
  private async advanceQueue(repo: Repo, entry: MergeQueueEntry): Promise<void> {
    const pull = this.store.getPull(repo.fullName, entry.pull) as Pull | undefined;
    if (pull?.state !== "open") {
      await this.removeEntry(
        repo,
        entry,
        pull?.pull.merged ? "ALREADY_MERGED" : "UNKNOWN_REMOVAL_REASON",
        MERGE_QUEUE_ACTOR,
      );
      return;
    }
    await this.store.refreshPull(repo.fullName, pull.number);
    if (pull.pull.head.sha !== entry.headSha) {
      await this.removeEntry(repo, entry, "UNKNOWN_REMOVAL_REASON", MERGE_QUEUE_ACTOR);
      return;
    }
    const settings = queueSettingsOf(this.store, repo, entry.base);
    // The base moved outside the queue: the group no longer shows what would land; build it again.
    if (entry.group && entry.group.baseSha !== pull.pull.base.sha)
      await this.destroyGroup(repo, entry, "invalidated");
    if (!entry.group) {
      const built = await this.buildGroup(repo, pull, entry, settings.method, settings.timeoutMinutes);
      if (!built) await this.removeEntry(repo, entry, "MERGE_CONFLICT", MERGE_QUEUE_ACTOR);
      return;
    }
    const group = entry.group;
    const required = mergeRequirementsOf(this.store, repo, entry.base).requiredChecks;
    const states = required.map((name) => checkState(this.store, repo, group.sha, name));
    if (states.some((s) => s === "failing")) {
      await this.removeEntry(repo, entry, "CI_FAILURE", MERGE_QUEUE_ACTOR);
      return;
    }
    if (states.every((s) => s === "success")) {
      try {
        await this.store.mergePull(
          repo.fullName,
          pull.number,
          { method: settings.method, sha: entry.headSha, preparedSha: group.sha },
          entry.enqueuer,
        );
      } catch {
        await this.removeEntry(repo, entry, "MERGE_CONFLICT", MERGE_QUEUE_ACTOR);
        return;
      }
      await this.removeEntry(repo, entry, "MERGE", MERGE_QUEUE_ACTOR);
      return;
    }
    if (this.store.clock().getTime() >= group.deadline) {
      await this.removeEntry(repo, entry, "CI_TIMEOUT", MERGE_QUEUE_ACTOR);
    }
  }

  private async buildGroup(
    repo: Repo,
    pull: Pull,
    entry: MergeQueueEntry,
    method: MergeMethod,
    timeoutMinutes: number,
  ): Promise<boolean> {
    const baseSha = pull.pull.base.sha;
    const branch = `gh-readonly-queue/${entry.base}/pr-${pull.number}-${entry.headSha}`;
    const message =
      method === "merge"
        ? `Merge pull request #${pull.number} from ${repo.owner}/${pull.pull.head.ref}\n\n${pull.title}`
        : `${pull.title} (#${pull.number})`;
    const backend = this.store.getGitBackend();
    let sha: string;
    if (backend) {
      const key = repoKeyOf(repo.fullName);
      await backend.deleteRef(key, `refs/heads/${branch}`).catch(() => {});
      await backend.createRef(key, `refs/heads/${branch}`, baseSha);
      const outcome = await backend.mergeBranches(key, branch, entry.headSha, method, message);
      if ("conflict" in outcome) {
        await backend.deleteRef(key, `refs/heads/${branch}`).catch(() => {});
        return false;
      }
      sha = outcome.sha;
    } else {
      sha = syntheticSha(baseSha, entry.headSha, message);
    }
    const deadline = this.store.clock().getTime() + timeoutMinutes * 60_000;
    entry.group = { branch, sha, baseSha, deadline };
    entry.state = "AWAITING_CHECKS";
    // "A push event is still sent when a merge group branch is created" (GitHub changelog 2023-04 on
    // merge_group); then `merge_group` `checks_requested` asks for the required checks on the group's commit.
    await this.store.recordPush(
      {
        repo: repo.fullName,
        ref: `refs/heads/${branch}`,
        before: ZERO_SHA,
        after: sha,
        pusher: MERGE_QUEUE_ACTOR,
        commits: [],
      },
      !backend,
    );
    this.store.announce({
      name: "merge_group",
      action: "checks_requested",
      repo,
      sender: MERGE_QUEUE_ACTOR,
      group: this.groupRecord(entry.base, sha, branch, baseSha, message),
    });
    const timer = setTimeout(() => {
      this.timers.delete(entry.id);
      this.schedule(() => this.evaluate(repo));
    }, timeoutMinutes * 60_000);
    timer.unref();
    this.timers.set(entry.id, timer);
    return true;
  }
}
