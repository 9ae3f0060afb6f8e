/**
 * GitHub's GraphQL API over the store: every document is parsed and validated against the published schema
 * (`@octokit/graphql-schema`), then executed with plain objects whose properties and methods are the
 * fields (graphql-js's default resolver calls a method with `(args, context, info)`).
 *
 * This file holds the root `Query` and `Mutation` fields and the execution. The objects they return are built
 * under `graphql/` by layers of node builders, each extending the one before: `nodes-base.ts` (actors,
 * labels, reactions) → `commit-nodes.ts` (commits, checks, statuses) → `issue-nodes.ts` (issues, comments,
 * timelines) → `repository-nodes.ts` → `pull-nodes.ts` → `graphql-nodes.ts` (lookup by node id).
 */
import {
  type DocumentNode,
  GraphQLError,
  type GraphQLFieldResolver,
  execute,
  parse,
  validate,
} from "graphql";
import type { GraphqlContext } from "./graphql/graphql-context.js";
import { graphqlCost } from "./graphql/graphql-cost.js";
import { Nodes } from "./graphql/graphql-nodes.js";
import type { Obj } from "./graphql/graphql-values.js";
import { cursorOf } from "./graphql/relay-connection.js";
import { dequeue, disableAutoMerge, enableAutoMerge, enqueue } from "./merge/merge-automation.js";
import { queueEntryOf } from "./merge/merge-automation-state.js";
import { revertPullRequest } from "./graphql/pull-revert.js";
import { updateRefsAtomically } from "./graphql/ref-updates.js";
import {
  type Issue,
  type PullFields,
  type Repo,
  StoreError,
  decodeNodeId,
  permissionAtLeast,
} from "./store.js";
export { loadGraphqlSchema } from "./graphql/graphql-schema.js";

/** The points a request costs (graphql/graphql-cost.ts); 1 for a document that does not parse. */
export function graphqlRequestCost(request: {
  query?: unknown;
  variables?: unknown;
  operationName?: unknown;
}): number {
  if (typeof request.query !== "string") return 1;
  try {
    const variables =
      request.variables && typeof request.variables === "object" ? (request.variables as Obj) : {};
    return graphqlCost(
      parse(request.query),
      variables,
      typeof request.operationName === "string" ? request.operationName : null,
    );
  } catch {
    return 1;
  }
}

interface GraphqlOutcome {
  body: { data?: unknown; errors?: Array<{ message: string; [key: string]: unknown }> };
  /** Schema validation errors (or a parse error): the query itself is wrong. */
  invalid: string[];
  /** Fields the sandbox does not implement. */
  unimplemented: string[];
}

