/**
 * Who asked for a best-of round (src/github/snapshot/snapshot-nodes.ts, src/github/permissions.ts): the actor of
 * the best-of label's last labeled event is read while best of N is on and the issue carries the label, and that
 * person's permission is looked up, so the controller takes the label only from a writer.
 */
import { describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../src/core/config/index.js";
import { relevantLogins } from "../../src/github/permissions.js";
import { snapshotSettings } from "../../src/github/snapshot/snapshot-context.js";
import { toIssueNode } from "../../src/github/snapshot/snapshot-nodes.js";
import { gqlIssue } from "./fixtures.js";
import { world } from "../core/world.js";

const candidate = { ...DEFAULT_CONFIG.agents.primary, preset: "codex" as const };
const on = snapshotSettings({
  ...DEFAULT_CONFIG,
  bestOf: { ...DEFAULT_CONFIG.bestOf, candidates: [candidate, candidate] },
});
const off = snapshotSettings(DEFAULT_CONFIG);

const labeled = (who: string) => ({
  createdAt: "2026-11-20T08:30:00Z",
  actor: { __typename: "User", login: who },
  label: { name: "autopilot:best-of" },
});

function node(events: ReturnType<typeof labeled>[]) {
  const base = gqlIssue({ number: 7, labels: ["autopilot:ready", "autopilot:best-of"] });
  return { ...base, timelineItems: { nodes: [...base.timelineItems.nodes, ...events] } };
}

describe("who added best of N's label", () => {
  it("is the actor of its last labeled event, read only while best of N is on", () => {
    const issue = toIssueNode(node([labeled("writer"), labeled("triager")]) as never, "autopilot:ready", {
      appId: 1,
      settings: on,
    });
    expect(issue.bestOfLabeledBy).toBe("triager");
    // Its event fell out of the events read: unknown, which asks for no round.
    expect(
      toIssueNode(node([]) as never, "autopilot:ready", { appId: 1, settings: on }).bestOfLabeledBy,
    ).toBeNull();
    const unread = toIssueNode(node([labeled("triager")]) as never, "autopilot:ready", {
      appId: 1,
      settings: off,
    });
    expect(unread.bestOfLabeledBy).toBeUndefined();
  });

  it("has that person's permission looked up", () => {
    const issue = toIssueNode(node([labeled("triager")]) as never, "autopilot:ready", {
      appId: 1,
      settings: on,
    });
    expect(relevantLogins(world({ issues: [issue] }), { readyLabel: "autopilot:ready" })).toContain(
      "triager",
    );
  });
});
