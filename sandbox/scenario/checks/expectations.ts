/**
 * Scenario expectations beyond the final state of each issue (the `expect` part of a scenario, see
 * `IssueExpectationSchema` and `RunExpectationShape` in expect-schema.ts): what Autopilot posted, what reached the
 * agent, the worker results in order, the iteration counters, the branch, how a PR got merged, the files on
 * the default branch, and what the dashboard said during the run.
 *
 * `ExpectationRecorder` watches the store's events while the scenario runs (every edit of the dashboard, every
 * worker result, every dispatch), so nothing that happened between two looks is missed; `checkExpectations`
 * compares all of it with the scenario at the end and returns one readable line per unmet expectation.
 */
import { isVerified } from "../../emulator/git/git-database-writes.js";
import { scheduledRunsInStretch } from "./idle-schedule.js";
import { parseDashboard, TRACKING_MARKER } from "../../../src/core/dashboard/index.js";
import { parseWorkerResult } from "../../../src/core/tasks/worker-result.js";
import { readDemoAgentState } from "../agent/demo-agent.js";
import type { GitRemote } from "../../emulator/git/git-remote.js";
import { CONTROLLER_WORKFLOW_PATH, controllerMode } from "../controllers/controller-mode.js";
import { type ExpectedCount, issueExpectations, runExpectations } from "./expect-schema.js";
import type { Scenario } from "../scenario-file.js";
import type { ReportState } from "../scenario-fields.js";
import type { Issue, SandboxStore, StoreEvent } from "../../emulator/store.js";
import { candidateOfBranch, taskBranchName } from "../../../src/core/contract.js";

const PAUSED = new Set(["paused", "pausing"]);

interface FinishedResult {
  dispatchId: string;
  attempt: number;
  result: string;
  iterations: number;
  /** What the run's agent cost, as its result says. */
  costUsd: number;
  reason?: string;
  resumeAt?: string;
  /** When the recorder first saw it finished. */
  finishedAt: number;
}

/** Records, from the store's events, what the end state alone cannot tell. */
export class ExpectationRecorder {
  /** Finished worker results per task issue, in the order they finished. */
  readonly results = new Map<number, FinishedResult[]>();
  /** Session statuses the dashboard showed, consecutive repeats collapsed. */
  readonly sessions: string[] = [];
  /** Patterns of `dashboardSeen` that matched at some moment. */
  private readonly seen = new Set<string>();
  /** Dispatches made while the dashboard said paused/pausing. */
  readonly dispatchesWhilePaused: { issue: string; session: string }[] = [];
  /** Head SHAs each PR had, in order. */
  readonly heads = new Map<number, string[]>();
  /**
   * Worker runs at work: from in_progress until their finished result (or their end). A run's last step, the
   * reconcile of its end (templates/workflows/autopilot-worker.yml, `ending-run`), starts the next task while
   * the run is still in progress: that run no longer works on its task, and `maxParallel` bounds tasks worked on.
   */
  private readonly inProgress = new Set<number>();
  /** The dispatch id of each worker run seen in progress. */
  private readonly runDispatch = new Map<number, string>();
  /** When each worker run of a task issue started. */
  readonly runStarts = new Map<number, number[]>();
  maxConcurrentRuns = 0;
  private session: string | null = null;
  private readonly patterns: string[];

  constructor(
    private readonly repo: string,
    scenario: Scenario,
  ) {
    const run = runExpectations(scenario.expect);
    this.patterns = [...(run.dashboardSeen ?? []), ...(run.hosted?.dashboardSeen ?? [])];
  }

