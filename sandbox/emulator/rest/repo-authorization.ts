/** Who may call which repository operation: the checks in front of every `/repos/{owner}/{repo}` handler. */
import { type Permission, permissionAtLeast, type Repo } from "../store.js";
import { fail, type RestRequest, repoOf } from "./rest-helpers.js";

/** Permission a user token needs for an operation (installation and worker tokens act as the app). */
const USER_NEEDS: Record<string, Permission> = {
  "issues/create": "read",
  "issues/create-comment": "read",
  "reactions/create-for-issue-comment": "read",
  "reactions/create-for-issue": "read",
  "reactions/create-for-pull-request-review-comment": "read",
  "reactions/delete-for-issue-comment": "read",
  "reactions/delete-for-issue": "read",
  "pulls/create-review": "read",
  "pulls/create-reply-for-review-comment": "read",
  "pulls/submit-review": "read",
  "pulls/create": "read",
  "issues/update-comment": "read",
  "issues/delete-comment": "read",
  "issues/add-labels": "triage",
  "issues/set-labels": "triage",
  "issues/remove-label": "triage",
  "issues/remove-all-labels": "triage",
  "issues/update": "read",
  "pulls/update": "read",
  "issues/lock": "triage",
  "issues/unlock": "triage",
  "pulls/request-reviewers": "triage",
  "pulls/remove-requested-reviewers": "triage",
  // "People with at least triage permissions for a repository can add sub-issues":
  // https://docs.github.com/en/issues/tracking-your-work-with-issues/using-issues/adding-sub-issues
  "issues/add-sub-issue": "triage",
  "issues/remove-sub-issue": "triage",
};

function requireWrite(req: RestRequest, repo: Repo, need: Permission): void {
  const id = req.identity;
  if (id.kind === "app") fail(403, "Resource not accessible by integration");
  if (id.kind === "worker" && id.token?.repositories && !id.token.repositories.includes(repo.fullName)) {
    fail(403, "Resource not accessible by integration");
  }
  if (id.kind !== "user") return;
  const have = req.store.getPermission(repo.fullName, id.login);
  if (!permissionAtLeast(have, need)) {
    fail(
      403,
      need === "admin"
        ? "Must have admin rights to Repository."
        : "Resource not accessible by personal access token",
    );
  }
}

/** Authorization checks shared by every repository operation. */
export function authorizeRepoOperation(req: RestRequest): void {
  if (!req.match.template.startsWith("/repos/{owner}/{repo}")) return;
  const repo = repoOf(req);
  const id = req.identity;
  if (id.kind === "app" && req.match.operationId !== "apps/get-repo-installation") {
    fail(403, "Resource not accessible by integration");
  }
  // An installation token sees only its installation's repositories (of those, only the ones it was minted
  // for when it names some): another's is "Not Found", as GitHub answers for a private repository the token
  // cannot see (https://docs.github.com/en/apps/creating-github-apps/authenticating-with-a-github-app/authenticating-as-a-github-app-installation).
  // GitHub would let a public one's reads through; the sandbox refuses them too, so nothing relies on reading
  // outside its installation.
  if (id.kind === "installation" && id.token && !req.store.tokenReaches(id.token, repo.fullName)) {
    fail(404, "Not Found");
  }
  if (req.match.method === "GET" || req.match.method === "HEAD") {
    if (id.kind === "user" && repo.private && req.store.getPermission(repo.fullName, id.login) === "none") {
      fail(404, "Not Found");
    }
    return;
  }
  requireWrite(req, repo, USER_NEEDS[req.match.operationId] ?? "write");
}

export function isAuthorOrTriage(
  req: RestRequest,
  repo: Repo,
  author: string,
  need: Permission = "triage",
): boolean {
  const id = req.identity;
  if (id.kind !== "user") return true;
  if (id.login.toLowerCase() === author.toLowerCase()) return true;
  return permissionAtLeast(req.store.getPermission(repo.fullName, id.login), need);
}
