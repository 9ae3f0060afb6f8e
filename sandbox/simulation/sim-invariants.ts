/**
 * The simulation's invariants, each a named function over what the simulation observed. `during` ones run
 * after every reconcile, dispatch and merge; `after` ones when the world has run its course. A violation names
 * its invariant, the simulated time and what was seen.
 */
import { isDeepStrictEqual } from "node:util";
import { DEFAULT_CONFIG } from "../../src/core/config/index.js";
import {
  type DashboardState,
  parseDashboard,
  renderStateBlock,
  TRACKING_MARKER,
} from "../../src/core/dashboard/index.js";
import { taskStatusFromLabels } from "../../src/core/tasks/task.js";
import type { SandboxStore } from "../emulator/store.js";
import type { SimDispatch } from "./sim-worker.js";

export interface Violation {
  invariant: string;
  atSeconds: number;
  detail: string;
}

/** What the invariants read: the store, and what the simulation recorded as it went. */
export interface SimObservation {
  store: SandboxStore;
  repo: string;
  bot: string;
  writers: Set<string>;
  dispatches: SimDispatch[];
  /** Writers' `/autopilot` comments (ids) and the session commands writers gave, in order. */
  writerCommands: { id: number; body: string }[];
  /** Heads whose worker result said the human gate fired, per PR number. */
  gatedHeads: Map<number, Set<string>>;
  /** A person corrupted or deleted the tracking issue since the last reconcile wrote it. */
  trackingTampered: boolean;
  /** Seconds since the world started. */
  elapsed(): number;
}

const READY = "autopilot:ready";

/** No task has two worker runs live at once. Checked at each dispatch. */
export function noTaskDispatchedTwiceAtOnce(o: SimObservation, dispatch: SimDispatch): Violation[] {
  const twins = o.dispatches.filter(
    (d) =>
      d !== dispatch &&
      d.issue === dispatch.issue &&
      d.endedAt === null &&
      !d.candidate &&
      !dispatch.candidate,
  );
  return twins.length
    ? [
        {
          invariant: "noTaskDispatchedTwiceAtOnce",
          atSeconds: o.elapsed(),
          detail: `#${dispatch.issue} dispatched (${dispatch.dispatchId}) while run ${twins[0]!.runId} (${twins[0]!.dispatchId}) is live`,
        },
      ]
    : [];
}

/**
 * A run only for a task a writer made ready: the ready label was set by a writer at some point, or Autopilot set
 * it on a sub-issue of an epic a writer labeled (src/core/reconcile/epic-pooling.ts pools it so).
 */
export function dispatchOnlyByWritersWord(o: SimObservation, dispatch: SimDispatch): Violation[] {
  const issue = o.store.getIssue(o.repo, dispatch.issue);
  const labeledBy = (n: number | null, who: (actor: string) => boolean) =>
    n !== null &&
    !!o.store
      .getIssue(o.repo, n)
      ?.events.some((e) => e.event === "labeled" && e.label?.name === READY && who(e.actor.toLowerCase()));
  const byWriter = (n: number | null) => labeledBy(n, (actor) => o.writers.has(actor));
  const pooled = (n: number): boolean => {
    const parent = o.store.getIssue(o.repo, n)?.parent ?? null;
    return parent !== null && (byWriter(parent) || pooled(parent));
  };
  const ownLabel = labeledBy(dispatch.issue, (actor) => actor === o.bot.toLowerCase());
  const byWriterWord = byWriter(dispatch.issue) || (!!issue && ownLabel && pooled(dispatch.issue));
  return byWriterWord
    ? []
    : [
        {
          invariant: "dispatchOnlyByWritersWord",
          atSeconds: o.elapsed(),
          detail: `#${dispatch.issue} dispatched though no writer ever set ${READY} on it`,
        },
      ];
}

/**
 * A job runs under the configured iteration limit, or under one a writer named for its task
 * (`/autopilot retry #N --iterations M`): never one only a non-writer asked for. Checked at each dispatch.
 */
