/**
 * The repository and App settings a new installation meets, which the rest of the sandbox does not model:
 * whether Actions may run, classic branch protection, rulesets (recorded here and answered by the read
 * endpoints; their merge rules are enforced by sandbox/emulator/merge/merge-requirements.ts), the App installation's
 * permissions and events, and GitHub's App-manifest registration flow (the web pages a person clicks through
 * and the code-for-credentials conversion endpoint).
 */
import { randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { readBody } from "./api-wire.js";
import type { SandboxApp } from "./auth.js";
import { type RestReply, type RestRequest, fail, list, repoOf } from "../rest/index.js";
import {
  appliesTo,
  type BranchProtection,
  branchRulesOf,
  repoKey,
  type Ruleset,
} from "../merge/branch-rules-state.js";
import { setAutoMergeAllowed } from "../merge/merge-automation-state.js";
import type { JsonObject } from "../shapes.js";
import { type Repo, type SandboxStore, permissionAtLeast } from "../store.js";
import { escapeHtml } from "../web/layout.js";

interface ManifestCode {
  manifest: JsonObject;
  owner: string;
  createdAt: number;
  used: boolean;
}

interface SetupState {
  actionsDisabled: Set<string>;
  notInstalled: Set<string>;
  installation: { permissions: Record<string, string>; events: string[] } | null;
  codes: Map<string, ManifestCode>;
}

const states = new WeakMap<SandboxStore, SetupState>();

function stateOf(store: SandboxStore): SetupState {
  let state = states.get(store);
  if (!state) {
    state = {
      actionsDisabled: new Set(),
      notInstalled: new Set(),
      installation: null,
      codes: new Map(),
    };
    states.set(store, state);
  }
  return state;
}

/** Scenario and test set-up: the knobs a repository owner turns in Settings. */
export const repoSettings = {
  setActionsEnabled(store: SandboxStore, repo: string, enabled: boolean): void {
    const set = stateOf(store).actionsDisabled;
    if (enabled) set.delete(repoKey(repo));
    else set.add(repoKey(repo));
  },
  setBranchProtection(
    store: SandboxStore,
    repo: string,
    branch: string,
    protection: BranchProtection | null,
  ): void {
    const key = `${repoKey(repo)}#${branch}`;
    if (protection) branchRulesOf(store).protection.set(key, protection);
    else branchRulesOf(store).protection.delete(key);
  },
  addRuleset(store: SandboxStore, repo: string, ruleset: Ruleset): void {
    const list = branchRulesOf(store).rulesets.get(repoKey(repo)) ?? [];
    list.push(ruleset);
    branchRulesOf(store).rulesets.set(repoKey(repo), list);
  },
  /** "Allow auto-merge" (sandbox/emulator/merge/merge-automation-state.ts). */
  setAllowAutoMerge(store: SandboxStore, repo: string, allowed: boolean): void {
    setAutoMergeAllowed(store, repo, allowed);
  },
  /** The App not installed on a repository (its installation does not cover it). */
  setInstalled(store: SandboxStore, repo: string, installed: boolean): void {
    const set = stateOf(store).notInstalled;
    if (installed) set.delete(repoKey(repo));
    else set.add(repoKey(repo));
  },
  /** The permissions and events the App's installation has accepted (default: the built-in ones). */
  setInstallationGrants(
    store: SandboxStore,
    grants: { permissions: Record<string, string>; events: string[] },
  ): void {
    stateOf(store).installation = grants;
  },
};

/** Overrides of the installation's permissions and events, or null for the defaults. */
export function installationGrants(store: SandboxStore) {
  return stateOf(store).installation;
}

function isInstalledOn(store: SandboxStore, repo: string): boolean {
  return !stateOf(store).notInstalled.has(repoKey(repo));
}

/**
 * Admin-only reads: an App needs the `administration` permission (the App manifest app.yml does not ask for
 * it), a user needs admin on the repository.
 */
function requireAdminRead(req: RestRequest, repo: Repo): void {
  if (req.identity.kind === "installation" || req.identity.kind === "worker" || req.identity.kind === "app")
    fail(403, "Resource not accessible by integration");
  if (!permissionAtLeast(req.store.getPermission(repo.fullName, req.identity.login), "admin"))
    fail(403, "Must have admin rights to Repository.");
}

/** REST handlers for the settings above, keyed by operationId (merged into the sandbox's handlers). */
export const setupHandlers: Record<string, (req: RestRequest) => RestReply> = {
  // https://docs.github.com/rest/apps/apps#get-a-repository-installation-for-the-authenticated-app — 404 when
  // the App is not installed on the repository; the permissions and events are those the owner accepted.
  "apps/get-repo-installation": (req) => {
    if (req.identity.kind !== "app") fail(401, "A JSON web token could not be decoded");
    const repo = repoOf(req);
    const installation = req.store.installationFor(repo.fullName);
    if (!installation || !isInstalledOn(req.store, repo.fullName)) fail(404, "Not Found");
    const grants = installationGrants(req.store);
    return {
      status: 200,
      body: {
        ...req.shapes.installation(installation!),
        ...(grants ? { permissions: grants.permissions, events: grants.events } : {}),
      },
    };
  },

  // https://docs.github.com/rest/actions/permissions#get-github-actions-permissions-for-a-repository
  // (admin, or an App with `administration: read`)
  "actions/get-github-actions-permissions-repository": (req) => {
    const repo = repoOf(req);
    requireAdminRead(req, repo);
    const enabled = !stateOf(req.store).actionsDisabled.has(repoKey(repo.fullName));
    return { status: 200, body: enabled ? { enabled, allowed_actions: "all" } : { enabled } };
  },

  // https://docs.github.com/rest/branches/branch-protection#get-branch-protection — 404 "Branch not protected"
  "repos/get-branch-protection": (req) => {
    const repo = repoOf(req);
    requireAdminRead(req, repo);
    const protection = branchRulesOf(req.store).protection.get(
      `${repoKey(repo.fullName)}#${req.params.branch}`,
    );
    if (!protection) fail(404, "Branch not protected");
    const url = `${req.shapes.apiUrl}/repos/${repo.fullName}/branches/${req.params.branch}/protection`;
    const body: JsonObject = {
      url,
      required_status_checks: {
        url: `${url}/required_status_checks`,
        strict: protection.strict === true,
        contexts: protection.requiredChecks,
        contexts_url: `${url}/required_status_checks/contexts`,
        checks: protection.requiredChecks.map((context) => ({ context, app_id: null })),
      },
    };
    if (protection.requiredApprovals > 0) {
      body.required_pull_request_reviews = {
        url: `${url}/required_pull_request_reviews`,
        dismiss_stale_reviews: protection.dismissStaleReviews === true,
        require_code_owner_reviews: false,
        required_approving_review_count: protection.requiredApprovals,
      };
    }
    return { status: 200, body };
  },

  // https://docs.github.com/rest/repos/rules#get-rules-for-a-branch — anyone with read access may list them;
  // the list is paginated (`per_page`, `page`) like every list.
  "repos/get-branch-rules": (req) => {
    const repo = repoOf(req);
    const branch = req.params.branch ?? "";
    const rules = (branchRulesOf(req.store).rulesets.get(repoKey(repo.fullName)) ?? [])
      .map((ruleset, index) => ({ ruleset, index }))
      .filter(({ ruleset }) => appliesTo(ruleset, branch, repo.defaultBranch))
      .flatMap(({ ruleset, index }) => ruleset.rules.map((rule) => ({ rule, id: index + 1 })));
    return list(req, rules, ({ rule, id }) => ({
      type: rule.type,
      ...(rule.parameters ? { parameters: rule.parameters } : {}),
      ruleset_source_type: "Repository",
      ruleset_source: repo.fullName,
      ruleset_id: id,
    }));
  },

  // https://docs.github.com/rest/apps/apps#create-a-github-app-from-a-manifest — no authentication; the
  // code is single-use and expires after an hour (https://docs.github.com/apps/sharing-github-apps/registering-a-github-app-from-a-manifest, "Step 3").
  "apps/create-from-manifest": (req) => {
    const entry = stateOf(req.store).codes.get(req.params.code ?? "");
    const now = req.store.clock().getTime();
    if (!entry || entry.used || now - entry.createdAt > 3_600_000) fail(404, "Not Found");
    entry.used = true;
    const app = req.app;
    const manifest = entry.manifest;
    const permissions = (manifest.default_permissions ?? {}) as Record<string, string>;
    const events = (manifest.default_events ?? []) as string[];
    stateOf(req.store).installation = {
      permissions: { ...permissions, metadata: permissions.metadata ?? "read" },
      events,
    };
    const when = new Date(now).toISOString().replace(/\.\d{3}Z$/, "Z");
    return {
      status: 201,
      body: {
        id: app.id,
        slug: app.slug,
        node_id: `A_sandbox${app.id}`,
        client_id: app.clientId,
        owner: req.shapes.user(entry.owner),
        name: String(manifest.name ?? app.name),
        description: typeof manifest.description === "string" ? manifest.description : null,
        external_url: String(manifest.url ?? ""),
        html_url: `${req.shapes.htmlUrl}/apps/${app.slug}`,
        created_at: when,
        updated_at: when,
        permissions,
        events,
        client_secret: randomBytes(20).toString("hex"),
        webhook_secret: app.webhookSecret,
        pem: app.privateKey,
      },
    };
  },
};

function html(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "text/html; charset=utf-8", ...headers });
  res.end(
    `<!doctype html><html><head><meta charset="utf-8"><title>GitHub (sandbox)</title><link rel="icon" href="data:,"></head><body>${body}</body></html>`,
  );
}

