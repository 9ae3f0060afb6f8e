/**
 * Webhook deliveries: every store event becomes GitHub's payload, signed with the app's secret
 * (`X-Hub-Signature-256`) and POSTed to the registered target, one at a time in a queue. Faults may drop,
 * duplicate or reorder deliveries.
 */
import { randomUUID } from "node:crypto";
import { request } from "node:http";
import { request as httpsRequest } from "node:https";
import { sign } from "@octokit/webhooks-methods";
import type { SandboxApp } from "./auth.js";
import type { FaultController } from "./faults.js";
import { type JsonObject, type Shapes, iso } from "../shapes.js";
import type { Issue, PullFields, SandboxStore, StoreEvent } from "../store.js";
import { encodeNodeId } from "../store/node-ids.js";

interface WebhookDelivery {
  /** `X-GitHub-Delivery` (a UUID; duplicates share it, as GitHub redeliveries do). */
  id: string;
  event: string;
  action: string | null;
  payload: JsonObject;
  /** When the event happened. */
  at: Date;
  /** HTTP status of the last attempt; null when not sent (no target, dropped, stopped) or on network error. */
  status: number | null;
  error: string | null;
  dropped: boolean;
  /** How many times it was POSTed (2 for a duplicated delivery). */
  attempts: number;
  deliveredAt: Date | null;
}

