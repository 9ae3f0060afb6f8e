/**
 * Every GitHub call the worker makes, behind one small interface so the worker's loop can be tested with a fake.
 * Lists are paginated; permissions are cached per login for the run; repeated reads are conditional (a 304 is
 * free); every request is counted.
 */
import type { Permission } from "../core/world.js";
import { sendReadsConditionally } from "./conditional-reads.js";
import type { AutopilotOctokit } from "./octokit.js";
import { MOVE_LABELS_MUTATION } from "./queries.js";

export interface WorkerIssue {
  number: number;
  title: string;
  body: string;
  state: "open" | "closed";
  labels: string[];
  author: string | null;
}

export interface WorkerComment {
  id: number;
  author: string | null;
  /** "User", "Bot", "Organization"… */
  authorType: string | null;
  /** The author's account id (REST `user.id`): whose comment it is, which a login cannot fake. */
  authorId: number | null;
  body: string;
  createdAt: string;
  updatedAt: string;
}

export interface WorkerPull {
  number: number;
  title: string;
  body: string;
  state: "open" | "closed";
  headRef: string;
  headSha: string;
  baseRef: string;
  labels: string[];
  url: string;
}

export interface FailingCheck {
  name: string;
  conclusion: string;
  title: string | null;
  summary: string | null;
  text: string | null;
  url: string | null;
}

export interface ReviewFeedback {
  kind: "review" | "review_comment";
  author: string | null;
  authorType: string | null;
  state: string | null;
  body: string;
  path: string | null;
  line: number | null;
  createdAt: string;
}

export interface WorkerGitHub {
  getIssue(issue: number): Promise<WorkerIssue>;
  listIssueComments(issue: number): Promise<WorkerComment[]>;
  /** null when the comment no longer exists. */
  getComment(commentId: number): Promise<WorkerComment | null>;
  createComment(issue: number, body: string): Promise<WorkerComment>;
  /** Not sent when the comment already has this text (as this client last read or wrote it). */
  updateComment(commentId: number, body: string): Promise<void>;
  deleteComment(commentId: number): Promise<void>;
  /** A login's permission on the repository ("none" for strangers); cached. */
  getPermission(login: string): Promise<Permission>;
  /** The body of an issue (the tracking issue), in one request; null when it does not exist. */
  getIssueBody(issue: number): Promise<string | null>;
  /** The open PR whose head is `branch` in this repository. */
  findOpenPull(branch: string): Promise<WorkerPull | null>;
  createPull(input: { title: string; body: string; head: string; base: string }): Promise<WorkerPull>;
  updatePull(pr: number, input: { title?: string; body?: string }): Promise<void>;
  addLabels(issue: number, labels: string[]): Promise<void>;
  /** Removes a label; absent labels are fine. */
  removeLabel(issue: number, label: string): Promise<void>;
  /**
   * Adds `add` and then removes `remove` (a state transition). One GraphQL request when the client has seen the
   * node ids it needs in earlier answers (the issue's, both labels'), else `addLabels` then `removeLabel`. Either
   * way only these two labels change: one a person added meanwhile stays.
   */
  moveLabel(issue: number, add: string, remove: string): Promise<void>;
  /** Failing check runs and commit statuses of a commit. */
  listFailingChecks(ref: string): Promise<FailingCheck[]>;
  /** Reviews with a body and inline review comments of a PR, oldest first. */
  listReviewFeedback(pr: number): Promise<ReviewFeedback[]>;
  getDefaultBranch(): Promise<string>;
  /**
   * The account id of the token's own identity (GraphQL `viewer.databaseId`, which installation tokens may
   * read where REST `GET /user` is refused); null when GitHub does not say. Asked once per run.
   */
  getSelfId(): Promise<number | null>;
  /**
   * The token's own account, id and login, from the same one query as `getSelfId` (the commit author when the
   * workflow names none: the App's bot user, without a `GET /users/{bot}` per job).
   */
  getSelf(): Promise<{ id: number | null; login: string | null }>;
  /** Requests made so far. */
  readonly requestCount: number;
}

const FAILING = new Set(["failure", "timed_out", "action_required", "startup_failure", "stale"]);

function status(error: unknown): number | undefined {
  return typeof error === "object" && error !== null && "status" in error
    ? Number((error as { status: unknown }).status)
    : undefined;
}

/** Node ids in REST answers, kept so a label transition can go in one GraphQL request. */
function rememberLabelIds(labels: unknown[], into: Map<string, string>): void {
  for (const label of labels) {
    if (typeof label !== "object" || label === null) continue;
    const { name, node_id: id } = label as { name?: unknown; node_id?: unknown };
    if (typeof name === "string" && typeof id === "string" && id) into.set(name, id);
  }
}

