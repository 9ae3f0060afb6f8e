/** Builds GraphQL objects from store records, and finds records by node id. */
import { GraphQLError } from "graphql";
import { type Issue, type PullFields, type Repo, decodeNodeId } from "../store.js";
import type { Obj } from "./graphql-values.js";
import { PullNodes } from "./pull-nodes.js";

export class Nodes extends PullNodes {
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
