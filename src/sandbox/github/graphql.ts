/**
 * GitHub's GraphQL API over the store: every document is parsed and validated against the published schema
 * (`@octokit/graphql-schema`), then executed with plain objects whose properties and methods are the
 * fields (graphql-js's default resolver calls a method with `(args, context, info)`).
 */
import { schema as publishedSchema } from "@octokit/graphql-schema";
import {
  type DocumentNode,
  GraphQLError,
  type GraphQLFieldResolver,
  type GraphQLSchema,
  buildSchema,
  execute,
  extendSchema,
  isUnionType,
  parse,
  validate,
} from "graphql";
import type { RateState } from "./accounting.js";
import type { Identity } from "./auth.js";
import type { Shapes } from "./shapes.js";
import {
  type CheckRun,
  type Comment,
  type CommitStatus,
  type Issue,
  type IssueEvent,
  type Label,
  type PullFields,
  type Reaction,
  type Repo,
  type Review,
  type SandboxStore,
  StoreError,
  decodeNodeId,
  permissionAtLeast,
} from "./store.js";

/**
 * Fields GitHub serves that the published schema package (15.26.1) does not describe yet: issue
 * dependencies (`blockedBy`, `blocking`, `issueDependenciesSummary`), as documented for GitHub's live API.
 * Added only when absent, so a newer schema package takes over unchanged.
 */
const EXTENSIONS: Array<{ type: string; field: string; sdl: string }> = [
  {
    type: "Issue",
    field: "blockedBy",
    sdl: "extend type Issue { blockedBy(after: String, before: String, first: Int, last: Int): IssueConnection! }",
  },
  {
    type: "Issue",
    field: "blocking",
    sdl: "extend type Issue { blocking(after: String, before: String, first: Int, last: Int): IssueConnection! }",
  },
  {
    type: "Issue",
    field: "issueDependenciesSummary",
    sdl: `type IssueDependenciesSummary { blockedBy: Int! blocking: Int! totalBlockedBy: Int! totalBlocking: Int! }
extend type Issue { issueDependenciesSummary: IssueDependenciesSummary! }`,
  },
];

let cachedSchema: Promise<GraphQLSchema> | null = null;

/** GitHub's GraphQL schema, built once per process (the SDL has a few duplicate fields: assumed valid). */
export function loadGraphqlSchema(): Promise<GraphQLSchema> {
  cachedSchema ??= (async () => {
    let schema = buildSchema(publishedSchema.idl, { assumeValidSDL: true });
    for (const ext of EXTENSIONS) {
      const type = schema.getType(ext.type);
      if (type && "getFields" in type && !(ext.field in type.getFields())) {
        schema = extendSchema(schema, parse(ext.sdl), { assumeValidSDL: true });
      }
    }
    return schema;
  })();
  return cachedSchema;
}

export interface GraphqlContext {
  store: SandboxStore;
  shapes: Shapes;
  identity: Identity;
  schema: GraphQLSchema;
  rate: RateState;
  /** `Type.field` names the query asked for that the sandbox does not serve. */
  unimplemented: string[];
}

export interface GraphqlOutcome {
  body: { data?: unknown; errors?: Array<{ message: string; [key: string]: unknown }> };
  /** Schema validation errors (or a parse error): the query itself is wrong. */
  invalid: string[];
  /** Fields the sandbox does not implement. */
  unimplemented: string[];
}

// ---------------------------------------------------------------------------------------------------------
// helpers

type Obj = Record<string, unknown>;

function isoDate(date: Date | null | undefined): string | null {
  return date ? date.toISOString().replace(/\.\d{3}Z$/, "Z") : null;
}

function cursorOf(index: number): string {
  return Buffer.from(`cursor:v2:${index}`).toString("base64");
}

function indexOfCursor(cursor: string | undefined | null): number | null {
  if (!cursor) return null;
  const m = /^cursor:v2:(\d+)$/.exec(Buffer.from(cursor, "base64").toString("utf8"));
  if (!m) throw new GraphQLError(`\`${cursor}\` does not appear to be a valid cursor.`);
  return Number(m[1]);
}

interface PageArgs {
  first?: number | null;
  last?: number | null;
  after?: string | null;
  before?: string | null;
}

/** A relay connection with GitHub's pagination rules (first or last required, at most 100). */
function connection<T>(
  name: string,
  items: T[],
  args: PageArgs,
  render: (item: T) => unknown,
  required = true,
): Obj {
  const { first, last } = args;
  if (required && (first === undefined || first === null) && (last === undefined || last === null)) {
    throw new GraphQLError(
      `You must provide a \`first\` or \`last\` value to properly paginate the \`${name}\` connection.`,
      {
        extensions: { type: "MISSING_PAGINATION_BOUNDARIES" },
      },
    );
  }
  for (const [key, value] of [
    ["first", first],
    ["last", last],
  ] as const) {
    if (value !== undefined && value !== null && (value < 0 || value > 100)) {
      throw new GraphQLError(
        `Requesting ${value} records on the \`${name}\` connection exceeds the \`${key}\` limit of 100 records.`,
        { extensions: { type: "EXCESSIVE_PAGINATION" } },
      );
    }
  }
  let start = 0;
  let end = items.length;
  const after = indexOfCursor(args.after);
  const before = indexOfCursor(args.before);
  if (after !== null) start = Math.max(start, after + 1);
  if (before !== null) end = Math.min(end, before);
  if (first !== undefined && first !== null) end = Math.min(end, start + first);
  if (last !== undefined && last !== null) start = Math.max(start, end - last);
  const slice = items
    .slice(start, end)
    .map((item, i) => ({ cursor: cursorOf(start + i), node: render(item) }));
  return {
    totalCount: items.length,
    nodes: slice.map((e) => e.node),
    edges: slice,
    pageInfo: {
      hasNextPage: end < items.length,
      hasPreviousPage: start > 0,
      startCursor: slice[0]?.cursor ?? null,
      endCursor: slice[slice.length - 1]?.cursor ?? null,
    },
  };
}

