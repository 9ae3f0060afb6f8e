/**
 * `InvariantRecorder` listens to the store while a scenario runs and, at the end, gathers the facts the
 * end-of-run invariants judge (sandbox/scenario/checks/invariants.ts): pushes, merged heads, who made each issue
 * ready, when each task last changed, the worker runs, and the commits still reachable.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { parseCommand } from "../../../src/core/tasks/commands.js";
import { parseDashboard } from "../../../src/core/dashboard/index.js";
import type { ActionsRunner } from "../../emulator/actions/actions.js";
import { workerRuns } from "../controllers/controller-mode.js";
import { systemGit } from "../../emulator/proc.js";
import type { SandboxGit } from "../../emulator/git/sandbox-git.js";
import type { Issue, SandboxStore, StoreEvent } from "../../emulator/store.js";
import {
  awaitsPerson,
  checkInvariants,
  type InvariantPush,
  type InvariantReport,
  type InvariantTask,
} from "./invariants.js";

const run = promisify(execFile);
const WRITE = new Set(["admin", "maintain", "write"]);

/** Listens to the store during a run; at the end, computes the invariants. */
export class InvariantRecorder {
  readonly pushes: InvariantPush[] = [];
  /** Head SHAs of pull requests when they were merged. */
  readonly mergedHeads = new Set<string>();
  /** Who last added the ready label, per issue. */
  readonly readyBy = new Map<number, string>();
  /** When something last happened, by `issue:N`, `sha:SHA` and `ref:BRANCH`. */
  private readonly touched = new Map<string, number>();

  constructor(
    private readonly store: SandboxStore,
    private readonly repo: string,
    private readonly readyLabel: string,
  ) {}

  onEvent(event: StoreEvent): void {
    if (event.repo.fullName.toLowerCase() !== this.repo.toLowerCase()) return;
    const now = Date.now();
    if ("issue" in event && event.issue) this.touched.set(`issue:${event.issue.number}`, now);
    if ("pull" in event && event.pull) this.touched.set(`issue:${event.pull.number}`, now);
    if (event.name === "check_run") this.touched.set(`sha:${event.checkRun.headSha}`, now);
    if (event.name === "push") this.touched.set(`ref:${event.push.ref.replace(/^refs\/heads\//, "")}`, now);
    if (event.name === "push") {
      const p = event.push;
      this.pushes.push({
        ref: p.ref,
        before: p.before,
        after: p.after,
        forced: p.forced,
        pusher: p.pusher,
        commits: p.commits.map((c) => c.id),
        at: new Date(),
      });
    } else if (event.name === "pull_request" && event.action === "closed" && event.pull.pull?.merged) {
      this.mergedHeads.add(event.pull.pull.head.sha);
    } else if (
      event.name === "issues" &&
      event.action === "labeled" &&
      event.label?.name.toLowerCase() === this.readyLabel.toLowerCase()
    ) {
      this.readyBy.set(event.issue.number, event.sender);
    }
  }

  /** Whether whoever made the issue ready (last ready label, else its author) has write access. */
  readyByWriter(issue: Issue | undefined): boolean {
    if (!issue) return false;
    if (!issue.labels.some((l) => l.toLowerCase() === this.readyLabel.toLowerCase())) return false;
    return this.hasWrite(this.readyBy.get(issue.number) ?? issue.user);
  }

  /** Whether Autopilot could merge the task's PR now, and how long nothing happened to the task. */
  private reviewOf(
    n: number,
    options: {
      pullFor?: (n: number) => Issue | null;
      checksOf?: (sha: string) => "success" | "failure" | "pending";
    },
    gateRules: readonly string[],
  ): { mergeable: boolean; idleSeconds: number } {
    const pull = options.pullFor?.(n) ?? null;
    const last = Math.max(
      this.touched.get(`issue:${n}`) ?? 0,
      pull ? (this.touched.get(`issue:${pull.number}`) ?? 0) : 0,
      pull?.pull ? (this.touched.get(`sha:${pull.pull.head.sha}`) ?? 0) : 0,
      pull?.pull ? (this.touched.get(`ref:${pull.pull.head.ref}`) ?? 0) : 0,
    );
    const idleSeconds = last ? (Date.now() - last) / 1000 : 0;
    if (!pull?.pull || pull.state !== "open" || !options.checksOf) return { mergeable: false, idleSeconds };
    const mergeable = reviewMergeable({
      checks: options.checksOf(pull.pull.head.sha),
      head: pull.pull.head.sha,
      reviews: pull.pull.reviews,
      body: pull.body ?? "",
      gateRules,
    });
    return { mergeable, idleSeconds };
  }

