/**
 * What the controller reads to verify a task's pull request itself (the decisions are in
 * src/core/gates/pull-trust.ts and src/core/gates/diff-gate.ts):
 *
 * - for each task PR in review whose head SHA it has not read yet (the dashboard state keeps the verdict per
 *   head, so an idle reconcile reads nothing): the diff and the file modes at that exact head SHA.
 *
 * The diff comes from `GET /repos/{owner}/{repo}/compare/{base}...{head}` with both sides given as SHAs,
 * not from `GET /repos/{owner}/{repo}/pulls/{pull_number}/files`: the pulls endpoint lists whatever the head
 * is when GitHub answers, so a push between the snapshot and the read would be judged under the old SHA,
 * while a compare of two SHAs can only ever describe those commits. Its cost: it lists at most 300 files
 * (the pulls endpoint pages up to 3,000), and a list that long counts as fired rather than as read.
 * Docs: https://docs.github.com/en/rest/commits/commits#compare-two-commits
 * Neither endpoint shows file modes, so symlinks and submodules come from the head commit's tree:
 * https://docs.github.com/en/rest/git/trees#get-a-tree (mode `120000` symlink, `160000` submodule).
 * A changed manifest (package.json, package.yaml, package.json5, Cargo.toml, pyproject.toml) is read whole at
 * the merge base and at the head (REST "Get repository content",
 * https://docs.github.com/en/rest/repos/contents#get-repository-content): whether a changed line is an install
 * script, or reaches one through `npm run`, or which table a TOML key lies in, needs the parsed file, which a
 * patch does not show.
 */
import { parseDashboard } from "../core/dashboard/index.js";
import type { DiffFile, PullDiff } from "../core/gates/diff-gate.js";
import { trustedOpenPulls } from "../core/gates/pull-trust.js";
import { readsWholeManifest } from "../core/gates/supply-chain-gate.js";
import type { WorldSnapshot } from "../core/world.js";
import type { OctokitSurface, RepoRef } from "./transport/octokit-surface.js";
import { statusOf } from "./transport/errors.js";

/** The compare endpoint's documented cap on listed files. */
const COMPARE_MAX_FILES = 300;
/** Manifests read per diff at most; the rest count as not read (the gate fires on them). */
const MAX_MANIFESTS_PER_DIFF = 20;
/** Diffs read per reconcile at most; the others wait for the next one. */
const MAX_DIFFS_PER_RECONCILE = 10;

interface VerificationContext {
  client: OctokitSurface;
  repo: RepoRef;
  read: <T>(call: () => Promise<T>) => Promise<T>;
}

interface CompareFile {
  filename: string;
  status: string;
  changes?: number;
  patch?: string;
  previous_filename?: string;
}

interface TreeEntry {
  path?: string;
  mode?: string;
}

/**
 * Reads the diffs the decisions need: open task PRs from Autopilot whose task is in review (`reviewLabel`), and
 * best-of candidates' PRs, at head SHAs the dashboard state has no verdict for yet.
 */
export async function readPullDiffs(
  ctx: VerificationContext,
  world: WorldSnapshot,
  options: { branchPrefix: string; reviewLabel: string | null; gateDigest?: string },
): Promise<PullDiff[]> {
  const state = world.trackingIssue ? parseDashboard(world.trackingIssue.body).state : null;
  const known = new Set(
    (state?.diffGates ?? []).filter((g) => g.gate === options.gateDigest).map((g) => `${g.pr}@${g.sha}`),
  );
  const inReview = (issue: number) => {
    if (!options.reviewLabel) return true;
    const labels = world.issues.find((i) => i.number === issue)?.labels ?? [];
    return labels.some((l) => l.toLowerCase() === options.reviewLabel!.toLowerCase());
  };
  const out: PullDiff[] = [];
  for (const { pull, issue, candidate } of trustedOpenPulls(world, options.branchPrefix)) {
    if (out.length >= MAX_DIFFS_PER_RECONCILE) break;
    // A best-of candidate's task is in progress while its round is chosen: its diff is weighed then.
    if (known.has(`${pull.number}@${pull.headSha}`) || (!candidate && !inReview(issue))) continue;
    out.push(await readPullDiff(ctx, pull.number, pull.baseSha ?? pull.baseRef, pull.headSha));
  }
  return out;
}