function upper(value: string | null | undefined): string | null {
  return value ? value.toUpperCase() : null;
}

function typeNameToItemType(typename: string): string {
  return typename.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toUpperCase();
}

const REACTION_CONTENT: Array<[Reaction["content"], string]> = [
  ["+1", "THUMBS_UP"],
  ["-1", "THUMBS_DOWN"],
  ["laugh", "LAUGH"],
  ["hooray", "HOORAY"],
  ["confused", "CONFUSED"],
  ["heart", "HEART"],
  ["rocket", "ROCKET"],
  ["eyes", "EYES"],
];

const EVENT_TYPENAMES: Record<IssueEvent["event"], string> = {
  labeled: "LabeledEvent",
  unlabeled: "UnlabeledEvent",
  closed: "ClosedEvent",
  reopened: "ReopenedEvent",
  locked: "LockedEvent",
  unlocked: "UnlockedEvent",
  renamed: "RenamedTitleEvent",
  pinned: "PinnedEvent",
  unpinned: "UnpinnedEvent",
  merged: "MergedEvent",
  head_ref_force_pushed: "HeadRefForcePushedEvent",
  review_requested: "ReviewRequestedEvent",
  assigned: "AssignedEvent",
  unassigned: "UnassignedEvent",
  sub_issue_added: "SubIssueAddedEvent",
  sub_issue_removed: "SubIssueRemovedEvent",
  blocked_by_added: "BlockedByAddedEvent",
  blocked_by_removed: "BlockedByRemovedEvent",
};

// ---------------------------------------------------------------------------------------------------------
// node builders

class Nodes {
  constructor(private readonly ctx: GraphqlContext) {}

  private get store(): SandboxStore {
    return this.ctx.store;
  }

  actor(login: string | null): Obj | null {
    if (!login) return null;
    const shape = this.ctx.shapes.user(login)!;
    const isBot = shape.type === "Bot";
    return {
      __typename: isBot ? "Bot" : "User",
      login: isBot ? login.replace(/\[bot\]$/, "") : login,
      id: shape.node_id,
      databaseId: shape.id,
      url: shape.html_url,
      resourcePath: `/${login}`,
      avatarUrl: () => shape.avatar_url,
      name: this.store.getUser(login)?.name ?? null,
      email: this.store.getUser(login)?.email ?? "",
      createdAt: isoDate(this.store.getUser(login)?.createdAt),
    };
  }

  /** The newest body edit or title rename of an issue. */
  private lastEdit(issue: Issue): { at: Date; editor: string } | null {
    const renamed = issue.events.filter((e) => e.event === "renamed").pop();
    const edits = issue.contentEdits ?? [];
    const candidates: { at: Date; editor: string }[] = [];
    if (renamed?.actor) candidates.push({ at: renamed.createdAt, editor: renamed.actor });
    if (edits.length > 1) candidates.push(edits[edits.length - 1]!);
    return candidates.sort((a, b) => a.at.getTime() - b.at.getTime()).pop() ?? null;
  }

  /** `viewer` is typed `User!`: the acting login, even for the app's bot. */
  viewer(): Obj {
    const login = this.ctx.identity.login;
    const base = this.actor(login)!;
    return { ...base, __typename: "User", login };
  }

  /** A fork of `repo` as far as a pull request shows it: its name and owner. */
  forkRepository(repo: Repo, fullName: string): Obj {
    const [owner = "", name = ""] = fullName.split("/");
    return {
      ...this.repository(repo),
      id: `R_fork_${Buffer.from(fullName).toString("base64url")}`,
      name,
      nameWithOwner: fullName,
      owner: () => this.actor(owner),
      isFork: true,
      url: `${this.ctx.shapes.repoHtml(repo).replace(`/${repo.fullName}`, "")}/${fullName}`,
    };
  }