/** The root `Query` and `Mutation` fields. */
function rootValue(ctx: GraphqlContext): Obj {
  const nodes = new Nodes(ctx);
  const { store } = ctx;
  const requireWrite = (repo: Repo, need: "triage" | "write" = "write") => {
    // An installation's token does not reach another installation's repository (with-installations.ts).
    if (ctx.identity.token && !store.tokenReaches(ctx.identity.token, repo.fullName))
      throw new GraphQLError(`Could not resolve to a Repository with the name '${repo.fullName}'.`, {
        extensions: { type: "NOT_FOUND" },
      });
    if (ctx.identity.kind !== "user") return;
    if (!permissionAtLeast(store.getPermission(repo.fullName, ctx.identity.login), need)) {
      throw new GraphQLError(
        `${ctx.identity.login} does not have the correct permissions to execute this mutation`,
        {
          extensions: { type: "FORBIDDEN" },
        },
      );
    }
  };
  const asGraphql = <T>(fn: () => T): T => {
    try {
      return fn();
    } catch (error) {
      if (error instanceof StoreError) {
        throw new GraphQLError(error.message, {
          extensions: { type: error.status === 404 ? "NOT_FOUND" : "UNPROCESSABLE" },
        });
      }
      throw error;
    }
  };
  const asGraphqlAsync = async <T>(fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (error) {
      if (error instanceof StoreError) {
        throw new GraphQLError(error.message, {
          extensions: { type: error.status === 404 ? "NOT_FOUND" : "UNPROCESSABLE" },
        });
      }
      throw error;
    }
  };
  const pullByNodeId = (id: string) => {
    const { repo, issue } = nodes.issueByNodeId(id);
    if (!issue.pull)
      throw new GraphQLError(`Could not resolve to a PullRequest with the global id of '${id}'`, {
        extensions: { type: "NOT_FOUND" },
      });
    return { repo, pull: issue as Issue & { pull: PullFields } };
  };
  const labelNamesOf = (repo: Repo, ids: string[]) =>
    ids.map((id) => {
      const decoded = decodeNodeId(id);
      const label = store
        .listLabels(repo.fullName)
        .find((l) => decoded?.kind === "Label" && String(l.id) === decoded.id);
      if (!label)
        throw new GraphQLError(`Could not resolve to a node with the global id of '${id}'`, {
          extensions: { type: "NOT_FOUND" },
        });
      return label.name;
    });
  const setThreadResolved = (input: { threadId: string; clientMutationId?: string }, resolved: boolean) => {
    const decoded = decodeNodeId(input.threadId);
    const notFound = () =>
      new GraphQLError(
        `Could not resolve to a PullRequestReviewThread with the global id of '${input.threadId}'`,
        {
          extensions: { type: "NOT_FOUND" },
        },
      );
    if (decoded?.kind !== "PullRequestReviewThread") throw notFound();
    for (const repo of store.listRepos()) {
      if (ctx.identity.token && !store.tokenReaches(ctx.identity.token, repo.fullName)) continue;
      let found: ReturnType<typeof store.setReviewThreadResolved> | null = null;
      try {
        const pull = store.pullOfReviewComment(repo.fullName, Number(decoded.id));
        if (!pull) continue;
        const author = pull.user.toLowerCase() === ctx.identity.login.toLowerCase();
        if (!author) requireWrite(repo);
        found = store.setReviewThreadResolved(
          repo.fullName,
          Number(decoded.id),
          ctx.identity.login,
          resolved,
        );
      } catch (error) {
        if (error instanceof StoreError) throw notFound();
        throw error;
      }
      return {
        clientMutationId: input.clientMutationId ?? null,
        thread: nodes.reviewThread(repo, found.pull, found.comment),
      };
    }
    throw notFound();
  };
  const self = (repo: Repo, issue: Issue) =>
    issue.pull ? nodes.pull(repo, issue as Issue & { pull: PullFields }) : nodes.issue(repo, issue);
  return {
    // ----- queries
    repository: (args: { owner: string; name: string }) => {
      const repo = store.getRepo({ owner: args.owner, name: args.name });
      // A repository the token does not reach is one it cannot see, as GitHub answers for a private one.
      if (!repo || (ctx.identity.token && !store.tokenReaches(ctx.identity.token, repo.fullName))) {
        throw new GraphQLError(
          `Could not resolve to a Repository with the name '${args.owner}/${args.name}'.`,
          {
            extensions: { type: "NOT_FOUND" },
          },
        );
      }
      return nodes.repository(repo);
    },
    viewer: () => nodes.viewer(),
    user: (args: { login: string }) => {
      const user = store.getUser(args.login);
      return user && user.type === "User" ? nodes.actor(user.login) : null;
    },
    node: (args: { id: string }) => nodes.node(args.id),
    nodes: (args: { ids: string[] }) => args.ids.map((id) => nodes.node(id)),
    rateLimit: () => ({
      cost: ctx.cost,
      limit: ctx.rate.limit,
      nodeCount: 0,
      remaining: ctx.rate.remaining,
      used: ctx.rate.used,
      resetAt: new Date(ctx.rate.reset * 1000).toISOString().replace(/\.\d{3}Z$/, "Z"),
    }),
    // ----- mutations
    pinIssue: (args: { input: { issueId: string; clientMutationId?: string } }) => {
      const { repo, issue } = nodes.issueByNodeId(args.input.issueId);
      requireWrite(repo);
      asGraphql(() => store.pinIssue(repo.fullName, issue.number, ctx.identity.login));
      return { clientMutationId: args.input.clientMutationId ?? null, issue: nodes.issue(repo, issue) };
    },
    unpinIssue: (args: { input: { issueId: string; clientMutationId?: string } }) => {
      const { repo, issue } = nodes.issueByNodeId(args.input.issueId);
      requireWrite(repo);
      asGraphql(() => store.unpinIssue(repo.fullName, issue.number, ctx.identity.login));
      return { clientMutationId: args.input.clientMutationId ?? null, issue: nodes.issue(repo, issue) };
    },
    addComment: (args: { input: { subjectId: string; body: string; clientMutationId?: string } }) => {
      const { repo, issue } = nodes.issueByNodeId(args.input.subjectId);
      const comment = asGraphql(() =>
        store.createComment(repo.fullName, issue.number, args.input.body, ctx.identity.login),
      );
      const node = nodes.comment(repo, issue, comment);
      return {
        clientMutationId: args.input.clientMutationId ?? null,
        commentEdge: { cursor: cursorOf(0), node },
        subject: self(repo, issue),
        timelineEdge: { cursor: cursorOf(0), node },
      };
    },
    addLabelsToLabelable: (args: {
      input: { labelableId: string; labelIds: string[]; clientMutationId?: string };
    }) => {
      const { repo, issue } = nodes.issueByNodeId(args.input.labelableId);
      requireWrite(repo, "triage");
      asGraphql(() =>
        store.addLabels(
          repo.fullName,
          issue.number,
          labelNamesOf(repo, args.input.labelIds),
          ctx.identity.login,
        ),
      );
      return { clientMutationId: args.input.clientMutationId ?? null, labelable: self(repo, issue) };
    },
    removeLabelsFromLabelable: (args: {
      input: { labelableId: string; labelIds: string[]; clientMutationId?: string };
    }) => {
      const { repo, issue } = nodes.issueByNodeId(args.input.labelableId);
      requireWrite(repo, "triage");
      for (const name of labelNamesOf(repo, args.input.labelIds)) {
        if (issue.labels.some((l) => l.toLowerCase() === name.toLowerCase())) {
          asGraphql(() => store.removeLabel(repo.fullName, issue.number, name, ctx.identity.login));
        }
      }
      return { clientMutationId: args.input.clientMutationId ?? null, labelable: self(repo, issue) };
    },
    closeIssue: (args: {
      input: { issueId: string; stateReason?: string | null; clientMutationId?: string };
    }) => {
      const { repo, issue } = nodes.issueByNodeId(args.input.issueId);
      requireWrite(repo, "triage");
      const reason = (args.input.stateReason ?? "COMPLETED").toLowerCase() as
        | "completed"
        | "not_planned"
        | "duplicate";
      asGraphql(() => store.closeIssue(repo.fullName, issue.number, ctx.identity.login, reason));
      return { clientMutationId: args.input.clientMutationId ?? null, issue: nodes.issue(repo, issue) };
    },
    reopenIssue: (args: { input: { issueId: string; clientMutationId?: string } }) => {
      const { repo, issue } = nodes.issueByNodeId(args.input.issueId);
      requireWrite(repo, "triage");
      asGraphql(() => store.reopenIssue(repo.fullName, issue.number, ctx.identity.login));
      return { clientMutationId: args.input.clientMutationId ?? null, issue: nodes.issue(repo, issue) };
    },
    updateIssue: (args: {
      input: {
        id: string;
        title?: string | null;
        body?: string | null;
        state?: string | null;
        clientMutationId?: string;
      };
    }) => {
      const { repo, issue } = nodes.issueByNodeId(args.input.id);
      if (issue.user.toLowerCase() !== ctx.identity.login.toLowerCase()) requireWrite(repo, "triage");
      asGraphql(() =>
        store.updateIssue(
          repo.fullName,
          issue.number,
          {
            ...(args.input.title != null ? { title: args.input.title } : {}),
            ...(args.input.body != null ? { body: args.input.body } : {}),
            ...(args.input.state ? { state: args.input.state.toLowerCase() as "open" | "closed" } : {}),
          },
          ctx.identity.login,
        ),
      );
      return { clientMutationId: args.input.clientMutationId ?? null, issue: nodes.issue(repo, issue) };
    },
    // GitHub's own merge mechanisms (sandbox/emulator/merge/merge-automation.ts), write access required:
    // https://docs.github.com/graphql/reference/mutations#enablepullrequestautomerge and the three after it.
    enablePullRequestAutoMerge: async (args: {
      input: {
        pullRequestId: string;
        mergeMethod?: string | null;
        expectedHeadOid?: string | null;
        commitHeadline?: string | null;
        commitBody?: string | null;
        authorEmail?: string | null;
        clientMutationId?: string;
      };
    }) => {
      const { repo, pull } = pullByNodeId(args.input.pullRequestId);
      requireWrite(repo);
      await asGraphqlAsync(() => enableAutoMerge(store, repo, pull, ctx.identity.login, args.input));
      return {
        clientMutationId: args.input.clientMutationId ?? null,
        actor: nodes.actor(ctx.identity.login),
        pullRequest: nodes.pull(repo, pull),
      };
    },
    disablePullRequestAutoMerge: async (args: {
      input: { pullRequestId: string; clientMutationId?: string };
    }) => {
      const { repo, pull } = pullByNodeId(args.input.pullRequestId);
      requireWrite(repo);
      await asGraphqlAsync(() => disableAutoMerge(store, repo, pull, ctx.identity.login));
      return {
        clientMutationId: args.input.clientMutationId ?? null,
        actor: nodes.actor(ctx.identity.login),
        pullRequest: nodes.pull(repo, pull),
      };
    },
    enqueuePullRequest: async (args: {
      input: {
        pullRequestId: string;
        expectedHeadOid?: string | null;
        jump?: boolean | null;
        clientMutationId?: string;
      };
    }) => {
      const { repo, pull } = pullByNodeId(args.input.pullRequestId);
      requireWrite(repo);
      const entry = await asGraphqlAsync(() => enqueue(store, repo, pull, ctx.identity.login, args.input));
      const found = queueEntryOf(store, repo.fullName, pull.number);
      return {
        clientMutationId: args.input.clientMutationId ?? null,
        mergeQueueEntry: nodes.mergeQueueEntry(repo, entry, found?.position ?? 1),
      };
    },
    dequeuePullRequest: async (args: { input: { id: string; clientMutationId?: string } }) => {
      const { repo, pull } = pullByNodeId(args.input.id);
      requireWrite(repo);
      const found = queueEntryOf(store, repo.fullName, pull.number);
      const entry = await asGraphqlAsync(() => dequeue(store, repo, pull, ctx.identity.login));
      return {
        clientMutationId: args.input.clientMutationId ?? null,
        mergeQueueEntry: nodes.mergeQueueEntry(repo, entry, found?.position ?? 1),
      };
    },
    // https://docs.github.com/en/graphql/reference/mutations#resolvereviewthread and #unresolvereviewthread: "You
    // can resolve a conversation in a pull request if you opened the pull request or if you have write access to
    // the repository" (https://docs.github.com/en/pull-requests/collaborating-with-pull-requests/reviewing-changes-in-pull-requests/commenting-on-a-pull-request#resolving-conversations).
    resolveReviewThread: (args: { input: { threadId: string; clientMutationId?: string } }) =>
      setThreadResolved(args.input, true),
    unresolveReviewThread: (args: { input: { threadId: string; clientMutationId?: string } }) =>
      setThreadResolved(args.input, false),
    // https://docs.github.com/en/graphql/reference/mutations#revertpullrequest (graphql/pull-revert.ts says how).
    revertPullRequest: async (args: {
      input: {
        pullRequestId: string;
        title?: string | null;
        body?: string | null;
        draft?: boolean | null;
        clientMutationId?: string;
      };
    }) => {
      const { repo, pull } = pullByNodeId(args.input.pullRequestId);
      requireWrite(repo);
      const revert = await asGraphqlAsync(() =>
        revertPullRequest(store, repo, pull, ctx.identity.login, args.input),
      );
      return {
        clientMutationId: args.input.clientMutationId ?? null,
        pullRequest: nodes.pull(repo, pull),
        revertPullRequest: nodes.pull(repo, revert as Issue & { pull: PullFields }),
      };
    },
    // https://docs.github.com/en/graphql/reference/mutations#updaterefs: every update or none ("All updates are
    // performed atomically, meaning that if one of them is rejected, no other ref will be modified"); an
    // `afterOid` of forty zeros deletes, a `beforeOid` must match the ref as it is (forty zeros: must not exist).
    // GitHub does not publish its error wordings for a rejected update; these are the sandbox's own.
    updateRefs: async (args: {
      input: {
        repositoryId: string;
        refUpdates: { name: string; afterOid: string; beforeOid?: string | null; force?: boolean | null }[];
        clientMutationId?: string;
      };
    }) => {
      const decoded = decodeNodeId(args.input.repositoryId);
      const repo = store
        .listRepos()
        .find((r) => decoded?.kind === "Repository" && String(r.id) === decoded.id);
      if (!repo)
        throw new GraphQLError(
          `Could not resolve to a node with the global id of '${args.input.repositoryId}'`,
          { extensions: { type: "NOT_FOUND" } },
        );
      requireWrite(repo);
      await asGraphqlAsync(() =>
        updateRefsAtomically(store, repo, args.input.refUpdates, ctx.identity.login),
      );
      return { clientMutationId: args.input.clientMutationId ?? null };
    },
    addSubIssue: (args: {
      input: {
        issueId: string;
        subIssueId?: string | null;
        replaceParent?: boolean | null;
        clientMutationId?: string;
      };
    }) => {
      const { repo, issue } = nodes.issueByNodeId(args.input.issueId);
      requireWrite(repo, "triage");
      const child = nodes.issueByNodeId(args.input.subIssueId ?? "").issue;
      asGraphql(() =>
        store.addSubIssue(
          repo.fullName,
          issue.number,
          child.number,
          ctx.identity.login,
          args.input.replaceParent === true,
        ),
      );
      return {
        clientMutationId: args.input.clientMutationId ?? null,
        issue: nodes.issue(repo, issue),
        subIssue: nodes.issue(repo, child),
      };
    },
  };
}

