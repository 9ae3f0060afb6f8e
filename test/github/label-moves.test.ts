/**
 * A state label's transition costs one request (src/github/execution/label-batch.ts `moveLabelsTogether`, the worker's
 * `moveLabel` in src/github/worker-github.ts), and a label a person adds between the snapshot and the write
 * survives it. On the sandbox, which charges and stores labels as GitHub does.
 */
import { describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../src/core/config/index.js";
import { resetCircuits } from "../../src/github/transport/circuit.js";
import { createGateway, resetMemories } from "../../src/github/gateway.js";
import { snapshotSettings } from "../../src/github/snapshot/snapshot.js";
import { createWorkerGitHub } from "../../src/github/worker-github.js";
import { useSuiteSandbox } from "../helpers/suite-sandbox.js";

const suite = useSuiteSandbox();
const octokitFor = () => suite.octokit();

function labelsOf(repo: { owner: string; name: string }, issue: number): string[] {
  return [...(suite.sandbox.store.getIssue(repo, issue)?.labels ?? [])].sort();
}

function since(start: number) {
  return suite.sandbox.requests.records.slice(start).filter((r) => r.tokenKind !== "user");
}

/**
 * A fresh repository with one task per `[title, label]` and a controller gateway that has taken its snapshot
 * (what the snapshot names is what the controller knows when it writes).
 */
async function controllerOn(name: string, tasks: [title: string, label: string][]) {
  resetMemories();
  resetCircuits();
  const repo = { owner: "acme", name };
  suite.sandbox.store.createRepo(repo);
  for (const [title, label] of tasks)
    suite.sandbox.store.createIssue(repo, {
      title,
      body: `${title}.`,
      labels: [label],
      author: "maintainer",
    });
  const gateway = createGateway({ client: octokitFor(), repo, botLogin: `${suite.sandbox.app.slug}[bot]` });
  await gateway.snapshot({ settingsFor: () => snapshotSettings(DEFAULT_CONFIG), permissionsFor: () => [] });
  return { repo, gateway };
}

describe("a label transition", () => {
  it("by the controller is one request, and keeps a label a person added after the snapshot", async () => {
    const { repo, gateway } = await controllerOn("moves", [
      ["Task", "autopilot:ready"],
      ["Running", "autopilot:in-progress"],
    ]);
    // A person labels the task after the snapshot was taken, before the controller writes.
    suite.sandbox.store.addLabels(repo, 1, ["bug"], "maintainer");
    const start = suite.sandbox.requests.records.length;
    const report = await gateway.execute([
      { type: "setStateLabel", issue: 1, add: "autopilot:in-progress", remove: ["autopilot:ready"] },
    ]);
    expect(report.outcomes[0]?.status).toBe("done");
    expect(since(start).map((r) => r.endpoint)).toEqual(["POST /graphql"]);
    expect(labelsOf(repo, 1)).toEqual(["autopilot:in-progress", "bug"]);
  });

  it("by the controller falls back to REST when a remembered label id is stale (the label was made again)", async () => {
    const { repo, gateway } = await controllerOn("stale", [["Task", "autopilot:ready"]]);
    gateway.memory.labelIds.set("autopilot:in-progress", "LA_gone");
    const report = await gateway.execute([
      { type: "setStateLabel", issue: 1, add: "autopilot:in-progress", remove: ["autopilot:ready"] },
    ]);
    expect(report.outcomes[0]?.status).toBe("done");
    expect(labelsOf(repo, 1)).toEqual(["autopilot:in-progress"]);
    expect(gateway.memory.labelIds.get("autopilot:in-progress")).not.toBe("LA_gone");
  });

  it("by the controller falls back to add and delete when no id is known for the new label, and learns it", async () => {
    const { repo, gateway } = await controllerOn("fallback", [
      ["Task", "autopilot:ready"],
      ["Next", "autopilot:ready"],
    ]);
    suite.sandbox.store.addLabels(repo, 1, ["bug"], "maintainer");
    const start = suite.sandbox.requests.records.length;
    await gateway.execute([
      { type: "setStateLabel", issue: 1, add: "autopilot:in-progress", remove: ["autopilot:ready"] },
    ]);
    expect(since(start).map((r) => r.endpoint)).toEqual([
      "POST /repos/{owner}/{repo}/issues/{issue_number}/labels",
      "DELETE /repos/{owner}/{repo}/issues/{issue_number}/labels/{name}",
    ]);
    expect(labelsOf(repo, 1)).toEqual(["autopilot:in-progress", "bug"]);
    // The add's answer named the label's id: the next move to it is one request, with no snapshot between.
    const next = suite.sandbox.requests.records.length;
    await gateway.execute([
      { type: "setStateLabel", issue: 2, add: "autopilot:in-progress", remove: ["autopilot:ready"] },
    ]);
    expect(since(next).map((r) => r.endpoint)).toEqual(["POST /graphql"]);
    expect(labelsOf(repo, 2)).toEqual(["autopilot:in-progress"]);
  });

  it("of several tasks in one reconcile go in one request, each keeping a label a person added", async () => {
    const { repo, gateway } = await controllerOn("together", [
      ["Next", "autopilot:ready"],
      ["Finished", "autopilot:review"],
      ["Running", "autopilot:in-progress"],
    ]);
    suite.sandbox.store.addLabels(repo, 1, ["bug"], "maintainer");
    suite.sandbox.store.addLabels(repo, 2, ["docs"], "maintainer");
    const start = suite.sandbox.requests.records.length;
    const report = await gateway.execute([
      { type: "setStateLabel", issue: 1, add: "autopilot:in-progress", remove: ["autopilot:ready"] },
      { type: "setStateLabel", issue: 2, add: null, remove: ["autopilot:review", "autopilot:in-progress"] },
      { type: "setStateLabel", issue: 3, add: "autopilot:ready", remove: ["autopilot:in-progress"] },
    ]);
    expect(report.outcomes.map((o) => o.status)).toEqual(["done", "done", "done"]);
    expect(since(start).map((r) => r.endpoint)).toEqual(["POST /graphql"]);
    expect(labelsOf(repo, 1)).toEqual(["autopilot:in-progress", "bug"]);
    expect(labelsOf(repo, 2)).toEqual(["docs"]);
    expect(labelsOf(repo, 3)).toEqual(["autopilot:ready"]);
  });

  it("of several tasks fall back one by one for the one GitHub refuses in the shared request (a stale label id)", async () => {
    const { repo, gateway } = await controllerOn("together-stale", [
      ["Next", "autopilot:ready"],
      ["Finished", "autopilot:review"],
    ]);
    gateway.memory.labelIds.set("autopilot:in-progress", "LA_gone");
    const start = suite.sandbox.requests.records.length;
    const report = await gateway.execute([
      { type: "setStateLabel", issue: 1, add: "autopilot:in-progress", remove: ["autopilot:ready"] },
      { type: "setStateLabel", issue: 2, add: null, remove: ["autopilot:review"] },
    ]);
    expect(report.outcomes.map((o) => o.status)).toEqual(["done", "done"]);
    expect(since(start)[0]?.endpoint).toBe("POST /graphql");
    expect(since(start).length).toBeGreaterThan(1);
    expect(labelsOf(repo, 1)).toEqual(["autopilot:in-progress"]);
    expect(labelsOf(repo, 2)).toEqual([]);
    expect(gateway.memory.labelIds.get("autopilot:in-progress")).not.toBe("LA_gone");
  });

  it("of several tasks, refused by the secondary limit together, are held while the repository's writes pause, not sent one by one", async () => {
    const { repo, gateway } = await controllerOn("together-limited", [
      ["Next", "autopilot:ready"],
      ["Finished", "autopilot:review"],
      ["Running", "autopilot:in-progress"],
    ]);
    // GitHub's content limit with a minute of one write, used up by a write of the same account.
    suite.sandbox.faults.set({ contentLimit: { perMinute: 1, perHour: 500 } });
    try {
      await suite.octokit().request("POST /repos/{owner}/{repo}/issues/{issue_number}/comments", {
        owner: repo.owner,
        repo: repo.name,
        issue_number: 1,
        body: "Uses up the minute.",
      });
      const start = suite.sandbox.requests.records.length;
      const report = await gateway.execute([
        { type: "setStateLabel", issue: 1, add: "autopilot:in-progress", remove: ["autopilot:ready"] },
        { type: "setStateLabel", issue: 2, add: null, remove: ["autopilot:review"] },
      ]);
      expect(report.outcomes.map((o) => o.status)).toEqual(["queued", "queued"]);
      expect(since(start).map((r) => r.endpoint)).toEqual(["POST /graphql"]);
      expect(labelsOf(repo, 1)).toEqual(["autopilot:ready"]);
    } finally {
      suite.sandbox.faults.clear();
    }
  });

  it("by the worker is one request once it has seen the ids, and keeps a person's label", async () => {
    const repo = { owner: "acme", name: "worker-moves" };
    suite.sandbox.store.createRepo(repo);
    suite.sandbox.store.createIssue(repo, {
      title: "Task",
      body: "Do it.",
      labels: ["autopilot:in-progress"],
      author: "maintainer",
    });
    suite.sandbox.store.createIssue(repo, {
      title: "Its PR stand-in",
      body: "",
      labels: [],
      author: "maintainer",
    });
    const github = createWorkerGitHub(octokitFor(), { owner: "acme", repo: "worker-moves" });
    await github.getIssue(1);
    // As job.ts does on completion: the PR gets the review label first (its answer names the label's id).
    await github.addLabels(2, ["autopilot:review"]);
    suite.sandbox.store.addLabels(repo, 1, ["bug"], "maintainer");
    const start = suite.sandbox.requests.records.length;
    await github.moveLabel(1, "autopilot:review", "autopilot:in-progress");
    expect(since(start).map((r) => r.endpoint)).toEqual(["POST /graphql"]);
    expect(labelsOf(repo, 1)).toEqual(["autopilot:review", "bug"]);
  });
});

describe("the worker's label moves", () => {
  it("fall back to REST by name when a label was deleted and made again since the worker saw its id", async () => {
    const repo = { owner: "acme", name: "worker-stale" };
    suite.sandbox.store.createRepo(repo);
    suite.sandbox.store.createIssue(repo, {
      title: "Task",
      body: "Do it.",
      labels: ["autopilot:in-progress"],
      author: "maintainer",
    });
    suite.sandbox.store.createIssue(repo, {
      title: "PR stand-in",
      body: "",
      labels: [],
      author: "maintainer",
    });
    const github = createWorkerGitHub(octokitFor(), { owner: "acme", repo: "worker-stale" });
    await github.getIssue(1);
    await github.addLabels(2, ["autopilot:review"]);
    // A maintainer deletes the review label and makes it again: its node id changes.
    suite.sandbox.store.deleteLabel(repo, "autopilot:review");
    suite.sandbox.store.createLabel(repo, { name: "autopilot:review" });
    await github.moveLabel(1, "autopilot:review", "autopilot:in-progress");
    expect(labelsOf(repo, 1)).toEqual(["autopilot:review"]);
  });
});

describe("the worker's client", () => {
  it("names the commit author from the one viewer query it makes anyway", async () => {
    suite.sandbox.store.createRepo({ owner: "acme", name: "author" });
    const github = createWorkerGitHub(octokitFor(), { owner: "acme", repo: "author" });
    const start = suite.sandbox.requests.records.length;
    const self = await github.getSelf();
    const id = await github.getSelfId();
    expect(self.login).toBe(`${suite.sandbox.app.slug}[bot]`);
    expect(id).toBe(self.id);
    expect(since(start).map((r) => r.endpoint)).toEqual(["POST /graphql"]);
  });
});
