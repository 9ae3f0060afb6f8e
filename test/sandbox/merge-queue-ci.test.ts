/**
 * The merge queue with the repository's CI stand-in: a CI that lists `merge_group` runs on the merge group's
 * commit and the queue merges exactly that commit once it passes; a CI that does not list it never reports
 * there, and the queue gives up after its check response timeout.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ActionsRunner, startActions } from "../../sandbox/emulator/actions/actions.js";
import { repoSettings } from "../../sandbox/emulator/server/app-setup.js";
import { enqueue, mergeAutomationIdle } from "../../sandbox/emulator/merge/merge-automation.js";
import type { Issue, PullFields, StoreEvent } from "../../sandbox/emulator/store.js";
import { type GitTestHost, startGitHost } from "./git-host.js";

let host: GitTestHost;
let actions: ActionsRunner;
let now = Date.parse("2026-11-25T12:00:00Z");
const events: StoreEvent[] = [];

beforeAll(async () => {
  host = await startGitHost({ now: () => new Date(now) });
  host.store.addUser("alice", { permission: "admin" });
  host.store.onEvent((event) => events.push(event));
  actions = startActions({
    url: host.url,
    store: host.store,
    git: host.git,
    ci: {
      "demo/listens": { command: "test -f feature.txt", name: "ci", mergeGroup: true },
      "demo/deaf": { command: "test -f feature.txt", name: "ci" },
    },
  });
});

afterAll(async () => {
  await actions?.stop();
  await host?.stop();
});

async function until(condition: () => boolean, timeoutMs = 30_000): Promise<void> {
  const start = Date.now();
  while (!condition()) {
    if (Date.now() - start > timeoutMs) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** A repository whose `main` requires a merge queue and the `ci` check, with a pull request whose CI passed. */
async function queuedRepo(name: string): Promise<{ full: string; pull: Issue & { pull: PullFields } }> {
  const full = `demo/${name}`;
  const base = await host.git.seedRepo("demo", name, { "README.md": "hello\n" });
  await host.store.createRef(full, "refs/heads/feature", base, "alice");
  await host.git.seedRepo("demo", name, { "feature.txt": "new\n" }, { branch: "feature", pusher: "alice" });
  const pull = (await host.store.createPull(full, {
    title: "Feature",
    head: "feature",
    base: "main",
    author: "alice",
  })) as Issue & { pull: PullFields };
  await until(() => host.store.listCheckRuns(full, pull.pull.head.sha)[0]?.conclusion === "success");
  repoSettings.addRuleset(host.store, full, {
    branches: ["~DEFAULT_BRANCH"],
    rules: [{ type: "merge_queue", parameters: { check_response_timeout_minutes: 30 } }],
  });
  repoSettings.setBranchProtection(host.store, full, "main", {
    requiredChecks: ["ci"],
    requiredApprovals: 0,
  });
  return { full, pull };
}

function groupOf(full: string) {
  const found = events.find(
    (e): e is Extract<StoreEvent, { name: "merge_group" }> =>
      e.name === "merge_group" && e.action === "checks_requested" && e.repo.fullName === full,
  );
  if (!found) throw new Error("no merge group");
  return found.group;
}

describe("the merge queue and the CI stand-in", () => {
  it("runs a CI that lists merge_group on the group's commit and merges that commit once it passes", async () => {
    const { full, pull } = await queuedRepo("listens");
    const repo = host.store.getRepo(full)!;
    await enqueue(host.store, repo, pull, "alice", {});
    await mergeAutomationIdle(host.store);
    const group = groupOf(full);
    await until(() => host.store.getPull(full, pull.number)?.pull?.merged === true);
    expect(host.store.listCheckRuns(full, group.headSha).map((c) => [c.name, c.conclusion])).toEqual([
      ["ci", "success"],
    ]);
    expect(await host.store.resolveRef(full, "main")).toBe(group.headSha);
    expect(host.store.getPull(full, pull.number)?.pull?.mergedBy).toBe("alice");
  });

  it("dequeues with CI_TIMEOUT when no required check reports on the group within the timeout", async () => {
    const { full, pull } = await queuedRepo("deaf");
    const repo = host.store.getRepo(full)!;
    await enqueue(host.store, repo, pull, "alice", {});
    await mergeAutomationIdle(host.store);
    const group = groupOf(full);
    expect(host.store.listCheckRuns(full, group.headSha)).toEqual([]);
    now += 31 * 60_000;
    // Any event makes GitHub look again (the engine's own timer does the same in real time).
    host.store.createStatus(full, pull.pull.head.sha, {
      state: "success",
      context: "other",
      creator: "alice",
    });
    await mergeAutomationIdle(host.store);
    const dequeued = events.filter(
      (e) => e.name === "pull_request" && e.action === "dequeued" && e.repo.fullName === full,
    );
    expect(dequeued.map((e) => (e as { reason?: string }).reason)).toEqual(["CI_TIMEOUT"]);
    expect(host.store.getPull(full, pull.number)).toMatchObject({ state: "open", pull: { merged: false } });
  });
});
