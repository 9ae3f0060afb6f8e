/**
 * The wall the bundled demo's agent runs behind (sandbox/scenario/demo-isolation.ts), and a demo whose session
 * pauses ending at once with the reason instead of waiting out its time limit in silence.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  type DemoIsolation,
  describeDemoIsolation,
  type MachineWalls,
  probeMachineWalls,
  strongestIsolation,
  withDemoIsolation,
} from "../../sandbox/scenario/demo-isolation.js";
import { findMissingParts } from "../../sandbox/scenario/missing-parts.js";
import { DEFAULT_SCENARIO, runScenario } from "../../sandbox/scenario/run-scenario.js";
import { loadScenario } from "../../sandbox/scenario/scenario-file.js";

const BWRAP = "/usr/bin/bwrap";
const root = { privileged: true, namespaces: true, userNamespaceBwrap: null };
const rootWithoutBwrap = { privileged: true, namespaces: false, userNamespaceBwrap: null };
const developer = { privileged: false, namespaces: false, userNamespaceBwrap: BWRAP };
const lockedDown = { privileged: false, namespaces: false, userNamespaceBwrap: null };
const machines: [MachineWalls, DemoIsolation][] = [
  [root, "namespace"],
  [developer, "user-namespace"],
  [rootWithoutBwrap, "uid"],
  [lockedDown, "none"],
];

describe("the demo's isolation", () => {
  it.each(machines)("on %o is %s", (walls, expected) => {
    expect(strongestIsolation(walls)).toBe(expected);
  });

  it("is the namespace sandbox here, where the tests run as root with bubblewrap (as CI does)", async () => {
    expect(await probeMachineWalls()).toEqual(root);
  });

  it("says, when weaker than a real agent's, why and what a real agent needs", () => {
    const weak = describeDemoIsolation("none", lockedDown).join("\n");
    expect(weak).toContain("not root and has no password-less sudo");
    expect(weak).toContain("runs as you, with no wall");
    expect(weak).toContain("Autopilot's own scripted agent");
    expect(weak).toContain("needs bubblewrap and root or password-less sudo");
    const unprivileged = describeDemoIsolation("user-namespace", developer).join("\n");
    expect(unprivileged).toContain("in an unprivileged user-namespace sandbox");
    expect(unprivileged).toContain("needs bubblewrap and root or password-less sudo");
    const uid = describeDemoIsolation("uid", rootWithoutBwrap).join("\n");
    expect(uid).toContain("bubblewrap is not installed or its sandbox does not start here");
    expect(uid).toContain("as a separate user only");
    expect(describeDemoIsolation("namespace", root).join("\n")).toContain(
      "namespace sandbox (bubblewrap, as a separate user), as a real agent does",
    );
  });

  it("is written into the demo repository's configuration, never over a scenario's own choice", () => {
    const demo = loadScenario(DEFAULT_SCENARIO);
    expect(withDemoIsolation(demo, "none", lockedDown).repo.config).toMatchObject({
      isolation: "none",
      maxParallel: 2,
    });
    // In a user namespace the worker runs the agent as is, and the demo agent enters bubblewrap itself.
    expect(withDemoIsolation(demo, "user-namespace", developer).repo.config).toMatchObject({
      isolation: "none",
      agents: { primary: { preset: "custom", command: `{demo_agent} --user-namespace ${BWRAP}` } },
    });
    const chosen = { ...demo, repo: { ...demo.repo, config: { isolation: "namespace" } } };
    expect(withDemoIsolation(chosen, "none", lockedDown).repo.config).toEqual({ isolation: "namespace" });
  });

  it("does not need bubblewrap once the scenario's configuration chooses another wall", async () => {
    const { missing } = await findMissingParts(undefined, undefined, () => null, false);
    expect(missing.join("\n")).not.toContain("bubblewrap");
  });
});

describe("a run asked to end when its session pauses", () => {
  it("ends at once with the pause's reason (scenario 9's failures, with nobody to resume)", async () => {
    const failures = loadScenario(join("scenarios", "09-consecutive-failures.yml"));
    const progress: string[] = [];
    const report = await runScenario(
      { ...failures, timeline: [] },
      { handleSignals: false, endOnPause: true, onProgress: (event) => progress.push(event.message) },
    );
    expect(report.outcome).toBe("paused");
    expect(progress.find((line) => line.startsWith("the session paused"))).toMatch(
      /^the session paused \(.*consecutive.*\); the run ends here$/,
    );
    // It did not wait for the last task, which only a resume would have started.
    expect(report.issues[3]?.state).toBe("ready");
  }, 120_000);
});
