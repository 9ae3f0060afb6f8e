/**
 * Red team, controller: diffs that hide from a gate computed in the agent's checkout. The controller reads the
 * change itself from the API at the PR's head SHA; each test feeds it one hiding trick and asserts the gate
 * still fires and nothing merges without a writer's approval of that head.
 */
import nock from "nock";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../src/core/config/index.js";
import {
  type DiffFile,
  evaluateDiffGate,
  humanGateDigest,
  type PullDiff,
} from "../../src/core/gates/diff-gate.js";
import { decide } from "../../src/core/reconcile/decide.js";
import type { PullNode } from "../../src/core/world.js";
import { Gateway } from "../../src/github/gateway.js";
import { newRepoMemory } from "../../src/github/snapshot/snapshot.js";
import { createOctokit } from "../../src/github/transport/octokit.js";
import {
  check,
  issue,
  input,
  minutes,
  only,
  pull,
  readBack,
  result,
  review,
  run,
  step,
  world,
} from "../core/world.js";
import {
  API,
  BOT_ID,
  gqlIssue,
  gqlPull,
  gqlTracking,
  OWNER,
  REPO,
  replyDiff,
  replyRuns,
  replySnapshot,
  snapshotPage,
} from "../github/fixtures.js";

const GATE = DEFAULT_CONFIG.humanGate;
const file = (filename: string, extra: Partial<DiffFile> = {}): DiffFile => ({
  filename,
  status: "modified",
  changes: 1,
  patch: "@@ -1 +1 @@\n-a\n+b",
  mode: "100644",
  ...extra,
});
const diff = (files: DiffFile[], extra: Partial<PullDiff> = {}): PullDiff => ({
  pr: 107,
  sha: "sha7a",
  files,
  filesCapped: false,
  ...extra,
});
const rules = (files: DiffFile[], extra: Partial<PullDiff> = {}) =>
  evaluateDiffGate(diff(files, extra), GATE);

describe("the controller's own human gate fires on what a checkout can hide", () => {
  it("lets a plain change through", () => {
    expect(rules([file("src/greet.js")])).toEqual([]);
  });

  it("fires on a file the API shows without a patch: `* -diff` attributes, a binary, a file over 2 MiB", () => {
    expect(rules([file("src/notes.js", { patch: null, changes: 0 })])).toEqual([
      "no diff shown (binary or too large): src/notes.js",
    ]);
    expect(rules([file("assets/logo.png", { patch: undefined })])[0]).toMatch(/^no diff shown/);
  });

  it("reads keywords in the patch GitHub serves even when the worker saw 'Binary files differ'", () => {
    const hit = rules([file("src/notes.js", { patch: "@@ -0,0 +1 @@\n+run the deploy script" })]);
    expect(hit.some((r) => r.startsWith("deploy"))).toBe(true);
  });

  it("fires on a change under .github/actions, with a non-ASCII path too", () => {
    expect(rules([file(".github/actions/setup/action.yml")])).toContain(
      ".github/** (path: .github/actions/setup/action.yml)",
    );
    expect(rules([file(".github/workflows/déploiement.yml")]).join("\n")).toContain(
      ".github/workflows/** (path: .github/workflows/déploiement.yml)",
    );
    expect(rules([file(".github/dependabot.yml")])).toContain(".github/** (path: .github/dependabot.yml)");
  });

  it("fires on a symlink, a submodule, and a file whose mode the tree did not list", () => {
    expect(rules([file("src/link.js", { mode: "120000" })])).toContain("symlink: src/link.js");
    expect(
      rules([
        file("vendor/lib", {
          mode: "160000",
          patch: "@@ -1 +1 @@\n-Subproject commit a\n+Subproject commit b",
        }),
      ]),
    ).toContain("submodule: vendor/lib");
    expect(rules([file("src/x.js", { mode: null })])).toContain("file mode unknown: src/x.js");
  });

  it("fires on a deletion, a rename, a copy and a mode change", () => {
    expect(
      rules([file("src/legacy.js", { status: "removed", patch: "@@ -1 +0,0 @@\n-x", mode: null })]),
    ).toEqual(["deleted file: src/legacy.js"]);
    expect(
      rules([file("src/b.js", { status: "renamed", previousFilename: "src/a.js", patch: null })]),
    ).toContain("renamed file: src/a.js → src/b.js");
    expect(rules([file("src/c.js", { status: "copied", previousFilename: "src/a.js" })])).toContain(
      "copied file: src/a.js → src/c.js",
    );
    expect(rules([file("run.sh", { status: "changed", patch: null, mode: "100755" })])).toContain(
      "mode changed: run.sh",
    );
  });

  it("fires on a renamed gated path (the old name counts) and on a path with control characters", () => {
    const moved = rules([
      file("docs/ci.yml", { status: "renamed", previousFilename: ".github/workflows/ci.yml" }),
    ]);
    expect(moved.join("\n")).toContain(".github/workflows/** (path: .github/workflows/ci.yml)");
    expect(rules([file("src/a\nb.js")])).toContain("unreadable path: src/a?b.js");
  });

  it("fires when the file list is at the API's cap, and when the diff could not be read", () => {
    expect(rules([file("a.js")], { filesCapped: true })[0]).toMatch(/^diff too large/);
    expect(rules([], { error: "Not Found" })).toEqual(["diff unreadable: Not Found"]);
  });
});

