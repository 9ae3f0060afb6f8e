/** REST handlers of the API root, the rate limit, users and the GitHub App (its installations and tokens). */
import { iso, type JsonObject } from "../shapes.js";
import type { Repo } from "../store.js";
import { bodyObject, countedList, fail, list, num, repoOf, type RestHandler } from "./rest-helpers.js";

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
    return { status: 200, body: { ...req.shapes.appObject(req.app.slug), installations_count: 1 } };
  },

  "apps/get-by-slug": (req) => {
    if (req.params.app_slug !== req.app.slug && req.params.app_slug !== "github-actions")
      fail(404, "Not Found");
    return { status: 200, body: req.shapes.appObject(req.params.app_slug ?? req.app.slug) };
  },

  "apps/list-installations": (req) => {
    if (req.identity.kind !== "app") fail(401, "A JSON web token could not be decoded");
    return list(req, [req.shapes.installation()], (i) => i);
  },

  "apps/get-installation": (req) => {
    if (req.identity.kind !== "app") fail(401, "A JSON web token could not be decoded");
    if (num(req.params.installation_id) !== req.app.installationId) fail(404, "Not Found");
    return { status: 200, body: req.shapes.installation() };
  },

  "apps/get-repo-installation": (req) => {
    if (req.identity.kind !== "app") fail(401, "A JSON web token could not be decoded");
    repoOf(req);
    return { status: 200, body: req.shapes.installation() };
  },

  "apps/get-org-installation": (req) => {
    if (req.identity.kind !== "app") fail(401, "A JSON web token could not be decoded");
    return { status: 200, body: req.shapes.installation() };
  },

  "apps/get-user-installation": (req) => {
    if (req.identity.kind !== "app") fail(401, "A JSON web token could not be decoded");
    return { status: 200, body: req.shapes.installation() };
  },

  "apps/create-installation-access-token": (req) => {
    if (req.identity.kind !== "app") fail(401, "A JSON web token could not be decoded");
    if (num(req.params.installation_id) !== req.app.installationId) fail(404, "Not Found");
    const b = bodyObject(req);
    const names = Array.isArray(b.repositories) ? b.repositories.map(String) : undefined;
    const ids = Array.isArray(b.repository_ids) ? b.repository_ids.map(Number) : undefined;
    let repos: Repo[] | null = null;
    if (names || ids) {
      repos = [];
      for (const name of names ?? []) {
        const found = req.store
          .listRepos()
          .find(
            (r) =>
              r.name.toLowerCase() === name.toLowerCase() || r.fullName.toLowerCase() === name.toLowerCase(),
          );
        if (!found)
          fail(
            422,
            "There is at least one repository that does not exist or is not accessible to the parent installation.",
          );
        repos.push(found);
      }
      for (const id of ids ?? []) {
        const found = req.store.getRepoById(id);
        if (!found)
          fail(
            422,
            "There is at least one repository that does not exist or is not accessible to the parent installation.",
          );
        repos.push(found);
      }
    }
    const info = req.store.issueInstallationToken(
      repos ? { repositories: repos.map((r) => r.fullName) } : {},
    );
    const permissions =
      (b.permissions as JsonObject | undefined) ?? (req.shapes.installation().permissions as JsonObject);
    return {
      status: 201,
      body: {
        token: info.token,
        expires_at: iso(info.expiresAt)!,
        permissions,
        repository_selection: repos ? "selected" : "all",
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

  "apps/list-repos-accessible-to-installation": (req) => {
    if (req.identity.kind !== "installation" && req.identity.kind !== "worker")
      fail(403, "Resource not accessible by integration");
    const allowed = req.identity.token?.repositories;
    const repos = req.store.listRepos().filter((r) => !allowed || allowed.includes(r.fullName));
    return countedList(req, "repositories", repos, (r) => req.shapes.repository(r), {
      repository_selection: allowed ? "selected" : "all",
    });
  },
};