/** Builds the webhook (event name and payload) GitHub would deliver for a store event. */
export function webhookFor(
  event: StoreEvent,
  shapes: Shapes,
  store: SandboxStore,
): { name: string; payload: JsonObject } {
  const repository = shapes.repository(event.repo);
  const sender = shapes.user(event.sender);
  // The installation covering the repository (https://docs.github.com/en/webhooks/webhook-events-and-payloads:
  // "installation" names the GitHub App installation the event is for).
  const installationId = store.installationFor(event.repo.fullName)?.id ?? store.installationId;
  const installation = {
    id: installationId,
    node_id: `MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9u${installationId}`,
  };
  const common = { repository, sender, installation };
  const pull = (issue: Issue) => shapes.pull(event.repo, issue as Issue & { pull: PullFields });
  switch (event.name) {
    case "issues":
      return {
        name: "issues",
        payload: {
          action: event.action,
          issue: shapes.issue(event.repo, event.issue),
          ...(event.label ? { label: shapes.label(event.repo, event.label) } : {}),
          ...(event.assignee ? { assignee: shapes.user(event.assignee) } : {}),
          ...(event.changes ? { changes: event.changes } : {}),
          ...common,
        },
      };
    case "issue_comment":
      return {
        name: "issue_comment",
        payload: {
          action: event.action,
          issue: shapes.issue(event.repo, event.issue),
          comment: shapes.comment(event.repo, event.comment),
          ...(event.changes ? { changes: event.changes } : {}),
          ...common,
        },
      };
    case "pull_request":
      return {
        name: "pull_request",
        payload: {
          action: event.action,
          number: event.pull.number,
          pull_request: pull(event.pull),
          ...(event.label ? { label: shapes.label(event.repo, event.label) } : {}),
          ...(event.requestedReviewer ? { requested_reviewer: shapes.user(event.requestedReviewer) } : {}),
          ...(event.before ? { before: event.before } : {}),
          ...(event.after ? { after: event.after } : {}),
          ...(event.changes ? { changes: event.changes } : {}),
          ...(event.reason ? { reason: event.reason } : {}),
          ...common,
        },
      };
    case "merge_group": {
      // https://docs.github.com/webhooks/webhook-events-and-payloads#merge_group
      const g = event.group;
      return {
        name: "merge_group",
        payload: {
          action: event.action,
          ...(event.reason ? { reason: event.reason } : {}),
          merge_group: {
            head_sha: g.headSha,
            head_ref: g.headRef,
            base_sha: g.baseSha,
            base_ref: g.baseRef,
            head_commit: {
              id: g.headSha,
              tree_id: g.headSha,
              message: g.message,
              timestamp: g.timestamp,
              author: g.author,
              committer: g.author,
            },
          },
          ...common,
        },
      };
    }
    case "pull_request_review":
      return {
        name: "pull_request_review",
        payload: {
          action: event.action,
          // Webhooks spell review states in lower case (REST: "APPROVED", webhook: "approved").
          review: {
            ...shapes.review(event.repo, event.pull, event.review),
            state: event.review.state.toLowerCase(),
          },
          pull_request: pull(event.pull),
          ...common,
        },
      };
    // https://docs.github.com/en/webhooks/webhook-events-and-payloads#pull_request_review_thread: the thread's
    // node id and its comments, the first one and the replies to it in order.
    case "pull_request_review_thread": {
      const root = event.comment;
      const replies = (event.pull.pull?.reviews ?? [])
        .filter((r) => r.state !== "PENDING")
        .flatMap((r) => r.comments)
        .filter((c) => c.inReplyTo === root.id)
        .sort((a, b) => a.id - b.id);
      return {
        name: "pull_request_review_thread",
        payload: {
          action: event.action,
          thread: {
            node_id: encodeNodeId("PullRequestReviewThread", root.id),
            comments: [root, ...replies].map((c) => shapes.reviewComment(event.repo, event.pull, c)),
          },
          pull_request: pull(event.pull),
          ...common,
        },
      };
    }
    case "check_run":
      return {
        name: "check_run",
        payload: { action: event.action, check_run: shapes.checkRun(event.repo, event.checkRun), ...common },
      };
    case "check_suite":
      return {
        name: "check_suite",
        payload: {
          action: event.action,
          check_suite: shapes.checkSuite(event.repo, event.checkSuite),
          ...common,
        },
      };
    case "status": {
      const s = event.status;
      return {
        name: "status",
        payload: {
          id: s.id,
          sha: s.sha,
          name: event.repo.fullName,
          target_url: s.targetUrl,
          context: s.context,
          description: s.description,
          state: s.state,
          commit: {
            sha: s.sha,
            node_id: `C_${s.sha}`,
            url: `${shapes.repoApi(event.repo)}/commits/${s.sha}`,
          },
          branches: [],
          created_at: iso(s.createdAt),
          updated_at: iso(s.updatedAt),
          ...common,
        },
      };
    }
    case "workflow_run":
      return {
        name: "workflow_run",
        payload: {
          action: event.action,
          workflow_run: shapes.workflowRun(event.repo, event.run),
          workflow: shapes.workflow(event.repo, event.workflow),
          ...common,
        },
      };
    case "workflow_job":
      return {
        name: "workflow_job",
        payload: {
          action: event.action,
          workflow_job: shapes.job(event.repo, event.run, event.job),
          ...common,
        },
      };
    case "workflow_dispatch":
      return {
        name: "workflow_dispatch",
        payload: { inputs: event.inputs, ref: event.ref, workflow: event.workflow.path, ...common },
      };
    case "push": {
      const p = event.push;
      const commits = p.commits.map((c) => ({
        id: c.id,
        tree_id: c.id,
        distinct: true,
        message: c.message,
        timestamp: c.timestamp,
        url: `${shapes.repoHtml(event.repo)}/commit/${c.id}`,
        author: {
          name: c.author.name,
          email: c.author.email,
          ...(c.author.username ? { username: c.author.username } : {}),
        },
        committer: {
          name: c.author.name,
          email: c.author.email,
          ...(c.author.username ? { username: c.author.username } : {}),
        },
        added: c.added ?? [],
        removed: c.removed ?? [],
        modified: c.modified ?? [],
      }));
      return {
        name: "push",
        payload: {
          ref: p.ref,
          before: p.before,
          after: p.after,
          created: p.created,
          deleted: p.deleted,
          forced: p.forced,
          base_ref: null,
          compare: `${shapes.repoHtml(event.repo)}/compare/${p.before.slice(0, 12)}...${p.after.slice(0, 12)}`,
          commits,
          head_commit: p.deleted ? null : (commits[commits.length - 1] ?? null),
          pusher: { name: p.pusher, email: `${p.pusher}@users.noreply.github.com` },
          ...common,
        },
      };
    }
    case "create":
    case "delete":
      return {
        name: event.name,
        payload: {
          ref: event.ref,
          ref_type: event.refType,
          ...(event.name === "create"
            ? { master_branch: event.repo.defaultBranch, description: event.repo.description }
            : {}),
          pusher_type: "user",
          ...common,
        },
      };
    case "sub_issues": {
      const parentSide = event.action === "sub_issue_added" || event.action === "sub_issue_removed";
      const parent = parentSide ? event.issue : event.other;
      const child = parentSide ? event.other : event.issue;
      return {
        name: "sub_issues",
        payload: {
          action: event.action,
          parent_issue_id: parent.id,
          parent_issue: shapes.issue(event.repo, parent),
          parent_issue_repo: repository,
          sub_issue_id: child.id,
          sub_issue: shapes.issue(event.repo, child),
          sub_issue_repo: repository,
          ...common,
        },
      };
    }
  }
}

interface Queued {
  delivery: WebhookDelivery;
  body: string;
  signature: string;
  copies: number;
}

interface WebhookDispatcherOptions {
  store: SandboxStore;
  shapes: Shapes;
  app: SandboxApp;
  faults: FaultController;
  log?: (line: string) => void;
}

export class WebhookDispatcher {
  private target: string | null = null;
  private readonly queue: Queued[] = [];
  private draining: Promise<void> | null = null;
  private scheduled: ReturnType<typeof setImmediate> | null = null;
  private stopped = false;
  private inFlight: { destroy: () => void } | null = null;
  private readonly listeners = new Set<(delivery: WebhookDelivery) => void>();
  /** Every delivery made or attempted, in event order (including dropped and unsent ones). */
  readonly deliveries: WebhookDelivery[] = [];
  /** Per-request timeout, ms. */
  timeoutMs = 15_000;

  constructor(private readonly options: WebhookDispatcherOptions) {}

  /** Where deliveries go; null stops delivering (events are still recorded, with status null). */
  setTarget(url: string | null): void {
    this.target = url;
  }