function labelNames(labels: unknown[]): string[] {
  return labels
    .map((label) => (typeof label === "string" ? label : (label as { name?: string }).name))
    .filter((name): name is string => typeof name === "string");
}

export interface WorkerClientOptions {
  owner: string;
  repo: string;
}

export function createWorkerGitHubClient(
  octokit: AutopilotOctokit,
  options: WorkerClientOptions,
): WorkerGitHub {
  const { owner, repo } = options;
  const permissions = new Map<string, Permission>();
  let self: Promise<{ id: number | null; login: string | null }> | null = null;
  const issueNodeIds = new Map<number, string>();
  /** Each comment's body as last read or written: an edit to the same text is not sent. */
  const commentBodies = new Map<number, string>();
  const seen = (comment: WorkerComment): WorkerComment => {
    commentBodies.set(comment.id, comment.body);
    return comment;
  };
  const labelIds = new Map<string, string>();
  let requests = 0;
  octokit.hook.before("request", () => {
    requests++;
  });
  // The task issue, the tracking issue (the session status between iterations) and the comment listings are
  // read again and again: asked with their ETag, an unchanged one costs nothing (src/github/conditional-reads.ts).
  sendReadsConditionally(octokit);

  const toComment = (data: {
    id: number;
    user?: { login: string; type?: string; id?: number } | null;
    body?: string | null;
    created_at: string;
    updated_at: string;
  }): WorkerComment => ({
    id: data.id,
    author: data.user?.login ?? null,
    authorType: data.user?.type ?? null,
    authorId: typeof data.user?.id === "number" ? data.user.id : null,
    body: data.body ?? "",
    createdAt: data.created_at,
    updatedAt: data.updated_at,
  });

  const toPull = (data: {
    number: number;
    title: string;
    body?: string | null;
    state: string;
    head: { ref: string; sha: string };
    base: { ref: string };
    labels: unknown[];
    html_url: string;
  }): WorkerPull => ({
    number: data.number,
    title: data.title,
    body: data.body ?? "",
    state: data.state === "open" ? "open" : "closed",
    headRef: data.head.ref,
    headSha: data.head.sha,
    baseRef: data.base.ref,
    labels: labelNames(data.labels),
    url: data.html_url,
  });

  const getSelf = () => {
    self ??= octokit
      .graphql<{ viewer?: { databaseId?: number | null; login?: string | null } | null }>(
        "query AutopilotWorkerViewer { viewer { databaseId login } }",
      )
      .then((data) => ({
        id: typeof data.viewer?.databaseId === "number" ? data.viewer.databaseId : null,
        login: typeof data.viewer?.login === "string" && data.viewer.login ? data.viewer.login : null,
      }));
    return self;
  };

  return {
    get requestCount() {
      return requests;
    },

    async getIssue(issue) {
      const { data } = await octokit.rest.issues.get({ owner, repo, issue_number: issue });
      if (data.node_id) issueNodeIds.set(data.number, data.node_id);
      rememberLabelIds(data.labels as unknown[], labelIds);
      return {
        number: data.number,
        title: data.title,
        body: data.body ?? "",
        state: data.state === "closed" ? "closed" : "open",
        labels: labelNames(data.labels as unknown[]),
        author: data.user?.login ?? null,
      };
    },

    async listIssueComments(issue) {
      const data = await octokit.paginate(octokit.rest.issues.listComments, {
        owner,
        repo,
        issue_number: issue,
        per_page: 100,
      });
      return data.map((c) => seen(toComment(c)));
    },

    async getComment(commentId) {
      try {
        const { data } = await octokit.rest.issues.getComment({ owner, repo, comment_id: commentId });
        return seen(toComment(data));
      } catch (error) {
        if (status(error) === 404) return null;
        throw error;
      }
    },

    async createComment(issue, body) {
      const { data } = await octokit.rest.issues.createComment({ owner, repo, issue_number: issue, body });
      return seen(toComment(data));
    },

    async updateComment(commentId, body) {
      if (commentBodies.get(commentId) === body) return;
      await octokit.rest.issues.updateComment({ owner, repo, comment_id: commentId, body });
      commentBodies.set(commentId, body);
    },

    async deleteComment(commentId) {
      try {
        commentBodies.delete(commentId);
        await octokit.rest.issues.deleteComment({ owner, repo, comment_id: commentId });
      } catch (error) {
        if (status(error) !== 404) throw error;
      }
    },

    async getPermission(login) {
      const cached = permissions.get(login);
      if (cached) return cached;
      let permission: Permission = "none";
      try {
        const { data } = await octokit.rest.repos.getCollaboratorPermissionLevel({
          owner,
          repo,
          username: login,
        });
        const role = (data as { role_name?: string }).role_name;
        const known: Permission[] = ["admin", "maintain", "write", "triage", "read", "none"];
        permission = known.includes(role as Permission)
          ? (role as Permission)
          : known.includes(data.permission as Permission)
            ? (data.permission as Permission)
            : "none";
      } catch (error) {
        if (status(error) !== 404 && status(error) !== 403) throw error;
      }
      permissions.set(login, permission);
      return permission;
    },

    async getIssueBody(issue) {
      try {
        const { data } = await octokit.rest.issues.get({ owner, repo, issue_number: issue });
        return data.body ?? "";
      } catch (error) {
        if (status(error) === 404 || status(error) === 410) return null;
        throw error;
      }
    },

    async findOpenPull(branch) {
      const data = await octokit.paginate(octokit.rest.pulls.list, {
        owner,
        repo,
        state: "open",
        head: `${owner}:${branch}`,
        per_page: 100,
      });
      const match = data.find((pull) => pull.head.ref === branch);
      return match ? toPull(match) : null;
    },

    async createPull(input) {
      const { data } = await octokit.rest.pulls.create({ owner, repo, ...input });
      return toPull(data);
    },

    async updatePull(pr, input) {
      await octokit.rest.pulls.update({ owner, repo, pull_number: pr, ...input });
    },

    async addLabels(issue, labels) {
      if (labels.length === 0) return;
      const { data } = await octokit.rest.issues.addLabels({ owner, repo, issue_number: issue, labels });
      rememberLabelIds(data as unknown[], labelIds);
    },

    async moveLabel(issue, add, remove) {
      const issueId = issueNodeIds.get(issue);
      const addId = labelIds.get(add);
      const removeId = labelIds.get(remove);
      if (issueId && addId && removeId) {
        await octokit.graphql(MOVE_LABELS_MUTATION, { issue: issueId, add: [addId], remove: [removeId] });
        return;
      }
      const { data } = await octokit.rest.issues.addLabels({
        owner,
        repo,
        issue_number: issue,
        labels: [add],
      });
      rememberLabelIds(data as unknown[], labelIds);
      try {
        await octokit.rest.issues.removeLabel({ owner, repo, issue_number: issue, name: remove });
      } catch (error) {
        if (status(error) !== 404) throw error;
      }
    },

    async removeLabel(issue, label) {
      try {
        await octokit.rest.issues.removeLabel({ owner, repo, issue_number: issue, name: label });
      } catch (error) {
        if (status(error) !== 404) throw error;
      }
    },

    async listFailingChecks(ref) {
      const failing: FailingCheck[] = [];
      const runs = await octokit.paginate(octokit.rest.checks.listForRef, {
        owner,
        repo,
        ref,
        filter: "latest",
        per_page: 100,
      });
      for (const run of runs) {
        if (run.status !== "completed" || !run.conclusion || !FAILING.has(run.conclusion)) continue;
        failing.push({
          name: run.name,
          conclusion: run.conclusion,
          title: run.output?.title ?? null,
          summary: run.output?.summary ?? null,
          text: run.output?.text ?? null,
          url: run.html_url ?? run.details_url ?? null,
        });
      }
      const { data: combined } = await octokit.rest.repos.getCombinedStatusForRef({
        owner,
        repo,
        ref,
        per_page: 100,
      });
      for (const item of combined.statuses) {
        if (item.state !== "failure" && item.state !== "error") continue;
        failing.push({
          name: item.context,
          conclusion: item.state,
          title: null,
          summary: item.description ?? null,
          text: null,
          url: item.target_url ?? null,
        });
      }
      return failing;
    },

    async listReviewFeedback(pr) {
      const [reviews, comments] = await Promise.all([
        octokit.paginate(octokit.rest.pulls.listReviews, { owner, repo, pull_number: pr, per_page: 100 }),
        octokit.paginate(octokit.rest.pulls.listReviewComments, {
          owner,
          repo,
          pull_number: pr,
          per_page: 100,
        }),
      ]);
      const feedback: ReviewFeedback[] = [];
      for (const review of reviews) {
        if (!review.body?.trim()) continue;
        feedback.push({
          kind: "review",
          author: review.user?.login ?? null,
          authorType: review.user?.type ?? null,
          state: review.state ?? null,
          body: review.body,
          path: null,
          line: null,
          createdAt: review.submitted_at ?? "",
        });
      }
      for (const comment of comments) {
        feedback.push({
          kind: "review_comment",
          author: comment.user?.login ?? null,
          authorType: comment.user?.type ?? null,
          state: null,
          body: comment.body,
          path: comment.path ?? null,
          line: comment.line ?? comment.original_line ?? null,
          createdAt: comment.created_at,
        });
      }
      return feedback.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
    },

    getSelf,

    async getSelfId() {
      return (await getSelf()).id;
    },

    async getDefaultBranch() {
      const { data } = await octokit.rest.repos.get({ owner, repo });
      return data.default_branch;
    },
  };
}
