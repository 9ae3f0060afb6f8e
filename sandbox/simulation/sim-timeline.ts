/**
 * A world's timeline (the scenario format's `timeline:` rules with `afterSeconds`) played on the simulation's
 * store: what people do, and the faults the runner injects. Each action is recorded for the invariants.
 */
import { TRACKING_MARKER } from "../../src/core/dashboard/index.js";
import type { SandboxStore } from "../emulator/store.js";
import { syntheticSha } from "../emulator/store/ref-names.js";
import type { ScenarioAction } from "../scenario/timeline/timeline-schema.js";

interface TimelineContext {
  store: SandboxStore;
  repo: string;
  bot: string;
  writers: Set<string>;
  nowMs: () => number;
  recordWriterCommand(id: number, body: string): void;
  tamperTracking(): void;
  killRun(issue: number): boolean;
  killController(afterWrites: number): void;
}

/** The open tracking issue Autopilot made, if any. */
export function trackingIssueNumber(store: SandboxStore, repo: string, bot: string): number | null {
  const found = store
    .listIssues(repo)
    .find(
      (i) =>
        !i.pull &&
        i.state === "open" &&
        i.user.toLowerCase() === bot.toLowerCase() &&
        (i.body ?? "").includes(TRACKING_MARKER),
    );
  return found?.number ?? null;
}

/** Plays one action; returns whether it did anything (an action on a PR that does not exist yet does nothing). */
export async function playAction(action: ScenarioAction, ctx: TimelineContext): Promise<boolean> {
  const { store, repo } = ctx;
  if (action.killRun) return ctx.killRun(action.killRun.issue);
  if (action.killController) {
    ctx.killController(action.killController.afterWrites);
    return true;
  }
  const as = action.as;
  if (!as) return false;
  const target = (): number | null => {
    // No dashboard (not made yet, or deleted): there is nothing to comment on.
    if (action.on === "tracking") return trackingIssueNumber(store, repo, ctx.bot);
    return typeof action.on === "number" ? action.on : null;
  };
  if (action.comment !== undefined) {
    const on = target();
    if (on === null || !store.getIssue(repo, on)) return false;
    const comment = store.createComment(repo, on, action.comment, as);
    // A command counts on the tracking issue or an open task issue (the dashboard's command list); an issue no
    // writer made ready is not a task, and a closed one is done: a command there is not checked for an answer.
    // Nor is one on an issue that carries none of Autopilot's labels now (taken out for an outsider's edit):
    // Autopilot reads commands there only while it remembers the task (src/core/reconcile/commands/
    // comment-commands.ts `taskIssueFor`), which the simulation cannot see (seed 80, hosted).
    const where =
      on === trackingIssueNumber(store, repo, ctx.bot) ||
      (store.getIssue(repo, on)?.state === "open" &&
        writerMadeReady(store, repo, on, ctx.writers) &&
        carriesTaskLabel(store, repo, on));
    if (action.comment.trim().startsWith("/autopilot") && ctx.writers.has(as.toLowerCase()) && where)
      ctx.recordWriterCommand(comment.id, action.comment);
    return true;
  }
  if (action.label !== undefined) {
    const on = target();
    if (on === null || store.getIssue(repo, on)?.state !== "open") return false;
    store.addLabels(repo, on, [action.label], as);
    return true;
  }
  if (action.editBody !== undefined) {
    // REST `PATCH …/issues/{n}` with a body: GitHub lets the issue's author or a person with write access edit
    // it (https://docs.github.com/en/issues/tracking-your-work-with-issues/administering-issues/editing-an-issue).
    const on = target();
    if (on === null || store.getIssue(repo, on)?.state !== "open") return false;
    store.updateIssue(repo, on, { body: action.editBody }, as);
    return true;
  }
  if (action.close) {
    const on = target();
    if (on === null || store.getIssue(repo, on)?.state !== "open") return false;
    store.closeIssue(repo, on, as);
    return true;
  }
  if (action.review !== undefined) {
    const pull = openPullOf(store, repo, action.pr ?? null);
    if (!pull) return false;
    const event =
      action.review === "approve"
        ? "APPROVE"
        : action.review === "request-changes"
          ? "REQUEST_CHANGES"
          : "COMMENT";
    store.createReview(repo, pull, { author: as, event, body: action.body ?? "" });
    return true;
  }
  if (action.push) {
    const branch = action.push.branch ?? "main";
    const before = await store.resolveRef(repo, `refs/heads/${branch}`);
    if (!before) return false;
    const after = syntheticSha(repo, branch, as, String(ctx.nowMs()));
    await store.recordPush({ repo, ref: `refs/heads/${branch}`, before, after, pusher: as });
    return true;
  }
  if (action.corruptState || action.delete) {
    const on = trackingIssueNumber(store, repo, ctx.bot);
    if (on === null) return false;
    ctx.tamperTracking();
    if (action.delete) store.deleteIssue(repo, on, as);
    else {
      const body = store.requireIssue(repo, on).body ?? "";
      store.updateIssue(
        repo,
        on,
        {
          body: body.replace(
            /<!-- autopilot:state v1[\s\S]*?-->/,
            "<!-- autopilot:state v1\n{ not json\n-->",
          ),
        },
        as,
      );
    }
    return true;
  }
  return false;
}

function writerMadeReady(store: SandboxStore, repo: string, issue: number, writers: Set<string>): boolean {
  return (store.getIssue(repo, issue)?.events ?? []).some(
    (e) => e.event === "labeled" && e.label?.name === "autopilot:ready" && writers.has(e.actor.toLowerCase()),
  );
}

/** Autopilot's task labels (the defaults of src/core/config/config-section-schemas.ts `labels`). */
const TASK_LABELS = [
  "ready",
  "in-progress",
  "review",
  "blocked",
  "needs-human",
  "timeout",
  "failed",
  "exclude",
].map((l) => `autopilot:${l}`);

function carriesTaskLabel(store: SandboxStore, repo: string, issue: number): boolean {
  return (store.getIssue(repo, issue)?.labels ?? []).some((l) => TASK_LABELS.includes(String(l)));
}

function openPullOf(store: SandboxStore, repo: string, task: number | null): number | null {
  if (task === null) return null;
  const pull = store
    .listPulls(repo)
    .find((p) => p.state === "open" && p.pull.head.ref === `autopilot/issue-${task}`);
  return pull?.number ?? null;
}
