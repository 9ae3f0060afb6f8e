/**
 * The webhooks that may start or move Autopilot's work in a repository, so the hosted controller counts it
 * active (src/app/hosted/activity-book.ts) until a reconcile finds otherwise: a task's labels or text changing, an issue
 * opened, closed or reopened, a `/autopilot` command, anything on a pull request or its checks, a worker run.
 * Every subscribed event still reconciles its repository; these also keep it on the ticks should that
 * reconcile fail.
 */
import { parseCommand } from "../../core/tasks/commands.js";

const ISSUE_ACTIONS = new Set(["labeled", "unlabeled", "opened", "edited", "closed", "reopened"]);
const CHECK_EVENTS = new Set(["check_suite", "check_run", "workflow_run", "status"]);

/** Why the event makes its repository active, or null when it does not. */
export function activityEvent(name: string, payload: unknown): string | null {
  const p = payload as { action?: string; issue?: { number?: number }; comment?: { body?: string } };
  if (name === "issues") return ISSUE_ACTIONS.has(p.action ?? "") ? `issues ${p.action} event` : null;
  if (name === "issue_comment") {
    const body = p.comment?.body ?? "";
    const command =
      p.action !== "deleted" && parseCommand(body, { issue: p.issue?.number ?? 0, trackingIssue: null });
    return command ? "an /autopilot command" : null;
  }
  if (name.startsWith("pull_request") || CHECK_EVENTS.has(name)) return `${name} event`;
  return null;
}