  repository(repo: Repo): Obj {
    const store = this.store;
    const shapes = this.ctx.shapes;
    return {
      __typename: "Repository",
      id: repo.nodeId,
      databaseId: repo.id,
      name: repo.name,
      nameWithOwner: repo.fullName,
      description: repo.description,
      url: shapes.repoHtml(repo),
      resourcePath: `/${repo.fullName}`,
      isPrivate: repo.private,
      isArchived: false,
      isFork: false,
      visibility: repo.private ? "PRIVATE" : "PUBLIC",
      createdAt: isoDate(repo.createdAt),
      updatedAt: isoDate(repo.updatedAt),
      pushedAt: isoDate(repo.pushedAt),
      owner: () => {
        const user = store.getUser(repo.owner);
        return {
          __typename: user?.type === "Organization" ? "Organization" : "User",
          login: repo.owner,
          id: user?.nodeId ?? "",
          url: `${shapes.htmlUrl}/${repo.owner}`,
          resourcePath: `/${repo.owner}`,
          avatarUrl: () => `${shapes.htmlUrl}/avatars/${repo.owner}`,
        };
      },
      viewerPermission: () => {
        const p = store.getPermission(repo.fullName, this.ctx.identity.login);
        return this.ctx.identity.kind === "user" ? (p === "none" ? null : p.toUpperCase()) : "WRITE";
      },
      defaultBranchRef: async () => this.ref(repo, `refs/heads/${repo.defaultBranch}`),
      ref: async (args: { qualifiedName: string }) =>
        this.ref(
          repo,
          args.qualifiedName.startsWith("refs/") ? args.qualifiedName : `refs/heads/${args.qualifiedName}`,
        ),
      issue: (args: { number: number }) => {
        const issue = store.getIssue(repo.fullName, args.number);
        return issue && !issue.pull ? this.issue(repo, issue) : null;
      },
      pullRequest: async (args: { number: number }) => {
        const issue = store.getPull(repo.fullName, args.number);
        if (!issue) return null;
        await store.refreshPull(repo.fullName, issue.number);
        return this.pull(repo, issue as Issue & { pull: PullFields });
      },
      issueOrPullRequest: async (args: { number: number }) => {
        const issue = store.getIssue(repo.fullName, args.number);
        if (!issue) return null;
        if (issue.pull) {
          await store.refreshPull(repo.fullName, issue.number);
          return this.pull(repo, issue as Issue & { pull: PullFields });
        }
        return this.issue(repo, issue);
      },
      issues: (
        args: PageArgs & {
          states?: string[] | null;
          labels?: string[] | null;
          orderBy?: { field: string; direction: string } | null;
          filterBy?: Obj | null;
        },
      ) => {
        let issues = store.listIssues(repo.fullName).filter((i) => !i.pull);
        if (args.states?.length) issues = issues.filter((i) => args.states!.includes(i.state.toUpperCase()));
        if (args.labels?.length) {
          const wanted = args.labels.map((l) => l.toLowerCase());
          issues = issues.filter((i) => i.labels.some((l) => wanted.includes(l.toLowerCase())));
        }
        const filter = args.filterBy ?? {};
        if (typeof filter.createdBy === "string") {
          const who = String(filter.createdBy)
            .toLowerCase()
            .replace(/\[bot\]$/, "");
          issues = issues.filter((i) => i.user.toLowerCase().replace(/\[bot\]$/, "") === who);
        }
        if (typeof filter.since === "string")
          issues = issues.filter((i) => i.updatedAt.getTime() >= new Date(String(filter.since)).getTime());
        if (Array.isArray(filter.states) && filter.states.length)
          issues = issues.filter((i) => (filter.states as string[]).includes(i.state.toUpperCase()));
        if (Array.isArray(filter.labels) && filter.labels.length) {
          const wanted = (filter.labels as string[]).map((l) => l.toLowerCase());
          issues = issues.filter((i) => i.labels.some((l) => wanted.includes(l.toLowerCase())));
        }
        issues = orderIssues(store, repo, issues, args.orderBy);
        return connection("issues", issues, args, (i) => this.issue(repo, i));
      },
      pullRequests: async (
        args: PageArgs & {
          states?: string[] | null;
          labels?: string[] | null;
          headRefName?: string | null;
          baseRefName?: string | null;
          orderBy?: { field: string; direction: string } | null;
        },
      ) => {
        let pulls = store.listPulls(repo.fullName);
        if (args.states?.length) pulls = pulls.filter((p) => args.states!.includes(pullState(p)));
        if (args.labels?.length) {
          const wanted = args.labels.map((l) => l.toLowerCase());
          pulls = pulls.filter((p) => p.labels.some((l) => wanted.includes(l.toLowerCase())));
        }
        if (args.headRefName) pulls = pulls.filter((p) => p.pull.head.ref === args.headRefName);
        if (args.baseRefName) pulls = pulls.filter((p) => p.pull.base.ref === args.baseRefName);
        pulls = orderIssues(store, repo, pulls, args.orderBy) as typeof pulls;
        for (const p of pulls)
          if (p.state === "open" && p.pull.mergeable === null)
            await store.refreshPull(repo.fullName, p.number);
        return connection("pullRequests", pulls, args, (p) => this.pull(repo, p));
      },
      labels: (args: PageArgs & { query?: string | null }) => {
        let labels = store.listLabels(repo.fullName);
        if (args.query)
          labels = labels.filter((l) => l.name.toLowerCase().includes(args.query!.toLowerCase()));
        return connection("labels", labels, args, (l) => this.label(repo, l));
      },
      label: (args: { name: string }) => {
        const label = store.getLabel(repo.fullName, args.name);
        return label ? this.label(repo, label) : null;
      },
      pinnedIssues: (args: PageArgs) =>
        connection("pinnedIssues", store.listPinnedIssues(repo.fullName), args, (i) => ({
          __typename: "PinnedIssue",
          id: `PIN_${i.nodeId}`,
          issue: this.issue(repo, i),
          pinnedBy: this.actor(i.events.filter((e) => e.event === "pinned").pop()?.actor ?? repo.owner),
          repository: this.repository(repo),
        })),
      object: async (args: { expression?: string | null; oid?: string | null }) => this.object(repo, args),
    };
  }

