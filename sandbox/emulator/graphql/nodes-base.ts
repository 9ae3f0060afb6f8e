/** The base of the GraphQL node builders: the context, actors, labels and reactions. */
import type { Issue, Label, PullFields, Reaction, Repo, SandboxStore } from "../store.js";
import { type Obj, REACTION_CONTENT, isoDate } from "./graphql-values.js";
import { type PageArgs, connection } from "./relay-connection.js";
import type { GraphqlContext } from "./graphql-context.js";

export abstract class NodesBase {
  constructor(protected readonly ctx: GraphqlContext) {}

  protected get store(): SandboxStore {
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
  protected lastEdit(issue: Issue): { at: Date; editor: string } | null {
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

  protected labelsOf(repo: Repo, issue: Issue) {
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

  protected app(slug: string): Obj {
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

  /** A repository object (built in repository-nodes.ts; issues, commits and pulls link back to it). */
  abstract repository(repo: Repo): Obj;

  /** A pull request object (built in pull-nodes.ts; timelines and repositories link to it). */
  abstract pull(repo: Repo, issue: Issue & { pull: PullFields }): Obj;
}