/**
 * GitHub's manifest pages (https://docs.github.com/apps/sharing-github-apps/registering-a-github-app-from-a-manifest,
 * "Step 1" and "Step 2"): a form POST of `manifest` (JSON) to
 * `/settings/apps/new?state=…` or `/organizations/ORG/settings/apps/new?state=…` shows the App to create; the
 * person presses "Create GitHub App" and is redirected to the manifest's `redirect_url` with `code` and the
 * same `state`. The sandbox has no signed-in person: a personal App belongs to the sandbox App's owner.
 */
export function manifestPages(store: SandboxStore, app: SandboxApp) {
  return async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> => {
    const match = /^\/(?:organizations\/([^/]+)\/)?settings\/apps\/new(\/confirm)?$/.exec(url.pathname);
    if (!match || req.method !== "POST") {
      html(res, 404, "<h1>Not Found</h1>");
      return;
    }
    const owner = match[1] ? decodeURIComponent(match[1]) : app.owner;
    const form = new URLSearchParams((await readBody(req)).toString("utf8"));
    const text = form.get("manifest");
    let manifest: JsonObject;
    try {
      manifest = JSON.parse(text ?? "") as JsonObject;
      if (!manifest || typeof manifest !== "object" || Array.isArray(manifest))
        throw new Error("not an object");
    } catch {
      html(
        res,
        400,
        "<h1>Invalid GitHub App manifest</h1><p>The <code>manifest</code> field must be JSON.</p>",
      );
      return;
    }
    // The manifest's `url` (the App's homepage) is required, and so is `hook_attributes.url` when the
    // manifest configures a webhook ("GitHub App Manifest parameters" on the page cited above).
    const redirect = typeof manifest.redirect_url === "string" ? manifest.redirect_url : null;
    const hook = manifest.hook_attributes as { url?: unknown } | undefined;
    if (
      !redirect ||
      !/^https?:\/\//.test(redirect) ||
      typeof manifest.url !== "string" ||
      !/^https?:\/\//.test(manifest.url) ||
      (hook !== undefined && typeof hook?.url !== "string")
    ) {
      html(
        res,
        422,
        "<h1>Invalid GitHub App manifest</h1><p>url, redirect_url and hook_attributes.url are required URLs.</p>",
      );
      return;
    }
    const state = form.get("state") ?? url.searchParams.get("state") ?? "";
    if (!match[2]) {
      html(
        res,
        200,
        `<h1>Create GitHub App for ${escapeHtml(owner)}</h1>
<p>GitHub App name: <strong id="app-name">${escapeHtml(String(manifest.name ?? ""))}</strong></p>
<form method="post" action="${escapeHtml(url.pathname)}/confirm">
<input type="hidden" name="manifest" value="${escapeHtml(JSON.stringify(manifest))}">
<input type="hidden" name="state" value="${escapeHtml(state)}">
<button type="submit" id="create">Create GitHub App for ${escapeHtml(owner)}</button>
</form>`,
      );
      return;
    }
    const code = randomBytes(16).toString("hex");
    stateOf(store).codes.set(code, { manifest, owner, createdAt: store.clock().getTime(), used: false });
    const target = new URL(redirect);
    target.searchParams.set("code", code);
    if (state) target.searchParams.set("state", state);
    res.writeHead(302, { location: target.toString() });
    res.end();
  };
}
