/** GraphQL repositories, their refs and git objects. */
import { isAutoMergeAllowed } from "../merge/merge-automation-state.js";
import type { Issue, PullFields, Repo, SandboxStore } from "../store.js";
import { type Obj, isoDate, pullState } from "./graphql-values.js";
import { type PageArgs, connection } from "./relay-connection.js";
import { IssueNodes } from "./issue-nodes.js";

export abstract class RepositoryNodes extends IssueNodes {
  /** A branch's merge queue (sandbox/emulator/graphql/pull-nodes.ts). */
  abstract mergeQueue(repo: Repo, branch: string): Obj | null;

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
      // "Allow auto-merge": https://docs.github.com/graphql/reference/objects#repository
      autoMergeAllowed: isAutoMergeAllowed(store, repo.fullName),
      mergeQueue: (args: { branch?: string | null }) =>
        this.mergeQueue(repo, args.branch ?? repo.defaultBranch),
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
      // The refs whose full name starts with `refPrefix`, each named relative to it, in name order:
      // https://docs.github.com/en/graphql/reference/objects#repository (`refs`) and
      // https://docs.github.com/en/graphql/reference/objects#ref
      refs: async (args: PageArgs & { refPrefix: string }) => {
        const refs = (await store.listRefs(repo.fullName))
          .filter((r) => r.ref.startsWith(args.refPrefix))
          .sort((a, b) => a.ref.localeCompare(b.ref));
        return connection("refs", refs, args, (r) => ({
          __typename: "Ref",
          id: `REF_${Buffer.from(`${repo.fullName}:${r.ref}`).toString("base64url")}`,
          name: r.ref.slice(args.refPrefix.length),
          prefix: args.refPrefix,
          target: () => this.commit(repo, r.sha),
          repository: () => this.repository(repo),
        }));
      },
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