  get targetUrl(): string | null {
    return this.target;
  }

  /** Called after each delivery attempt (for logs and scenario runners). */
  onDelivery(listener: (delivery: WebhookDelivery) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Turns a store event into a delivery and queues it (synchronously: the payload is a snapshot of now). */
  enqueue(event: StoreEvent): WebhookDelivery | null {
    // An App receives the events of the repositories its installations cover, none of the others
    // (https://docs.github.com/en/webhooks/types-of-webhooks#github-app-webhooks).
    if (!this.options.store.installationFor(event.repo.fullName)) return null;
    const { name, payload } = webhookFor(event, this.options.shapes, this.options.store);
    const delivery: WebhookDelivery = {
      id: randomUUID(),
      event: name,
      action: typeof payload.action === "string" ? payload.action : null,
      payload,
      at: this.options.store.clock(),
      status: null,
      error: null,
      dropped: false,
      attempts: 0,
      deliveredAt: null,
    };
    this.deliveries.push(delivery);
    if (!this.target || this.stopped) return delivery;
    const fault = this.options.faults.forDelivery();
    if (fault.drop) {
      delivery.dropped = true;
      return delivery;
    }
    const body = JSON.stringify(payload);
    this.queue.push({ delivery, body, signature: "", copies: fault.copies });
    this.schedule();
    return delivery;
  }

  private schedule(): void {
    if (this.draining || this.scheduled || this.stopped) return;
    // Let a burst of events (one REST call can emit several) queue up before the first goes out.
    this.scheduled = setImmediate(() => {
      this.scheduled = null;
      this.draining = this.drain().finally(() => {
        this.draining = null;
        if (this.queue.length && !this.stopped) this.schedule();
      });
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length && !this.stopped) {
      const index = this.options.faults.nextIndex(this.queue.length);
      const [item] = this.queue.splice(index, 1);
      if (!item) break;
      for (let copy = 0; copy < item.copies && !this.stopped; copy++) await this.send(item);
    }
  }

  private async send(item: Queued): Promise<void> {
    const target = this.target;
    if (!target) return;
    const { delivery } = item;
    const signature = item.signature || (await sign(this.options.app.webhookSecret, item.body));
    item.signature = signature;
    delivery.attempts += 1;
    try {
      delivery.status = await this.post(target, item.body, {
        "content-type": "application/json",
        "user-agent": "GitHub-Hookshot/sandbox",
        "x-github-event": delivery.event,
        "x-github-delivery": delivery.id,
        "x-hub-signature-256": signature,
        "x-github-hook-id": "1",
        "x-github-hook-installation-target-id": String(this.options.app.id),
        "x-github-hook-installation-target-type": "integration",
      });
      delivery.error = null;
    } catch (error) {
      delivery.status = null;
      delivery.error = (error as Error).message;
    }
    delivery.deliveredAt = this.options.store.clock();
    this.options.log?.(
      `webhook ${delivery.event}${delivery.action ? `.${delivery.action}` : ""} → ${delivery.status ?? delivery.error}`,
    );
    for (const listener of this.listeners) listener(delivery);
  }

  private post(target: string, body: string, headers: Record<string, string>): Promise<number> {
    return new Promise((resolve, reject) => {
      const url = new URL(target);
      const send = url.protocol === "https:" ? httpsRequest : request;
      const req = send(
        url,
        {
          method: "POST",
          headers: { ...headers, "content-length": String(Buffer.byteLength(body)) },
          agent: false,
          timeout: this.timeoutMs,
        },
        (res) => {
          res.resume();
          res.on("end", () => resolve(res.statusCode ?? 0));
          res.on("error", reject);
        },
      );
      this.inFlight = req;
      req.on("timeout", () => req.destroy(new Error("webhook delivery timed out")));
      req.on("error", reject);
      req.on("close", () => {
        if (this.inFlight === req) this.inFlight = null;
      });
      req.end(body);
    });
  }

  /** Resolves when every queued delivery has been attempted (including ones queued meanwhile). */
  async flush(): Promise<void> {
    for (;;) {
      if (this.scheduled) {
        clearImmediate(this.scheduled);
        this.scheduled = null;
        this.draining = this.drain().finally(() => {
          this.draining = null;
        });
      }
      if (this.draining) {
        await this.draining;
        continue;
      }
      if (this.queue.length && !this.stopped) {
        this.schedule();
        continue;
      }
      // Deliveries can make the receiver call back and emit new events; give them a turn to land.
      await new Promise((resolve) => setImmediate(resolve));
      if (!this.queue.length && !this.draining && !this.scheduled) return;
    }
  }

  /** Deliveries still waiting. */
  get pending(): number {
    return this.queue.length;
  }

  /** Stops delivering: pending deliveries are left unsent, an in-flight request is aborted. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.scheduled) clearImmediate(this.scheduled);
    this.scheduled = null;
    this.queue.length = 0;
    this.inFlight?.destroy();
    if (this.draining) await this.draining.catch(() => undefined);
  }
}