  /** Feed it every store event (`store.onEvent(e => recorder.onEvent(e))`). */
  onEvent(event: StoreEvent): void {
    if (event.repo.fullName !== this.repo) return;
    switch (event.name) {
      case "issues":
        // Only the dashboard Autopilot opened: a person's issue carrying the marker is not it.
        if ((event.issue.body ?? "").includes(TRACKING_MARKER) && /\[bot\]$/.test(event.issue.user))
          this.dashboard(event.issue.body ?? "");
        break;
      case "issue_comment": {
        if (event.action === "deleted") break;
        const result = parseWorkerResult(event.comment.body);
        if (result?.status === "finished" && result.result) {
          const list = this.results.get(result.issue) ?? [];
          const known = list.find((r) => r.dispatchId === result.dispatchId);
          const entry: FinishedResult = {
            dispatchId: result.dispatchId,
            attempt: result.attempt,
            result: result.result,
            iterations: result.iterations,
            costUsd: result.costUsd,
            ...(result.reason ? { reason: result.reason } : {}),
            ...(result.resumeAt ? { resumeAt: result.resumeAt } : {}),
            finishedAt: known?.finishedAt ?? Date.now(),
          };
          if (known) Object.assign(known, entry);
          else list.push(entry);
          this.results.set(result.issue, list);
          for (const [runId, dispatchId] of this.runDispatch)
            if (dispatchId === result.dispatchId) this.inProgress.delete(runId);
        }
        break;
      }
      case "pull_request": {
        const sha = event.pull.pull?.head.sha;
        if (!sha) break;
        const list = this.heads.get(event.pull.number) ?? [];
        if (list.at(-1) !== sha) list.push(sha);
        this.heads.set(event.pull.number, list);
        break;
      }
      case "workflow_dispatch":
        if (this.session && PAUSED.has(this.session))
          this.dispatchesWhilePaused.push({ issue: event.inputs.issue ?? "?", session: this.session });
        break;
      case "workflow_run":
        if (event.run.event !== "workflow_dispatch" || !event.run.inputs.issue) break;
        if (event.action === "in_progress" && !this.runDispatch.has(event.run.id)) {
          this.inProgress.add(event.run.id);
          this.runDispatch.set(event.run.id, event.run.inputs["dispatch-id"] ?? "");
          const issue = Number(event.run.inputs.issue);
          this.runStarts.set(issue, [...(this.runStarts.get(issue) ?? []), Date.now()]);
        } else if (event.action === "completed") this.inProgress.delete(event.run.id);
        this.maxConcurrentRuns = Math.max(this.maxConcurrentRuns, this.inProgress.size);
        break;
      default:
        break;
    }
  }

  private dashboard(body: string): void {
    const parsed = parseDashboard(body);
    const status = parsed.state?.session.status ?? parsed.visibleStatus ?? null;
    if (status) {
      this.session = status;
      if (this.sessions.at(-1) !== status) this.sessions.push(status);
    }
    for (const pattern of this.patterns) if (new RegExp(pattern, "i").test(body)) this.seen.add(pattern);
  }

  sawDashboard(pattern: string): boolean {
    return this.seen.has(pattern);
  }
}

export interface ExpectationContext {
  scenario: Scenario;
  store: SandboxStore;
  remote: GitRemote;
  repo: { owner: string; name: string; defaultBranch: string };
  branchPrefix: string;
  humans: Set<string>;
  recorder: ExpectationRecorder;
  /** The demo agent's script (its per-issue run logs sit beside it). */
  scriptPath: string;
  state(number: number): ReportState;
  pullFor(number: number): (Issue & { pull: NonNullable<Issue["pull"]> }) | null;
  iterationsOf(number: number): number;
  runsOf(number: number): number;
  tracking(): Issue | null;
}

export function countOk(actual: number, expected: ExpectedCount): boolean {
  if (typeof expected === "number") return actual === expected;
  return (
    (expected.min === undefined || actual >= expected.min) &&
    (expected.max === undefined || actual <= expected.max)
  );
}

export function describeCount(expected: ExpectedCount): string {
  if (typeof expected === "number") return String(expected);
  if (expected.min !== undefined && expected.max !== undefined) return `${expected.min}–${expected.max}`;
  return expected.min !== undefined ? `≥ ${expected.min}` : `≤ ${expected.max}`;
}