async function readPullDiff(
  ctx: VerificationContext,
  pr: number,
  base: string,
  sha: string,
): Promise<PullDiff> {
  try {
    const compare = await ctx.read(() =>
      ctx.client.request("GET /repos/{owner}/{repo}/compare/{basehead}", {
        owner: ctx.repo.owner,
        repo: ctx.repo.name,
        basehead: `${base}...${sha}`,
      }),
    );
    const data = compare.data as { files?: CompareFile[]; merge_base_commit?: { sha?: string } };
    const listed = (data.files ?? []).slice(0, COMPARE_MAX_FILES);
    const files: DiffFile[] = listed.map((f) => ({
      filename: f.filename,
      status: f.status,
      changes: f.changes ?? 0,
      ...(f.patch !== undefined ? { patch: f.patch } : {}),
      ...(f.previous_filename ? { previousFilename: f.previous_filename } : {}),
      mode: null,
    }));
    if (files.some((f) => f.status !== "removed")) {
      const tree = await ctx.read(() =>
        ctx.client.request("GET /repos/{owner}/{repo}/git/trees/{tree_sha}", {
          owner: ctx.repo.owner,
          repo: ctx.repo.name,
          tree_sha: sha,
          recursive: "1",
        }),
      );
      // A truncated listing leaves some modes unknown: those files count as fired (src/core/gates/diff-gate.ts).
      const modes = new Map<string, string>();
      for (const entry of (tree.data as { tree?: TreeEntry[] }).tree ?? []) {
        if (entry.path && entry.mode) modes.set(entry.path, entry.mode);
      }
      for (const file of files) file.mode = modes.get(file.filename) ?? null;
    }
    await readManifests(ctx, files, data.merge_base_commit?.sha ?? base, sha);
    return { pr, sha, files, filesCapped: listed.length >= COMPARE_MAX_FILES };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { pr, sha, files: [], filesCapped: false, error: message.slice(0, 150) };
  }
}

/** Reads both versions of each changed manifest; one that cannot be read is left without (and gated). */
async function readManifests(
  ctx: VerificationContext,
  files: DiffFile[],
  mergeBase: string,
  head: string,
): Promise<void> {
  const manifests = files.filter((f) => f.status !== "removed" && readsWholeManifest(f.filename));
  for (const file of manifests.slice(0, MAX_MANIFESTS_PER_DIFF)) {
    try {
      const after = await readText(ctx, file.filename, head);
      if (after === null) continue;
      const before =
        file.status === "added"
          ? null
          : await readText(ctx, file.previousFilename ?? file.filename, mergeBase);
      file.manifest = { before, after };
    } catch {
      // Left unread: the rule that needs it fires instead (src/core/gates/supply-chain-gate.ts).
    }
  }
}

/** A file's text at a commit; null when there is no such file. Over 1 MB the API sends no content: thrown. */
async function readText(ctx: VerificationContext, path: string, ref: string): Promise<string | null> {
  try {
    const response = await ctx.read(() =>
      ctx.client.request("GET /repos/{owner}/{repo}/contents/{path}", {
        owner: ctx.repo.owner,
        repo: ctx.repo.name,
        path,
        ref,
      }),
    );
    const data = response.data as { type?: string; encoding?: string; content?: string };
    if (data?.type !== "file" || data.encoding !== "base64" || typeof data.content !== "string")
      throw new Error(`${path} at ${ref.slice(0, 12)} did not come back as a base64 file`);
    return Buffer.from(data.content.replace(/\s+/g, ""), "base64").toString("utf8");
  } catch (error) {
    if (statusOf(error) === 404) return null;
    throw error;
  }
}
