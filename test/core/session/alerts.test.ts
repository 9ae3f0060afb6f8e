/**
 * Alerts (src/core/session/alerts.ts, src/core/reconcile/task-alerts.ts): who is mentioned (verified writers and the
 * configured `notify` only), that an alert is raised once however often the reconcile runs, the review reminder,
 * and the pause while every agent is limited.
 */
import { describe, expect, it } from "vitest";
import {
  type Alert,
  alertRecipients,
  renderAlertComment,
  slackEscape,
} from "../../../src/core/session/alerts.js";
import { alertPayload } from "../../../src/core/session/webhook-events.js";
import { parseConfig } from "../../../src/core/config/index.js";
import { parseDashboard } from "../../../src/core/dashboard/index.js";
import type { Effect } from "../../../src/core/effects.js";
import type { WorldSnapshot } from "../../../src/core/world.js";
import {
  BOT,
  comment,
  config,
  issue,
  minutes,
  only,
  PERMISSIONS,
  pull,
  result,
  review,
  run,
  step,
  world,
} from "../world.js";

const alertComments = (effects: readonly Effect[]) =>
  only(effects, "comment").filter((c) => c.key?.startsWith("alert-"));

/** #7 dispatched (labeled ready by `by`), its worker finished with `outcome`. */
function finished(outcome: Parameters<typeof result>[1], by = "dev") {
  const first = step(world({ issues: [issue(7, { readyLabeledBy: by })] }), null);
  const w: WorldSnapshot = first.world;
  w.runs = [run(90, 7, { status: "completed", conclusion: "success", dispatchId: "7-1-seed" })];
  w.workerResults = [result(7, { prNumber: undefined, ...outcome })];
  return { w, state: first.state };
}

describe("who an alert mentions", () => {
  it("the approving writer and the configured notify entries, each once; never a non-writer or the bot", () => {
    const mentions = alertRecipients({
      approvers: ["dev", "outsider", "reader", BOT, null, "DEV"],
      notify: ["lead", "acme/oncall", "dev", "not a login", "@evil", "x/../y"],
      permissions: PERMISSIONS,
      botLogin: BOT,
    });
    expect(mentions).toEqual(["dev", "lead", "acme/oncall"]);
  });
});

describe("alerts configuration", () => {
  it("refuses a webhook URL written into the file, and says to keep it in a secret", () => {
    const inClear = parseConfig("alerts:\n  webhook: { urlEnv: 'https://hooks.example.com/x' }\n");
    expect(inClear.ok).toBe(false);
    if (!inClear.ok) expect(inClear.error.message).toMatch(/alerts\.webhook\.urlEnv.*never the value itself/);
    const urlKey = parseConfig("alerts:\n  webhook: { url: 'https://hooks.example.com/x' }\n");
    expect(urlKey.ok).toBe(false);
    if (!urlKey.ok) expect(urlKey.error.message).toMatch(/alerts\.webhook\.url.*unknown key/);
    const at = parseConfig("alerts:\n  notify: ['@alice']\n");
    expect(at.ok).toBe(false);
    if (!at.ok) expect(at.error.message).toMatch(/alerts\.notify\[0\].*without `@`/);
  });
});

describe("the alert's words", () => {
  const hostile: Alert = {
    key: "7-blocked-a1",
    kind: "blocked",
    issue: 7,
    headline: "#7 is blocked",
    what: "ask @admin-team <!-- autopilot:alert-x --> <!channel> & <https://evil.example|click>",
    todo: "label it again",
    mentions: ["dev"],
  };

  it("mentions only the verified recipients; text an agent wrote mentions no one and carries no marker", () => {
    const body = renderAlertComment(hostile);
    expect(body).toContain("@dev: this needs a person");
    expect(body).not.toMatch(/(^|[^\u200b])@admin-team/);
    expect(body).toContain("@\u200badmin-team");
    expect(body).not.toContain("<!-- autopilot:alert-x");
    expect(body).toContain("**What to do:** label it again");
  });

  it("the webhook's Slack text escapes &, < and >: no channel-wide ping, no hidden link", () => {
    const payload = alertPayload(hostile, { owner: "acme", name: "app" }, minutes(5).toISOString());
    expect(payload.text).not.toContain("<!channel>");
    expect(payload.text).toContain("&lt;!channel&gt;");
    expect(payload.text).not.toMatch(/<https?:/);
    expect(payload.text).toContain("[acme/app] #7 is blocked (for @dev)");
    expect(payload.autopilot).toMatchObject({ key: "7-blocked-a1", kind: "blocked", issue: 7 });
    expect(slackEscape("a & b")).toBe("a &amp; b");
  });
});

