/**
 * The hosted controller's webhook handlers. Handlers only schedule `reconcile(repo)` for the event's repository
 * (docs/CONTROLLER.md): webhooks are hints, the reconcile decides. Events caused by Autopilot's own bot
 * reconcile too (that is how the state catches up with its own writes); they never start work by themselves
 * because decide only acts on what the world shows, and bot comments are never commands
 * (src/github/snapshot/snapshot.ts leaves them out of `comments`).
 */
import type { Context, Probot } from "probot";
import type { GatewayLog } from "../../github/transport/octokit-surface.js";
import { repoKey } from "../../github/transport/octokit-surface.js";
import type { RepoActivityBook } from "./activity-book.js";
import { activityEvent } from "./activity-events.js";
import type { ControllerTick } from "./controller-tick.js";
import type { ReconcileQueue } from "./reconcile-queue.js";

/** Exactly the events app.yml subscribes to. */
export const CONTROLLER_EVENTS = [
  "issues",
  "issue_comment",
  "pull_request",
  "pull_request_review",
  // A review conversation resolved: the gate's wait on its reviewer ends (src/core/gates/gates.ts). GitHub Actions
  // has no such trigger; the controller there sees it at its next run.
  "pull_request_review_thread",
  "check_suite",
  "check_run",
  "workflow_run",
  "push",
] as const;

interface WebhookHandlerParts {
  log: GatewayLog;
  queue: ReconcileQueue;
  tick: ControllerTick;
  book: RepoActivityBook;
  /** Wait for the reconcile before answering the webhook (default: answer at once, reconcile behind). */
  awaitReconcile?: boolean | undefined;
}

/** Registers the controller's handlers on the Probot app. */
export function registerWebhookHandlers(app: Probot, parts: WebhookHandlerParts): void {
  const { log, queue, book } = parts;
  app.on([...CONTROLLER_EVENTS], async (context: Context) => {
    const payload = context.payload as {
      repository?: { name: string; owner: { login: string } };
      installation?: { id: number };
    };
    if (!payload.repository || !payload.installation) return;
    if (context.name === "push" && !pushToDefaultBranch(context.payload)) return;
    const repo = { owner: payload.repository.owner.login, name: payload.repository.name };
    const why = activityEvent(context.name, context.payload);
    if (why) {
      book.markActive(repoKey(repo));
      queue.share(repoKey(repo));
      log.debug(`${repo.owner}/${repo.name} is active: ${why}`);
    }
    const octokit = queue.watch(context.octokit, payload.installation.id);
    const pending = queue.schedule(octokit, repo, payload.installation.id, `${context.name} event`, true);
    if (parts.awaitReconcile) await pending;
  });
  app.on(["installation", "installation_repositories"], async (context: Context) => {
    parts.tick.forgetInstallations();
    // Repositories added anew are unknown again: the next tick learns their activity first among the
    // never-reconciled ones.
    const p = context.payload as {
      repositories?: { full_name?: string }[];
      repositories_added?: { full_name?: string }[];
      repositories_removed?: { full_name?: string }[];
    };
    for (const r of [
      ...(p.repositories ?? []),
      ...(p.repositories_added ?? []),
      ...(p.repositories_removed ?? []),
    ])
      if (r.full_name) {
        book.forget(r.full_name.toLowerCase());
        queue.share(r.full_name.toLowerCase());
      }
  });
}

/**
 * A reconcile reads one thing from git, the config file on the default branch; a push anywhere else (a worker
 * pushing to its task branch every iteration, a tag) changes nothing it reads, and a task branch's pull request
 * has events of its own. The Actions template leaves task branches out of `push` the same way.
 */
function pushToDefaultBranch(payload: unknown): boolean {
  const p = payload as { ref?: string; repository?: { default_branch?: string } };
  return !!p.repository?.default_branch && p.ref === `refs/heads/${p.repository.default_branch}`;
}
