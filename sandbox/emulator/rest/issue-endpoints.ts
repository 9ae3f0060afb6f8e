/** REST handlers of issues: labels, the issues themselves, assignees, events, sub-issues and dependencies. */
import type { JsonObject } from "../shapes.js";
import type { Issue, IssueState, LockReason, Repo, StateReason } from "../store.js";
import { isAuthorOrTriage } from "./repo-authorization.js";
import {
  bodyObject,
  fail,
  issueOf,
  labelNames,
  list,
  num,
  type RestHandler,
  type RestRequest,
  repoOf,
  str,
  strOrNull,
} from "./rest-helpers.js";

function issueFilter(req: RestRequest, repo: Repo): Issue[] {
  const q = req.query;
  const state = q.state ?? "open";
  const wanted = (q.labels ?? "")
    .split(",")
    .map((l) => l.trim().toLowerCase())
    .filter(Boolean);
  const since = q.since ? new Date(q.since) : null;
  let issues = req.store
    .listIssues(repo.fullName)
    .filter((i) => state === "all" || i.state === state)
    .filter((i) => wanted.every((w) => i.labels.some((l) => l.toLowerCase() === w)))
    .filter((i) => !since || i.updatedAt.getTime() >= since.getTime())
    .filter((i) => !q.creator || i.user.toLowerCase() === q.creator.toLowerCase())
    .filter((i) => {
      if (!q.assignee) return true;
      if (q.assignee === "none") return i.assignees.length === 0;
      if (q.assignee === "*") return i.assignees.length > 0;
      return i.assignees.some((a) => a.toLowerCase() === q.assignee!.toLowerCase());
    })
    .filter((i) => !q.mentioned || (i.body ?? "").includes(`@${q.mentioned}`));
  const sort = q.sort ?? "created";
  const dir = (q.direction ?? "desc") === "asc" ? 1 : -1;
  if (sort === "comments") {
    const count = (i: Issue) => req.store.listComments(repo.fullName, i.number).length;
    issues = [...issues].sort((a, b) => dir * (count(a) - count(b)) || dir * (a.number - b.number));
  } else {
    const key =
      sort === "updated" ? (i: Issue) => i.updatedAt.getTime() : (i: Issue) => i.createdAt.getTime();
    issues = [...issues].sort((a, b) => dir * (key(a) - key(b)) || dir * (a.number - b.number));
  }
  return issues;
}

/** Lists the issues a relation of the path's issue names (sub-issues, blocked-by), paginated like GitHub. */
function listRelatedIssues(req: RestRequest, related: (issue: Issue) => number[]) {
  const repo = repoOf(req);
  const issues = related(issueOf(req, repo))
    .map((n) => req.store.getIssue(repo.fullName, n))
    .filter((i): i is Issue => !!i);
  return list(req, issues, (i) => req.shapes.issue(repo, i));
}