describe("reconcile: the controller's gate decides, the worker's is only an early warning", () => {
  const BOT = 4242;
  const own = (extra: Partial<PullNode> = {}): PullNode =>
    pull(7, {
      isCrossRepository: false,
      headRepository: "acme/app",
      author: "autopilot",
      authorId: BOT,
      ...extra,
    });
  const gatedWorld = (pr: PullNode, files: DiffFile[]) =>
    world({
      issues: [issue(7, { labels: ["autopilot:review"] })],
      pulls: [pr],
      botId: BOT,
      // The worker's own check saw nothing (a fooled gate): its result and the PR body say "not fired".
      workerResults: [result(7, { prNumber: 107, humanGate: { fired: false, rules: [] } })],
      pullDiffs: [diff(files, { pr: pr.number, sha: pr.headSha })],
    });

  it("holds a PR the worker's gate passed until a writer approves its head, then merges it", () => {
    const w = gatedWorld(own(), [file(".github/actions/setup/action.yml")]);
    const held = step(w, null, { now: minutes(40) });
    expect(only(held.decision.effects, "mergePr")).toEqual([]);
    const comment = only(held.decision.effects, "comment").find((c) => c.key === "gate-107");
    expect(comment?.body).toContain("(path: .github/actions/setup/action.yml)");
    expect(held.state.diffGates).toEqual([
      {
        pr: 107,
        sha: "sha7a",
        rules: [".github/** (path: .github/actions/setup/action.yml)"],
        gate: humanGateDigest(GATE),
        lines: 1,
      },
    ]);

    // An approval from someone without write access does not count; a writer's approval of the head does.
    const outsider = {
      ...w,
      pulls: [own({ reviews: [review("outsider", "APPROVED", "sha7a")] })],
      pullDiffs: [],
    };
    const still = decide({ ...input(outsider), state: readBack(held.decision, w), now: minutes(45) });
    expect(only(still.effects, "mergePr")).toEqual([]);
    const approved = { ...w, pulls: [own({ reviews: [review("dev", "APPROVED", "sha7a")] })], pullDiffs: [] };
    const merged = decide({ ...input(approved), state: readBack(held.decision, w), now: minutes(46) });
    expect(only(merged.effects, "mergePr")).toEqual([
      expect.objectContaining({ pr: 107, expectedHeadSha: "sha7a" }),
    ]);
  });

  it("keeps its verdict per head in the state: a later reconcile that read nothing is still gated", () => {
    const w = gatedWorld(own(), [file("src/legacy.js", { status: "removed", mode: null })]);
    const first = step(w, null, { now: minutes(40) });
    const idle = { ...w, pullDiffs: [] };
    const later = decide({ ...input(idle), state: readBack(first.decision, w), now: minutes(50) });
    expect(only(later.effects, "mergePr")).toEqual([]);
    expect(later.state.tasks["7"]!.gate).toContain("deleted file: src/legacy.js");
  });

  it("does not merge at an old verdict when the head moved: it waits for the diff of the new head", () => {
    const clean = gatedWorld(own(), [file("src/greet.js")]);
    const first = step(clean, null, { now: minutes(40) });
    expect(only(first.decision.effects, "mergePr")).toEqual([
      expect.objectContaining({ expectedHeadSha: "sha7a" }),
    ]);

    // A push moved the head to sha7b; its checks are green, but its diff has not been read yet.
    const moved = { ...clean, pulls: [own({ headSha: "sha7b" })], pullDiffs: [] };
    const waiting = decide({ ...input(moved), state: readBack(first.decision, clean), now: minutes(50) });
    expect(only(waiting.effects, "mergePr")).toEqual([]);

    // Read now: the new head adds a symlink, so it waits for a person instead of merging.
    const read = { ...moved, pullDiffs: [diff([file("src/link.js", { mode: "120000" })], { sha: "sha7b" })] };
    const gated = decide({ ...input(read), state: readBack(first.decision, clean), now: minutes(51) });
    expect(only(gated.effects, "mergePr")).toEqual([]);
    expect(gated.state.tasks["7"]!.gate).toContain("symlink: src/link.js");
  });

  it("keeps the verdict of a head read while a worker is still pushing, so it is not read again", () => {
    const w = { ...gatedWorld(own(), [file(".github/dependabot.yml")]), runs: [run(900, 7)] };
    const d = step(w, null, { now: minutes(40) });
    expect(only(d.decision.effects, "mergePr")).toEqual([]);
    expect(d.state.diffGates).toEqual([
      {
        pr: 107,
        sha: "sha7a",
        rules: [".github/** (path: .github/dependabot.yml)"],
        gate: humanGateDigest(GATE),
        lines: 1,
      },
    ]);

    // The worker finished without a new commit; nothing was read this time, and the kept verdict still holds.
    const done = { ...w, runs: [run(900, 7, { status: "completed", conclusion: "success" })], pullDiffs: [] };
    const later = decide({ ...input(done), state: readBack(d.decision, w), now: minutes(50) });
    expect(only(later.effects, "mergePr")).toEqual([]);
    expect(later.state.tasks["7"]!.gate).toContain(".github/** (path: .github/dependabot.yml)");
  });

  it("does not merge at a verdict read under looser human-gate settings: it waits for the diff to be read again", () => {
    // Read while its checks still run, under the default settings (config/ is not gated): a clean head.
    const pushing = gatedWorld(own({ checks: [check("test", null)] }), [file("config/limits.json")]);
    const first = decide({ ...input(pushing), state: null, now: minutes(40) });
    expect(only(first.effects, "mergePr")).toEqual([]);
    expect(first.state.diffGates).toEqual([expect.objectContaining({ pr: 107, sha: "sha7a", rules: [] })]);

    // A maintainer gates config/** and the checks pass: the kept verdict no longer counts, nothing merges.
    const strict = { ...DEFAULT_CONFIG, humanGate: { ...GATE, paths: ["config/**"] } };
    const done = { ...pushing, pulls: [own()] };
    const idle = { ...done, pullDiffs: [] };
    const waiting = decide({
      ...input(idle),
      config: strict,
      state: readBack(first, pushing),
      now: minutes(50),
    });
    expect(only(waiting.effects, "mergePr")).toEqual([]);

    // Read again under the new settings: the gate fires.
    const reread = decide({
      ...input(done),
      config: strict,
      state: readBack(first, pushing),
      now: minutes(51),
    });
    expect(only(reread.effects, "mergePr")).toEqual([]);
    expect(reread.state.tasks["7"]!.gate).toContain("config/** (path: config/limits.json)");

    // Under the settings it was read with, the same kept verdict does let the head merge.
    const same = decide({ ...input(idle), state: readBack(first, pushing), now: minutes(50) });
    expect(only(same.effects, "mergePr")).toEqual([
      expect.objectContaining({ pr: 107, expectedHeadSha: "sha7a" }),
    ]);
  });

  it("waits, and remembers nothing, when the diff could not be read", () => {
    const w = gatedWorld(own(), []);
    w.pullDiffs = [diff([], { error: "Server Error" })];
    const d = step(w, null, { now: minutes(40) });
    expect(only(d.decision.effects, "mergePr")).toEqual([]);
    expect(d.state.diffGates).toEqual([]);
  });
});

