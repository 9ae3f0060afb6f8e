/** REST handlers of branches, commits, comparisons, trees and refs. */
import type { JsonObject } from "../shapes.js";
import {
  COMPARE_MAX_FILES,
  commitJson,
  diffEntry,
  refJson,
  servedDiffFiles,
  TREE_MAX_ENTRIES,
} from "./git-shapes.js";
import { refuseUnsignedRef } from "./git-database-endpoints.js";
import { bodyObject, commitShaOf, fail, list, type RestHandler, repoOf, str } from "./rest-helpers.js";

export const gitDataEndpoints: Record<string, RestHandler> = {
  "repos/list-branches": async (req) => {
    const repo = repoOf(req);
    const refs = (await req.store.listRefs(repo.fullName)).filter((r) => r.ref.startsWith("refs/heads/"));
    return list(req, refs, (r) => ({
      name: r.ref.slice("refs/heads/".length),
      commit: { sha: r.sha, url: `${req.shapes.repoApi(repo)}/commits/${r.sha}` },
      protected: false,
    }));
  },

  "repos/get-branch": async (req) => {
    const repo = repoOf(req);
    const branch = req.params.branch ?? "";
    const refs = await req.store.listRefs(repo.fullName);
    const found = refs.find((r) => r.ref === `refs/heads/${branch}`);
    if (!found) fail(404, "Branch not found");
    const info = await req.store.getCommit(repo.fullName, found.sha);
    const api = req.shapes.repoApi(repo);
    return {
      status: 200,
      body: {
        name: branch,
        commit: commitJson(req, repo, found.sha, info),
        _links: { self: `${api}/branches/${branch}`, html: `${req.shapes.repoHtml(repo)}/tree/${branch}` },
        protected: false,
        protection: {
          enabled: false,
          required_status_checks: { enforcement_level: "off", contexts: [], checks: [] },
        },
        protection_url: `${api}/branches/${branch}/protection`,
      },
    };
  },

  "repos/get-commit": async (req) => {
    const repo = repoOf(req);
    const sha = await commitShaOf(req, repo);
    const info = await req.store.getCommit(repo.fullName, sha);
    let files: JsonObject[] = [];
    const parent = info?.parents[0];
    if (parent) {
      try {
        const diff = await req.store.compare(repo.fullName, parent, sha);
        files = diff.files.map((f) => diffEntry(req, repo, sha, f));
      } catch {
        files = [];
      }
    }
    const additions = files.reduce((n, f) => n + Number(f.additions ?? 0), 0);
    const deletions = files.reduce((n, f) => n + Number(f.deletions ?? 0), 0);
    const verified = (await req.store.getGitBackend()?.database?.verified(repo, sha)) ?? false;
    return {
      status: 200,
      body: {
        ...commitJson(req, repo, sha, info, verified),
        stats: { total: additions + deletions, additions, deletions },
        files,
      },
    };
  },

  "repos/compare-commits-with-basehead": async (req) => {
    const repo = repoOf(req);
    const basehead = req.params.basehead ?? "";
    const dots = basehead.indexOf("...");
    if (dots < 0) fail(404, "Not Found");
    const base = basehead.slice(0, dots);
    const head = basehead.slice(dots + 3);
    const baseSha = await req.store.resolveRef(repo.fullName, base);
    const headSha = await req.store.resolveRef(repo.fullName, head);
    if (!baseSha || !headSha) fail(404, "Not Found");
    const diff = await req.store.compare(repo.fullName, base, head);
    const api = req.shapes.repoApi(repo);
    const baseInfo = await req.store.getCommit(repo.fullName, baseSha);
    const behind = diff.behind_by ?? 0;
    return {
      status: 200,
      body: {
        url: `${api}/compare/${basehead}`,
        html_url: `${req.shapes.repoHtml(repo)}/compare/${basehead}`,
        permalink_url: `${req.shapes.repoHtml(repo)}/compare/${baseSha}...${headSha}`,
        diff_url: `${req.shapes.repoHtml(repo)}/compare/${basehead}.diff`,
        patch_url: `${req.shapes.repoHtml(repo)}/compare/${basehead}.patch`,
        base_commit: commitJson(req, repo, baseSha, baseInfo),
        merge_base_commit: commitJson(req, repo, diff.merge_base_sha ?? baseSha, baseInfo),
        status:
          diff.ahead_by === 0 && behind === 0
            ? "identical"
            : diff.ahead_by > 0 && behind > 0
              ? "diverged"
              : diff.ahead_by > 0
                ? "ahead"
                : "behind",
        ahead_by: diff.ahead_by,
        behind_by: behind,
        total_commits: diff.ahead_by,
        commits: (diff.commits ?? []).map((c) => commitJson(req, repo, c.sha, c)),
        files: servedDiffFiles(diff.files, COMPARE_MAX_FILES).map((f) => diffEntry(req, repo, headSha, f)),
      },
    };
  },

  // A tree by SHA or ref, with each entry's git mode (`120000` symlink, `160000` submodule); `recursive` lists
  // every level. A recursive listing is cut at 100,000 entries and says `truncated: true`.
  // https://docs.github.com/en/rest/git/trees#get-a-tree
  "git/get-tree": async (req) => {
    const repo = repoOf(req);
    const ref = req.params.tree_sha ?? "";
    const entries = await req.store.treeEntries(repo.fullName, ref);
    if (!entries) fail(404, "Not Found");
    const sha = (await req.store.resolveRef(repo.fullName, ref)) ?? ref;
    const recursive = req.query.recursive !== undefined;
    const listed = recursive ? entries : entries.filter((e) => !e.path.includes("/"));
    const api = req.shapes.repoApi(repo);
    return {
      status: 200,
      body: {
        sha,
        url: `${api}/git/trees/${sha}`,
        truncated: listed.length > TREE_MAX_ENTRIES,
        tree: listed.slice(0, TREE_MAX_ENTRIES).map((e) => ({
          path: e.path,
          mode: e.mode,
          type: e.type,
          sha: e.sha,
          ...(e.type === "blob" ? { size: e.size ?? 0, url: `${api}/git/blobs/${e.sha}` } : {}),
          ...(e.type === "tree" ? { url: `${api}/git/trees/${e.sha}` } : {}),
        })),
      },
    };
  },

  // https://docs.github.com/en/rest/git/refs#get-a-reference (404 when the ref does not exist)
  "git/get-ref": async (req) => {
    const repo = repoOf(req);
    const name = `refs/${(req.params.ref ?? "").replace(/^refs\//, "")}`;
    const found = (await req.store.listRefs(repo.fullName)).find((r) => r.ref === name);
    if (!found) fail(404, "Not Found");
    return { status: 200, body: refJson(req, repo, found.ref, found.sha) };
  },

  // https://docs.github.com/en/rest/git/refs#list-matching-references (every ref that starts with the name;
  // an empty array when none does)
  "git/list-matching-refs": async (req) => {
    const repo = repoOf(req);
    const prefix = `refs/${(req.params.ref ?? "").replace(/^refs\//, "")}`;
    const refs = (await req.store.listRefs(repo.fullName)).filter((r) => r.ref.startsWith(prefix));
    return list(req, refs, (r) => refJson(req, repo, r.ref, r.sha));
  },

  // https://docs.github.com/en/rest/git/refs#create-a-reference (422 when it exists or is invalid)
  "git/create-ref": async (req) => {
    const repo = repoOf(req);
    const b = bodyObject(req);
    const ref = str(b, "ref") ?? "";
    const sha = str(b, "sha") ?? "";
    if (!ref.startsWith("refs/") || ref.split("/").length < 3)
      fail(422, "Reference name must start with 'refs/' and have at least two slashes.");
    // The ref must point at an object the repository has (a commit here): any other SHA is refused.
    if (!/^[0-9a-f]{40}$/.test(sha) || !(await req.store.hasCommit(repo.fullName, sha)))
      fail(422, "Object does not exist");
    if (req.store.getGitBackend()?.database) await refuseUnsignedRef(req, repo, ref, sha);
    await req.store.createRef(repo.fullName, ref, sha, req.identity.login);
    return {
      status: 201,
      body: refJson(req, repo, ref, sha),
      headers: { location: `${req.shapes.repoApi(repo)}/git/${ref}` },
    };
  },

  "git/update-ref": async (req) => {
    const repo = repoOf(req);
    const b = bodyObject(req);
    const name = `refs/${(req.params.ref ?? "").replace(/^refs\//, "")}`;
    const sha = str(b, "sha") ?? "";
    if (req.store.getGitBackend()?.database && (await req.store.hasCommit(repo.fullName, sha)))
      await refuseUnsignedRef(req, repo, name, sha);
    await req.store.updateRef(repo.fullName, name, sha, b.force === true, req.identity.login);
    return { status: 200, body: refJson(req, repo, name, sha) };
  },

  // https://docs.github.com/en/rest/git/refs#delete-a-reference (204; 422 when the ref does not exist)
  "git/delete-ref": async (req) => {
    const repo = repoOf(req);
    const name = `refs/${(req.params.ref ?? "").replace(/^refs\//, "")}`;
    await req.store.deleteRef(repo.fullName, name, req.identity.login);
    return { status: 204 };
  },
};