export const issueEndpoints: Record<string, RestHandler> = {
  "issues/list-labels-for-repo": (req) => {
    const repo = repoOf(req);
    return list(req, req.store.listLabels(repo.fullName), (l) => req.shapes.label(repo, l));
  },

  "issues/create-label": (req) => {
    const repo = repoOf(req);
    const b = bodyObject(req);
    const label = req.store.createLabel(repo.fullName, {
      name: str(b, "name")!,
      ...(str(b, "color") ? { color: str(b, "color")! } : {}),
      ...(b.description !== undefined ? { description: strOrNull(b, "description") ?? null } : {}),
    });
    return { status: 201, body: req.shapes.label(repo, label) };
  },

  "issues/get-label": (req) => {
    const repo = repoOf(req);
    const label = req.store.getLabel(repo.fullName, req.params.name ?? "");
    if (!label) fail(404, "Not Found");
    return { status: 200, body: req.shapes.label(repo, label) };
  },

  "issues/update-label": (req) => {
    const repo = repoOf(req);
    const b = bodyObject(req);
    const label = req.store.updateLabel(repo.fullName, req.params.name ?? "", {
      ...(str(b, "new_name") ? { newName: str(b, "new_name")! } : {}),
      ...(str(b, "color") ? { color: str(b, "color")! } : {}),
      ...(b.description !== undefined ? { description: strOrNull(b, "description") ?? null } : {}),
    });
    return { status: 200, body: req.shapes.label(repo, label) };
  },

  "issues/delete-label": (req) => {
    const repo = repoOf(req);
    req.store.deleteLabel(repo.fullName, req.params.name ?? "");
    return { status: 204 };
  },

  "issues/list-labels-on-issue": (req) => {
    const repo = repoOf(req);
    const issue = issueOf(req, repo);
    return list(req, req.store.labelsOf(repo.fullName, issue), (l) => req.shapes.label(repo, l));
  },

  "issues/add-labels": (req) => {
    const repo = repoOf(req);
    const issue = issueOf(req, repo);
    const names = labelNames(req.body);
    if (names.length === 0) fail(422, "Invalid request.\n\nNo labels given.");
    const labels = req.store.addLabels(repo.fullName, issue.number, names, req.identity.login);
    return { status: 200, body: labels.map((l) => req.shapes.label(repo, l)) };
  },

  "issues/set-labels": (req) => {
    const repo = repoOf(req);
    const issue = issueOf(req, repo);
    const labels = req.store.setLabels(repo.fullName, issue.number, labelNames(req.body), req.identity.login);
    return { status: 200, body: labels.map((l) => req.shapes.label(repo, l)) };
  },

  "issues/remove-label": (req) => {
    const repo = repoOf(req);
    const issue = issueOf(req, repo);
    const labels = req.store.removeLabel(
      repo.fullName,
      issue.number,
      req.params.name ?? "",
      req.identity.login,
    );
    return { status: 200, body: labels.map((l) => req.shapes.label(repo, l)) };
  },

  "issues/remove-all-labels": (req) => {
    const repo = repoOf(req);
    const issue = issueOf(req, repo);
    req.store.clearLabels(repo.fullName, issue.number, req.identity.login);
    return { status: 204 };
  },

  // ----- issues ------------------------------------------------------------------------------------------
  "issues/list-for-repo": (req) => {
    const repo = repoOf(req);
    return list(req, issueFilter(req, repo), (i) => req.shapes.issue(repo, i));
  },

  "issues/create": (req) => {
    const repo = repoOf(req);
    const b = bodyObject(req);
    const canTriage = isAuthorOrTriage(req, repo, "", "triage");
    const labels = canTriage ? labelNames({ labels: b.labels ?? [] }) : [];
    const assignees = canTriage && Array.isArray(b.assignees) ? b.assignees.map(String) : [];
    if (canTriage && typeof b.assignee === "string") assignees.push(b.assignee);
    const issue = req.store.createIssue(repo.fullName, {
      title: str(b, "title") ?? "",
      body: strOrNull(b, "body") ?? null,
      labels,
      assignees,
      author: req.identity.login,
    });
    return {
      status: 201,
      body: req.shapes.issue(repo, issue),
      headers: { location: `${req.shapes.repoApi(repo)}/issues/${issue.number}` },
    };
  },

  "issues/get": (req) => {
    const repo = repoOf(req);
    return { status: 200, body: req.shapes.issue(repo, issueOf(req, repo)) };
  },

  "issues/update": (req) => {
    const repo = repoOf(req);
    const issue = issueOf(req, repo);
    const b = bodyObject(req);
    const touchesTriage = "labels" in b || "assignees" in b || "assignee" in b || "milestone" in b;
    if (!isAuthorOrTriage(req, repo, touchesTriage ? "" : issue.user)) {
      fail(403, "Resource not accessible by personal access token");
    }
    const assignees = Array.isArray(b.assignees)
      ? b.assignees.map(String)
      : typeof b.assignee === "string"
        ? [b.assignee]
        : b.assignee === null
          ? []
          : undefined;
    const reason = strOrNull(b, "state_reason");
    req.store.updateIssue(
      repo.fullName,
      issue.number,
      {
        ...(b.title !== undefined && b.title !== null ? { title: String(b.title) } : {}),
        ...("body" in b ? { body: strOrNull(b, "body") ?? null } : {}),
        ...(str(b, "state") ? { state: str(b, "state") as IssueState } : {}),
        ...(reason !== undefined ? { stateReason: reason as StateReason } : {}),
        ...("labels" in b ? { labels: labelNames({ labels: b.labels ?? [] }) } : {}),
        ...(assignees ? { assignees } : {}),
      },
      req.identity.login,
    );
    return { status: 200, body: req.shapes.issue(repo, issue) };
  },

  "issues/lock": (req) => {
    const repo = repoOf(req);
    const issue = issueOf(req, repo);
    const reason = (str(bodyObject(req), "lock_reason") ?? null) as LockReason;
    req.store.lockIssue(repo.fullName, issue.number, req.identity.login, reason);
    return { status: 204 };
  },

  "issues/unlock": (req) => {
    const repo = repoOf(req);
    const issue = issueOf(req, repo);
    req.store.unlockIssue(repo.fullName, issue.number, req.identity.login);
    return { status: 204 };
  },

  "issues/add-assignees": (req) => {
    const repo = repoOf(req);
    const issue = issueOf(req, repo);
    const add = Array.isArray(bodyObject(req).assignees)
      ? (bodyObject(req).assignees as unknown[]).map(String)
      : [];
    req.store.updateIssue(
      repo.fullName,
      issue.number,
      { assignees: [...new Set([...issue.assignees, ...add])] },
      req.identity.login,
    );
    return { status: 201, body: req.shapes.issue(repo, issue) };
  },

  "issues/remove-assignees": (req) => {
    const repo = repoOf(req);
    const issue = issueOf(req, repo);
    const drop = new Set(
      (Array.isArray(bodyObject(req).assignees) ? (bodyObject(req).assignees as unknown[]) : []).map((a) =>
        String(a).toLowerCase(),
      ),
    );
    req.store.updateIssue(
      repo.fullName,
      issue.number,
      { assignees: issue.assignees.filter((a) => !drop.has(a.toLowerCase())) },
      req.identity.login,
    );
    return { status: 200, body: req.shapes.issue(repo, issue) };
  },

  "issues/list-events": (req) => {
    const repo = repoOf(req);
    const issue = issueOf(req, repo);
    return list(req, issue.events, (e) => req.shapes.issueEvent(repo, issue, e));
  },

  "issues/list-events-for-timeline": (req) => {
    const repo = repoOf(req);
    const issue = issueOf(req, repo);
    type Item = { at: Date; json: JsonObject };
    const items: Item[] = [
      ...issue.events.map((e) => ({ at: e.createdAt, json: req.shapes.issueEvent(repo, issue, e) })),
      ...req.store.listComments(repo.fullName, issue.number).map((c) => ({
        at: c.createdAt,
        json: { ...req.shapes.comment(repo, c), event: "commented", actor: req.shapes.user(c.user) },
      })),
    ];
    items.sort((a, b) => a.at.getTime() - b.at.getTime());
    return list(req, items, (i) => i.json);
  },

  // ----- sub-issues and dependencies -----------------------------------------------------------------------
  "issues/list-sub-issues": (req) => {
    return listRelatedIssues(req, (issue) => issue.subIssues);
  },

  "issues/add-sub-issue": (req) => {
    const repo = repoOf(req);
    const parent = issueOf(req, repo);
    const b = bodyObject(req);
    const child = req.store.getIssueById(repo.fullName, Number(b.sub_issue_id));
    if (!child)
      fail(422, "Validation Failed", [{ resource: "Issue", code: "invalid", field: "sub_issue_id" }]);
    req.store.addSubIssue(
      repo.fullName,
      parent.number,
      child.number,
      req.identity.login,
      b.replace_parent === true,
    );
    return { status: 201, body: req.shapes.issue(repo, child) };
  },

  "issues/remove-sub-issue": (req) => {
    const repo = repoOf(req);
    const parent = issueOf(req, repo);
    const child = req.store.getIssueById(repo.fullName, Number(bodyObject(req).sub_issue_id));
    if (!child) fail(404, "Not Found");
    req.store.removeSubIssue(repo.fullName, parent.number, child.number, req.identity.login);
    return { status: 200, body: req.shapes.issue(repo, child) };
  },

  "issues/get-parent": (req) => {
    const repo = repoOf(req);
    const issue = issueOf(req, repo);
    const parent = issue.parent !== null ? req.store.getIssue(repo.fullName, issue.parent) : undefined;
    if (!parent) fail(404, "Not Found");
    return { status: 200, body: req.shapes.issue(repo, parent) };
  },

  "issues/list-dependencies-blocked-by": (req) => {
    return listRelatedIssues(req, (issue) => issue.blockedBy);
  },

  "issues/add-blocked-by-dependency": (req) => {
    const repo = repoOf(req);
    const issue = issueOf(req, repo);
    const blocker = req.store.getIssueById(repo.fullName, Number(bodyObject(req).issue_id));
    if (!blocker) fail(422, "Validation Failed", [{ resource: "Issue", code: "invalid", field: "issue_id" }]);
    req.store.addBlockedBy(repo.fullName, issue.number, blocker.number, req.identity.login);
    return {
      status: 201,
      body: req.shapes.issue(repo, blocker),
      headers: { location: `${req.shapes.repoApi(repo)}/issues/${issue.number}/dependencies/blocked_by` },
    };
  },

  "issues/remove-dependency-blocked-by": (req) => {
    const repo = repoOf(req);
    const issue = issueOf(req, repo);
    const blocker = req.store.getIssueById(repo.fullName, num(req.params.issue_id));
    if (!blocker) fail(404, "Not Found");
    req.store.removeBlockedBy(repo.fullName, issue.number, blocker.number, req.identity.login);
    return { status: 200, body: req.shapes.issue(repo, blocker) };
  },

  "issues/list-dependencies-blocking": (req) => {
    const repo = repoOf(req);
    const issue = issueOf(req, repo);
    return list(req, req.store.listBlocking(repo.fullName, issue.number), (i) => req.shapes.issue(repo, i));
  },
};