/** Whether `wanted` appears in `list` in order (other entries may come between). */
function inOrder(list: string[], wanted: string[]): boolean {
  let i = 0;
  for (const item of list) if (i < wanted.length && item === wanted[i]) i++;
  return i === wanted.length;
}

const matches = (pattern: string, text: string) => new RegExp(pattern, "i").test(text);
const short = (text: string) => {
  const line = text
    .replace(/<!--[\s\S]*?-->/g, "")
    .replace(/\s+/g, " ")
    .trim();
  return line.length > 80 ? `${line.slice(0, 80)}…` : line;
};

/** Every unmet expectation other than the final states (those stay in the report's `mismatches`). */
export async function checkExpectations(ctx: ExpectationContext): Promise<string[]> {
  const unmet: string[] = [];
  const { store, recorder, scenario } = ctx;
  const repoFull = `${ctx.repo.owner}/${ctx.repo.name}`;
  const refs = new Set((await ctx.remote.listRefs(ctx.repo.owner, ctx.repo.name)).map((r) => r.ref));

  for (const [n, e] of issueExpectations(scenario.expect)) {
    const fail = (what: string) => unmet.push(`#${n}: ${what}`);
    const issue = store.getIssue(repoFull, n);
    const pull = ctx.pullFor(n);
    if (e.labels) {
      const have = (issue?.labels ?? []).map((l) => l.toLowerCase());
      for (const label of e.labels)
        if (!have.includes(label.toLowerCase()))
          fail(`expected the label ${label}, has ${have.join(", ") || "none"}`);
    }
    if (e.comments || e.noComments) {
      const numbers = [n, ...(pull ? [pull.number] : [])];
      const ours = numbers
        .flatMap((k) => store.listComments(repoFull, k))
        .filter((c) => !ctx.humans.has(c.user.toLowerCase()))
        .map((c) => c.body);
      for (const pattern of e.comments ?? [])
        if (!ours.some((body) => matches(pattern, body)))
          fail(`no comment by Autopilot matching /${pattern}/ (${ours.length} comments)`);
      for (const pattern of e.noComments ?? []) {
        const hit = ours.find((body) => matches(pattern, body));
        if (hit) fail(`a comment by Autopilot matches /${pattern}/: "${short(hit)}"`);
      }
    }
    if (e.prompts || e.noPrompts || e.lastPrompt || e.agents || e.agentRuns !== undefined) {
      const log = readDemoAgentState(ctx.scriptPath, n);
      const prompts = log.log.map((l) => l.prompt ?? "");
      for (const pattern of e.prompts ?? [])
        if (!prompts.some((p) => matches(pattern, p)))
          fail(`no agent prompt matching /${pattern}/ (${prompts.length} runs)`);
      for (const pattern of e.noPrompts ?? []) {
        const hit = prompts.findIndex((p) => matches(pattern, p));
        if (hit >= 0) fail(`the agent's prompt in run ${hit + 1} matches /${pattern}/`);
      }
      for (const pattern of e.lastPrompt ?? [])
        if (!matches(pattern, prompts.at(-1) ?? ""))
          fail(`the agent's last prompt does not match /${pattern}/`);
      const agents = [...new Set(log.log.map((l) => l.agent).filter(Boolean))] as string[];
      for (const name of e.agents ?? [])
        if (!agents.includes(name))
          fail(`the agent "${name}" never ran (ran: ${agents.join(", ") || "unnamed"})`);
      if (e.agentRuns !== undefined && !countOk(log.runs, e.agentRuns))
        fail(`expected ${describeCount(e.agentRuns)} agent runs, got ${log.runs}`);
    }
    const results = recorder.results.get(n) ?? [];
    if (
      e.results &&
      !inOrder(
        results.map((r) => r.result),
        e.results,
      )
    )
      fail(
        `expected worker results ${e.results.join(" → ")}, got ${results.map((r) => r.result).join(" → ") || "none"}`,
      );
    for (const pattern of e.pullBody ?? [])
      if (!pull) fail(`expected a pull request whose body matches /${pattern}/, found none`);
      else if (!matches(pattern, pull.body ?? ""))
        fail(`the body of PR #${pull.number} does not match /${pattern}/`);
    if (e.costUsd) {
      const cost = results.reduce((sum, r) => sum + r.costUsd, 0);
      if (cost > e.costUsd.max)
        fail(`expected the task's runs to cost at most $${e.costUsd.max}, they cost $${cost.toFixed(2)}`);
    }
    if (e.resumesAfterReset) {
      // Each run that ended on a limit with a reset time: the task's next run started after that time.
      const limited = results.filter((r) => r.resumeAt);
      if (!limited.length) fail("no worker run ended with a reset time (resumeAt)");
      const starts = recorder.runStarts.get(n) ?? [];
      for (const r of limited) {
        const next = starts.find((t) => t > r.finishedAt);
        const reset = Date.parse(r.resumeAt!);
        // The agent prints the reset in whole seconds: allow a second.
        if (next === undefined) fail(`no worker run started after the one that hit the limit (${r.result})`);
        else if (next < reset - 1000)
          fail(
            `the next worker run started ${((reset - next) / 1000).toFixed(1)} s before the reset ${r.resumeAt}`,
          );
      }
    }
    if (e.iterations !== undefined && !countOk(ctx.iterationsOf(n), e.iterations))
      fail(`expected ${describeCount(e.iterations)} iterations in all, got ${ctx.iterationsOf(n)}`);
    if (e.lastIterations !== undefined) {
      const last = results.at(-1);
      if (!last || !countOk(last.iterations, e.lastIterations))
        fail(
          `expected ${describeCount(e.lastIterations)} iterations in the last worker run, got ${last ? last.iterations : "no finished run"}`,
        );
    }
    if (e.runs !== undefined && !countOk(ctx.runsOf(n), e.runs))
      fail(`expected ${describeCount(e.runs)} worker runs, got ${ctx.runsOf(n)}`);
    if (e.branch !== undefined) {
      const branch = taskBranchName(ctx.branchPrefix, n);
      const exists = refs.has(`refs/heads/${branch}`);
      if (exists !== e.branch) fail(`expected the branch ${branch} to ${e.branch ? "exist" : "be gone"}`);
    }
    if (e.candidates) {
      const ofTask = (ref: string) => candidateOfBranch(ctx.branchPrefix, ref)?.issue === n;
      const pulls = store.listPulls(repoFull).filter((p) => !p.pull.headRepo && ofTask(p.pull.head.ref));
      if (pulls.length !== e.candidates.closed)
        fail(`expected ${e.candidates.closed} candidate pull requests, found ${pulls.length}`);
      for (const p of pulls)
        if (p.state !== "closed" || p.pull.merged)
          fail(
            `expected candidate PR #${p.number} closed unmerged, it is ${p.pull.merged ? "merged" : p.state}`,
          );
      for (const ref of refs)
        if (ref.startsWith("refs/heads/") && ofTask(ref.slice("refs/heads/".length)))
          fail(`expected the candidate branch ${ref.slice("refs/heads/".length)} deleted, it is still there`);
    }
    if (e.branchFiles) {
      const branch = taskBranchName(ctx.branchPrefix, n);
      if (!refs.has(`refs/heads/${branch}`)) fail(`expected the branch ${branch} with files, it is gone`);
      else for (const line of await fileMismatches(ctx, branch, e.branchFiles)) fail(line);
    }
    if (e.pr) {
      const p = e.pr;
      if (!pull) {
        if (
          p.merged !== false ||
          p.approvedAfterLastPush ||
          p.pushedAfterChangesRequested ||
          p.checksFailedThenPassed ||
          p.verified !== undefined ||
          p.reviewerChangesMade ||
          p.reviews
        )
          fail("expected a pull request, found none");
      } else {
        const merged = pull.pull.merged;
        const head = pull.pull.head.sha;
        const reviews = pull.pull.reviews;
        if (p.merged !== undefined && merged !== p.merged)
          fail(`expected PR #${pull.number} ${p.merged ? "merged" : "not merged"}`);
        if (p.approvedAfterLastPush) {
          const mergedAt = pull.pull.mergedAt?.getTime() ?? Number.POSITIVE_INFINITY;
          const approval = reviews.find(
            (r) =>
              r.state === "APPROVED" &&
              r.commitId === head &&
              (r.submittedAt?.getTime() ?? Number.POSITIVE_INFINITY) <= mergedAt,
          );
          if (!merged)
            fail(`expected PR #${pull.number} merged after an approval of its last push; not merged`);
          else if (!approval)
            fail(
              `PR #${pull.number} was merged without an approval of its last push ${head.slice(0, 7)} (reviews: ${reviews.map((r) => `${r.state}@${r.commitId.slice(0, 7)}`).join(", ") || "none"})`,
            );
        }
        if (p.pushedAfterChangesRequested) {
          const asked = reviews.find((r) => r.state === "CHANGES_REQUESTED");
          if (!asked) fail(`no review requested changes on PR #${pull.number}`);
          else if (asked.commitId === head)
            fail(`nothing was pushed to PR #${pull.number} after changes were requested`);
        }
        if (p.reviewerChangesMade) {
          // The worker's marker ends the body of each of the reviewer's reviews (src/core/contract.ts).
          const verdict = (body: string) =>
            /<!-- autopilot:review \{"verdict":"(\w+)"/.exec(body)?.[1] ?? null;
          const asked = reviews.some((r) => verdict(r.body) === "request_changes" && r.commitId !== head);
          const approved = reviews.some((r) => verdict(r.body) === "approve" && r.commitId === head);
          if (!asked || !approved || !merged)
            fail(
              `expected Autopilot's reviewer to ask for changes on an earlier head of PR #${pull.number} and approve the merged one (asked: ${asked}, approved: ${approved}, merged: ${merged})`,
            );
        }
        for (const pattern of p.reviews ?? []) {
          const texts = reviews.flatMap((r) => [
            r.body,
            ...r.comments.map((c) => `${c.path}:${c.line ?? ""} ${c.body}`),
          ]);
          if (!texts.some((text) => matches(pattern, text)))
            fail(`no review on PR #${pull.number} matches /${pattern}/`);
        }
        if (p.verified !== undefined) {
          // GitHub's signature (sandbox/emulator/git/git-database-writes.ts) on each commit base..head.
          const commits = (await store.compare(repoFull, pull.pull.base.sha, head)).commits ?? [];
          const verified = await Promise.all(
            commits.map((c) => isVerified(ctx.remote.repoPath(ctx.repo.owner, ctx.repo.name), c.sha)),
          );
          const unmet = commits.filter((_, i) => verified[i] !== p.verified).map((c) => c.sha.slice(0, 7));
          if (commits.length === 0 || unmet.length)
            fail(
              `expected every commit of PR #${pull.number} ${p.verified ? "verified" : "unsigned"}; not: ${unmet.join(", ") || "no commits"}`,
            );
        }
        if (p.checksFailedThenPassed) {
          const heads = recorder.heads.get(pull.number) ?? [head];
          const conclusion = (sha: string) => {
            const runs = store.listCheckRuns(repoFull, sha).filter((r) => r.status === "completed");
            if (!runs.length) return "none";
            return runs.some((r) => !["success", "neutral", "skipped"].includes(r.conclusion ?? ""))
              ? "failure"
              : "success";
          };
          const seen = heads.map((sha) => `${sha.slice(0, 7)}:${conclusion(sha)}`);
          if (!heads.some((sha) => conclusion(sha) === "failure") || conclusion(head) !== "success")
            fail(`expected checks to fail on a push and pass on the last one; heads ${seen.join(", ")}`);
        }
      }
    }
    for (const line of await fileMismatches(ctx, ctx.repo.defaultBranch, e.files ?? {})) fail(line);
  }

  const run = runExpectations(scenario.expect);
  const body = ctx.tracking()?.body ?? "";
  for (const [name, patterns] of Object.entries(run.artifacts ?? {})) {
    const kept = store.listArtifacts(repoFull, { name });
    const text = kept.flatMap((a) => Object.values(a.files).map((file) => file.toString("utf8"))).join("\n");
    if (!kept.length) unmet.push(`artifact ${name}: none was kept`);
    for (const pattern of patterns) {
      const negated = pattern.startsWith("!");
      if (kept.length && matches(negated ? pattern.slice(1) : pattern, text) === negated)
        unmet.push(
          `artifact ${name}: ${negated ? "matches" : "does not match"} /${negated ? pattern.slice(1) : pattern}/`,
        );
    }
  }
  for (const pattern of run.dashboard ?? [])
    if (!matches(pattern, body)) unmet.push(`dashboard: does not match /${pattern}/`);
  for (const pattern of run.noDashboard ?? [])
    if (matches(pattern, body)) unmet.push(`dashboard: matches /${pattern}/`);
  const tracking = ctx.tracking();
  const trackingComments = tracking
    ? store
        .listComments(repoFull, tracking.number)
        .filter((c) => !ctx.humans.has(c.user.toLowerCase()))
        .map((c) => c.body)
    : [];
  for (const pattern of run.dashboardComments ?? [])
    if (!trackingComments.some((b) => matches(pattern, b)))
      unmet.push(`dashboard: no comment by Autopilot matching /${pattern}/ on the tracking issue`);
  if (run.dashboardCommentCount) {
    const { pattern, count } = run.dashboardCommentCount;
    const n = trackingComments.filter((b) => matches(pattern, b)).length;
    if (!countOk(n, count))
      unmet.push(
        `dashboard: ${n} comment(s) by Autopilot match /${pattern}/, expected ${describeCount(count)}`,
      );
  }
  if (run.noDuplicateComments) {
    const seen = new Map<string, number>();
    for (const c of store.listComments(repoFull)) {
      if (ctx.humans.has(c.user.toLowerCase())) continue;
      const key = `${c.issueNumber}\n${c.body}`;
      seen.set(key, (seen.get(key) ?? 0) + 1);
    }
    for (const [key, n] of seen)
      if (n > 1) unmet.push(`comments: #${key.split("\n")[0]} has ${n} identical comments by Autopilot`);
  }
  const seen = [
    ...(run.dashboardSeen ?? []),
    ...(controllerMode(ctx.scenario) === "hosted" ? (run.hosted?.dashboardSeen ?? []) : []),
  ];
  for (const pattern of seen)
    if (!recorder.sawDashboard(pattern)) unmet.push(`dashboard: never matched /${pattern}/ during the run`);
  if (run.actions?.metrics && controllerMode(ctx.scenario) === "actions")
    unmet.push(...checkRunMetrics(store, repoFull, run.actions.metrics));
  const idle = run.actions?.idleSchedule;
  if (idle && controllerMode(ctx.scenario) === "actions") {
    const stretch = scheduledRunsInStretch(store, repoFull, ctx.humans, idle);
    if (!stretch.found) unmet.push(`idle schedule: ${stretch.why}`);
    else {
      const over = `in ${stretch.seconds.toFixed(1)} s after /${idle.after}/`;
      if (!countOk(stretch.ran, idle.ran))
        unmet.push(
          `idle schedule: ${stretch.ran} scheduled controller job(s) ran (billed) ${over}, expected ${describeCount(idle.ran)}`,
        );
      if (idle.skipped !== undefined && !countOk(stretch.skipped, idle.skipped))
        unmet.push(
          `idle schedule: ${stretch.skipped} scheduled run(s) skipped ${over}, expected ${describeCount(idle.skipped)}`,
        );
    }
  }
  if (run.session) {
    const parsed = parseDashboard(body);
    const status = parsed.state?.session.status ?? parsed.visibleStatus ?? "none";
    if (status !== run.session) unmet.push(`session: expected ${run.session}, got ${status}`);
  }
  if (run.sessions && !inOrder(recorder.sessions, run.sessions))
    unmet.push(
      `session: expected ${run.sessions.join(" → ")}, saw ${recorder.sessions.join(" → ") || "none"}`,
    );
  if (run.noDispatchWhilePaused && recorder.dispatchesWhilePaused.length)
    unmet.push(
      `dispatch: ${recorder.dispatchesWhilePaused.map((d) => `#${d.issue} while ${d.session}`).join(", ")}`,
    );
  if (run.forkPullsMerged !== undefined) {
    const merged = store.listPulls(repoFull).filter((p) => p.pull.headRepo && p.pull.merged);
    if (merged.length !== run.forkPullsMerged)
      unmet.push(
        `fork pull requests merged: ${merged.length} (${merged.map((p) => `#${p.number}`).join(", ") || "none"}), expected ${run.forkPullsMerged}`,
      );
  }
  if (run.maxConcurrentRuns !== undefined && recorder.maxConcurrentRuns > run.maxConcurrentRuns)
    unmet.push(`runs: ${recorder.maxConcurrentRuns} at once, expected at most ${run.maxConcurrentRuns}`);
  return unmet;
}

/** How the files on `ref` differ from what is expected: path → pattern its content matches (null: absent). */
async function fileMismatches(
  ctx: ExpectationContext,
  ref: string,
  files: Record<string, string | null>,
): Promise<string[]> {
  const out: string[] = [];
  for (const [path, pattern] of Object.entries(files)) {
    const content = await ctx.remote.readFile(ctx.repo.owner, ctx.repo.name, ref, path);
    if (pattern === null) {
      if (content !== null) out.push(`expected no ${path} on ${ref}`);
    } else if (content === null) out.push(`expected ${path} on ${ref}; it does not exist`);
    else if (!matches(pattern, content)) out.push(`${path} on ${ref} does not match /${pattern}/`);
  }
  return out;
}

/**
 * Every controller run that succeeded kept one `autopilot-metrics` artifact of this repository's figures, and
 * the most tasks of each status any of them showed is as expected.
 */
function checkRunMetrics(
  store: SandboxStore,
  repoFull: string,
  expected: Record<string, ExpectedCount>,
): string[] {
  const unmet: string[] = [];
  const workflow = store.getWorkflow(repoFull, CONTROLLER_WORKFLOW_PATH);
  const runs = workflow
    ? store.listWorkflowRuns(repoFull, { workflow: workflow.id }).filter((r) => r.conclusion === "success")
    : [];
  if (runs.length === 0) unmet.push("metrics: no controller run succeeded");
  const most: Record<string, number> = {};
  for (const run of runs) {
    const kept = run.artifacts.filter((a) => a.name === "autopilot-metrics");
    const files = kept.flatMap((a) => Object.values(a.files));
    if (kept.length !== 1 || files.length !== 1) {
      unmet.push(
        `metrics: controller run ${run.id} kept ${kept.length} autopilot-metrics artifact(s) of ${files.length} file(s)`,
      );
      continue;
    }
    let figures: {
      format?: string;
      repository?: string;
      session?: { tasks?: Record<string, number> } | null;
    };
    try {
      figures = JSON.parse(files[0]!.toString("utf8"));
    } catch {
      unmet.push(`metrics: controller run ${run.id}'s artifact is not JSON`);
      continue;
    }
    if (figures.format !== "autopilot-run-metrics/1" || figures.repository !== repoFull)
      unmet.push(
        `metrics: controller run ${run.id}'s artifact is of ${figures.repository} in format ${figures.format}`,
      );
    for (const [status, n] of Object.entries(figures.session?.tasks ?? {}))
      most[status] = Math.max(most[status] ?? 0, n);
  }
  for (const [status, count] of Object.entries(expected))
    if (!countOk(most[status] ?? 0, count))
      unmet.push(
        `metrics: expected ${describeCount(count)} ${status} tasks in some run's artifact, saw at most ${most[status] ?? 0}`,
      );
  return unmet;
}
