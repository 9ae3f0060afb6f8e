/**
 * REST handlers of the Git Database API's writes: blobs, trees and commits, each written into the repository's
 * git (sandbox/emulator/git/git-database-writes.ts), and a commit read back with its `verification`.
 */
import type { DatabaseTreeEntry, GitDatabase } from "../store/git-backend-contract.js";
import type { JsonObject } from "../shapes.js";
import type { Repo } from "../store.js";
import { signedBranchPattern } from "../merge/branch-rules-state.js";
import { bodyObject, fail, type RestHandler, type RestRequest, repoOf, str } from "./rest-helpers.js";
import { verificationJson } from "./git-shapes.js";

function databaseOf(req: RestRequest): GitDatabase {
  const database = req.store.getGitBackend()?.database;
  if (!database) fail(501, "the sandbox's Git Database API needs its git remote");
  return database;
}

/**
 * GitHub signs a commit it makes "if the request is verified and authenticated as the GitHub App or bot and
 * contains no custom author information, custom committer information, and no custom signature information"
 * (https://docs.github.com/en/authentication/managing-commit-signature-verification/about-commit-signature-verification#signature-verification-for-bots).
 * An installation's token and a workflow's GITHUB_TOKEN (the GitHub Actions App's installation) are the App's.
 */
function signsFor(req: RestRequest, body: Record<string, unknown>): boolean {
  const app = req.identity.kind === "installation" || req.identity.kind === "worker";
  return app && body.author === undefined && body.committer === undefined && body.signature === undefined;
}

function identityOf(
  value: unknown,
  fallback: { name: string; email: string },
): { name: string; email: string } {
  if (!value || typeof value !== "object") return fallback;
  const o = value as Record<string, unknown>;
  return {
    name: typeof o.name === "string" ? o.name : fallback.name,
    email: typeof o.email === "string" ? o.email : fallback.email,
  };
}

async function gitCommitJson(req: RestRequest, sha: string): Promise<JsonObject> {
  const repo = repoOf(req);
  const info = await req.store.getCommit(repo.fullName, sha);
  if (!info) fail(404, "Not Found");
  const verified = await databaseOf(req).verified({ owner: repo.owner, name: repo.name }, sha);
  const api = req.shapes.repoApi(repo);
  const author = { name: info.authorName, email: info.authorEmail, date: info.authorDate };
  return {
    sha,
    node_id: `C_${Buffer.from(`Commit:${sha}`).toString("base64url")}`,
    url: `${api}/git/commits/${sha}`,
    html_url: `${req.shapes.repoHtml(repo)}/commit/${sha}`,
    author,
    committer: {
      name: info.committerName ?? author.name,
      email: info.committerEmail ?? author.email,
      date: info.committerDate ?? author.date,
    },
    message: info.message,
    tree: { sha: info.tree ?? "", url: `${api}/git/trees/${info.tree ?? ""}` },
    parents: info.parents.map((p) => ({
      sha: p,
      url: `${api}/git/commits/${p}`,
      html_url: `${req.shapes.repoHtml(repo)}/commit/${p}`,
    })),
    verification: verificationJson(verified, info.committerDate ?? author.date),
  };
}

/**
 * A ref write through the API to a branch that requires signed commits is refused when it brings a commit GitHub
 * did not sign, as the push is ("contributors can only push commits that have been signed and verified to the
 * branch": https://docs.github.com/en/repositories/configuring-branches-and-merges-in-your-repository/managing-protected-branches/about-protected-branches#require-signed-commits).
 */
export async function refuseUnsignedRef(
  req: RestRequest,
  repo: Repo,
  ref: string,
  sha: string,
): Promise<void> {
  if (!ref.startsWith("refs/heads/")) return;
  const pattern = signedBranchPattern(req.store, repo);
  if (!pattern || !new RegExp(`^${pattern}$`).test(ref.slice("refs/heads/".length))) return;
  const current = (await req.store.listRefs(repo.fullName)).find((r) => r.ref === ref)?.sha ?? null;
  const unsigned = await databaseOf(req).unverified(repo, sha, current);
  if (unsigned.length)
    fail(422, `Protected branch update failed for ${ref}.\n\nCommits must have verified signatures.`);
}

export const gitDatabaseEndpoints: Record<string, RestHandler> = {
  // https://docs.github.com/en/rest/git/blobs#create-a-blob: `content` as utf-8 (the default) or base64.
  "git/create-blob": async (req) => {
    const repo = repoOf(req);
    const b = bodyObject(req);
    const encoding = str(b, "encoding") ?? "utf-8";
    if (encoding !== "utf-8" && encoding !== "base64")
      fail(422, `encoding must be utf-8 or base64, not ${encoding}`);
    const bytes = Buffer.from(str(b, "content") ?? "", encoding === "base64" ? "base64" : "utf8");
    const sha = await databaseOf(req).blob({ owner: repo.owner, name: repo.name }, bytes);
    const url = `${req.shapes.repoApi(repo)}/git/blobs/${sha}`;
    return { status: 201, body: { url, sha }, headers: { location: url } };
  },

  // https://docs.github.com/en/rest/git/trees#create-a-tree
  "git/create-tree": async (req) => {
    const repo = repoOf(req);
    const b = bodyObject(req);
    const entries = (Array.isArray(b.tree) ? b.tree : []) as DatabaseTreeEntry[];
    const base = str(b, "base_tree") ?? null;
    const sha = await databaseOf(req).tree({ owner: repo.owner, name: repo.name }, base, entries);
    const listed = (await req.store.treeEntries(repo.fullName, sha)) ?? [];
    const api = req.shapes.repoApi(repo);
    return {
      status: 201,
      body: {
        sha,
        url: `${api}/git/trees/${sha}`,
        truncated: false,
        tree: listed
          .filter((e) => !e.path.includes("/"))
          .map((e) => ({
            path: e.path,
            mode: e.mode,
            type: e.type,
            sha: e.sha,
            url: `${api}/git/${e.type}s/${e.sha}`,
          })),
      },
      headers: { location: `${api}/git/trees/${sha}` },
    };
  },

  // https://docs.github.com/en/rest/git/commits#create-a-commit: author and committer default to the caller.
  "git/create-commit": async (req) => {
    const repo = repoOf(req);
    const b = bodyObject(req);
    const caller = { name: req.identity.login, email: `${req.identity.login}@users.noreply.github.com` };
    const author = identityOf(b.author, caller);
    const sha = await databaseOf(req).commit(
      { owner: repo.owner, name: repo.name },
      {
        message: str(b, "message") ?? "",
        tree: str(b, "tree") ?? "",
        parents: Array.isArray(b.parents) ? (b.parents as string[]) : [],
        author: identityOf(b.committer, author),
      },
      signsFor(req, b),
    );
    const body = await gitCommitJson(req, sha);
    return { status: 201, body, headers: { location: String(body.url) } };
  },

  // https://docs.github.com/en/rest/git/commits#get-a-commit-object
  "git/get-commit": async (req) => ({
    status: 200,
    body: await gitCommitJson(req, req.params.commit_sha ?? ""),
  }),
};