/** Parses, validates (GitHub's schema) and executes one GraphQL request. */
export async function runGraphql(
  ctx: Omit<GraphqlContext, "unimplemented">,
  request: { query?: unknown; variables?: unknown; operationName?: unknown },
): Promise<GraphqlOutcome> {
  if (typeof request.query !== "string" || request.query.trim() === "") {
    const message = "A query attribute must be specified and must be a string.";
    return { body: { errors: [{ message }] }, invalid: [message], unimplemented: [] };
  }
  let document: DocumentNode;
  try {
    document = parse(request.query);
  } catch (error) {
    const e = error as GraphQLError;
    return {
      body: { errors: [{ message: e.message, locations: e.locations ?? [] }] },
      invalid: [e.message],
      unimplemented: [],
    };
  }
  const errors = validate(ctx.schema, document);
  if (errors.length) {
    return {
      body: {
        errors: errors.map((e) => ({
          message: e.message,
          locations: e.locations ?? [],
          extensions: { code: "undefinedField" },
        })),
      },
      invalid: errors.map((e) => e.message),
      unimplemented: [],
    };
  }
  const context: GraphqlContext = { ...ctx, unimplemented: [] };
  const fieldResolver: GraphQLFieldResolver<unknown, GraphqlContext> = (source, args, contextValue, info) => {
    if (source === null || typeof source !== "object") return null;
    const value = (source as Obj)[info.fieldName];
    if (typeof value === "function")
      return (value as (a: unknown, c: unknown, i: unknown) => unknown).call(
        source,
        args,
        contextValue,
        info,
      );
    if (value === undefined) {
      contextValue.unimplemented.push(`${info.parentType.name}.${info.fieldName}`);
      return null;
    }
    return value;
  };
  const result = await execute({
    schema: ctx.schema,
    document,
    rootValue: rootValue(context),
    contextValue: context,
    variableValues:
      request.variables && typeof request.variables === "object" ? (request.variables as Obj) : {},
    operationName: typeof request.operationName === "string" ? request.operationName : null,
    fieldResolver,
  });
  const body: GraphqlOutcome["body"] = {};
  if (result.data !== undefined) body.data = result.data;
  if (result.errors?.length) {
    body.errors = result.errors.map((e) => ({
      message: e.message,
      locations: e.locations ?? [],
      path: e.path ?? [],
      ...(e.extensions && Object.keys(e.extensions).length ? { type: e.extensions.type } : {}),
    }));
  }
  return { body, invalid: [], unimplemented: [...new Set(context.unimplemented)] };
}
