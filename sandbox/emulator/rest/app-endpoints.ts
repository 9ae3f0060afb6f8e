/** REST handlers of the API root, the rate limit, users and the GitHub App (its installations and tokens). */
import { iso, type JsonObject } from "../shapes.js";
import type { Repo } from "../store.js";
import {
  bodyObject,
  countedList,
  fail,
  list,
  num,
  type RestHandler,
  type RestReply,
  type RestRequest,
} from "./rest-helpers.js";

export const appEndpoints: Record<string, RestHandler> = {
  "meta/root": (req) => ({ status: 200, body: { current_user_url: `${req.shapes.apiUrl}/user` } }),

  "rate-limit/get": (req) => {
    const core = req.rateLimiter.peek(req.identity.bucket, "core", req.limitFor(req.identity, "core"));
    const graphql = req.rateLimiter.peek(
      req.identity.bucket,
      "graphql",
      req.limitFor(req.identity, "graphql"),
    );
    const view = (s: typeof core) => ({
      limit: s.limit,
      remaining: s.remaining,
      reset: s.reset,
      used: s.used,
      resource: s.resource,
    });
    const other = (resource: string) => ({ limit: 30, remaining: 30, reset: core.reset, used: 0, resource });
    return {
      status: 200,
      body: {
        resources: {
          core: view(core),
          graphql: view(graphql),
          search: other("search"),
          integration_manifest: other("integration_manifest"),
        },
        rate: view(core),
      },
    };
  },

  "users/get-authenticated": (req) => {
    if (req.identity.kind !== "user") fail(403, "Resource not accessible by integration");
    return { status: 200, body: req.shapes.publicUser(req.identity.login) };
  },

  "users/get-by-username": (req) => {
    const user = req.store.getUser(req.params.username ?? "");
    if (!user) fail(404, "Not Found");
    return { status: 200, body: req.shapes.publicUser(user.login) };
  },

  "apps/get-authenticated": (req) => {
    if (req.identity.kind !== "app") fail(401, "A JSON web token could not be decoded");
    return {
      status: 200,
      body: {
        ...req.shapes.appObject(req.app.slug),
        installations_count: req.store.listInstallations().length,
      },
    };
  },

  "apps/get-by-slug": (req) => {
    if (req.params.app_slug !== req.app.slug && req.params.app_slug !== "github-actions")
      fail(404, "Not Found");
    return { status: 200, body: req.shapes.appObject(req.params.app_slug ?? req.app.slug) };
  },

  // https://docs.github.com/en/rest/apps/apps#list-installations-for-the-authenticated-app: every installation,
  // paginated (`per_page`, `page`).
  "apps/list-installations": (req) => {
    if (req.identity.kind !== "app") fail(401, "A JSON web token could not be decoded");
    return list(req, req.store.listInstallations(), (i) => req.shapes.installation(i));
  },

  "apps/get-installation": (req) => {
    if (req.identity.kind !== "app") fail(401, "A JSON web token could not be decoded");
    const installation = req.store.getInstallation(num(req.params.installation_id));
    if (!installation) fail(404, "Not Found");
    return { status: 200, body: req.shapes.installation(installation) };
  },

  "apps/get-org-installation": (req) => installationOnAccount(req, req.params.org ?? ""),

  "apps/get-user-installation": (req) => installationOnAccount(req, req.params.username ?? ""),

  // https://docs.github.com/en/rest/apps/apps#create-an-installation-access-token-for-an-app: a token of that
  // installation, for all its repositories or those named (422 when one is not the installation's).
  "apps/create-installation-access-token": (req) => {
    if (req.identity.kind !== "app") fail(401, "A JSON web token could not be decoded");
    const installation = req.store.getInstallation(num(req.params.installation_id));
    if (!installation) fail(404, "Not Found");
    const b = bodyObject(req);
    const names = Array.isArray(b.repositories) ? b.repositories.map(String) : undefined;
    const ids = Array.isArray(b.repository_ids) ? b.repository_ids.map(Number) : undefined;
    const reachable = req.store.installationRepos(installation.id);
    const notAccessible: () => never = () =>
      fail(
        422,
        "There is at least one repository that does not exist or is not accessible to the parent installation.",
      );
    let repos: Repo[] | null = null;
    if (names || ids) {
      repos = [];
      for (const name of names ?? []) {
        // `repositories` names them without the owner; the installation's account is the owner.
        const found = reachable.find(
          (r) =>
            r.name.toLowerCase() === name.toLowerCase() || r.fullName.toLowerCase() === name.toLowerCase(),
        );
        if (!found) notAccessible();
        repos.push(found);
      }
      for (const id of ids ?? []) {
        const found = reachable.find((r) => r.id === id);
        if (!found) notAccessible();
        repos.push(found);
      }
    }
    const info = req.store.issueInstallationToken({
      installationId: installation.id,
      ...(repos ? { repositories: repos.map((r) => r.fullName) } : {}),
    });
    const permissions =
      (b.permissions as JsonObject | undefined) ??
      (req.shapes.installation(installation).permissions as JsonObject);
    return {
      status: 201,
      body: {
        token: info.token,
        expires_at: iso(info.expiresAt)!,
        permissions,
        repository_selection: repos ? "selected" : installation.repositorySelection,
        ...(repos ? { repositories: repos.map((r) => req.shapes.repository(r)) } : {}),
      },
    };
  },

  "apps/revoke-installation-access-token": (req) => {
    if (req.identity.kind !== "installation" || !req.identity.token)
      fail(403, "Resource not accessible by integration");
    req.store.revokeToken(req.identity.token.token);
    return { status: 204 };
  },

  // https://docs.github.com/en/rest/apps/installations#list-repositories-accessible-to-the-app-installation:
  // the token's installation's repositories (only those it was minted for, when it names some), paginated.
  "apps/list-repos-accessible-to-installation": (req) => {
    if (req.identity.kind !== "installation" && req.identity.kind !== "worker")
      fail(403, "Resource not accessible by integration");
    const token = req.identity.token;
    const repos = req.store.listRepos().filter((r) => token && req.store.tokenReaches(token, r.fullName));
    const installation =
      token?.installationId != null ? req.store.getInstallation(token.installationId) : undefined;
    return countedList(req, "repositories", repos, (r) => req.shapes.repository(r), {
      repository_selection: token?.repositories ? "selected" : (installation?.repositorySelection ?? "all"),
    });
  },
};

/** The installation on an organization or user account; 404 when the App is not installed there. */
function installationOnAccount(req: RestRequest, login: string): RestReply {
  if (req.identity.kind !== "app") fail(401, "A JSON web token could not be decoded");
  const installation =
    req.store.installationOnAccount(login) ??
    // The default installation answers for any account, as it covers every repository.
    req.store.listInstallations().find((i) => i.coversEveryOwner);
  if (!installation) fail(404, "Not Found");
  return { status: 200, body: req.shapes.installation(installation) };
}
