/**
 * The outgoing alert webhook (`alerts.webhook`, docs/CONFIGURATION.md): every alert a reconcile raised
 * (`Decision.alerts`, src/core/reconcile/task-alerts.ts), and the lifecycle events its `events` lists
 * (`Decision.events`, src/core/session/webhook-events.ts), is POSTed as a Slack-compatible JSON body, signed with
 * HMAC-SHA256 of the body in `X-Autopilot-Signature-256: sha256=<hex>` (the scheme of GitHub's own
 * `X-Hub-Signature-256`), from a bounded queue with retries and backoff.
 *
 * It is the controller's one outbound call that is not GitHub, so it lives here in src/app beside the reconcile
 * driver rather than in src/github (docs/ARCHITECTURE.md). A reconcile never waits for it: `send` queues and
 * returns. The queue and the spacing of retries are cockatiel's (`bulkhead` bounds what waits, its
 * `ExponentialBackoff` spaces the attempts), the library src/github/transport/circuit.ts already builds on; the retry loop
 * is written here because cockatiel's `retry` cannot cut its wait short, and a stopping controller must not
 * wait minutes for a receiver that is down.
 *
 * The URL and the secret come from the controller's environment (the variables `alerts.webhook` names), never
 * from the repository's file: a writer can choose where alerts go only through the installation's secrets.
 */
import { createHmac } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { LRUCache } from "lru-cache";
import {
  type BulkheadPolicy,
  BulkheadRejectedError,
  bulkhead,
  ExponentialBackoff,
  type IBackoff,
} from "cockatiel";
import type { Alert } from "../core/session/alerts.js";
import {
  alertPayload,
  type LifecycleEvent,
  lifecyclePayload,
  type WebhookEventKind,
} from "../core/session/webhook-events.js";
import type { AutopilotConfig } from "../core/config/index.js";
import type { GatewayLog, RepoRef } from "../github/transport/octokit-surface.js";

export const SIGNATURE_HEADER = "x-autopilot-signature-256";

type AlertWebhookSettings = NonNullable<AutopilotConfig["alerts"]["webhook"]>;

interface AlertWebhookOptions {
  /** Where `alerts.webhook.urlEnv` / `secretEnv` are looked up (default: this process's environment). */
  env?: Record<string, string | undefined>;
  log: GatewayLog;
  fetch?: typeof fetch;
  /** Deliveries that may wait; more are dropped with a warning (default 100). */
  queueLimit?: number;
  /** Attempts per delivery, the first included (default 6). */
  maxAttempts?: number;
  /** First retry delay, doubled each time up to `maxDelayMs` (defaults 2 s and 5 minutes). */
  initialDelayMs?: number;
  maxDelayMs?: number;
  /** One attempt's time limit (default 10 s). */
  timeoutMs?: number;
}

/** One delivery: its key (`X-Autopilot-Delivery`), its kind (`X-Autopilot-Event`) and its body. */
interface Outgoing {
  key: string;
  kind: string;
  body: () => string;
}

/** An answer worth another attempt: the receiver's or the network's trouble, not a refusal of the request. */
class RetryableDelivery extends Error {}

/** The body's signature as the header carries it. */
function signAlertBody(secret: string, body: string): string {
  return `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
}

/** Why a URL may not receive alerts, or null: https anywhere, plain http only to this machine. */
export function webhookUrlProblem(raw: string): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "is not a URL";
  }
  if (url.protocol === "https:") return null;
  const loopback = ["127.0.0.1", "localhost", "[::1]"].includes(url.hostname);
  if (url.protocol === "http:" && loopback) return null;
  return `must be https (plain http only to a loopback host: 127.0.0.1, localhost, [::1]), not ${url.protocol}//${url.hostname}`;
}

export class AlertWebhook {
  private readonly env: Record<string, string | undefined>;
  private readonly log: GatewayLog;
  private readonly fetchFn: typeof fetch;
  private readonly timeoutMs: number;
  /** One queue per receiver URL: a receiver that is down (its retries hold its slot) delays no other's alerts. */
  private readonly queues = new Map<string, BulkheadPolicy>();
  private readonly queueLimit: number;
  private readonly backoff: ExponentialBackoff<unknown>;
  private readonly maxAttempts: number;
  private readonly stopper = new AbortController();
  private readonly pending = new Set<Promise<void>>();
  /**
   * Keys delivered or queued (`owner/name#key`), the 2,000 newest (`has` does not refresh one): one delivery
   * per alert per process.
   */
  private readonly seen = new LRUCache<string, true>({ max: 2_000 });

  constructor(options: AlertWebhookOptions) {
    this.env = options.env ?? process.env;
    this.log = options.log;
    this.fetchFn = options.fetch ?? globalThis.fetch;
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.maxAttempts = options.maxAttempts ?? 6;
    this.backoff = new ExponentialBackoff({
      initialDelay: options.initialDelayMs ?? 2_000,
      maxDelay: options.maxDelayMs ?? 300_000,
    });
    this.queueLimit = options.queueLimit ?? 100;
  }

