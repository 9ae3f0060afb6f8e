/**
 * Turning the nodes of GitHub's GraphQL answers into the world objects the core decides on
 * (src/core/world.ts): issues, comments, worker results, pull requests and their checks.
 */
import { foreignStatusLabels, logSafe } from "../../core/tasks/authorship.js";
import { sameLogin } from "../../core/tasks/commands.js";
import { mentionsWorkerResult } from "../../core/contract.js";
import { parseMergeRefusal } from "../../core/gates/merge-refusal.js";
import type { TextEdit } from "../../core/tasks/task-text.js";
import { parseWorkerResult, type WorkerAgent, type WorkerResult } from "../../core/tasks/worker-result.js";
import type { CheckNode, CommentNode, IssueNode, PullNode, ReviewNode } from "../../core/world.js";
import type { GatewayLog } from "../transport/octokit-surface.js";
import type { SnapshotSettings } from "./snapshot-context.js";
import {
  compact,
  type GqlComment,
  type GqlContext,
  type GqlIssue,
  type GqlPull,
  type Login,
} from "./snapshot-response.js";

export /** Autopilot's own account wrote it: GitHub says the viewer did, or names the viewer's account id. */
function byApp(author: Login | null | undefined, viewerDidAuthor: boolean | undefined, appId: number | null) {
  if (viewerDidAuthor === true) return true;
  return appId !== null && author?.__typename === "Bot" && author.databaseId === appId;
}

function lower<T extends string>(value: string | null | undefined): T | null {
  return value ? (value.toLowerCase() as T) : null;
}

export function stub(number: number, title: string, state: string, createdAt = ""): IssueNode {
  return {
    number,
    title,
    body: "",
    state: state === "CLOSED" ? "closed" : "open",
    labels: [],
    createdAt,
    author: null,
  };
}

export function toIssueNode(
  node: GqlIssue,
  readyLabel: string,
  trust?: { appId: number | null; settings: SnapshotSettings },
): IssueNode {
  const labels = compact(node.labels?.nodes).map((l) => l.name);
  const readyEvents = compact(node.timelineItems?.nodes).filter((e) => e.label?.name === readyLabel);
  const lastReady = readyEvents[readyEvents.length - 1];
  const issue: IssueNode = {
    number: node.number,
    title: node.title,
    body: node.body ?? "",
    state: node.state === "CLOSED" ? "closed" : "open",
    stateReason: lower<NonNullable<IssueNode["stateReason"]>>(node.stateReason),
    labels,
    createdAt: node.createdAt,
    closedAt: node.closedAt ?? null,
    author: node.author?.login ?? null,
    isPullRequest: false,
  };
  if (node.timelineItems) {
    issue.readyLabeledBy = lastReady?.actor?.login ?? null;
    issue.readyLabeledAt = lastReady?.createdAt ?? null;
    const bestOf = trust?.settings.bestOfLabel;
    if (bestOf && labels.includes(bestOf)) {
      const events = compact(node.timelineItems.nodes).filter((e) => e.label?.name === bestOf);
      issue.bestOfLabeledBy = events[events.length - 1]?.actor?.login ?? null;
    }
  }
  if (trust && node.timelineItems) {
    const events = compact(node.timelineItems.nodes).flatMap((e) =>
      e.label && e.createdAt
        ? [
            {
              label: e.label.name,
              at: e.createdAt,
              by: e.actor?.login ?? null,
              byApp: byApp(e.actor, undefined, trust.appId),
            },
          ]
        : [],
    );
    const statusLabels = trust.settings.poolLabels.filter((l) => l !== trust.settings.readyLabel);
    const foreign = foreignStatusLabels({ labels, statusLabels, events });
    if (foreign.length) issue.foreignLabels = foreign;
  }
  if (node.userContentEdits || node.renames || node.lastEditedAt !== undefined) issue.edits = textEdits(node);
  if (node.parent !== undefined) issue.parent = node.parent?.number ?? null;
  if (node.subIssues) issue.subIssues = compact(node.subIssues.nodes).map((s) => s.number);
  if (node.blockedBy) issue.blockedBy = compact(node.blockedBy.nodes).map((b) => b.number);
  return issue;
}

/**
 * Who edited the body and the title, oldest first. The ten newest body edits are read (GitHub lists them
 * newest first), and GitHub also lists the original text among the content edits
 * once an issue has been edited (its time is the creation time, not after any label), and names the last
 * editor on the issue itself; both are read, so an edit is seen even when the history is cut.
 */
function textEdits(node: GqlIssue): TextEdit[] {
  const edits: TextEdit[] = [];
  for (const e of compact(node.userContentEdits?.nodes))
    edits.push({ at: e.editedAt, by: e.editor?.login ?? null, what: "body" });
  if (node.lastEditedAt && !edits.some((e) => e.at === node.lastEditedAt))
    edits.push({ at: node.lastEditedAt, by: node.editor?.login ?? null, what: "body" });
  for (const r of compact(node.renames?.nodes))
    if (r.createdAt) edits.push({ at: r.createdAt, by: r.actor?.login ?? null, what: "title" });
  return edits.sort((a, b) => a.at.localeCompare(b.at));
}

