/**
 * What the outgoing webhook (`alerts.webhook`, src/app/alert-webhook.ts) may carry besides alerts: the session's
 * lifecycle — started, paused, resumed, completed — and a worker switching agents, the events the design's
 * engine emits (`autopilot:started`, `autopilot:paused`, `autopilot:resumed`, `autopilot:complete`,
 * `autopilot:agent-switched`, ../shared/seeds 000 §3.3, §3.5, §4.4). Each kind goes out only when
 * `alerts.webhook.events` lists it.
 *
 * Every body sent is built here and checked against `WebhookPayloadSchema` before it leaves: the schema is the
 * receiver's contract (docs/CONTROLLER.md shows it). Pure: time comes in as strings.
 */
import { z } from "zod";
import type { WEBHOOK_EVENT_KINDS } from "../config/alerts-schema.js";
import { type Alert, slackEscape } from "./alerts.js";
import type { SessionState } from "./session.js";

export type WebhookEventKind = (typeof WEBHOOK_EVENT_KINDS)[number];
type LifecycleKind = Exclude<WebhookEventKind, "alert">;

/** One event of the session or of a task that is not an alert: nothing for a person to do. */
export interface LifecycleEvent {
  /** The same event always has the same key: a webhook delivery is made once per key. */
  key: string;
  kind: LifecycleKind;
  /** The task it is about; null for the session. */
  issue: number | null;
  /** One line: "Autopilot paused by @dev". */
  headline: string;
  /** Who caused it: a login, or "autopilot". */
  actor: string;
  /** agent-switched: the agent left and the one taken, and why. */
  from?: string;
  to?: string;
  reason?: string;
}

const COMMON = {
  key: z.string().min(1).max(200),
  repository: z.string().regex(/^[^/\s]+\/[^/\s]+$/),
  issue: z.number().int().positive().nullable(),
  headline: z.string().max(300),
  at: z.iso.datetime(),
};

/** The body POSTed for an alert (`alert` among `alerts.webhook.events`, the default). */
const AlertPayloadSchema = z.strictObject({
  text: z.string(),
  autopilot: z.strictObject({
    ...COMMON,
    event: z.literal("alert"),
    /** What needs a person (src/core/session/alerts.ts `AlertKind`). */
    kind: z.string().min(1),
    mentions: z.array(z.string()),
  }),
});

/** The body POSTed for a session's or a task's event that asks nothing of anyone. */
const LifecyclePayloadSchema = z.strictObject({
  text: z.string(),
  autopilot: z.strictObject({
    ...COMMON,
    event: z.enum(["started", "paused", "resumed", "completed", "agent-switched"]),
    actor: z.string().min(1),
    from: z.string().optional(),
    to: z.string().optional(),
    reason: z.string().optional(),
  }),
});

/** Every body the outgoing webhook sends: `autopilot.event` says which kind it is. */
export const WebhookPayloadSchema = z.union([AlertPayloadSchema, LifecyclePayloadSchema]);
type WebhookPayload = z.infer<typeof WebhookPayloadSchema>;

/** The JSON body POSTed for an alert: Slack-compatible `text`, and the alert's fields for other receivers. */
export function alertPayload(
  alert: Alert,
  repo: { owner: string; name: string },
  at: string,
): WebhookPayload {
  const where = `${repo.owner}/${repo.name}`;
  const mentions = alert.mentions.length ? ` (for ${alert.mentions.map((m) => `@${m}`).join(", ")})` : "";
  const text = slackEscape(
    `[${where}] ${alert.headline}${mentions}\n${alert.what.trim().slice(0, 1_000)}\nWhat to do: ${alert.todo}`,
  );
  return WebhookPayloadSchema.parse({
    text,
    autopilot: {
      event: "alert",
      key: alert.key,
      kind: alert.kind,
      repository: where,
      issue: alert.issue,
      headline: alert.headline.slice(0, 300),
      mentions: alert.mentions,
      at,
    },
  });
}

/** The JSON body POSTed for a lifecycle event. */
export function lifecyclePayload(
  event: LifecycleEvent,
  repo: { owner: string; name: string },
  at: string,
): WebhookPayload {
  const where = `${repo.owner}/${repo.name}`;
  const autopilot: Record<string, unknown> = {
    event: event.kind,
    key: event.key,
    repository: where,
    issue: event.issue,
    headline: event.headline.slice(0, 300),
    actor: event.actor,
    at,
  };
  for (const field of ["from", "to", "reason"] as const)
    if (event[field] !== undefined) autopilot[field] = event[field];
  return WebhookPayloadSchema.parse({ text: slackEscape(`[${where}] ${event.headline}`), autopilot });
}

/**
 * The lifecycle event a session transition is, or null: `started` from idle or completed into running,
 * `resumed` from paused into running, `paused` into paused (a pause that waited for workers counts when they
 * stopped), `completed` into completed. A pause cancelled while it waited for workers, and a stop, are none.
 */
export function sessionLifecycleEvent(from: SessionState, to: SessionState): LifecycleEvent | null {
  const kind = lifecycleKind(from.status, to.status);
  if (!kind) return null;
  const by = to.actor === "autopilot" ? "" : ` by @${to.actor}`;
  const why = to.detail ? `: ${to.detail}` : "";
  const headline = {
    started: `Autopilot started${by}`,
    paused: `Autopilot paused${by}${why}`,
    resumed: `Autopilot resumed${by}`,
    completed: "Autopilot completed: no ready task is left",
  }[kind];
  return {
    key: `session-${kind}-${to.since}`,
    kind,
    issue: null,
    headline,
    actor: to.actor,
    reason: to.reason,
  };
}

function lifecycleKind(
  from: SessionState["status"],
  to: SessionState["status"],
): Exclude<LifecycleKind, "agent-switched"> | null {
  if (from === to) return null;
  if (to === "running") {
    if (from === "idle" || from === "completed") return "started";
    if (from === "paused") return "resumed";
    return null;
  }
  if (to === "paused") return "paused";
  if (to === "completed") return "completed";
  return null;
}
