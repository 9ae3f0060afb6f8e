/**
 * Every GitHub call the worker makes, behind one small interface so the worker's loop can be tested with a fake.
 * Lists are paginated; permissions are cached per login for the run; every request is counted.
 */
import type { Permission } from "../core/world.js";
import type { AutopilotOctokit } from "./octokit.js";

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
  /** Requests made so far. */
  readonly requestCount: number;
}

const FAILING = new Set(["failure", "timed_out", "action_required", "startup_failure", "stale"]);

function status(error: unknown): number | undefined {
  return typeof error === "object" && error !== null && "status" in error
    ? Number((error as { status: unknown }).status)
    : undefined;
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
  let selfId: Promise<number | null> | null = null;
  let requests = 0;
  octokit.hook.before("request", () => {
    requests++;
  });

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

  return {
    get requestCount() {
      return requests;
    },

    async getIssue(issue) {
      const { data } = await octokit.rest.issues.get({ owner, repo, issue_number: issue });
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
      return data.map(toComment);
    },

    async getComment(commentId) {
      try {
        const { data } = await octokit.rest.issues.getComment({ owner, repo, comment_id: commentId });
        return toComment(data);
      } catch (error) {
        if (status(error) === 404) return null;
        throw error;
      }
    },

    async createComment(issue, body) {
      const { data } = await octokit.rest.issues.createComment({ owner, repo, issue_number: issue, body });
      return toComment(data);
    },

    async updateComment(commentId, body) {
      await octokit.rest.issues.updateComment({ owner, repo, comment_id: commentId, body });
    },

    async deleteComment(commentId) {
      try {
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
      await octokit.rest.issues.addLabels({ owner, repo, issue_number: issue, labels });
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

    getSelfId() {
      selfId ??= octokit
        .graphql<{ viewer?: { databaseId?: number | null } | null }>(
          "query AutopilotWorkerViewer { viewer { databaseId } }",
        )
        .then((data) => (typeof data.viewer?.databaseId === "number" ? data.viewer.databaseId : null));
      return selfId;
    },

    async getDefaultBranch() {
      const { data } = await octokit.rest.repos.get({ owner, repo });
      return data.default_branch;
    },
  };
}