  /**
   * Queues the alerts and the lifecycle events `settings.events` lists for delivery and returns at once;
   * unconfigured, or missing URL or secret: logs why.
   */
  send(
    settings: AlertWebhookSettings | null,
    alerts: readonly Alert[],
    repo: RepoRef,
    at: Date,
    events: readonly LifecycleEvent[] = [],
  ): void {
    if (!settings || this.stopper.signal.aborted) return;
    const chosen = new Set<WebhookEventKind>(settings.events);
    const when = at.toISOString();
    const outgoing: Outgoing[] = [
      ...(chosen.has("alert") ? alerts : []).map((alert) => ({
        key: alert.key,
        kind: alert.kind,
        body: () => JSON.stringify(alertPayload(alert, repo, when)),
      })),
      ...events
        .filter((event) => chosen.has(event.kind))
        .map((event) => ({
          key: event.key,
          kind: event.kind,
          body: () => JSON.stringify(lifecyclePayload(event, repo, when)),
        })),
    ];
    if (outgoing.length === 0) return;
    const url = this.env[settings.urlEnv]?.trim() ?? "";
    const secret = this.env[settings.secretEnv] ?? "";
    if (!url || !secret) {
      this.log.error(
        `alerts.webhook: ${!url ? settings.urlEnv : settings.secretEnv} is not set in the controller's environment; ` +
          `${outgoing.length} delivery(ies) not sent (set both ${settings.urlEnv} and ${settings.secretEnv} from secrets)`,
      );
      return;
    }
    const problem = webhookUrlProblem(url);
    if (problem) {
      this.log.error(`alerts.webhook: the URL in ${settings.urlEnv} ${problem}; alerts not sent`);
      return;
    }
    for (const item of outgoing) {
      const id = `${repo.owner}/${repo.name}#${item.key}`;
      if (this.seen.has(id)) continue;
      this.remember(id);
      const delivery = this.deliver(url, secret, item.body(), item).finally(() =>
        this.pending.delete(delivery),
      );
      this.pending.add(delivery);
    }
  }

  /** Resolves when every queued delivery has been sent or given up. */
  async idle(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  /** Gives up what waits (retries included) and resolves when nothing is in flight. */
  async stop(): Promise<void> {
    this.stopper.abort();
    await this.idle();
  }

  /** One delivery at a time per receiver; `queueLimit` more may wait, the rest are dropped. */
  private queueFor(url: string): BulkheadPolicy {
    let queue = this.queues.get(url);
    if (!queue) {
      queue = bulkhead(1, this.queueLimit);
      this.queues.set(url, queue);
    }
    return queue;
  }

  private remember(id: string): void {
    this.seen.set(id, true);
  }

  private async deliver(
    url: string,
    secret: string,
    body: string,
    alert: Pick<Outgoing, "key" | "kind">,
  ): Promise<void> {
    try {
      await this.queueFor(url).execute(
        ({ signal }) => this.withRetries((attempt) => this.post(url, secret, body, alert, attempt), signal),
        this.stopper.signal,
      );
      this.log.info(`alerts.webhook: delivered ${alert.key}`);
    } catch (error) {
      if (error instanceof BulkheadRejectedError)
        this.log.warn(`alerts.webhook: the queue is full; ${alert.key} dropped`);
      else if (this.stopper.signal.aborted)
        this.log.warn(`alerts.webhook: stopped before ${alert.key} was delivered`);
      else this.log.error(`alerts.webhook: ${alert.key} not delivered: ${(error as Error).message}`);
    }
  }

  /** Runs `send` until it succeeds, fails for good, the attempts are used up, or `signal` stops it. */
  private async withRetries(
    send: (signal: AbortSignal) => Promise<void>,
    signal: AbortSignal,
  ): Promise<void> {
    let backoff: IBackoff<unknown> | undefined;
    for (let attempt = 1; ; attempt++) {
      try {
        return await send(signal);
      } catch (error) {
        if (!(error instanceof RetryableDelivery) || attempt >= this.maxAttempts || signal.aborted)
          throw error;
        backoff = backoff ? backoff.next(undefined) : this.backoff.next();
        await sleep(backoff.duration, undefined, { signal });
      }
    }
  }

  private async post(
    url: string,
    secret: string,
    body: string,
    alert: Pick<Outgoing, "key" | "kind">,
    signal: AbortSignal,
  ): Promise<void> {
    let response: Response;
    try {
      response = await this.fetchFn(url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "user-agent": "Autopilot-Alerts",
          "x-autopilot-delivery": alert.key,
          "x-autopilot-event": alert.kind,
          [SIGNATURE_HEADER]: signAlertBody(secret, body),
        },
        body,
        redirect: "error",
        signal: AbortSignal.any([signal, AbortSignal.timeout(this.timeoutMs)]),
      });
    } catch (error) {
      if (signal.aborted) throw error;
      throw new RetryableDelivery(`no answer (${(error as Error).message})`);
    }
    await response.body?.cancel();
    if (response.ok) return;
    if (response.status === 429 || response.status === 408 || response.status >= 500)
      throw new RetryableDelivery(`the receiver answered ${response.status}`);
    throw new Error(`the receiver refused it with ${response.status}`);
  }
}
