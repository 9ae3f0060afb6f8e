/**
 * Red team: status labels other than ready count only when Autopilot set them. Someone else (a triager, another
 * App, anyone who can label) puts `autopilot:review` or `autopilot:needs-human` on a task: the controller must
 * not act on it (no merge, no off-ramp), removes it, and says so on the dashboard.
 */
import nock from "nock";
import { describe, expect, it } from "vitest";
import { foreignStatusLabels } from "../../src/core/tasks/authorship.js";
import { decide } from "../../src/core/reconcile/decide.js";
import { input, issue, only, pull, world } from "../core/world.js";
import {
  API,
  BOT_ACTOR,
  BOT_ID,
  gqlIssue,
  nockGateway,
  replyIssues,
  settingsFor,
} from "../github/fixtures.js";

const { gateway } = nockGateway();

describe("who set a status label, as the snapshot reads it", () => {
  it("a label whose labeled event names someone other than Autopilot's account is foreign", async () => {
    replyIssues(nock(API), [
      gqlIssue({ number: 7, labels: ["autopilot:review"], labeledBy: "mallory" }),
      gqlIssue({ number: 8, labels: ["autopilot:review"] }),
    ]);
    const { world: w } = await gateway().snapshot({ settingsFor });
    expect(w.issues.find((i) => i.number === 7)?.foreignLabels).toEqual([
      { label: "autopilot:review", by: "mallory" },
    ]);
    // Set by Autopilot's own account (its labeled event's actor id): it counts.
    expect(w.issues.find((i) => i.number === 8)?.foreignLabels).toBeUndefined();
  });

  it("another App's bot that took Autopilot's login is foreign: the account id decides", async () => {
    const lookalike = gqlIssue({ number: 7, labels: ["autopilot:review"] });
    lookalike.timelineItems.nodes = lookalike.timelineItems.nodes.map((e) => ({
      ...e,
      actor: { __typename: "Bot", login: BOT_ACTOR.login, databaseId: BOT_ID + 1 },
    }));
    replyIssues(nock(API), [lookalike]);
    const { world: w } = await gateway().snapshot({ settingsFor });
    expect(w.issues.find((i) => i.number === 7)?.foreignLabels).toEqual([
      { label: "autopilot:review", by: BOT_ACTOR.login },
    ]);
  });

  it("a label whose labeled event is not among those read counts as set by someone unknown", () => {
    expect(
      foreignStatusLabels({
        labels: ["autopilot:needs-human", "autopilot:ready", "bug"],
        statusLabels: ["autopilot:needs-human", "autopilot:review"],
        events: [],
      }),
    ).toEqual([{ label: "autopilot:needs-human", by: null }]);
    expect(
      foreignStatusLabels({
        labels: ["autopilot:review"],
        statusLabels: ["autopilot:review"],
        events: [
          { label: "autopilot:review", at: "2026-11-22T10:00:00Z", by: "autopilot", byApp: true },
          { label: "autopilot:review", at: "2026-11-22T11:00:00Z", by: "mallory", byApp: false },
        ],
      }),
    ).toEqual([{ label: "autopilot:review", by: "mallory" }]);
  });
});

describe("a status label set by someone else, as the controller decides", () => {
  it("`autopilot:review` on a green PR: no merge, the label removed, the dashboard says so", () => {
    const control = decide(
      input(world({ issues: [issue(1, { labels: ["autopilot:review"] })], pulls: [pull(1)] })),
    );
    expect(only(control.effects, "mergePr")).toEqual([expect.objectContaining({ issue: 1 })]);

    const w = world({
      issues: [
        issue(1, {
          labels: ["autopilot:review"],
          foreignLabels: [{ label: "autopilot:review", by: "triager" }],
        }),
      ],
      pulls: [pull(1)],
    });
    const d = decide(input(w));
    expect(only(d.effects, "mergePr")).toEqual([]);
    expect(only(d.effects, "removeLabels")).toEqual([
      { type: "removeLabels", issue: 1, labels: ["autopilot:review"] },
    ]);
    const dashboard = only(d.effects, "writeTrackingIssue")[0]!.body;
    expect(dashboard).toContain("was set by `@triager`, not by Autopilot");
  });

  it("`autopilot:needs-human` on a ready task does not take it out of the pool", () => {
    const w = world({
      issues: [
        issue(1, {
          labels: ["autopilot:ready", "autopilot:needs-human"],
          foreignLabels: [{ label: "autopilot:needs-human", by: "other-app" }],
        }),
      ],
    });
    const d = decide(input(w));
    expect(only(d.effects, "dispatchWorker")).toEqual([expect.objectContaining({ issue: 1 })]);
    expect(only(d.effects, "removeLabels")).toEqual([
      { type: "removeLabels", issue: 1, labels: ["autopilot:needs-human"] },
    ]);
  });
});
