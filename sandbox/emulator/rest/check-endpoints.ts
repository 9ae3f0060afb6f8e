/** REST handlers of check runs, check suites and commit statuses. */
import type { CheckConclusion, CheckStatus, CheckSuite, Repo, StatusState } from "../store.js";
import {
  bodyObject,
  commitShaOf,
  countedList,
  fail,
  list,
  num,
  paginate,
  type RestHandler,
  type RestRequest,
  repoOf,
  str,
  strOrNull,
} from "./rest-helpers.js";

function suiteOf(req: RestRequest, repo: Repo): CheckSuite {
  const suite = req.store.getCheckSuite(repo.fullName, num(req.params.check_suite_id));
  if (!suite) fail(404, "Not Found");
  return suite;
}

export const checkEndpoints: Record<string, RestHandler> = {
  "checks/create": (req) => {
    const repo = repoOf(req);
    if (req.identity.kind === "user") fail(403, "You must authenticate via a GitHub App.");
    const b = bodyObject(req);
    const output = (b.output ?? {}) as Record<string, unknown>;
    const conclusion = str(b, "conclusion") as CheckConclusion | undefined;
    const run = req.store.createCheckRun(repo.fullName, {
      name: str(b, "name") ?? "",
      headSha: str(b, "head_sha") ?? "",
      appSlug: req.identity.kind === "worker" ? "github-actions" : req.app.slug,
      ...(str(b, "status") ? { status: str(b, "status") as CheckStatus } : {}),
      ...(conclusion ? { conclusion } : {}),
      ...(str(b, "started_at") ? { startedAt: new Date(str(b, "started_at")!) } : {}),
      ...(str(b, "completed_at") ? { completedAt: new Date(str(b, "completed_at")!) } : {}),
      output: {
        title: str(output, "title") ?? null,
        summary: str(output, "summary") ?? null,
        text: str(output, "text") ?? null,
      },
      ...(str(b, "details_url") ? { detailsUrl: str(b, "details_url")! } : {}),
      ...(str(b, "external_id") ? { externalId: str(b, "external_id")! } : {}),
      actor: req.identity.login,
    });
    return { status: 201, body: req.shapes.checkRun(repo, run) };
  },

  "checks/update": (req) => {
    const repo = repoOf(req);
    if (req.identity.kind === "user") fail(403, "You must authenticate via a GitHub App.");
    const b = bodyObject(req);
    const output = b.output as Record<string, unknown> | undefined;
    const conclusion = str(b, "conclusion") as CheckConclusion | undefined;
    const run = req.store.updateCheckRun(repo.fullName, num(req.params.check_run_id), {
      ...(str(b, "name") ? { name: str(b, "name")! } : {}),
      ...(str(b, "status") ? { status: str(b, "status") as CheckStatus } : {}),
      ...(conclusion ? { conclusion } : {}),
      ...(str(b, "completed_at") ? { completedAt: new Date(str(b, "completed_at")!) } : {}),
      ...(str(b, "started_at") ? { startedAt: new Date(str(b, "started_at")!) } : {}),
      ...(output
        ? {
            output: {
              ...(str(output, "title") !== undefined ? { title: str(output, "title")! } : {}),
              ...(str(output, "summary") !== undefined ? { summary: str(output, "summary")! } : {}),
              ...(str(output, "text") !== undefined ? { text: str(output, "text")! } : {}),
            },
          }
        : {}),
      ...(str(b, "details_url") ? { detailsUrl: str(b, "details_url")! } : {}),
      ...(str(b, "external_id") ? { externalId: str(b, "external_id")! } : {}),
      actor: req.identity.login,
    });
    return { status: 200, body: req.shapes.checkRun(repo, run) };
  },

  "checks/get": (req) => {
    const repo = repoOf(req);
    const run = req.store.getCheckRun(repo.fullName, num(req.params.check_run_id));
    if (!run) fail(404, "Not Found");
    return { status: 200, body: req.shapes.checkRun(repo, run) };
  },

  "checks/list-for-ref": async (req) => {
    const repo = repoOf(req);
    const sha = await commitShaOf(req, repo);
    let runs = req.store.listCheckRuns(repo.fullName, sha, {
      ...(req.query.check_name ? { checkName: req.query.check_name } : {}),
      ...(req.query.status ? { status: req.query.status as CheckStatus } : {}),
    });
    if ((req.query.filter ?? "latest") === "latest") {
      const seen = new Set<string>();
      runs = runs.filter((r) => {
        const key = `${r.appSlug}|${r.name}`;
        if (seen.has(key)) return false;
        seen.add(key);
        return true;
      });
    }
    if (req.query.app_id)
      runs = runs.filter((r) => String(req.shapes.appObject(r.appSlug).id) === req.query.app_id);
    return countedList(req, "check_runs", runs, (r) => req.shapes.checkRun(repo, r));
  },

  "checks/list-for-suite": (req) => {
    const repo = repoOf(req);
    const suite = suiteOf(req, repo);
    const runs = req.store.listCheckRuns(repo.fullName, suite.headSha, { suiteId: suite.id });
    return countedList(req, "check_runs", runs, (r) => req.shapes.checkRun(repo, r));
  },

  "checks/get-suite": (req) => {
    const repo = repoOf(req);
    const suite = suiteOf(req, repo);
    return { status: 200, body: req.shapes.checkSuite(repo, suite) };
  },

  "checks/list-suites-for-ref": async (req) => {
    const repo = repoOf(req);
    const sha = await commitShaOf(req, repo);
    const suites = req.store.listCheckSuites(repo.fullName, sha);
    return countedList(req, "check_suites", suites, (s) => req.shapes.checkSuite(repo, s));
  },

  "checks/create-suite": (req) => {
    const repo = repoOf(req);
    if (req.identity.kind === "user") fail(403, "You must authenticate via a GitHub App.");
    const sha = str(bodyObject(req), "head_sha") ?? "";
    const existing = req.store.listCheckSuites(repo.fullName, sha).find((s) => s.appSlug === req.app.slug);
    const suite = existing ?? req.store.ensureCheckSuite(repo.fullName, sha, req.app.slug);
    return { status: existing ? 200 : 201, body: req.shapes.checkSuite(repo, suite) };
  },

  "repos/create-commit-status": (req) => {
    const repo = repoOf(req);
    const b = bodyObject(req);
    const status = req.store.createStatus(repo.fullName, req.params.sha ?? "", {
      state: str(b, "state") as StatusState,
      ...(str(b, "context") ? { context: str(b, "context")! } : {}),
      ...("description" in b ? { description: strOrNull(b, "description") ?? null } : {}),
      ...("target_url" in b ? { targetUrl: strOrNull(b, "target_url") ?? null } : {}),
      creator: req.identity.login,
    });
    return { status: 201, body: req.shapes.status(repo, status) };
  },

  "repos/list-commit-statuses-for-ref": async (req) => {
    const repo = repoOf(req);
    const sha = (await req.store.resolveRef(repo.fullName, req.params.ref ?? "")) ?? req.params.ref ?? "";
    return list(req, req.store.listStatuses(repo.fullName, sha), (s) => req.shapes.status(repo, s));
  },

  "repos/get-combined-status-for-ref": async (req) => {
    const repo = repoOf(req);
    const sha = await req.store.resolveRef(repo.fullName, req.params.ref ?? "");
    if (!sha) fail(404, "Not Found");
    const combined = req.store.combinedStatus(repo.fullName, sha);
    const { items, headers } = paginate(req, combined.statuses);
    return {
      status: 200,
      body: {
        state: combined.state,
        statuses: items.map((s) => {
          const { creator: _c, ...rest } = req.shapes.status(repo, s);
          return rest;
        }),
        sha,
        total_count: combined.statuses.length,
        repository: req.shapes.repository(repo),
        commit_url: `${req.shapes.repoApi(repo)}/commits/${sha}`,
        url: `${req.shapes.repoApi(repo)}/commits/${sha}/status`,
      },
      headers,
    };
  },
};
