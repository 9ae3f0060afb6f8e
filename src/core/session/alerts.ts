/**
 * Alerts: the outcomes the design documents mark "alert user" (blocked, needs-human, timeout, failure,
 * consecutive failures, every agent limited) and a review left waiting, as one record each, with who is
 * mentioned and the words of the comment and of the outgoing webhook.
 *
 * Who is mentioned is verified data only: the writer whose ready label approved the task (their write access
 * checked against the snapshot's permissions, never Autopilot's own bot) and the `alerts.notify` entries of
 * the configuration on the default branch, which only writers can change. Nothing an agent, an issue's author
 * or a commenter wrote is ever a mention: their text is quoted inert.
 *
 * Pure: time comes in as strings.
 */
import { hasWriteAccess, sameLogin } from "../tasks/commands.js";
import { NOTIFY_ENTRY } from "../config/alerts-schema.js";
import { escapeInline, quietLogin } from "../text/markdown.js";
import { quoteInert } from "../text/sanitize.js";
import type { Permission } from "../world.js";

export type AlertKind =
  | "blocked"
  | "needs-human"
  | "timeout"
  | "failed"
  | "consecutive-failures"
  | "session-aborted"
  | "agents-limited"
  | "review-waiting"
  | "approval-timeout";

export interface Alert {
  /** The same event always has the same key: a comment and a webhook delivery are made once per key. */
  key: string;
  kind: AlertKind;
  /** The task it is about; null for the session (posted on the tracking issue). */
  issue: number | null;
  /** One line: "#4 is blocked". */
  headline: string;
  /** What happened; may quote text an agent or a person wrote (rendered inert). */
  what: string;
  /** What a person does now. */
  todo: string;
  /** Verified logins and `org/team` names, without `@`. */
  mentions: string[];
}

/**
 * Who an alert mentions, each once (GitHub logins are case-insensitive), never the bot and never a name the
 * schema would not accept as a login or team:
 * - the approvers: the writers whose ready label approved the task, as recorded when it was dispatched (their write
 *   access was checked then); dropped only when this reconcile knows they have lost it;
 * - the reviewers: mentioned only when this reconcile looked up their permission and it is write access;
 * - the configured `notify` entries.
 */
export function alertRecipients(input: {
  approvers: readonly (string | null | undefined)[];
  reviewers?: readonly (string | null | undefined)[];
  notify: readonly string[];
  permissions: Record<string, Permission>;
  botLogin: string;
}): string[] {
  const out: string[] = [];
  const add = (name: string | null | undefined, verified: (login: string) => boolean) => {
    if (!name || sameLogin(name, input.botLogin) || /\[bot\]$/i.test(name) || !NOTIFY_ENTRY.test(name))
      return;
    if (verified(name) && !out.some((o) => o.toLowerCase() === name.toLowerCase())) out.push(name);
  };
  const known = (login: string) =>
    Object.keys(input.permissions).some((k) => k.toLowerCase() === login.toLowerCase());
  for (const approver of input.approvers)
    add(approver, (login) => !known(login) || hasWriteAccess(input.permissions, login));
  for (const reviewer of input.reviewers ?? [])
    add(reviewer, (login) => hasWriteAccess(input.permissions, login));
  for (const entry of input.notify) add(entry, () => true);
  return out;
}

/** What a person does about a task in this state (the commands of src/core/tasks/commands.ts). */
/**
 * The one next step of a blocked task, in the same words wherever Autopilot names it: the alert on the issue
 * (taskTodo), the session report's "what waits for whom" and the dashboard's Blocked list.
 */
export function blockedNextStep(n: number): string {
  return `clear the blocker, then \`/autopilot retry #${n}\``;
}

/**
 * The one next step of a task waiting on a person's answer, in the same words wherever Autopilot names it: the
 * alert on the issue (taskTodo), the session report's "what waits for whom" and the dashboard's "Needs a human"
 * list. The answer alone puts the task back in the queue (src/core/reconcile/answers.ts): no label to move.
 */
export function needsHumanNextStep(n: number): string {
  return `answer the question in a comment on #${n}`;
}

export function taskTodo(kind: AlertKind, n: number, branch: string): string {
  switch (kind) {
    case "blocked":
      return `Someone with write access: ${blockedNextStep(n)} (a comment here or on the tracking issue, or the dashboard's retry box); the next worker resumes from \`${branch}\`. \`/autopilot skip #${n}\` leaves it.`;
    case "needs-human":
      return `Someone with write access: ${needsHumanNextStep(n)}; the task then goes back to the queue by itself and resumes from \`${branch}\`.`;
    case "timeout":
      return `Look at the work on \`${branch}\`; \`/autopilot retry #${n}\` resumes it with a fresh iteration count (or raise \`maxIterations\` / \`timeoutMinutes\`), \`/autopilot skip #${n}\` leaves it.`;
    case "failed":
      return `Read the reason above and the worker's run; \`/autopilot retry #${n}\` tries again from \`${branch}\`, \`/autopilot skip #${n}\` leaves it.`;
    case "review-waiting":
      return "Review the pull request: approve it (every gate then merges it) or request changes (a worker picks them up).";
    default:
      return "";
  }
}

/** The marker line that makes an alert's comment recognisable (the executor writes one comment per key). */
export function alertCommentKey(alert: Alert): string {
  return `alert-${alert.key}`;
}

/**
 * The alert as a comment: the mentions (live, verified), what happened (quoted inert: no mention, no HTML
 * comment that could pass for a marker), what to do.
 */
export function renderAlertComment(alert: Alert): string {
  const who = alert.mentions.map((m) => `@${m}`).join(" ");
  const quoted = quoteInert(alert.what, 2_000);
  return [
    `### 🔔 ${escapeInline(alert.headline, 160)}`,
    "",
    who ? `${who}: this needs a person.` : "This needs a person (no one to mention: set `alerts.notify`).",
    "",
    quoted,
    "",
    `**What to do:** ${alert.todo}`,
  ].join("\n");
}

/**
 * Slack's `mrkdwn` treats `<…>` as links and special mentions (`<!channel>`): `&`, `<` and `>` are escaped
 * as its docs ask (https://api.slack.com/reference/surfaces/formatting#escaping), so text an agent wrote
 * cannot ping a channel or hide a link.
 */
export function slackEscape(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** For a log line: `#4 is blocked → @alice, @org/team`. */
export function describeAlert(alert: Alert): string {
  const who = alert.mentions.length ? alert.mentions.map(quietLogin).join(", ") : "no one to mention";
  return `${alert.headline} → ${who}`;
}