function isBotLogin(author: Login | null | undefined, botLogin: string): boolean {
  if (!author?.login) return false;
  const login = author.login.toLowerCase();
  return (
    author.__typename === "Bot" ||
    login.endsWith("[bot]") ||
    login === botLogin.toLowerCase() ||
    `${login}[bot]` === botLogin.toLowerCase()
  );
}

export function toComment(
  c: GqlComment,
  issue: number,
  botLogin: string,
  appId: number | null = null,
): CommentNode | null {
  if (c.databaseId === null || c.databaseId === undefined) return null;
  return {
    id: c.databaseId,
    ...(c.id ? { nodeId: c.id } : {}),
    issue,
    author: c.author?.login ?? null,
    authorIsBot: isBotLogin(c.author, botLogin) || Boolean(c.viewerDidAuthor),
    fromApp: byApp(c.author, c.viewerDidAuthor, appId),
    body: c.body,
    createdAt: c.createdAt,
    // Unknown when the query did not ask for the reactions: never read as "not acknowledged" (owed-reactions.ts
    // would give a reaction again on every reconcile).
    ...(c.reactionGroups ? { acknowledged: c.reactionGroups.some((g) => g.viewerHasReacted) } : {}),
  };
}

/**
 * The newest worker result per task issue, from Autopilot's own comments only: a marker in anyone else's
 * comment (a person's, another bot's) is reported, capped and escaped, and ignored. `resultComments` names,
 * per task issue, the node id of the comment its chosen result came from (when GitHub gave one).
 */
export function latestWorkerResults(
  comments: CommentNode[],
  log?: GatewayLog,
): {
  results: WorkerResult[];
  resultComments: Record<number, string>;
  agents: Record<number, WorkerAgent>;
} {
  const best = new Map<number, { result: WorkerResult; nodeId: string | undefined }>();
  for (const c of comments) {
    if (!mentionsWorkerResult(c.body)) continue;
    if (!c.fromApp) {
      log?.warn(
        `ignoring a worker-result marker in comment ${c.id} on #${c.issue} by ${logSafe(c.author ?? "unknown", 60)} (not Autopilot): ${logSafe(c.body)}`,
      );
      continue;
    }
    const result = parseWorkerResult(c.body);
    if (!result || result.issue !== c.issue) continue;
    const previous = best.get(result.issue)?.result;
    if (
      !previous ||
      result.attempt > previous.attempt ||
      (result.attempt === previous.attempt && result.updatedAt > previous.updatedAt)
    ) {
      best.set(result.issue, { result, nodeId: c.nodeId });
    }
  }
  const chosen = [...best.values()].sort((a, b) => a.result.issue - b.result.issue);
  return {
    results: chosen.map((c) => c.result),
    resultComments: Object.fromEntries(
      chosen.flatMap((c) => (c.nodeId ? [[c.result.issue, c.nodeId] as const] : [])),
    ),
    agents: Object.fromEntries(
      chosen.flatMap((c) => {
        const agent = c.result.agent;
        return agent ? [[c.result.issue, agent] as const] : [];
      }),
    ),
  };
}

/** Autopilot's own comment carrying a worker result for the issue it is on. */
export function isAppResultComment(c: GqlComment, issue: number, appId: number | null): boolean {
  if (!mentionsWorkerResult(c.body) || !byApp(c.author, c.viewerDidAuthor, appId)) return false;
  return parseWorkerResult(c.body)?.issue === issue;
}

const CHECK_STATUSES = new Set(["queued", "in_progress", "completed", "waiting", "pending", "requested"]);

function toCheck(c: GqlContext): CheckNode | null {
  if (c.__typename === "CheckRun") {
    const status = (c.status ?? "").toLowerCase();
    return {
      name: c.name ?? "",
      status: (CHECK_STATUSES.has(status) ? status : "queued") as CheckNode["status"],
      conclusion: lower(c.conclusion),
      app: c.checkSuite?.app?.slug ?? null,
      summary: c.summary ?? null,
      url: c.detailsUrl ?? null,
    };
  }
  if (c.__typename === "StatusContext") {
    const state = (c.state ?? "").toUpperCase();
    const pending = state === "PENDING" || state === "EXPECTED";
    return {
      name: c.context ?? "",
      status: pending ? "pending" : "completed",
      conclusion: pending ? null : state === "SUCCESS" ? "success" : state === "ERROR" ? "error" : "failure",
      app: "status",
      summary: c.description ?? null,
      url: c.targetUrl ?? null,
    };
  }
  return null;
}