  async ref(repo: Repo, name: string): Promise<Obj | null> {
    const refs = await this.store.listRefs(repo.fullName);
    const found = refs.find((r) => r.ref === name);
    if (!found) return null;
    const short = name.replace(/^refs\/(heads|tags)\//, "");
    return {
      __typename: "Ref",
      id: `REF_${Buffer.from(`${repo.fullName}:${name}`).toString("base64url")}`,
      name: short,
      prefix: name.slice(0, name.length - short.length),
      target: () => this.commit(repo, found.sha),
      repository: () => this.repository(repo),
    };
  }

  async object(repo: Repo, args: { expression?: string | null; oid?: string | null }): Promise<Obj | null> {
    const expression = args.expression ?? args.oid ?? "";
    const colon = expression.indexOf(":");
    const rev = colon >= 0 ? expression.slice(0, colon) || "HEAD" : expression;
    const path = colon >= 0 ? expression.slice(colon + 1) : null;
    const ref = rev === "HEAD" ? repo.defaultBranch : rev;
    const sha = await this.store.resolveRef(repo.fullName, ref);
    if (!sha) return null;
    if (path === null) return this.commit(repo, sha);
    if (path === "") return null;
    const content = await this.store.readFile(repo.fullName, path, ref);
    if (!content) {
      const entries = await this.store.listDirectory(repo.fullName, path, ref);
      if (!entries) return null;
      return {
        __typename: "Tree",
        id: `TREE_${sha}_${path}`,
        oid: sha,
        abbreviatedOid: sha.slice(0, 7),
        entries: entries.map((e) => ({
          __typename: "TreeEntry",
          name: e.name,
          path: e.path,
          type: e.type === "dir" ? "tree" : "blob",
          oid: e.sha,
        })),
      };
    }
    const binary = content.includes(0);
    return {
      __typename: "Blob",
      id: `BLOB_${Buffer.from(`${repo.fullName}:${sha}:${path}`).toString("base64url")}`,
      oid: sha,
      abbreviatedOid: sha.slice(0, 7),
      byteSize: content.length,
      isBinary: binary,
      isTruncated: false,
      text: binary ? null : content.toString("utf8"),
      repository: () => this.repository(repo),
      commitUrl: `${this.ctx.shapes.repoHtml(repo)}/commit/${sha}`,
      commitResourcePath: `/${repo.fullName}/commit/${sha}`,
    };
  }

  label(repo: Repo, label: Label): Obj {
    return {
      __typename: "Label",
      id: label.nodeId,
      name: label.name,
      color: label.color,
      description: label.description,
      isDefault: label.default,
      url: `${this.ctx.shapes.repoHtml(repo)}/labels/${encodeURIComponent(label.name)}`,
    };
  }

  private labelsOf(repo: Repo, issue: Issue) {
    return (args: PageArgs) =>
      connection("labels", this.store.labelsOf(repo.fullName, issue), args, (l) => this.label(repo, l));
  }

  /** All eight reaction groups, as GitHub lists them. */
  reactionGroups(reactions: Reaction[]): Obj[] {
    const viewer = this.ctx.identity.login.toLowerCase();
    return REACTION_CONTENT.map(([rest, graphql]) => {
      const of = reactions.filter((r) => r.content === rest);
      const users = (args: PageArgs) => connection("reactors", of, args, (r) => this.actor(r.user), false);
      return {
        __typename: "ReactionGroup",
        content: graphql,
        createdAt: isoDate(of[0]?.createdAt ?? null),
        viewerHasReacted: of.some((r) => r.user.toLowerCase() === viewer),
        reactors: users,
        users,
      };
    });
  }

  comment(repo: Repo, issue: Issue, comment: Comment): Obj {
    return {
      __typename: "IssueComment",
      id: comment.nodeId,
      databaseId: comment.id,
      fullDatabaseId: String(comment.id),
      body: comment.body,
      bodyText: comment.body,
      author: this.actor(comment.user),
      authorAssociation: this.ctx.shapes.authorAssociation(repo, comment.user),
      createdAt: isoDate(comment.createdAt),
      updatedAt: isoDate(comment.updatedAt),
      publishedAt: isoDate(comment.createdAt),
      lastEditedAt:
        comment.updatedAt.getTime() !== comment.createdAt.getTime() ? isoDate(comment.updatedAt) : null,
      url: `${this.ctx.shapes.repoHtml(repo)}/issues/${issue.number}#issuecomment-${comment.id}`,
      viewerDidAuthor: comment.user.toLowerCase() === this.ctx.identity.login.toLowerCase(),
      isMinimized: false,
      issue: () => (issue.pull ? null : this.issue(repo, issue)),
      editor: comment.updatedAt.getTime() !== comment.createdAt.getTime() ? this.actor(comment.user) : null,
      reactionGroups: () => this.reactionGroups(comment.reactions),
    };
  }

  private eventNode(repo: Repo, issue: Issue, event: IssueEvent): Obj {
    const base: Obj = {
      __typename: EVENT_TYPENAMES[event.event],
      id: event.nodeId,
      actor: this.actor(event.actor),
      createdAt: isoDate(event.createdAt),
    };
    const self = () =>
      issue.pull ? this.pull(repo, issue as Issue & { pull: PullFields }) : this.issue(repo, issue);
    switch (event.event) {
      case "labeled":
      case "unlabeled": {
        const label = this.store.getLabel(repo.fullName, event.label?.name ?? "");
        return {
          ...base,
          label: label
            ? this.label(repo, label)
            : {
                __typename: "Label",
                id: "",
                name: event.label?.name ?? "",
                color: event.label?.color ?? "ededed",
                description: null,
                isDefault: false,
              },
          labelable: self,
        };
      }
      case "closed":
        return {
          ...base,
          closable: self,
          closer: null,
          stateReason: upper(event.stateReason ?? null),
          url: "",
        };
      case "reopened":
        return { ...base, closable: self, stateReason: null };
      case "renamed":
        return {
          ...base,
          previousTitle: event.rename?.from ?? "",
          currentTitle: event.rename?.to ?? "",
          subject: self,
        };
      case "locked":
        return { ...base, lockReason: upper(event.lockReason?.replace(" ", "_") ?? null), lockable: self };
      case "unlocked":
        return { ...base, lockable: self };
      case "pinned":
      case "unpinned":
        return { ...base, issue: self };
      case "assigned":
      case "unassigned":
        return { ...base, assignee: this.actor(event.assignee ?? null), assignable: self };
      case "review_requested":
        return { ...base, requestedReviewer: this.actor(event.requestedReviewer ?? null), pullRequest: self };
      case "merged":
        return { ...base, pullRequest: self, commit: null, mergeRefName: "", url: "" };
      default:
        return base;
    }
  }

  private timeline(repo: Repo, issue: Issue, unionName: string) {
    return (args: PageArgs & { itemTypes?: string[] | null; since?: string | null }) => {
      const union = this.ctx.schema.getType(unionName);
      const allowed = new Set(isUnionType(union) ? union.getTypes().map((t) => t.name) : []);
      type Item = { at: Date; node: () => Obj };
      const items: Item[] = [
        ...issue.events.map((e) => ({
          at: e.createdAt,
          node: () => this.eventNode(repo, issue, e),
          typename: EVENT_TYPENAMES[e.event],
        })),
        ...this.store.listComments(repo.fullName, issue.number).map((c) => ({
          at: c.createdAt,
          node: () => this.comment(repo, issue, c),
          typename: "IssueComment",
        })),
      ]
        .filter((i) => allowed.has(i.typename))
        .filter((i) => !args.itemTypes?.length || args.itemTypes.includes(typeNameToItemType(i.typename)))
        .filter((i) => !args.since || i.at.getTime() >= new Date(args.since).getTime())
        .sort((a, b) => a.at.getTime() - b.at.getTime());
      return connection("timelineItems", items, args, (i) => i.node());
    };
  }

  issue(repo: Repo, issue: Issue): Obj {
    const store = this.store;
    const related = (numbers: number[]) =>
      numbers.map((n) => store.getIssue(repo.fullName, n)).filter((i): i is Issue => !!i);
    const blocking = () => store.listBlocking(repo.fullName, issue.number);
    return {
      __typename: "Issue",
      id: issue.nodeId,
      databaseId: issue.id,
      fullDatabaseId: String(issue.id),
      number: issue.number,
      title: issue.title,
      body: issue.body ?? "",
      bodyText: issue.body ?? "",
      state: issue.state.toUpperCase(),
      stateReason: upper(issue.stateReason),
      closed: issue.state === "closed",
      closedAt: isoDate(issue.closedAt),
      createdAt: isoDate(issue.createdAt),
      updatedAt: isoDate(issue.updatedAt),
      // The last edit of the body (or a title rename), and who made it:
      // https://docs.github.com/en/graphql/reference/objects#issue
      lastEditedAt: isoDate(this.lastEdit(issue)?.at ?? null),
      locked: issue.locked,
      activeLockReason: upper(issue.activeLockReason?.replace(" ", "_") ?? null),
      isPinned: issue.pinned,
      url: `${this.ctx.shapes.repoHtml(repo)}/issues/${issue.number}`,
      resourcePath: `/${repo.fullName}/issues/${issue.number}`,
      author: this.actor(issue.user),
      authorAssociation: this.ctx.shapes.authorAssociation(repo, issue.user),
      repository: () => this.repository(repo),
      labels: this.labelsOf(repo, issue),
      assignees: (args: PageArgs) => connection("assignees", issue.assignees, args, (a) => this.actor(a)),
      milestone: null,
      parent: () => {
        const parent = issue.parent !== null ? store.getIssue(repo.fullName, issue.parent) : undefined;
        return parent ? this.issue(repo, parent) : null;
      },
      subIssues: (args: PageArgs) =>
        connection("subIssues", related(issue.subIssues), args, (i) => this.issue(repo, i)),
      subIssuesSummary: () => {
        const subs = related(issue.subIssues);
        const completed = subs.filter((i) => i.state === "closed").length;
        return {
          total: subs.length,
          completed,
          percentCompleted: subs.length ? Math.floor((completed * 100) / subs.length) : 0,
        };
      },
      blockedBy: (args: PageArgs) =>
        connection("blockedBy", related(issue.blockedBy), args, (i) => this.issue(repo, i)),
      blocking: (args: PageArgs) => connection("blocking", blocking(), args, (i) => this.issue(repo, i)),
      issueDependenciesSummary: () => ({
        blockedBy: related(issue.blockedBy).filter((i) => i.state === "open").length,
        blocking: blocking().filter((i) => i.state === "open").length,
        totalBlockedBy: issue.blockedBy.length,
        totalBlocking: blocking().length,
      }),
      comments: (args: PageArgs) =>
        connection("comments", store.listComments(repo.fullName, issue.number), args, (c) =>
          this.comment(repo, issue, c),
        ),
      timelineItems: this.timeline(repo, issue, "IssueTimelineItems"),
      reactionGroups: () => this.reactionGroups(issue.reactions),
      editor: (() => {
        const last = this.lastEdit(issue);
        return last ? this.actor(last.editor) : null;
      })(),
      // Newest edit first, the way the edit history lists them.
      userContentEdits: (args: PageArgs) =>
        connection("userContentEdits", [...(issue.contentEdits ?? [])].reverse(), args, (e) => ({
          __typename: "UserContentEdit",
          id: `UCE_${issue.nodeId}_${e.at.getTime()}`,
          createdAt: isoDate(e.at),
          updatedAt: isoDate(e.at),
          editedAt: isoDate(e.at),
          editor: this.actor(e.editor),
          deletedAt: null,
          deletedBy: null,
          diff: null,
        })),
      viewerCanUpdate: true,
      viewerDidAuthor: issue.user.toLowerCase() === this.ctx.identity.login.toLowerCase(),
    };
  }

  commit(repo: Repo, sha: string): Obj {
    const store = this.store;
    const info = () => store.getCommit(repo.fullName, sha);
    return {
      __typename: "Commit",
      id: `C_${Buffer.from(`Commit:${sha}`).toString("base64url")}`,
      oid: sha,
      abbreviatedOid: sha.slice(0, 7),
      url: `${this.ctx.shapes.repoHtml(repo)}/commit/${sha}`,
      resourcePath: `/${repo.fullName}/commit/${sha}`,
      message: async () => (await info())?.message ?? "",
      messageHeadline: async () => ((await info())?.message ?? "").split("\n")[0] ?? "",
      committedDate: async () => {
        const c = await info();
        return c?.committerDate ?? c?.authorDate ?? isoDate(repo.createdAt);
      },
      authoredDate: async () => (await info())?.authorDate ?? isoDate(repo.createdAt),
      pushedDate: null,
      statusCheckRollup: () => this.rollup(repo, sha),
      status: () => {
        const combined = store.combinedStatus(repo.fullName, sha);
        if (combined.statuses.length === 0) return null;
        return {
          __typename: "Status",
          id: `ST_${sha}`,
          state: combined.state.toUpperCase(),
          contexts: combined.statuses.map((s) => this.statusContext(repo, s)),
        };
      },
      checkSuites: (args: PageArgs) =>
        connection("checkSuites", store.listCheckSuites(repo.fullName, sha), args, (s) => ({
          __typename: "CheckSuite",
          id: s.nodeId,
          databaseId: s.id,
          status: s.status.toUpperCase(),
          conclusion: upper(s.conclusion),
          app: this.app(s.appSlug),
          checkRuns: (a: PageArgs) =>
            connection("checkRuns", store.listCheckRuns(repo.fullName, sha, { suiteId: s.id }), a, (r) =>
              this.checkRun(repo, r),
            ),
        })),
      repository: () => this.repository(repo),
    };
  }

  private app(slug: string): Obj {
    const shape = this.ctx.shapes.appObject(slug);
    return {
      __typename: "App",
      id: shape.node_id,
      databaseId: shape.id,
      slug,
      name: shape.name,
      url: shape.html_url,
    };
  }

  checkRun(repo: Repo, run: CheckRun): Obj {
    const suite = this.store.getCheckSuite(repo.fullName, run.checkSuiteId);
    return {
      __typename: "CheckRun",
      id: run.nodeId,
      databaseId: run.id,
      name: run.name,
      status: run.status.toUpperCase(),
      conclusion: upper(run.conclusion),
      title: run.output.title,
      summary: run.output.summary,
      text: run.output.text,
      detailsUrl: run.detailsUrl,
      externalId: run.externalId,
      url: `${this.ctx.shapes.repoHtml(repo)}/runs/${run.id}`,
      permalink: `${this.ctx.shapes.repoHtml(repo)}/runs/${run.id}`,
      startedAt: isoDate(run.startedAt),
      completedAt: isoDate(run.completedAt),
      isRequired: () => false,
      checkSuite: {
        __typename: "CheckSuite",
        id: suite?.nodeId ?? "",
        databaseId: suite?.id ?? null,
        status: suite?.status.toUpperCase() ?? "QUEUED",
        conclusion: upper(suite?.conclusion ?? null),
        app: this.app(run.appSlug),
        workflowRun: null,
      },
    };
  }

  statusContext(repo: Repo, status: CommitStatus): Obj {
    return {
      __typename: "StatusContext",
      id: status.nodeId,
      context: status.context,
      state: status.state.toUpperCase(),
      description: status.description,
      targetUrl: status.targetUrl,
      createdAt: isoDate(status.createdAt),
      creator: this.actor(status.creator),
      avatarUrl: null,
      isRequired: () => false,
      commit: () => this.commit(repo, status.sha),
    };
  }

  rollup(repo: Repo, sha: string): Obj | null {
    const runs = this.store.listCheckRuns(repo.fullName, sha);
    const latest = new Map<string, CheckRun>();
    for (const r of runs) if (!latest.has(`${r.appSlug}|${r.name}`)) latest.set(`${r.appSlug}|${r.name}`, r);
    const checkRuns = [...latest.values()].reverse();
    const statuses = this.store.combinedStatus(repo.fullName, sha).statuses;
    if (checkRuns.length === 0 && statuses.length === 0) return null;
    const bad = ["failure", "cancelled", "timed_out", "action_required", "startup_failure", "stale"];
    let state = "SUCCESS";
    if (statuses.some((s) => s.state === "error")) state = "ERROR";
    else if (
      checkRuns.some((r) => r.status === "completed" && bad.includes(r.conclusion ?? "")) ||
      statuses.some((s) => s.state === "failure")
    )
      state = "FAILURE";
    else if (checkRuns.some((r) => r.status !== "completed") || statuses.some((s) => s.state === "pending"))
      state = "PENDING";
    type Ctx = { kind: "run"; run: CheckRun } | { kind: "status"; status: CommitStatus };
    const contexts: Ctx[] = [
      ...checkRuns.map((run) => ({ kind: "run" as const, run })),
      ...statuses.map((status) => ({ kind: "status" as const, status })),
    ];
    return {
      __typename: "StatusCheckRollup",
      id: `SCR_${sha}`,
      state,
      commit: () => this.commit(repo, sha),
      contexts: (args: PageArgs) => ({
        ...connection("contexts", contexts, args, (c) =>
          c.kind === "run" ? this.checkRun(repo, c.run) : this.statusContext(repo, c.status),
        ),
        checkRunCount: checkRuns.length,
        statusContextCount: statuses.length,
        checkRunCountsByState: [],
        statusContextCountsByState: [],
      }),
    };
  }

  review(repo: Repo, pull: Issue & { pull: PullFields }, review: Review): Obj {
    return {
      __typename: "PullRequestReview",
      id: review.nodeId,
      databaseId: review.id,
      fullDatabaseId: String(review.id),
      author: this.actor(review.user),
      authorAssociation: this.ctx.shapes.authorAssociation(repo, review.user),
      body: review.body,
      bodyText: review.body,
      state: review.state,
      submittedAt: isoDate(review.submittedAt),
      createdAt: isoDate(review.submittedAt ?? pull.createdAt),
      updatedAt: isoDate(review.submittedAt ?? pull.createdAt),
      publishedAt: isoDate(review.submittedAt),
      url: `${this.ctx.shapes.repoHtml(repo)}/pull/${pull.number}#pullrequestreview-${review.id}`,
      commit: () => this.commit(repo, review.commitId),
      pullRequest: () => this.pull(repo, pull),
    };
  }

  pull(repo: Repo, issue: Issue & { pull: PullFields }): Obj {
    const p = issue.pull;
    const store = this.store;
    const reviewsOf = (states?: string[] | null) =>
      p.reviews.filter((r) =>
        states?.length
          ? states.includes(r.state)
          : r.state !== "PENDING" || r.user.toLowerCase() === this.ctx.identity.login.toLowerCase(),
      );
    const latestReviews = () => {
      const byUser = new Map<string, Review>();
      for (const r of p.reviews)
        if (r.state !== "PENDING" && r.state !== "COMMENTED") byUser.set(r.user.toLowerCase(), r);
      return [...byUser.values()];
    };
    return {
      ...this.issue(repo, issue),
      __typename: "PullRequest",
      id: p.nodeId,
      databaseId: p.id,
      fullDatabaseId: String(p.id),
      url: `${this.ctx.shapes.repoHtml(repo)}/pull/${issue.number}`,
      resourcePath: `/${repo.fullName}/pull/${issue.number}`,
      state: pullState(issue),
      isDraft: p.draft,
      merged: p.merged,
      mergedAt: isoDate(p.mergedAt),
      mergedBy: this.actor(p.mergedBy),
      mergeCommit: p.mergeCommitSha ? () => this.commit(repo, p.mergeCommitSha!) : null,
      mergeable: p.mergeable === null ? "UNKNOWN" : p.mergeable ? "MERGEABLE" : "CONFLICTING",
      mergeStateStatus: p.mergeableState.toUpperCase(),
      headRefName: p.head.ref,
      headRefOid: p.head.sha,
      baseRefName: p.base.ref,
      baseRefOid: p.base.sha,
      headRef: async () => (issue.state === "open" ? this.ref(repo, `refs/heads/${p.head.ref}`) : null),
      baseRef: async () => this.ref(repo, `refs/heads/${p.base.ref}`),
      // A fork PR's head repository is the fork (the sandbox keeps no record of it beyond its name):
      // https://docs.github.com/en/graphql/reference/objects#pullrequest
      headRepository: () => (p.headRepo ? this.forkRepository(repo, p.headRepo) : this.repository(repo)),
      headRepositoryOwner: () => this.actor(p.headRepo ? p.headRepo.split("/")[0]! : repo.owner),
      baseRepository: () => this.repository(repo),
      isCrossRepository: Boolean(p.headRepo),
      maintainerCanModify: p.maintainerCanModify,
      additions: p.additions,
      deletions: p.deletions,
      changedFiles: p.changedFiles,
      permalink: `${this.ctx.shapes.repoHtml(repo)}/pull/${issue.number}`,
      commits: async (args: PageArgs) => {
        let shas: string[] = [];
        try {
          const diff = await store.compare(repo.fullName, p.base.sha, p.head.sha);
          shas = (diff.commits ?? []).map((c) => c.sha);
        } catch {
          shas = [];
        }
        if (shas[shas.length - 1] !== p.head.sha) shas.push(p.head.sha);
        return connection("commits", shas, args, (sha) => ({
          __typename: "PullRequestCommit",
          id: `PRC_${sha}`,
          commit: this.commit(repo, sha),
          url: `${this.ctx.shapes.repoHtml(repo)}/pull/${issue.number}/commits/${sha}`,
          pullRequest: () => this.pull(repo, issue),
        }));
      },
      reviews: (args: PageArgs & { states?: string[] | null; author?: string | null }) =>
        connection(
          "reviews",
          reviewsOf(args.states).filter(
            (r) => !args.author || r.user.toLowerCase() === args.author.toLowerCase(),
          ),
          args,
          (r) => this.review(repo, issue, r),
        ),
      latestReviews: (args: PageArgs) =>
        connection("latestReviews", latestReviews(), args, (r) => this.review(repo, issue, r)),
      latestOpinionatedReviews: (args: PageArgs) =>
        connection("latestOpinionatedReviews", latestReviews(), args, (r) => this.review(repo, issue, r)),
      reviewDecision: (() => {
        const latest = latestReviews();
        if (latest.some((r) => r.state === "CHANGES_REQUESTED")) return "CHANGES_REQUESTED";
        if (latest.some((r) => r.state === "APPROVED")) return "APPROVED";
        return p.requestedReviewers.length ? "REVIEW_REQUIRED" : null;
      })(),
      reviewRequests: (args: PageArgs) =>
        connection("reviewRequests", p.requestedReviewers, args, (login) => ({
          __typename: "ReviewRequest",
          id: `RR_${p.id}_${login}`,
          requestedReviewer: this.actor(login),
        })),
      timelineItems: this.timeline(repo, issue, "PullRequestTimelineItems"),
      reviewThreads: (args: PageArgs) => connection("reviewThreads", [] as Obj[], args, (t) => t),
      closingIssuesReferences: (args: PageArgs) => {
        const numbers = [
          ...(issue.body ?? "").matchAll(/\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\s+#(\d+)/gi),
        ].map((m) => Number(m[1]));
        const issues = numbers
          .map((n) => store.getIssue(repo.fullName, n))
          .filter((i): i is Issue => !!i && !i.pull);
        return connection("closingIssuesReferences", issues, args, (i) => this.issue(repo, i));
      },
    };
  }

  /** Resolves any node id the sandbox hands out. */
  node(id: string): Obj | null {
    const decoded = decodeNodeId(id);
    if (!decoded) return null;
    for (const repo of this.store.listRepos()) {
      if (decoded.kind === "Repository" && String(repo.id) === decoded.id) return this.repository(repo);
      if (decoded.kind === "Issue" || decoded.kind === "PullRequest") {
        for (const issue of this.store.listIssues(repo.fullName)) {
          if (decoded.kind === "Issue" && String(issue.id) === decoded.id) {
            return issue.pull
              ? this.pull(repo, issue as Issue & { pull: PullFields })
              : this.issue(repo, issue);
          }
          if (decoded.kind === "PullRequest" && issue.pull && String(issue.pull.id) === decoded.id) {
            return this.pull(repo, issue as Issue & { pull: PullFields });
          }
        }
      }
      if (decoded.kind === "IssueComment") {
        const comment = this.store.getComment(repo.fullName, Number(decoded.id));
        if (comment)
          return this.comment(repo, this.store.requireIssue(repo.fullName, comment.issueNumber), comment);
      }
      if (decoded.kind === "Label") {
        const label = this.store.listLabels(repo.fullName).find((l) => String(l.id) === decoded.id);
        if (label) return this.label(repo, label);
      }
    }
    if (decoded.kind === "User" || decoded.kind === "Bot") {
      const user = this.store.getUserById(Number(decoded.id));
      if (user) return this.actor(user.login);
    }
    return null;
  }

  /** The repository and issue behind an issue/PR node id (for mutations). */
  issueByNodeId(id: string): { repo: Repo; issue: Issue } {
    const decoded = decodeNodeId(id);
    if (decoded && (decoded.kind === "Issue" || decoded.kind === "PullRequest")) {
      for (const repo of this.store.listRepos()) {
        for (const issue of this.store.listIssues(repo.fullName)) {
          if (
            (decoded.kind === "Issue" && String(issue.id) === decoded.id) ||
            (decoded.kind === "PullRequest" && String(issue.pull?.id) === decoded.id)
          ) {
            return { repo, issue };
          }
        }
      }
    }
    throw new GraphQLError(`Could not resolve to a node with the global id of '${id}'`, {
      extensions: { type: "NOT_FOUND" },
    });
  }
}

function pullState(issue: Issue): string {
  if (issue.pull?.merged) return "MERGED";
  return issue.state === "open" ? "OPEN" : "CLOSED";
}

function orderIssues<T extends Issue>(
  store: SandboxStore,
  repo: Repo,
  issues: T[],
  orderBy: { field: string; direction: string } | null | undefined,
): T[] {
  const field = orderBy?.field ?? "CREATED_AT";
  const dir = (orderBy?.direction ?? "ASC") === "ASC" ? 1 : -1;
  const key =
    field === "UPDATED_AT"
      ? (i: Issue) => i.updatedAt.getTime()
      : field === "COMMENTS"
        ? (i: Issue) => store.listComments(repo.fullName, i.number).length
        : (i: Issue) => i.createdAt.getTime();
  return [...issues].sort((a, b) => dir * (key(a) - key(b)) || dir * (a.number - b.number));
}

// ---------------------------------------------------------------------------------------------------------
// root

function rootValue(ctx: GraphqlContext): Obj {
  const nodes = new Nodes(ctx);
  const { store } = ctx;
  const requireWrite = (repo: Repo, need: "triage" | "write" = "write") => {
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
  const self = (repo: Repo, issue: Issue) =>
    issue.pull ? nodes.pull(repo, issue as Issue & { pull: PullFields }) : nodes.issue(repo, issue);
  return {
    // ----- queries
    repository: (args: { owner: string; name: string }) => {
      const repo = store.getRepo({ owner: args.owner, name: args.name });
      if (!repo) {
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
      cost: 1,
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
