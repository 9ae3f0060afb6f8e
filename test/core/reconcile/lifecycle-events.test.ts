/**
 * The session's lifecycle as events for the outgoing webhook (000 §3.3, §4.4; src/core/session/webhook-events.ts):
 * a reconcile that starts, pauses, resumes or completes the session says so in `Decision.events`, once, with a
 * key that does not change when the same transition is decided again.
 */
import { describe, expect, it } from "vitest";
import {
  lifecyclePayload,
  sessionLifecycleEvent,
  WebhookPayloadSchema,
} from "../../../src/core/session/webhook-events.js";
import { initialSessionState, reduceSession } from "../../../src/core/session/session.js";
import { comment, config, issue, minutes, step, T0, world } from "../world.js";

const TRACKING = { number: 1, body: "", updatedAt: minutes(0).toISOString(), state: "open" as const };
const REPO = { owner: "acme", name: "app" };

describe("the session's lifecycle events", () => {
  it("started, paused, resumed and completed, each once, as the commands and the pool move the session", () => {
    const waiting = config({ session: { autoStart: false } });
    const w = world({ issues: [issue(2)], trackingIssue: TRACKING });
    const idle = step(w, null, { config: waiting });
    expect(idle.decision.events).toBeUndefined();

    const go = step({ ...w, comments: [comment(700, 1, "dev", "/autopilot start")] }, idle.state, {
      config: waiting,
      now: minutes(2),
    });
    expect(go.decision.events?.map((e) => [e.kind, e.actor])).toEqual([["started", "dev"]]);

    const again = step({ ...w, comments: [comment(700, 1, "dev", "/autopilot start")] }, go.state, {
      config: waiting,
      now: minutes(3),
    });
    expect(again.decision.events).toBeUndefined();

    const pause = step({ ...w, comments: [comment(701, 1, "dev", "/autopilot pause")] }, go.state, {
      config: waiting,
      now: minutes(4),
    });
    // #2's worker was dispatched: the pause waits for it, and is an event only once it has stopped.
    expect(pause.state.session.status).toBe("pausing");
    expect(pause.decision.events).toBeUndefined();
    const stopped = { ...w, issues: [issue(2, { state: "closed" as const, labels: [] })] };
    const paused = step(stopped, pause.state, { config: waiting, now: minutes(6) });
    expect(paused.state.session.status).toBe("paused");
    expect(paused.decision.events?.map((e) => [e.kind, e.actor])).toEqual([["paused", "dev"]]);

    const resume = step(
      { ...stopped, comments: [comment(702, 1, "dev", "/autopilot resume")] },
      paused.state,
      { config: waiting, now: minutes(8) },
    );
    expect(resume.decision.events?.map((e) => [e.kind, e.headline])).toEqual([
      ["resumed", "Autopilot resumed by @dev"],
      ["completed", "Autopilot completed: no ready task is left"],
    ]);
  });

  it("a pause cancelled before workers stopped, and a stop, are no lifecycle event; keys follow the transition", () => {
    const running = reduceSession(initialSessionState(T0), { type: "start", actor: "dev" }, T0).state;
    const pausing = reduceSession(running, { type: "pause", actor: "dev", activeWorkers: 1 }, minutes(1));
    expect(sessionLifecycleEvent(running, pausing.state)).toBeNull();
    const cancelled = reduceSession(pausing.state, { type: "resume", actor: "dev" }, minutes(2));
    expect(sessionLifecycleEvent(pausing.state, cancelled.state)).toBeNull();
    const checkpointed = reduceSession(pausing.state, { type: "workersCheckpointed" }, minutes(3));
    const paused = sessionLifecycleEvent(pausing.state, checkpointed.state);
    expect(paused).toMatchObject({
      kind: "paused",
      actor: "dev",
      key: `session-paused-${minutes(3).toISOString()}`,
    });
    const stopped = reduceSession(running, { type: "stop", actor: "dev", activeWorkers: 0 }, minutes(4));
    expect(sessionLifecycleEvent(running, stopped.state)).toBeNull();
    const body = lifecyclePayload(paused!, REPO, minutes(3).toISOString());
    expect(WebhookPayloadSchema.parse(body).autopilot).toMatchObject({
      event: "paused",
      repository: "acme/app",
    });
  });
});
