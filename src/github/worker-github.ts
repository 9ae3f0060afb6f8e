/**
 * Every GitHub call the worker makes, behind one small interface so the worker's loop can be tested with a fake.
 * Lists are paginated; permissions are cached per login for the run; repeated reads are conditional (a 304 is
 * free); every request is counted.
 */
import {
  type FailingCheck,
  type GraphqlClaim,
  type GraphqlLabel,
  type GraphqlTask,
  labelNames,
  rememberGraphqlLabels,
  rememberLabelIds,
  type RestPull,
  type ReviewFeedback,
  restComment,
  selfFrom,
  status,
  type WorkerComment,
  type WorkerIssue,
  type WorkerPull,
  wholePage,
} from "./worker-github-data.js";
import type { Permission } from "../core/world.js";
import { listFailingChecks, listReviewFeedback } from "./pull-feedback-reads.js";
import { createPullReview, type ReviewToPost } from "./pull-review-write.js";
import { sendReadsConditionally } from "./transport/conditional-reads.js";
import { isNotCollaborator } from "./transport/errors.js";
import type { AutopilotOctokit } from "./transport/octokit.js";
import { MOVE_LABELS_MUTATION } from "./queries.js";
import { LABEL_FOR_REVIEW_MUTATION, WORKER_CLAIM_QUERY, workerTaskQuery } from "./worker-queries.js";

export interface WorkerGitHub {
  getIssue(issue: number): Promise<WorkerIssue>;
  listIssueComments(issue: number): Promise<WorkerComment[]>;
  /**
   * The comments of an issue or pull request created or edited at or after `since` (REST `since`), all pages.
   * Asked again with the same `since`, an unchanged listing is a 304 and costs nothing.
   */
  listCommentsSince(issue: number, since: string): Promise<WorkerComment[]>;
  /** Reacts to an issue comment (a second identical reaction is GitHub's no-op: 200 with the existing one). */
  reactToComment(commentId: number, content: "eyes"): Promise<void>;
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
  /** The reviewer's verdict as a review of `pr` at `review.commitId`, with line comments (pull-review-write.ts). */
  postReview(pr: number, review: ReviewToPost): Promise<void>;
  addLabels(issue: number, labels: string[]): Promise<void>;
  /** Removes a label; absent labels are fine. */
  removeLabel(issue: number, label: string): Promise<void>;
  /**
   * Adds `add` and then removes `remove` (a state transition). One GraphQL request when the client has seen the
   * node ids it needs in earlier answers (the issue's, both labels'), else `addLabels` then `removeLabel`. Either
   * way only these two labels change: one a person added meanwhile stays.
   */
  moveLabel(issue: number, add: string, remove: string): Promise<void>;
  /**
   * The issue's comments (every one), as `listIssueComments`, and the token's own account (`getSelf`, when not
   * asked yet) in one GraphQL query: the claim's read. More than one page of comments: listed again through REST
   * (all pages). GitHub not answering the query: `listIssueComments`, and `getSelf` asks on its own.
   */
  listIssueCommentsAndSelf(issue: number): Promise<WorkerComment[]>;
  /**
   * The issue's comments (every one) and the issue itself as they are now, in one GraphQL query; the node ids of
   * the issue and of `labels` (the state labels the worker moves the task to) are kept for `moveLabel` and
   * `labelForReview`. More than one page of comments: the comments are listed again through REST (all pages).
   * GitHub not answering the query: `listIssueComments`, as before, and `issue` is null (the caller reads it
   * with `getIssue` where it did before).
   */
  readIssueWithComments(
    issue: number,
    labels: string[],
  ): Promise<{ issue: WorkerIssue | null; comments: WorkerComment[] }>;
  /**
   * Labels PR `pr` with `add` and moves the issue from `remove` to `add`, in that order: one GraphQL mutation
   * when the node ids are known (the PR's from `createPull`/`findOpenPull`, the others from earlier answers),
   * else `addLabels` then `moveLabel`.
   */
  labelForReview(pr: number, issue: number, add: string, remove: string): Promise<void>;
  /**
   * The issue as `getIssue` reads it, through the same one GraphQL query as `readIssueWithComments` without the
   * comments, learning the same node ids; not answered, `getIssue`.
   */
  readIssueAndLabels(issue: number, labels: string[]): Promise<WorkerIssue>;
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

interface WorkerGitHubOptions {
  owner: string;
  repo: string;
}

export function createWorkerGitHub(octokit: AutopilotOctokit, options: WorkerGitHubOptions): WorkerGitHub {
  return new OctokitWorkerGitHub(octokit, options);
}

/**
 * One job's client for one repository. What it learns on the way is kept for the rest of the job: permissions
 * per login, the token's own account, and the node ids (issues', pull requests', labels') that let a label
 * transition go in one GraphQL request.
 */
class OctokitWorkerGitHub implements WorkerGitHub {
  private readonly owner: string;
  private readonly repo: string;
  private readonly permissions = new Map<string, Permission>();
  private self: Promise<{ id: number | null; login: string | null }> | null = null;
  private readonly issueNodeIds = new Map<number, string>();
  /** PR node ids (REST `node_id`, GraphQL `id`), by number: a review transition labels the PR in the same call. */
  private readonly pullNodeIds = new Map<number, string>();
  private readonly labelIds = new Map<string, string>();
  private requests = 0;
  /** GitHub refused the task query once: the job's later reads go REST's way without asking again. */
  private taskQueryRefused = false;