export function toPullNode(p: GqlPull, botLogin: string): PullNode {
  const head = compact(p.commits?.nodes)[0]?.commit;
  const reviews: ReviewNode[] = compact(p.reviews?.nodes).map((r) => ({
    author: r.author?.login ?? null,
    state: r.state as ReviewNode["state"],
    submittedAt: r.submittedAt,
    commitSha: r.commit?.oid ?? null,
    body: r.body,
  }));
  const reviewComments: NonNullable<PullNode["reviewComments"]> = [];
  const openThreads: NonNullable<PullNode["openThreads"]> = [];
  for (const thread of compact(p.reviewThreads?.nodes)) {
    if (thread.isResolved) continue;
    const comments = compact(thread.comments?.nodes);
    for (const c of comments) {
      reviewComments.push({
        author: c.author?.login ?? null,
        body: c.body,
        path: c.path,
        createdAt: c.createdAt,
      });
    }
    if (comments.length > 0)
      openThreads.push({
        path: comments[0]!.path ?? null,
        comments: comments
          .map((c) => ({ author: c.author?.login ?? null, body: c.body, createdAt: c.createdAt }))
          .sort((a, b) => a.createdAt.localeCompare(b.createdAt)),
      });
  }
  // Autopilot's own refusal comment (src/core/gates/merge-refusal.ts), the latest one: only its own account's
  // (another App's bot could copy the marker).
  let mergeRefusal: PullNode["mergeRefusal"] = null;
  for (const c of compact(p.comments?.nodes)) {
    if (isBotLogin(c.author, botLogin)) {
      const own = sameLogin(c.author?.login ?? null, botLogin);
      const refusal = own ? parseMergeRefusal(c.body) : null;
      if (refusal && c.databaseId) mergeRefusal = { commentId: c.databaseId, ...refusal };
      continue;
    }
    reviewComments.push({
      author: c.author?.login ?? null,
      body: c.body,
      path: null,
      createdAt: c.createdAt,
    });
  }
  reviewComments.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  const mergeable = p.mergeable === "MERGEABLE" || p.mergeable === "CONFLICTING" ? p.mergeable : "UNKNOWN";
  return {
    number: p.number,
    title: p.title,
    body: p.body ?? "",
    headRef: p.headRefName,
    headSha: p.headRefOid,
    ...(p.headRef !== undefined ? { headBranchExists: p.headRef !== null } : {}),
    baseRef: p.baseRefName,
    state: p.state === "MERGED" ? "merged" : p.state === "CLOSED" ? "closed" : "open",
    mergeable,
    labels: compact(p.labels?.nodes).map((l) => l.name),
    createdAt: p.createdAt,
    lastPushAt: head?.committedDate ?? null,
    // Checks count only for the head SHA (they are read from the last commit, which a push can change).
    checks: (head && head.oid !== p.headRefOid ? [] : compact(head?.statusCheckRollup?.contexts?.nodes))
      .map(toCheck)
      .filter((c): c is CheckNode => c !== null),
    reviews,
    reviewComments,
    openThreads,
    mergeRefusal,
    ...pullTrustFacts(p),
    ...mergeFacts(p),
  };
}

/**
 * Where GitHub's own merge mechanisms stand (auto-merge on, a merge-queue entry, the merge state), so a fresh
 * controller process knows without memory; absent fields (an older server, a closed-PR listing) stay absent.
 */
function mergeFacts(p: GqlPull): Partial<PullNode> {
  return {
    ...(p.id ? { nodeId: p.id } : {}),
    ...(p.mergeStateStatus !== undefined ? { mergeState: p.mergeStateStatus } : {}),
    ...(p.autoMergeRequest !== undefined
      ? {
          autoMerge: p.autoMergeRequest
            ? {
                enabledBy: p.autoMergeRequest.enabledBy?.login ?? null,
                method: p.autoMergeRequest.mergeMethod ?? null,
              }
            : null,
        }
      : {}),
    ...(p.mergeQueueEntry !== undefined
      ? {
          mergeQueue: p.mergeQueueEntry
            ? { position: p.mergeQueueEntry.position ?? null, state: p.mergeQueueEntry.state ?? null }
            : null,
        }
      : {}),
  };
}

/** Who opened the PR and from where (src/core/gates/pull-trust.ts); absent fields stay absent. */
function pullTrustFacts(p: GqlPull): Partial<PullNode> {
  return {
    ...(p.baseRefOid ? { baseSha: p.baseRefOid } : {}),
    ...(p.isCrossRepository !== undefined ? { isCrossRepository: p.isCrossRepository } : {}),
    ...(p.headRepository !== undefined ? { headRepository: p.headRepository?.nameWithOwner ?? null } : {}),
    ...(p.author !== undefined
      ? { author: p.author?.login ?? null, authorId: p.author?.databaseId ?? null }
      : {}),
  };
}
