/** GraphQL issues, their comments and timeline. */
import { isUnionType } from "graphql";
import type { Comment, Issue, IssueEvent, PullFields, Repo } from "../store.js";
import { EVENT_TYPENAMES, type Obj, isoDate, typeNameToItemType, upper } from "./graphql-values.js";
import { type PageArgs, connection } from "./relay-connection.js";
import { CommitNodes } from "./commit-nodes.js";

export abstract class IssueNodes extends CommitNodes {
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
      // The last body edit and the actor who made it (not necessarily the author):
      // https://docs.github.com/en/graphql/reference/objects#issuecomment
      lastEditedAt: isoDate(comment.lastEdit?.at ?? null),
      url: `${this.ctx.shapes.repoHtml(repo)}/issues/${issue.number}#issuecomment-${comment.id}`,
      viewerDidAuthor: comment.user.toLowerCase() === this.ctx.identity.login.toLowerCase(),
      isMinimized: false,
      issue: () => (issue.pull ? null : this.issue(repo, issue)),
      editor: comment.lastEdit ? this.actor(comment.lastEdit.editor) : null,
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
      // The parent's timeline names the sub-issue linked or unlinked, and who did it when:
      // https://docs.github.com/en/graphql/reference/objects#subissueaddedevent
      case "sub_issue_added":
      case "sub_issue_removed": {
        const sub =
          event.subIssue === undefined ? undefined : this.store.getIssue(repo.fullName, event.subIssue);
        return { ...base, subIssue: sub ? this.issue(repo, sub) : null };
      }
      default:
        return base;
    }
  }

  protected timeline(repo: Repo, issue: Issue, unionName: string) {
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
}