  constructor(
    private readonly octokit: AutopilotOctokit,
    options: WorkerGitHubOptions,
  ) {
    this.owner = options.owner;
    this.repo = options.repo;
    octokit.hook.before("request", () => {
      this.requests++;
    });
    // The task issue, the tracking issue (the session status between iterations) and the comment listings are
    // read again and again: asked with their ETag, an unchanged one costs nothing (src/github/transport/conditional-reads.ts).
    sendReadsConditionally(octokit);
  }

  get requestCount(): number {
    return this.requests;
  }

  getSelf(): Promise<{ id: number | null; login: string | null }> {
    this.self ??= this.octokit
      .graphql<{ viewer?: { databaseId?: number | null; login?: string | null } | null }>(
        "query AutopilotWorkerViewer { viewer { databaseId login } }",
      )
      .then((data) => selfFrom(data.viewer));
    return this.self;
  }

  async getSelfId(): Promise<number | null> {
    return (await this.getSelf()).id;
  }

  async getIssue(issue: number): Promise<WorkerIssue> {
    const { owner, repo } = this;
    const { data } = await this.octokit.rest.issues.get({ owner, repo, issue_number: issue });
    if (data.node_id) this.issueNodeIds.set(data.number, data.node_id);
    rememberLabelIds(data.labels as unknown[], this.labelIds);
    return {
      number: data.number,
      title: data.title,
      body: data.body ?? "",
      state: data.state === "closed" ? "closed" : "open",
      labels: labelNames(data.labels as unknown[]),
      author: data.user?.login ?? null,
    };
  }

  async getIssueBody(issue: number): Promise<string | null> {
    const { owner, repo } = this;
    try {
      const { data } = await this.octokit.rest.issues.get({ owner, repo, issue_number: issue });
      return data.body ?? "";
    } catch (error) {
      if (status(error) === 404 || status(error) === 410) return null;
      throw error;
    }
  }

  async listIssueComments(issue: number): Promise<WorkerComment[]> {
    const { owner, repo } = this;
    const data = await this.octokit.paginate(this.octokit.rest.issues.listComments, {
      owner,
      repo,
      issue_number: issue,
      per_page: 100,
    });
    return data.map((c) => restComment(c));
  }

  async listIssueCommentsAndSelf(issue: number): Promise<WorkerComment[]> {
    let data: GraphqlClaim;
    try {
      data = await this.octokit.graphql<GraphqlClaim>(WORKER_CLAIM_QUERY, {
        owner: this.owner,
        name: this.repo,
        number: issue,
      });
    } catch {
      // Not answered: the REST listing, as before (`getSelf` then asks for the viewer on its own).
      return this.listIssueComments(issue);
    }
    if (data.viewer) this.self ??= Promise.resolve(selfFrom(data.viewer));
    // A check that needs every comment sees every comment: a longer thread is listed again in full.
    return wholePage(data.repository?.issue?.comments) ?? (await this.listIssueComments(issue));
  }

  async readIssueWithComments(
    issue: number,
    labels: string[],
  ): Promise<{ issue: WorkerIssue | null; comments: WorkerComment[] }> {
    const read = await this.readTask(issue, labels, true);
    return { issue: read.issue, comments: read.comments ?? (await this.listIssueComments(issue)) };
  }

  async readIssueAndLabels(issue: number, labels: string[]): Promise<WorkerIssue> {
    return (await this.readTask(issue, labels, false)).issue ?? (await this.getIssue(issue));
  }