describe("reading the diff through the API", () => {
  const ISSUE = 7;
  const SHA = "c".repeat(40);
  beforeEach(() => nock.disableNetConnect());
  afterEach(() => {
    nock.cleanAll();
    nock.enableNetConnect();
  });
  const gateway = (memory = newRepoMemory()) =>
    new Gateway({
      client: createOctokit({ auth: "token", baseUrl: API, retry: false, throttle: false }),
      repo: { owner: OWNER, name: REPO },
      botLogin: "autopilot[bot]",
      memory,
    });
  const settingsFor = () => ({
    poolLabels: ["autopilot:ready", "autopilot:review"],
    readyLabel: "autopilot:ready",
    reviewLabel: "autopilot:review",
    needsHumanLabel: "autopilot:needs-human",
    branchPrefix: "autopilot/",
    workerWorkflow: "autopilot-worker.yml",
    gateDigest: humanGateDigest(DEFAULT_CONFIG.humanGate),
  });
  const page = (trackingBody: string, extraPull: Record<string, unknown> = {}) =>
    snapshotPage({
      tracking: gqlTracking({ number: 1, body: trackingBody }),
      issues: [gqlIssue({ number: ISSUE, labels: ["autopilot:review"] })],
      pulls: [{ ...gqlPull({ number: 20, issue: ISSUE, headSha: SHA }), ...extraPull }],
    });

  it("reads compare (pinned to both SHAs) and the head tree once per head; an idle reconcile reads neither", async () => {
    const memory = newRepoMemory();
    const scope = nock(API);
    replySnapshot(scope, page("<!-- autopilot:tracking-issue -->"));
    replyRuns(scope, []);
    replyDiff(
      scope,
      SHA,
      [{ filename: "src/link.js", status: "added", changes: 1, patch: "@@ -0,0 +1 @@\n+../secret" }],
      {
        "src/link.js": "120000",
      },
    );
    const gw = gateway(memory);
    const { world: w } = await gw.snapshot({ settingsFor, permissionsFor: () => [] });
    expect(scope.isDone()).toBe(true);
    expect(w.botId).toBe(BOT_ID);
    expect(w.pullDiffs).toEqual([
      expect.objectContaining({ pr: 20, sha: SHA, files: [expect.objectContaining({ mode: "120000" })] }),
    ]);
    const counts = gw.requests();
    expect(Object.entries(counts).filter(([k]) => /compare|trees/.test(k))).toHaveLength(2);

    // The state now holds the verdict for this head: the next snapshot asks for no diff (nock fails otherwise).
    const state = decide({
      ...input({ ...w, trackingIssue: { ...w.trackingIssue!, body: "<!-- autopilot:tracking-issue -->" } }),
      state: null,
      now: minutes(40),
    }).state;
    const body = `<!-- autopilot:tracking-issue -->\n<!-- autopilot:state v1\n${JSON.stringify(state)}\n-->`;
    const next = nock(API);
    replySnapshot(next, page(body));
    replyRuns(next, []);
    const gw2 = gateway(memory);
    const again = await gw2.snapshot({ settingsFor, permissionsFor: () => [] });
    expect(next.isDone()).toBe(true);
    expect(again.world.pullDiffs).toEqual([]);
    expect(Object.keys(gw2.requests()).some((k) => /compare|trees|users/.test(k))).toBe(false);

    // The human-gate settings changed: the kept verdict was reached under others, so the head is read again.
    const tightened = nock(API);
    replySnapshot(tightened, page(body));
    replyRuns(tightened, []);
    replyDiff(
      tightened,
      SHA,
      [{ filename: "src/link.js", status: "added", changes: 1, patch: "@@ -0,0 +1 @@\n+x" }],
      {
        "src/link.js": "120000",
      },
    );
    const gw3 = gateway(memory);
    const reread = await gw3.snapshot({
      settingsFor: () => ({ ...settingsFor(), gateDigest: "other-settings" }),
      permissionsFor: () => [],
    });
    expect(tightened.isDone()).toBe(true);
    expect(reread.world.pullDiffs).toEqual([expect.objectContaining({ pr: 20, sha: SHA })]);
  });

  it("reads a changed package.json at the merge base and the head: an agent-added postinstall holds the PR", async () => {
    const BASE = "b".repeat(40);
    const before = JSON.stringify({ name: "app", scripts: { test: "node --test" } }, null, 2);
    const after = JSON.stringify(
      { name: "app", scripts: { test: "node --test", postinstall: "node -e \"require('./x')\"" } },
      null,
      2,
    );
    const base64 = (text: string) => Buffer.from(text).toString("base64");
    const scope = nock(API);
    replySnapshot(scope, page("<!-- autopilot:tracking-issue -->"));
    replyRuns(scope, []);
    scope
      .get(`/repos/${OWNER}/${REPO}/compare/${"0".repeat(40)}...${SHA}`)
      .reply(200, {
        status: "ahead",
        merge_base_commit: { sha: BASE },
        files: [
          // The hunk shows a new line, not that it lies in `scripts`: the controller reads both files.
          {
            filename: "package.json",
            status: "modified",
            changes: 1,
            patch: '@@ -2,3 +2,4 @@\n+    "x": "y",',
          },
          {
            filename: ".npmrc",
            status: "added",
            changes: 1,
            patch: "@@ -0,0 +1 @@\n+registry=https://npm.evil.example/",
          },
        ],
      })
      .get(`/repos/${OWNER}/${REPO}/git/trees/${SHA}`)
      .query({ recursive: "1" })
      .reply(200, {
        sha: SHA,
        truncated: false,
        tree: [
          { path: "package.json", mode: "100644", type: "blob" },
          { path: ".npmrc", mode: "100644", type: "blob" },
        ],
      })
      .get(`/repos/${OWNER}/${REPO}/contents/package.json`)
      .query({ ref: SHA })
      .reply(200, { type: "file", encoding: "base64", content: base64(after) })
      .get(`/repos/${OWNER}/${REPO}/contents/package.json`)
      .query({ ref: BASE })
      .reply(200, { type: "file", encoding: "base64", content: base64(before) });
    const { world: w } = await gateway().snapshot({ settingsFor, permissionsFor: () => [] });
    expect(scope.isDone()).toBe(true);
    expect(w.pullDiffs![0]!.files[0]!.manifest).toEqual({ before, after });
    const held = decide({ ...input(w), state: null, now: minutes(40) });
    expect(only(held.effects, "mergePr")).toEqual([]);
    expect(held.state.diffGates[0]!.rules).toEqual([
      "install script: package.json scripts.postinstall",
      "registry settings: .npmrc",
    ]);
  });

  it("reads no diff of a fork PR or of a PR someone else opened", async () => {
    const scope = nock(API);
    replySnapshot(
      scope,
      page("<!-- autopilot:tracking-issue -->", {
        isCrossRepository: true,
        headRepository: { nameWithOwner: `mallory/${REPO}` },
        author: { __typename: "User", login: "mallory", databaseId: 666 },
      }),
    );
    replyRuns(scope, []);
    const { world: w } = await gateway().snapshot({ settingsFor, permissionsFor: () => [] });
    expect(scope.isDone()).toBe(true);
    expect(w.pulls[0]).toMatchObject({
      isCrossRepository: true,
      headRepository: `mallory/${REPO}`,
      authorId: 666,
    });
    expect(w.pullDiffs).toEqual([]);
  });
});