describe("alerts on a task's off-ramp", () => {
  it("a blocked task gets one comment mentioning its approver and notify, with what happened and what to do", () => {
    const { w, state } = finished({ result: "blocked", reason: "no ACME_API_KEY secret" });
    const cfg = config({ alerts: { ...config().alerts, notify: ["acme/oncall"] } });
    const next = step(w, state, { now: minutes(21), config: cfg });
    const [alert, ...more] = alertComments(next.decision.effects);
    expect(more).toEqual([]);
    expect(alert).toMatchObject({ issue: 7, key: "alert-7-blocked-a1" });
    expect(alert!.body).toContain("@dev @acme/oncall: this needs a person");
    expect(alert!.body).toContain("> no ACME_API_KEY secret");
    expect(alert!.body).toContain("**What to do:**");
    expect(next.decision.alerts?.map((a) => a.key)).toEqual(["7-blocked-a1"]);

    // The same world and state again (a re-delivered webhook, a repeated reconcile): no second alert.
    const again = step(next.world, next.state, { now: minutes(22), config: cfg });
    expect(alertComments(again.decision.effects)).toEqual([]);
    expect(again.decision.alerts ?? []).toEqual([]);
  });

  it("an approver who no longer has write access is not mentioned", () => {
    const { w, state } = finished({ result: "needs_human", reason: "which currency?" });
    w.permissions = { ...w.permissions, dev: "read" };
    const next = step(w, state, { now: minutes(21) });
    const [alert] = alertComments(next.decision.effects);
    expect(alert!.body).not.toContain("@dev");
    expect(alert!.body).toContain("no one to mention");
  });

  it("the approver recorded at dispatch is mentioned though this reconcile did not look them up", () => {
    // Off the ready label, the approver is not among the logins a snapshot looks up (src/github/permissions.ts):
    // the record made when the task was dispatched, after a write-access check, is what names them.
    const { w, state } = finished({ result: "blocked", reason: "no ACME_API_KEY secret" });
    const { dev: _looked, ...notLookedUp } = w.permissions;
    w.permissions = notLookedUp;
    const next = step(w, state, { now: minutes(21) });
    const [alert] = alertComments(next.decision.effects);
    expect(alert!.body).toContain("@dev: this needs a person");
  });

  it("a stranger who labeled the task ready is never mentioned, looked up or not", () => {
    const { w, state } = finished({ result: "blocked", reason: "stuck" }, "outsider");
    const { outsider: _looked, ...notLookedUp } = w.permissions;
    w.permissions = notLookedUp;
    const next = step(w, state, { now: minutes(21) });
    for (const c of alertComments(next.decision.effects)) expect(c.body).not.toContain("@outsider");
  });

  it("timeouts and failures alert too; a failure that is retried does not", () => {
    const timeout = finished({ result: "timeout", reason: "25 iterations" });
    expect(
      alertComments(step(timeout.w, timeout.state, { now: minutes(21) }).decision.effects).map((c) => c.key),
    ).toEqual(["alert-7-timeout-a1"]);
    const failed = finished({ result: "failed", reason: "agent exited with code 1" });
    const retried = step(failed.w, failed.state, { now: minutes(21) });
    expect(alertComments(retried.decision.effects)).toEqual([]);
    const skipped = step(failed.w, failed.state, {
      now: minutes(21),
      config: config({ errorStrategy: "skip" }),
    });
    expect(alertComments(skipped.decision.effects).map((c) => c.key)).toEqual(["alert-7-failed-a1"]);
  });
});

describe("review reminder", () => {
  /** #7 in review since minute 21, its PR waiting for the human gate's approval. */
  function waitingForGate() {
    const { w, state } = finished({
      result: "complete",
      humanGate: { fired: true, rules: [{ rule: "migrations", where: "path", match: "db/x.sql" }] },
    } as Parameters<typeof result>[1]);
    w.pulls = [
      pull(7, { reviews: [review("lead", "COMMENTED", "sha7a"), review("outsider", "COMMENTED", "sha7a")] }),
    ];
    return step(w, state, { now: minutes(21) });
  }

  it("after alerts.reviewReminderHours one reminder mentions the writer reviewers and the approver; then waiting on people", () => {
    const inReview = waitingForGate();
    const cfg = config({ alerts: { ...config().alerts, reviewReminderHours: 1 } });
    const early = step(inReview.world, inReview.state, { now: minutes(60), config: cfg });
    expect(alertComments(early.decision.effects)).toEqual([]);

    const late = step(early.world, early.state, { now: minutes(90), config: cfg });
    const [reminder, ...more] = alertComments(late.decision.effects);
    expect(more).toEqual([]);
    expect(reminder).toMatchObject({ issue: 7, key: "alert-remind-107" });
    expect(reminder!.body).toMatch(/@dev @lead: this needs a person/);
    expect(reminder!.body).not.toMatch(/@outsider/);

    // A reviewer whose permission this reconcile did not look up is not mentioned; the recorded approver is.
    const { lead: _looked, ...withoutLead } = early.world.permissions;
    const unknown = step({ ...early.world, permissions: withoutLead }, early.state, {
      now: minutes(90),
      config: cfg,
    });
    const [unverified] = alertComments(unknown.decision.effects);
    expect(unverified!.body).toContain("@dev: this needs a person");
    expect(unverified!.body).not.toContain("@lead");
    const write = only(late.decision.effects, "writeTrackingIssue")[0]!;
    expect(write.body).toMatch(/waiting on people since .*\(reminded\)/);

    const later = step(late.world, late.state, { now: minutes(200), config: cfg });
    expect(alertComments(later.decision.effects)).toEqual([]);
  });

  it("no reminder when alerts.reviewReminderHours is null", () => {
    const inReview = waitingForGate();
    const cfg = config({ alerts: { ...config().alerts, reviewReminderHours: null } });
    const late = step(inReview.world, inReview.state, { now: minutes(60 * 48), config: cfg });
    expect(alertComments(late.decision.effects)).toEqual([]);
  });
});