  async getComment(commentId: number): Promise<WorkerComment | null> {
    const { owner, repo } = this;
    try {
      const { data } = await this.octokit.rest.issues.getComment({ owner, repo, comment_id: commentId });
      // Where it was given: the instructions of a command read by id depend on it (task-instructions.ts).
      const issue = /\/issues\/(\d+)$/.exec(data.issue_url ?? "")?.[1];
      return { ...restComment(data), ...(issue ? { issue: Number(issue) } : {}) };
    } catch (error) {
      if (status(error) === 404) return null;
      throw error;
    }
  }

  async createComment(issue: number, body: string): Promise<WorkerComment> {
    const { owner, repo } = this;
    const { data } = await this.octokit.rest.issues.createComment({ owner, repo, issue_number: issue, body });
    return restComment(data);
  }

  async updateComment(commentId: number, body: string): Promise<void> {
    const { owner, repo } = this;
    await this.octokit.rest.issues.updateComment({ owner, repo, comment_id: commentId, body });
  }

  async deleteComment(commentId: number): Promise<void> {
    const { owner, repo } = this;
    try {
      await this.octokit.rest.issues.deleteComment({ owner, repo, comment_id: commentId });
    } catch (error) {
      if (status(error) !== 404) throw error;
    }
  }

  async getPermission(login: string): Promise<Permission> {
    const cached = this.permissions.get(login);
    if (cached) return cached;
    let permission: Permission = "none";
    try {
      const { data } = await this.octokit.rest.repos.getCollaboratorPermissionLevel({
        owner: this.owner,
        repo: this.repo,
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
      // A rate limit's 403 is no answer about the login: thrown, and not cached (transport/errors.ts).
      if (!isNotCollaborator(error)) throw error;
    }
    this.permissions.set(login, permission);
    return permission;
  }

  async findOpenPull(branch: string): Promise<WorkerPull | null> {
    const { owner, repo } = this;
    const data = await this.octokit.paginate(this.octokit.rest.pulls.list, {
      owner,
      repo,
      state: "open",
      head: `${owner}:${branch}`,
      per_page: 100,
    });
    const match = data.find((pull) => pull.head.ref === branch);
    return match ? this.workerPull(match) : null;
  }

  async createPull(input: { title: string; body: string; head: string; base: string }): Promise<WorkerPull> {
    const { data } = await this.octokit.rest.pulls.create({ owner: this.owner, repo: this.repo, ...input });
    return this.workerPull(data);
  }

  async updatePull(pr: number, input: { title?: string; body?: string }): Promise<void> {
    await this.octokit.rest.pulls.update({ owner: this.owner, repo: this.repo, pull_number: pr, ...input });
  }

  async postReview(pr: number, review: ReviewToPost): Promise<void> {
    await createPullReview(this.octokit, { owner: this.owner, repo: this.repo }, pr, review);
  }

  async addLabels(issue: number, labels: string[]): Promise<void> {
    if (labels.length === 0) return;
    const { owner, repo } = this;
    const { data } = await this.octokit.rest.issues.addLabels({ owner, repo, issue_number: issue, labels });
    rememberLabelIds(data as unknown[], this.labelIds);
  }

  async removeLabel(issue: number, label: string): Promise<void> {
    const { owner, repo } = this;
    try {
      await this.octokit.rest.issues.removeLabel({ owner, repo, issue_number: issue, name: label });
    } catch (error) {
      if (status(error) !== 404) throw error;
    }
  }

  async moveLabel(issue: number, add: string, remove: string): Promise<void> {
    const issueId = this.issueNodeIds.get(issue);
    const addId = this.labelIds.get(add);
    const removeId = this.labelIds.get(remove);
    if (
      issueId &&
      addId &&
      removeId &&
      (await this.labelMutation(MOVE_LABELS_MUTATION, { issue: issueId, add: [addId], remove: [removeId] }, [
        add,
        remove,
      ]))
    )
      return;
    await this.addLabels(issue, [add]);
    await this.removeLabel(issue, remove);
  }

  async labelForReview(pr: number, issue: number, add: string, remove: string): Promise<void> {
    const pullId = this.pullNodeIds.get(pr);
    const issueId = this.issueNodeIds.get(issue);
    const addId = this.labelIds.get(add);
    const removeId = this.labelIds.get(remove);
    if (
      pullId &&
      issueId &&
      addId &&
      removeId &&
      (await this.labelMutation(
        LABEL_FOR_REVIEW_MUTATION,
        { pull: pullId, issue: issueId, add: [addId], remove: [removeId] },
        [add, remove],
      ))
    )
      return;
    await this.addLabels(pr, [add]);
    await this.moveLabel(issue, add, remove);
  }

  listFailingChecks(ref: string): Promise<FailingCheck[]> {
    return listFailingChecks(this.octokit, this.owner, this.repo, ref);
  }

  listReviewFeedback(pr: number): Promise<ReviewFeedback[]> {
    return listReviewFeedback(this.octokit, this.owner, this.repo, pr);
  }

  async listCommentsSince(issue: number, since: string): Promise<WorkerComment[]> {
    const { owner, repo } = this;
    // The same URL each time (the job's start as `since`): an unchanged listing is a free 304.
    const data = await this.octokit.paginate(this.octokit.rest.issues.listComments, {
      owner,
      repo,
      issue_number: issue,
      since,
      per_page: 100,
    });
    return data.map((c) => restComment(c));
  }

  async reactToComment(commentId: number, content: "eyes"): Promise<void> {
    await this.octokit.rest.reactions.createForIssueComment({
      owner: this.owner,
      repo: this.repo,
      comment_id: commentId,
      content,
    });
  }

  async getDefaultBranch(): Promise<string> {
    const { data } = await this.octokit.rest.repos.get({ owner: this.owner, repo: this.repo });
    return data.default_branch;
  }

  /** A pull request in the worker's shape; its node id is kept for `labelForReview`. */
  private workerPull(data: RestPull): WorkerPull {
    if (data.node_id) this.pullNodeIds.set(data.number, data.node_id);
    return {
      number: data.number,
      title: data.title,
      body: data.body ?? "",
      state: data.state === "open" ? "open" : "closed",
      headRef: data.head.ref,
      headSha: data.head.sha,
      baseRef: data.base.ref,
      labels: labelNames(data.labels),
      url: data.html_url,
    };
  }

  /**
   * A label mutation by node ids; false when GitHub answered with GraphQL errors (a label deleted and made again
   * has a new id): the ids are forgotten and the caller goes by name over REST, where adding a label twice and
   * removing an absent one are both harmless (as the controller's executor does).
   */
  private async labelMutation(
    query: string,
    variables: Record<string, unknown>,
    labels: string[],
  ): Promise<boolean> {
    try {
      await this.octokit.graphql(query, variables);
      return true;
    } catch (error) {
      if (!Array.isArray((error as { errors?: unknown }).errors)) throw error;
      for (const label of labels) this.labelIds.delete(label);
      return false;
    }
  }

  /**
   * The issue (and with `withComments` its comments, when one page holds them all: else `comments` is null) and
   * the node ids of the issue and of `labels`, in one GraphQL query; not answered, the issue through REST.
   */
  private async readTask(
    issue: number,
    labels: string[],
    withComments: boolean,
  ): Promise<{ issue: WorkerIssue | null; comments: WorkerComment[] | null }> {
    const restOnly = async () => ({
      comments: withComments ? await this.listIssueComments(issue) : null,
      issue: null,
    });
    if (this.taskQueryRefused) return restOnly();
    let data: GraphqlTask;
    try {
      const names = Object.fromEntries(labels.map((name, i) => [`label${i}`, name]));
      data = await this.octokit.graphql<GraphqlTask>(workerTaskQuery(labels.length), {
        owner: this.owner,
        name: this.repo,
        number: issue,
        comments: withComments,
        ...names,
      });
    } catch {
      // GitHub did not answer the query (an error, a partial answer): the REST reads, as before, for this job.
      this.taskQueryRefused = true;
      return restOnly();
    }
    const found = data.repository?.issue;
    if (!found) return restOnly();
    this.issueNodeIds.set(found.number, found.id);
    const issueLabels = found.labels?.nodes ?? [];
    rememberGraphqlLabels(issueLabels, this.labelIds);
    labels.forEach((_, i) => {
      rememberGraphqlLabels(
        [data.repository?.[`label${i}`] as GraphqlLabel | null | undefined],
        this.labelIds,
      );
    });
    return {
      // A check that needs every comment sees every comment: a longer thread is listed again in full (null).
      comments: withComments ? wholePage(found.comments) : null,
      issue: {
        number: found.number,
        title: found.title,
        body: found.body ?? "",
        state: found.state === "CLOSED" ? "closed" : "open",
        labels: issueLabels.map((l) => l?.name).filter((n): n is string => typeof n === "string"),
        author: found.author?.login ?? null,
      },
    };
  }
}