  /** The scenario App's own bot (`<slug>[bot]`), the only login Autopilot pushes and deletes branches as. */
  private isAppBot(login: string): boolean {
    return login.toLowerCase() === `${this.store.app.slug}[bot]`.toLowerCase();
  }

  /**
   * Every push to `ref` before `at` was the App's bot's: what the stale-branch sweep (`cleanup.staleBranchDays`,
   * a writer's setting) may delete (src/core/reconcile/stale-branches.ts compares every pusher with the App's
   * bot). A sweep that deleted anyone else's push, another bot's included, counts as a lost commit.
   */
  private onlyBotPushed(ref: string, at: Date): boolean {
    return this.pushes
      .filter((p) => p.ref === ref && p.at.getTime() < at.getTime())
      .every((p) => this.isAppBot(p.pusher));
  }

  /**
   * A writer asked, between `from` (the commit's push) and `to` (the deletion), to throw the task's branch away:
   * `/autopilot rollback` or `cleanup` of it. A command given before a commit was pushed does not discard it.
   */
  private discardAsked(issue: number, from: Date, to: Date, trackingIssue: number | null): boolean {
    return this.store.listComments(this.repo).some((c) => {
      const at = c.createdAt.getTime();
      if (at < from.getTime() || at > to.getTime() || /\[bot\]$/.test(c.user) || !this.hasWrite(c.user))
        return false;
      const parsed = parseCommand(c.body, { issue: c.issueNumber, trackingIssue });
      return (
        parsed?.kind === "command" &&
        (parsed.command.name === "rollback" || parsed.command.name === "cleanup") &&
        parsed.command.issue === issue
      );
    });
  }

  /** Every writer's `/autopilot run`, by the task it names (on the tracking issue or the task's own). */
  private runCommands(trackingIssue: number | null): { issue: number; at: Date }[] {
    return this.store.listComments(this.repo).flatMap((c) => {
      if (/\[bot\]$/.test(c.user) || !this.hasWrite(c.user)) return [];
      const parsed = parseCommand(c.body, { issue: c.issueNumber, trackingIssue });
      return parsed?.kind === "command" && parsed.command.name === "run"
        ? [{ issue: parsed.command.issue, at: c.createdAt }]
        : [];
    });
  }

  private hasWrite(login: string | undefined): boolean {
    if (!login) return false;
    if (/\[bot\]$/.test(login)) return true;
    return WRITE.has(this.store.getPermission(this.repo, login) ?? "none");
  }