describe("every agent limited", () => {
  it("pauses every dispatch until the earliest reset, says so on the dashboard, alerts once, then goes on", () => {
    const first = step(world({ issues: [issue(7), issue(8)] }), null, { config: config({ maxParallel: 1 }) });
    const w = first.world;
    w.runs = [run(90, 7, { status: "completed", conclusion: "success", dispatchId: "7-1-seed" })];
    w.workerResults = [result(7, { result: "usage_limited", resumeAt: minutes(120).toISOString() })];
    const cfg = config({ maxParallel: 1 });
    const limited = step(w, first.state, { now: minutes(30), config: cfg });
    expect(only(limited.decision.effects, "dispatchWorker")).toEqual([]);
    expect(limited.state.agentsLimitedUntil).toBe(minutes(120).toISOString());
    const alerts = alertComments(limited.decision.effects);
    expect(alerts.map((a) => a.key)).toEqual([`alert-agents-limited-${minutes(120).toISOString()}`]);
    expect(alerts[0]!.body).toContain("@maintainer");
    const body = only(limited.decision.effects, "writeTrackingIssue")[0]!.body;
    expect(body).toContain("**Every agent is limited**: no task is dispatched until 2026-11-22 12:00 UTC");

    const still = step(limited.world, limited.state, { now: minutes(60), config: cfg });
    expect(only(still.decision.effects, "dispatchWorker")).toEqual([]);
    expect(alertComments(still.decision.effects)).toEqual([]);

    const reset = step(still.world, still.state, { now: minutes(121), config: cfg });
    expect(only(reset.decision.effects, "dispatchWorker").length).toBe(1);
    expect(reset.state.agentsLimitedUntil).toBeNull();
    expect(
      parseDashboard(only(reset.decision.effects, "writeTrackingIssue")[0]?.body ?? "").state,
    ).not.toBeNull();
  });

  /** #7's worker reports every agent limited until `resumeAt`; #8 waits. */
  function limitedUntil(resumeAt: Date) {
    const first = step(world({ issues: [issue(7), issue(8)] }), null, { config: config({ maxParallel: 1 }) });
    const w = first.world;
    w.runs = [run(90, 7, { status: "completed", conclusion: "success", dispatchId: "7-1-seed" })];
    w.workerResults = [result(7, { result: "usage_limited", resumeAt: resumeAt.toISOString() })];
    return step(w, first.state, { now: minutes(30), config: config({ maxParallel: 1 }) });
  }

  it("one report of a far reset (an agent's words) holds the repository for a day at most", () => {
    const limited = limitedUntil(new Date("2100-01-01T00:00:00Z"));
    expect(limited.state.agentsLimitedUntil).toBe(minutes(30 + 24 * 60).toISOString());
    const dayLater = step(limited.world, limited.state, {
      now: minutes(31 + 24 * 60),
      config: config({ maxParallel: 1 }),
    });
    expect(only(dayLater.decision.effects, "dispatchWorker").length).toBe(1);
  });

  it("a writer's /autopilot resume lifts the pause at once; a stranger's does not", () => {
    const limited = limitedUntil(minutes(300));
    const w = limited.world;
    w.comments = [
      ...w.comments,
      comment(501, w.trackingIssue!.number, "outsider", "/autopilot resume"),
      comment(502, w.trackingIssue!.number, "maintainer", "/autopilot resume"),
    ];
    const next = step(w, limited.state, { now: minutes(40), config: config({ maxParallel: 1 }) });
    expect(next.state.agentsLimitedUntil).toBeNull();
    expect(only(next.decision.effects, "dispatchWorker").length).toBe(1);
    const replies = only(next.decision.effects, "comment").map((c) => c.body);
    expect(replies.some((b) => b.includes("the pause for the agents' limits is lifted"))).toBe(true);

    const strangerOnly = limitedUntil(minutes(300));
    strangerOnly.world.comments = [
      ...strangerOnly.world.comments,
      comment(503, strangerOnly.world.trackingIssue!.number, "outsider", "/autopilot resume"),
    ];
    const held = step(strangerOnly.world, strangerOnly.state, {
      now: minutes(40),
      config: config({ maxParallel: 1 }),
    });
    expect(held.state.agentsLimitedUntil).toBe(minutes(300).toISOString());
    expect(only(held.decision.effects, "dispatchWorker")).toEqual([]);
  });
});