export function iterationLimitByWritersWord(
  o: SimObservation,
  dispatch: SimDispatch,
  configured: number,
): Violation[] {
  const limit = dispatch.maxIterations;
  if (limit === null || limit === configured) return [];
  const byWriter = o.store.listComments(o.repo).some((c) => {
    if (!o.writers.has(c.user.toLowerCase())) return false;
    // `retry #N --iterations M` anywhere, or `retry --iterations M` on the task itself.
    const m = /^\/autopilot retry(?: #(\d+))?\s+--iterations[ =](\d+)\s*$/im.exec(c.body);
    const issue = m?.[1] ? Number(m[1]) : c.issueNumber;
    return m !== null && issue === dispatch.issue && Number(m[2]) === limit;
  });
  return byWriter
    ? []
    : [
        {
          invariant: "iterationLimitByWritersWord",
          atSeconds: o.elapsed(),
          detail: `#${dispatch.issue} dispatched with ${limit} iterations (configured ${configured}); no writer asked for ${limit}`,
        },
      ];
}

/**
 * A pull request Autopilot merges is its own, from the task branch (or GitHub's revert branch of a task PR, for a
 * writer's rollback: rollbackRevertsOnlyAutopilotsMerges checks what it reverts), with CI passed at the merged head, no
 * writer's changes request standing, and, when the human gate fired at that head, a writer's approval of it.
 * Reviews count as they stood when the reconcile that merged read the repository (`beforeRead`: its first GraphQL
 * request, the snapshot): one submitted after that read cannot have been seen, and GitHub has no way to pin a
 * merge to the reviews it saw (the merge is pinned to the head only, so a late push is caught here at any time).
 */
export async function mergeOnlyWithEveryGate(
  o: SimObservation,
  number: number,
  mergedBy: string,
  beforeRead: (reviewId: number) => boolean,
): Promise<Violation[]> {
  if (mergedBy.toLowerCase() !== o.bot.toLowerCase()) return [];
  const pull = o.store.getPull(o.repo, number);
  if (!pull?.pull) return [];
  const out: Violation[] = [];
  const fail = (detail: string) =>
    out.push({
      invariant: "mergeOnlyWithEveryGate",
      atSeconds: o.elapsed(),
      detail: `PR #${number}: ${detail}`,
    });
  const head = pull.pull.head.sha;
  if (pull.user.toLowerCase() !== o.bot.toLowerCase()) fail(`opened by ${pull.user}, not Autopilot`);
  if (!/^(revert-\d+-)?autopilot\/issue-\d+$/.test(pull.pull.head.ref) || pull.pull.headRepo)
    fail(`head ${pull.pull.headRepo ?? ""}:${pull.pull.head.ref} is not a task branch`);
  const runs = o.store.listCheckRuns(o.repo, head);
  if (!runs.some((r) => r.name === "ci" && r.conclusion === "success"))
    fail(`merged head ${head.slice(0, 7)} has no passing ci`);
  const reviews = pull.pull.reviews.filter((r) => r.submittedAt !== null && beforeRead(r.id));
  const latest = new Map<string, (typeof reviews)[number]>();
  for (const review of reviews)
    if (o.writers.has(review.user.toLowerCase()) && review.state !== "COMMENTED")
      latest.set(review.user.toLowerCase(), review);
  for (const [who, review] of latest)
    if (review.state === "CHANGES_REQUESTED") fail(`${who}'s changes request stands`);
  if (o.gatedHeads.get(number)?.has(head)) {
    const approved = reviews.some(
      (r) => r.state === "APPROVED" && r.commitId === head && o.writers.has(r.user.toLowerCase()),
    );
    if (!approved) fail(`the human gate fired at ${head.slice(0, 7)} and no writer approved that head`);
  }
  return out;
}

/**
 * A session paused or stopped by a person's command was paused or stopped by a writer. A state rebuilt after its
 * block was damaged keeps the status the dashboard showed, in Autopilot's name (src/core/dashboard/rebuild-state.ts):
 * no person moved it then.
 */
export function sessionMovesOnlyByWriters(
  o: SimObservation,
  session: { status: string; reason: string; actor?: string | undefined; detail?: string | undefined },
): Violation[] {
  if (session.reason !== "user_pause" && session.reason !== "user_stop") return [];
  if (session.actor === "autopilot" && session.detail?.startsWith("state rebuilt")) return [];
  if (session.actor && o.writers.has(session.actor.toLowerCase())) return [];
  return [
    {
      invariant: "sessionMovesOnlyByWriters",
      atSeconds: o.elapsed(),
      detail: `session ${session.status} (${session.reason}) by ${session.actor ?? "nobody"}, not a writer`,
    },
  ];
}

/** The tracking issue's state block parses and renders back to itself. */
export function trackingStateRoundTrips(o: SimObservation, body: string | null): Violation[] {
  if (body === null || o.trackingTampered) return [];
  const parsed = parseDashboard(body);
  if (!parsed.state || parsed.corrupt)
    return [
      {
        invariant: "trackingStateRoundTrips",
        atSeconds: o.elapsed(),
        detail: "the state block Autopilot wrote does not parse",
      },
    ];
  const again = parseDashboard(renderStateBlock(parsed.state)).state;
  if (!isDeepStrictEqual(again, parsed.state))
    return [
      {
        invariant: "trackingStateRoundTrips",
        atSeconds: o.elapsed(),
        detail: "the state block does not render back to itself",
      },
    ];
  return [];
}

/** Every writer's `/autopilot` comment gets Autopilot's reaction or reply by the end. */
export function everyWriterCommandAcknowledged(o: SimObservation): Violation[] {
  const out: Violation[] = [];
  for (const command of o.writerCommands) {
    const comment = o.store.getComment(o.repo, command.id);
    if (!comment) continue;
    const reacted = o.store
      .listReactions(o.repo, { commentId: command.id })
      .some((r) => r.user.toLowerCase() === o.bot.toLowerCase());
    const replied = o.store
      .listComments(o.repo)
      .some(
        (c) =>
          c.user.toLowerCase() === o.bot.toLowerCase() &&
          c.id > command.id &&
          c.issueNumber === comment.issueNumber,
      );
    if (!reacted && !replied)
      out.push({
        invariant: "everyWriterCommandAcknowledged",
        atSeconds: o.elapsed(),
        detail: `"${command.body}" (comment ${command.id}) got no reaction or reply`,
      });
  }
  return out;
}

/**
 * Liveness: once the world has run its course, no task is left in progress without a live run, and every task a
 * writer made ready whose dependencies are done was worked on (unless the session was paused or stopped).
 */
export function everyTaskSettles(
  o: SimObservation,
  sessionStatus: string | null,
  planLabel: string,
): Violation[] {
  const out: Violation[] = [];
  const live = new Set(o.dispatches.filter((d) => d.endedAt === null).map((d) => d.issue));
  for (const issue of o.store.listIssues(o.repo)) {
    if (issue.pull || issue.state !== "open") continue;
    const labels = issue.labels.map(String);
    if (labels.includes("autopilot:in-progress") && !live.has(issue.number))
      out.push({
        invariant: "everyTaskSettles",
        atSeconds: o.elapsed(),
        detail: `#${issue.number} is in progress with no live run`,
      });
  }
  if (sessionStatus === "paused" || sessionStatus === "pausing" || sessionStatus === "stopping") return out;
  for (const issue of o.store.listIssues(o.repo)) {
    // An epic is not worked on itself (its sub-issues are): noEpicDispatched.
    if (issue.pull || issue.state !== "open" || issue.subIssues.length > 0) continue;
    // The plan gate's label says how the task is worked, not where it stands.
    const labels = issue.labels.map(String).filter((l) => l !== planLabel);
    if (labels.length !== 1 || labels[0] !== READY) continue;
    if (o.store.whoLabeled(o.repo, issue.number, READY) === null) continue;
    if (!o.writers.has((o.store.whoLabeled(o.repo, issue.number, READY) ?? "").toLowerCase())) continue;
    // Its `Depends on #N` lines and GitHub's native "blocked by" relations, as the product reads them
    // (dependenciesDoneBeforeDispatch): a task waiting on an open one, or in a cycle, is rightly never worked on.
    const deps = [
      ...[...(issue.body ?? "").matchAll(/Depends on #(\d+)/g)].map((m) => Number(m[1])),
      ...issue.blockedBy,
    ];
    if (deps.some((d) => o.store.getIssue(o.repo, d)?.state !== "closed")) continue;
    if (!o.dispatches.some((d) => d.issue === issue.number))
      out.push({
        invariant: "everyTaskSettles",
        atSeconds: o.elapsed(),
        detail: `#${issue.number} was made ready by a writer and never worked on`,
      });
  }
  return out;
}

/**
 * Liveness of Autopilot's own off-ramp moves: once the world has run its course, every open task the state
 * records as failed, timed out, blocked or needing a human shows that status, whatever writes were lost on the
 * way (a write held by a secondary limit and dropped with an Actions job, one half done by a 5xx): a task that
 * failed for good is not back in the queue by Autopilot's hand. Statuses are read as the product reads them (the
 * first of its order among the labels), so a person's ready label beside the off-ramp's is no violation; a skip
 * (the exclude label) and an epic are not judged. The pool statuses are not judged: the state records `ready` for
 * an epic's unlabeled sub-issues, and an outcome handled on a task already showing it leaves the record's label
 * as it was (seed 378 in Actions mode: labeled failed, recorded in progress).
 */
const OFF_RAMPS = new Set(["failed", "timeout", "blocked", "needs-human"]);

export function labelsFollowTheState(o: SimObservation, state: DashboardState | null): Violation[] {
  if (!state) return [];
  const out: Violation[] = [];
  const names = DEFAULT_CONFIG.labels;
  for (const [key, record] of Object.entries(state.tasks)) {
    const issue = o.store.getIssue(o.repo, Number(key));
    if (!issue || issue.pull || issue.state !== "open" || issue.subIssues.length > 0) continue;
    if (!record.label || !OFF_RAMPS.has(record.label)) continue;
    const labels = issue.labels.map(String);
    const shown = taskStatusFromLabels({ state: "open", labels }, names);
    if (shown === "skipped" || shown === record.label) continue;
    out.push({
      invariant: "labelsFollowTheState",
      atSeconds: o.elapsed(),
      detail: `#${key} is labeled ${shown ?? "with no state label"}; Autopilot's state says ${record.label}`,
    });
  }
  return out;
}

/**
 * One dashboard: once the world has run its course, at most one open issue of Autopilot's carries the tracking
 * marker (two would split the people's commands between them, and only one is read).
 */
export function oneTrackingIssue(o: SimObservation): Violation[] {
  const open = o.store
    .listIssues(o.repo)
    .filter(
      (i) =>
        !i.pull &&
        i.state === "open" &&
        i.user.toLowerCase() === o.bot.toLowerCase() &&
        (i.body ?? "").includes(TRACKING_MARKER),
    )
    .map((i) => `#${i.number}`);
  return open.length > 1
    ? [
        {
          invariant: "oneTrackingIssue",
          atSeconds: o.elapsed(),
          detail: `${open.length} open tracking issues: ${open.join(", ")}`,
        },
      ]
    : [];
}
