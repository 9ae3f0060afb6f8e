/**
 * A skipped task's issue carries only the exclude label, outside the pool the snapshot reads, yet a writer may
 * write `/autopilot retry` (or `rollback`, `cleanup`) on it: the snapshot reads the open issues updated last with
 * their labels and newest comments too (src/github/snapshot/snapshot.ts). Found by the seeded simulation (seed 176,
 * sandbox/simulation/fixed/skipped-task-command-176.yml). On the sandbox.
 */
import { describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../src/core/config/index.js";
import { createGateway, resetMemories } from "../../src/github/gateway.js";
import { snapshotSettings } from "../../src/github/snapshot/snapshot.js";
import { resetCircuits } from "../../src/github/transport/circuit.js";
import { useSuiteSandbox } from "../helpers/suite-sandbox.js";

const suite = useSuiteSandbox();

describe("the snapshot of a skipped task's issue", () => {
  it("holds its labels and a writer's command written on it, once", async () => {
    resetMemories();
    resetCircuits();
    const repo = { owner: "acme", name: "skipped" };
    const store = suite.sandbox.store;
    store.createRepo(repo);
    const skipped = store.createIssue(repo, { title: "Task 1", body: "Do it.", author: "maintainer" });
    store.addLabels(repo, skipped.number, ["autopilot:exclude"], "maintainer");
    const ready = store.createIssue(repo, { title: "Task 2", body: "Do it.", author: "maintainer" });
    store.addLabels(repo, ready.number, ["autopilot:ready"], "maintainer");
    const retry = store.createComment(repo, skipped.number, "/autopilot retry", "maintainer");
    const onPool = store.createComment(repo, ready.number, "/autopilot status", "maintainer");
    const gateway = createGateway({
      client: suite.octokit(),
      repo,
      botLogin: `${suite.sandbox.app.slug}[bot]`,
    });
    const { world } = await gateway.snapshot({
      settingsFor: () => snapshotSettings(DEFAULT_CONFIG),
      permissionsFor: () => [],
    });
    expect(world.issues.find((i) => i.number === skipped.number)).toMatchObject({
      state: "open",
      labels: ["autopilot:exclude"],
    });
    expect(world.comments.filter((c) => c.id === retry.id)).toEqual([
      expect.objectContaining({ issue: skipped.number, body: "/autopilot retry" }),
    ]);
    // A pool issue's comments are read with the pool, not twice.
    expect(world.comments.filter((c) => c.id === onPool.id)).toHaveLength(1);
  });
});
