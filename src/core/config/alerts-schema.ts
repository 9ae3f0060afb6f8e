/**
 * `alerts`: who is told when a task needs a person (docs/CONFIGURATION.md), the optional outgoing webhook the
 * same alerts go to, and the review reminder. The webhook's URL and signing secret never sit in the file: it
 * names the environment variables (the controller's secrets) that hold them.
 */
import { z } from "zod";
import { EXPECTED } from "./config-constants.js";

/** A GitHub login (`alice`) or a team (`my-org/reviewers`), as GitHub spells them. */
export const NOTIFY_ENTRY =
  /^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}(?:\/[A-Za-z0-9][A-Za-z0-9_.-]{0,99})?$/;
/**
 * What the outgoing webhook may carry: alerts, the session's lifecycle and a worker's switch of agents
 * (src/core/session/webhook-events.ts builds each body).
 */
export const WEBHOOK_EVENT_KINDS = [
  "alert",
  "started",
  "paused",
  "resumed",
  "completed",
  "agent-switched",
] as const;

/** An environment variable name. */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,99}$/;

const envName = (what: string, fallback: string) =>
  z
    .string()
    .regex(ENV_NAME)
    .default(fallback)
    .meta({
      description: `Name of the controller's environment variable that holds the webhook's ${what} (set it from a secret).`,
      [EXPECTED]:
        "the NAME of an environment variable (letters, digits, `_`), never the value itself: keep the value in a secret",
    });

const AlertWebhookSchema = z
  .strictObject({
    urlEnv: envName("URL (https, or http to 127.0.0.1 for a local receiver)", "AUTOPILOT_ALERT_WEBHOOK_URL"),
    secretEnv: envName(
      "signing secret (the body's HMAC-SHA256 is sent in `X-Autopilot-Signature-256`)",
      "AUTOPILOT_ALERT_WEBHOOK_SECRET",
    ),
    events: z
      .array(z.enum(WEBHOOK_EVENT_KINDS))
      .min(1)
      .default(["alert"])
      .meta({
        description:
          "What the webhook carries: `alert` (every alert), and the session's `started`, `paused`, `resumed`, " +
          "`completed`, and a worker's `agent-switched` (a fallback from a limited agent). Default: alerts only.",
        [EXPECTED]: `a list of ${WEBHOOK_EVENT_KINDS.map((k) => `\`${k}\``).join(", ")}`,
      }),
  })
  .describe(
    "An outgoing webhook every alert (and, chosen in `events`, the session's lifecycle) is also POSTed to: a " +
      "Slack-compatible JSON body (`text`), signed with HMAC-SHA256, retried with backoff, never holding a " +
      "reconcile up.",
  );

export const AlertsSchema = z
  .strictObject({
    notify: z
      .array(
        z
          .string()
          .regex(NOTIFY_ENTRY)
          .meta({ [EXPECTED]: "a GitHub login (`alice`) or team (`my-org/reviewers`), without `@`" }),
      )
      .max(10)
      .default([])
      .meta({
        description:
          "Logins (`alice`) and teams (`my-org/reviewers`) mentioned in every alert besides the person who " +
          "labeled the task ready. Without `@`.",
        [EXPECTED]: "a list of GitHub logins or `org/team` names, without `@`",
      }),
    webhook: AlertWebhookSchema.nullable()
      .default(null)
      .describe(
        "An outgoing webhook every alert is also POSTed to; null (the default) sends none. Its `events` " +
          "list adds the session's `started`, `paused`, `resumed`, `completed` and a worker's `agent-switched` " +
          "(default `[alert]`). Its URL and secret come from the controller's environment, never from this file.",
      ),
    reviewReminderHours: z
      .number()
      .positive()
      .max(720)
      .nullable()
      .default(24)
      .describe(
        "Hours a task's pull request may wait for a person (an approval, the human gate) before one reminder " +
          "mentions them; the dashboard then shows it as waiting on people. null: no reminder.",
      ),
    approvalTimeoutHours: z
      .number()
      .positive()
      .max(2_160)
      .nullable()
      .default(72)
      .describe(
        "Hours an approval may wait — the human gate's approval of a task's pull request, or a proposed plan " +
          "(the plan gate) — before it is reported as timed out and handed to a person: one alert that " +
          "mentions them, and the dashboard line says so. The default, three days, comes after the review " +
          "reminder (`reviewReminderHours`). null: no timeout.",
      ),
  })
  .prefault({})
  .describe(
    "Who is told when a task needs a person (blocked, needs-human, timed out, failed, consecutive failures, " +
      "every agent limited), once per event, in the comment that says what happened and what to do.",
  );
