/**
 * The outgoing alert webhook (src/app/alert-webhook.ts) against a real HTTP receiver on 127.0.0.1: the body is
 * Slack-compatible and signed (checked with the secret, as a receiver would), a failing receiver is retried
 * with backoff, a refusal is not, the queue is bounded, each alert goes once, and nothing leaves without both
 * secrets or to a plain-http host that is not this machine.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AlertWebhook, SIGNATURE_HEADER, webhookUrlProblem } from "../../src/app/alert-webhook.js";
import { stateWritten } from "../../src/app/reconcile-repo.js";
import type { Effect } from "../../src/core/effects.js";
import type { Alert } from "../../src/core/session/alerts.js";
import { type LifecycleEvent, WebhookPayloadSchema } from "../../src/core/session/webhook-events.js";

const SECRET = "s3cret-for-tests";
const SETTINGS = { urlEnv: "HOOK_URL", secretEnv: "HOOK_SECRET", events: ["alert" as const] };
const REPO = { owner: "acme", name: "app" };

interface Received {
  body: string;
  signature: string | undefined;
  delivery: string | undefined;
  event: string | undefined;
}

let server: Server;
let url: string;
let received: Received[];
/** Status codes to answer with, in order; 200 once they run out. */
let answers: number[];

beforeEach(async () => {
  received = [];
  answers = [];
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push({
        body: Buffer.concat(chunks).toString("utf8"),
        signature: req.headers[SIGNATURE_HEADER] as string | undefined,
        delivery: req.headers["x-autopilot-delivery"] as string | undefined,
        event: req.headers["x-autopilot-event"] as string | undefined,
      });
      res.writeHead(answers.shift() ?? 200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
});

afterEach(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function alert(key: string, what = "no ACME_API_KEY"): Alert {
  return {
    key,
    kind: "blocked",
    issue: 7,
    headline: "#7 is blocked",
    what,
    todo: "add the secret",
    mentions: ["dev"],
  };
}

function verified(r: Received): boolean {
  const want = Buffer.from(`sha256=${createHmac("sha256", SECRET).update(r.body).digest("hex")}`);
  const got = Buffer.from(r.signature ?? "");
  return got.length === want.length && timingSafeEqual(got, want);
}

function webhook(extra: Partial<ConstructorParameters<typeof AlertWebhook>[0]> = {}) {
  const logs: string[] = [];
  const log = {
    debug: () => {},
    info: (m: string) => logs.push(m),
    warn: (m: string) => logs.push(m),
    error: (m: string) => logs.push(m),
  };
  const hook = new AlertWebhook({
    env: { HOOK_URL: url, HOOK_SECRET: SECRET },
    log,
    initialDelayMs: 10,
    maxDelayMs: 40,
    ...extra,
  });
  return { hook, logs };
}

describe("alert webhook", () => {
  it("POSTs a signed, Slack-compatible body once per alert, however often it is handed the same one", async () => {
    const { hook } = webhook();
    hook.send(SETTINGS, [alert("7-blocked-a1", "<!channel> look")], REPO, new Date("2026-11-22T10:00:00Z"));
    hook.send(SETTINGS, [alert("7-blocked-a1", "<!channel> look")], REPO, new Date("2026-11-22T10:01:00Z"));
    await hook.idle();
    expect(received).toHaveLength(1);
    const [r] = received;
    expect(verified(r!)).toBe(true);
    expect(r!.delivery).toBe("7-blocked-a1");
    const body = JSON.parse(r!.body) as { text: string; autopilot: { issue: number } };
    expect(body.text).toContain("[acme/app] #7 is blocked (for @dev)");
    expect(body.text).toContain("&lt;!channel&gt; look");
    expect(body.autopilot.issue).toBe(7);
    // A receiver holding another secret refuses it.
    expect(r!.signature).not.toBe(`sha256=${createHmac("sha256", "other").update(r!.body).digest("hex")}`);
    await hook.stop();
  });

  it("retries a receiver's 5xx and 429 with backoff, and gives up at once on a refusal (4xx)", async () => {
    answers = [500, 429, 200];
    const { hook, logs } = webhook();
    hook.send(SETTINGS, [alert("a")], REPO, new Date());
    await hook.idle();
    expect(received.map((r) => r.delivery)).toEqual(["a", "a", "a"]);
    expect(received.every(verified)).toBe(true);

    received = [];
    answers = [400];
    hook.send(SETTINGS, [alert("b")], REPO, new Date());
    await hook.idle();
    expect(received).toHaveLength(1);
    expect(logs.join("\n")).toMatch(/b not delivered: the receiver refused it with 400/);
    await hook.stop();
  });

  it("never holds the caller: send returns before the receiver answers; the queue is bounded", async () => {
    answers = [500, 500, 500, 500, 500, 500];
    const { hook, logs } = webhook({ queueLimit: 1, maxAttempts: 2, initialDelayMs: 200, maxDelayMs: 200 });
    const before = received.length;
    hook.send(SETTINGS, [alert("q1"), alert("q2"), alert("q3")], REPO, new Date());
    expect(received.length).toBe(before);
    await hook.idle();
    expect(logs.join("\n")).toMatch(/queue is full; q3 dropped/);
    expect(new Set(received.map((r) => r.delivery))).toEqual(new Set(["q1", "q2"]));
    await hook.stop();
  });

  it("a receiver that keeps failing delays no other receiver's alerts (one queue per receiver)", async () => {
    // The dead receiver: it never answers, so its delivery holds its queue through every retry.
    const dead = createServer(() => {});
    await new Promise<void>((resolve) => dead.listen(0, "127.0.0.1", resolve));
    const deadUrl = `http://127.0.0.1:${(dead.address() as AddressInfo).port}/hook`;
    const { hook } = webhook({
      env: { HOOK_URL: url, HOOK_SECRET: SECRET, DEAD_URL: deadUrl },
      timeoutMs: 60_000,
      maxAttempts: 1,
    });
    hook.send({ ...SETTINGS, urlEnv: "DEAD_URL" }, [alert("to-dead")], REPO, new Date());
    hook.send(SETTINGS, [alert("to-live")], REPO, new Date());
    await expect.poll(() => received.map((r) => r.delivery), { timeout: 5_000 }).toEqual(["to-live"]);
    await hook.stop();
    dead.closeAllConnections();
    await new Promise<void>((resolve) => dead.close(() => resolve()));
  });

  it("sends nothing without the secret, or to plain http off this machine, and says which variable to set", async () => {
    const { hook, logs } = webhook({ env: { HOOK_URL: url } });
    hook.send(SETTINGS, [alert("x")], REPO, new Date());
    await hook.idle();
    expect(received).toEqual([]);
    expect(logs.join("\n")).toMatch(/HOOK_SECRET is not set in the controller's environment/);

    const plain = webhook({ env: { HOOK_URL: "http://alerts.example.com/hook", HOOK_SECRET: SECRET } });
    plain.hook.send(SETTINGS, [alert("y")], REPO, new Date());
    await plain.hook.idle();
    expect(received).toEqual([]);
    expect(plain.logs.join("\n")).toMatch(/must be https/);
    expect(webhookUrlProblem("https://hooks.slack.com/services/x")).toBeNull();
  });

  it("stop gives up deliveries waiting for a retry", async () => {
    answers = [503, 503, 503, 503, 503, 503];
    const { hook, logs } = webhook({ initialDelayMs: 60_000, maxDelayMs: 60_000 });
    hook.send(SETTINGS, [alert("z")], REPO, new Date());
    while (received.length === 0) await new Promise((r) => setTimeout(r, 10));
    await hook.stop();
    expect(received).toHaveLength(1);
    expect(logs.join("\n")).toMatch(/stopped before z was delivered/);
  });
});

describe("the webhook's lifecycle events (`alerts.webhook.events`)", () => {
  const paused: LifecycleEvent = {
    key: "session-paused-2026-11-22T10:00:00.000Z",
    kind: "paused",
    issue: null,
    headline: "Autopilot paused by @dev",
    actor: "dev",
    reason: "user_pause",
  };
  const switched: LifecycleEvent = {
    key: "7-agent-switched-a1-claude-codex",
    kind: "agent-switched",
    issue: 7,
    headline: "#7 switched from claude to codex",
    actor: "autopilot",
    from: "claude",
    to: "codex",
    reason: "claude is rate limited",
  };

  it("carries only the kinds the configuration lists, each body valid against the documented schema", async () => {
    const { hook } = webhook();
    const at = new Date("2026-11-22T10:00:00Z");
    hook.send(SETTINGS, [alert("a1")], REPO, at, [paused, switched]);
    await hook.idle();
    expect(received.map((r) => r.event)).toEqual(["blocked"]);

    received = [];
    const chosen = { ...SETTINGS, events: ["paused" as const, "agent-switched" as const] };
    hook.send(chosen, [alert("a2")], REPO, at, [paused, switched]);
    await hook.idle();
    expect(received.map((r) => [r.event, r.delivery])).toEqual([
      ["paused", paused.key],
      ["agent-switched", switched.key],
    ]);
    expect(received.every(verified)).toBe(true);
    const bodies = received.map((r) => WebhookPayloadSchema.parse(JSON.parse(r.body)));
    expect(bodies[0]!.autopilot).toMatchObject({ event: "paused", actor: "dev", issue: null });
    expect(bodies[1]!.autopilot).toMatchObject({ event: "agent-switched", from: "claude", to: "codex" });
    expect(bodies[1]!.text).toBe("[acme/app] #7 switched from claude to codex");
    await hook.stop();
  });
});

describe("when a reconcile's alerts may leave", () => {
  const write = { type: "writeTrackingIssue", issue: 1, body: "", revision: 1 } as unknown as Effect;
  const other = { type: "comment", issue: 7, body: "x" } as unknown as Effect;
  it("only once the state that records them is on GitHub: not while the write is queued, failed or deferred", () => {
    for (const status of ["queued", "failed", "deferred"] as const)
      expect(stateWritten([{ effect: write, status }]), status).toBe(false);
    expect(stateWritten([{ effect: write, status: "done" }])).toBe(true);
    expect(stateWritten([{ effect: write, status: "skipped" }])).toBe(true);
    expect(stateWritten([{ effect: other, status: "done" }])).toBe(true);
  });
});