  async collect(options: {
    git: SandboxGit;
    actions: ActionsRunner;
    tasks: { number: number; state: string; dependsOn: number[]; issue: Issue | undefined }[];
    labels: { ready: string; exclude: string };
    maxParallel: number;
    branchPrefix: string;
    tracking: Issue | null;
    /** The task's pull request (sandbox/scenario/scenario-observer.ts, `ScenarioObserver.pullFor`). */
    pullFor?: (n: number) => Issue | null;
    /** Combined state of the checks on a commit (`ScenarioObserver.checksOf`). */
    checksOf?: (sha: string) => "success" | "failure" | "pending";
    /** Config `merge.auto`: without it Autopilot never merges, so nothing in review is stuck. */
    autoMerge?: boolean;
    /** Config `cleanup.staleBranchDays` is on: the bot may delete branches only it pushed to. */
    staleBranchSweep?: boolean;
    /** Config `mode` and `session.autoStart`: whether a ready task waits for a person's command. */
    mode?: "auto" | "semi-auto";
    autoStart?: boolean;
  }): Promise<InvariantReport> {
    const [owner, name] = this.repo.split("/") as [string, string];
    const heads = (await options.git.remote.listRefs(owner, name, "refs/heads/")).map((r) => r.sha);
    const anchors = [...new Set([...heads, ...this.mergedHeads])];
    const reachable = new Set<string>();
    if (anchors.length) {
      const { stdout } = await run(
        systemGit(),
        ["--git-dir", options.git.remote.repoPath(owner, name), "rev-list", ...anchors],
        { maxBuffer: 64 * 1024 * 1024 },
      );
      for (const line of stdout.split("\n")) if (line.trim()) reachable.add(line.trim());
    }
    // The controller's own record of a task's human gate (its diff gate, earlier attempts' hits), beside the
    // worker's marker in the PR body: a task waiting on a person is not stuck.
    const dashboard = options.tracking ? parseDashboard(options.tracking.body ?? "") : null;
    const tasks: InvariantTask[] = options.tasks.map((t) => {
      const has = (l: string) => (t.issue?.labels ?? []).some((x) => x.toLowerCase() === l.toLowerCase());
      return {
        number: t.number,
        state: t.state,
        dependsOn: t.dependsOn,
        readyByWriter: this.readyByWriter(t.issue),
        excluded: has(options.labels.exclude),
        ...(t.state === "review" && options.autoMerge !== false
          ? { review: this.reviewOf(t.number, options, dashboard?.state?.tasks[t.number]?.gate ?? []) }
          : {}),
      };
    });
    const sessionStatus = dashboard
      ? (dashboard.state?.session.status ?? dashboard.visibleStatus ?? null)
      : null;
    return checkInvariants({
      // The scenario repository's runs: another repository of the organization has its own #1.
      runs: workerRuns(
        options.actions.listRuns().filter((r) => r.repo.toLowerCase() === this.repo.toLowerCase()),
      ).map((r) => {
        const issue = Number(r.inputs.issue);
        const attempt = Number(r.inputs.attempt ?? "1");
        return {
          id: r.id,
          issue: Number.isInteger(issue) && issue > 0 ? issue : null,
          attempt: Number.isInteger(attempt) ? attempt : null,
          dispatchId: r.inputs["dispatch-id"] ?? null,
          status: r.status,
          conclusion: r.conclusion,
          createdAt: r.createdAt,
          startedAt: r.startedAt,
          completedAt: r.completedAt,
        };
      }),
      pushes: this.pushes,
      reachable,
      tasks,
      maxParallel: options.maxParallel,
      sessionStatus: sessionStatus as string | null,
      // From the configuration and the controller's own session record, never from the dashboard's text (an
      // issue title is rendered there and can spell any line).
      awaitingCommand: awaitsPerson({
        mode: options.mode ?? "auto",
        autoStart: options.autoStart ?? true,
        session: dashboard?.state ? dashboard.state.session : null,
      }),
      ...(options.mode === "semi-auto"
        ? { runCommands: this.runCommands(options.tracking?.number ?? null) }
        : {}),
      branchPrefix: options.branchPrefix,
      now: new Date(),
      // Nobody in Autopilot force-pushes a task branch (see invariants.ts): nothing is exempt.
      exemptForcePush: () => false,
      exemptDeletion: (deletion, issue, commit) =>
        this.isAppBot(deletion.pusher) &&
        (this.discardAsked(issue, commit.at, deletion.at, options.tracking?.number ?? null) ||
          (options.staleBranchSweep === true && this.onlyBotPushed(deletion.ref, deletion.at))),
    });
  }
}

/**
 * Whether Autopilot could merge a task's PR as it stands: green checks, no change request standing, and — when
 * the human gate fired (the worker's marker in the PR body, or gate rules in the controller's dashboard state) —
 * an approval of the head commit.
 */
export function reviewMergeable(pr: {
  checks: "success" | "failure" | "pending";
  head: string;
  reviews: readonly { user: string; state: string; commitId: string }[];
  body: string;
  gateRules: readonly string[];
}): boolean {
  const latest = new Map<string, { state: string; commitId: string }>();
  for (const r of pr.reviews)
    if (r.state === "APPROVED" || r.state === "CHANGES_REQUESTED") latest.set(r.user.toLowerCase(), r);
  const changesRequested = [...latest.values()].some((r) => r.state === "CHANGES_REQUESTED");
  const approvedHead = [...latest.values()].some((r) => r.state === "APPROVED" && r.commitId === pr.head);
  const gate = /<!-- autopilot:human-gate \{"fired":true/.test(pr.body) || pr.gateRules.length > 0;
  return pr.checks === "success" && !changesRequested && (!gate || approvedHead);
}
