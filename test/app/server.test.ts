import { sign } from "@octokit/webhooks-methods";
import nock from "nock";
import { describe, expect, it } from "vitest";
import { serve } from "../../src/app/hosted/serve.js";
import { webhookExample } from "../github/fixtures.js";
import {
  API,
  calls,
  privateKey,
  SECRET,
  startServer as start,
  stopAfterTest,
  useControllerServer,
} from "./controller-server-fixture.js";

useControllerServer();

async function deliver(url: string, name: string, payload: unknown, signature?: string) {
  const body = JSON.stringify(payload);
  return fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-github-event": name,
      "x-github-delivery": `d-${Math.random().toString(36).slice(2)}`,
      "x-hub-signature-256": signature ?? (await sign(SECRET, body)),
    },
    body,
  });
}

/** The environment `autopilot serve` needs against the nock'd API, with `extra` on top. */
function serveEnv(extra: Record<string, string>): Record<string, string> {
  return {
    APP_ID: "123",
    PRIVATE_KEY: Buffer.from(privateKey).toString("base64"),
    WEBHOOK_SECRET: SECRET,
    PORT: "0",
    GITHUB_API_URL: API,
    AUTOPILOT_TICK_SECONDS: "0",
    ...extra,
  };
}

function withInstallation(payload: Record<string, unknown>): Record<string, unknown> {
  return { ...payload, installation: { id: 42, node_id: "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uNDI=" } };
}

describe("the controller server", () => {
  it("binds to 127.0.0.1 and serves webhooks at /api/github/webhooks", async () => {
    const s = await start();
    expect(s.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(s.webhookUrl).toBe(`${s.url}/api/github/webhooks`);
    expect((await fetch(`${s.url}/nothing-here`)).status).toBe(404);
  });

  it("reconciles the event's repository when a signed webhook arrives", async () => {
    nock(API).get("/app").reply(200, { id: 123, slug: "autopilot-test", name: "Autopilot" });
    const s = await start();
    const response = await deliver(
      s.webhookUrl,
      "issues",
      withInstallation(webhookExample("issues", "labeled")),
    );
    expect(response.status).toBe(200);
    await s.idle();
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({
      repo: { owner: "Codertocat", name: "Hello-World" },
      botLogin: "autopilot-test[bot]",
    });
    expect(typeof calls[0]?.octokit.request).toBe("function");
  });

  it("reconciles for every subscribed event, also those Autopilot's own bot caused", async () => {
    nock(API).get("/app").reply(200, { id: 123, slug: "autopilot-test" });
    const s = await start({ awaitReconcile: true });
    const names = [
      "issue_comment",
      "pull_request",
      "pull_request_review",
      "check_suite",
      "check_run",
      "workflow_run",
      "push",
    ];
    for (const name of names) {
      const payload = withInstallation(webhookExample(name));
      if (name === "push") payload.ref = "refs/heads/master"; // the example repository's default branch
      if (name === "issue_comment") payload.sender = { login: "autopilot-test[bot]", type: "Bot", id: 1 };
      const response = await deliver(s.webhookUrl, name, payload);
      expect(response.status, name).toBe(200);
    }
    await s.idle();
    expect(calls.length).toBe(names.length);
  });

  it("rejects a delivery with a bad signature and reconciles nothing", async () => {
    const s = await start();
    const response = await deliver(
      s.webhookUrl,
      "issues",
      withInstallation(webhookExample("issues", "opened")),
      "sha256=" + "0".repeat(64),
    );
    expect(response.status).toBe(400);
    await s.idle();
    expect(calls).toHaveLength(0);
  });

  it("ticks: reconciles every repository of every installation, periodically, until stopped", async () => {
    const scope = nock(API)
      .persist()
      .get("/app")
      .reply(200, { id: 123, slug: "autopilot-test" })
      .get("/app/installations")
      .query(true)
      .reply(200, [{ id: 42, account: { login: "octo-org" } }])
      .post("/app/installations/42/access_tokens")
      .reply(201, { token: "ghs_installation", expires_at: "2099-01-01T00:00:00Z" })
      .get("/installation/repositories")
      .query(true)
      .reply(200, {
        total_count: 2,
        repositories: [
          { name: "one", owner: { login: "octo-org" } },
          { name: "two", owner: { login: "octo-org" } },
        ],
      });
    const s = await start({ tickMs: 40 });
    // The first ticks (a JWT, the installation token, two listings) may take a while on a busy machine.
    for (let i = 0; i < 100 && calls.length < 2; i++) await new Promise((resolve) => setTimeout(resolve, 50));
    await s.stop();
    const afterStop = calls.length;
    expect(afterStop).toBeGreaterThanOrEqual(2);
    expect(
      calls
        .map((c) => c.repo.name)
        .slice(0, 2)
        .sort(),
    ).toEqual(["one", "two"]);
    await new Promise((resolve) => setTimeout(resolve, 120));
    expect(calls.length).toBe(afterStop);
    scope.persist(false);
  });

  it("stops after the reconcile in progress: events that arrived meanwhile start nothing more", async () => {
    nock(API).get("/app").reply(200, { id: 123, slug: "autopilot-test" });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let began!: () => void;
    const started = new Promise<void>((resolve) => {
      began = resolve;
    });
    const s = await start({
      reconcile: async (options) => {
        calls.push(options);
        began();
        await gate;
      },
    });
    const payload = withInstallation(webhookExample("issues", "labeled"));
    await deliver(s.webhookUrl, "issues", payload);
    await started;
    // A burst while the first reconcile runs: one follow-up is queued behind it.
    await deliver(s.webhookUrl, "issue_comment", withInstallation(webhookExample("issue_comment")));
    const stopping = s.stop();
    release();
    await stopping;
    expect(calls).toHaveLength(1);
  });

  it("waits out a secondary rate limit and retries, instead of failing the reconcile", async () => {
    nock(API)
      .get("/app")
      .reply(200, { id: 123, slug: "autopilot-test" })
      .post("/app/installations/42/access_tokens")
      .reply(201, { token: "ghs_installation", expires_at: "2099-01-01T00:00:00Z" });
    const repo = nock(API)
      .get("/repos/Codertocat/Hello-World")
      .reply(
        403,
        {
          message:
            "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
        },
        { "retry-after": "1" },
      )
      .get("/repos/Codertocat/Hello-World")
      .reply(200, { id: 1, name: "Hello-World" });
    const outcomes: string[] = [];
    const s = await start({
      throttle: true,
      awaitReconcile: true,
      reconcile: async (options) => {
        try {
          const response = await options.octokit.request("GET /repos/{owner}/{repo}", {
            owner: options.repo.owner,
            repo: options.repo.name,
          });
          outcomes.push(String(response.status));
        } catch (error) {
          outcomes.push((error as Error).message);
        }
      },
    });
    await deliver(s.webhookUrl, "issues", withInstallation(webhookExample("issues", "labeled")));
    await s.idle();
    expect(outcomes).toEqual(["200"]);
    expect(repo.isDone()).toBe(true);
  });

  it("tick() on demand resolves after the reconciles are done", async () => {
    nock(API)
      .get("/app")
      .reply(200, { id: 123, slug: "autopilot-test" })
      .get("/app/installations")
      .query(true)
      .reply(200, [{ id: 42 }])
      .post("/app/installations/42/access_tokens")
      .reply(201, { token: "ghs_installation", expires_at: "2099-01-01T00:00:00Z" })
      .get("/installation/repositories")
      .query(true)
      .reply(200, { total_count: 1, repositories: [{ name: "one", owner: { login: "octo-org" } }] });
    const s = await start();
    await s.tick();
    expect(calls.map((c) => `${c.repo.owner}/${c.repo.name}`)).toEqual(["octo-org/one"]);
  });

  it("refuses a memory bound that is not a whole number, naming its variable, before it listens", async () => {
    const quiet = { debug() {}, info() {}, warn() {}, error() {} };
    const env = serveEnv({ AUTOPILOT_READ_CACHE_MB: "half" });
    await expect(serve({ env, log: quiet, handleSignals: false })).rejects.toThrow(
      /AUTOPILOT_READ_CACHE_MB must be a whole number of at least 1, not "half"/,
    );
  });

  it("refuses a replicas setting it cannot use, naming its variable, before it listens or connects", async () => {
    const quiet = { debug() {}, info() {}, warn() {}, error() {} };
    const refused = async (vars: Record<string, string>, message: RegExp) =>
      expect(serve({ env: serveEnv(vars), log: quiet, handleSignals: false })).rejects.toThrow(message);
    // The password in a URL that is refused is not repeated in the error.
    await refused(
      { AUTOPILOT_REDIS_URL: "http://user:s3cret@redis:6379" },
      /^AUTOPILOT_REDIS_URL must be a redis:\/\/ or rediss:\/\/ URL, such as redis:\/\/127\.0\.0\.1:6379 \(it is "http:\/\/…@redis:6379"\)\.$/,
    );
    await refused(
      { AUTOPILOT_REDIS_URL: "redis://127.0.0.1:1", AUTOPILOT_REPLICA_CONCURRENCY: "0" },
      /AUTOPILOT_REPLICA_CONCURRENCY must be a whole number from 1 to 256 \(it is "0"\)/,
    );
    await refused(
      { AUTOPILOT_REDIS_URL: "redis://127.0.0.1:1", AUTOPILOT_REDIS_PREFIX: "a:b" },
      /AUTOPILOT_REDIS_PREFIX must be 1 to 64 letters/,
    );
  });

  it("refuses a metrics token too weak to guard the metrics, before it listens", async () => {
    const quiet = { debug() {}, info() {}, warn() {}, error() {} };
    for (const token of ["short", "sixteen chars ok"]) {
      await expect(
        serve({ env: serveEnv({ AUTOPILOT_METRICS_TOKEN: token }), log: quiet, handleSignals: false }),
      ).rejects.toThrow(/AUTOPILOT_METRICS_TOKEN must be at least 16 printable characters without spaces/);
    }
  });

  it("is what `autopilot serve` starts, configured from the environment", async () => {
    const quiet = { debug() {}, info() {}, warn() {}, error() {} };
    await expect(serve({ env: {}, log: quiet, handleSignals: false })).rejects.toThrow(
      /APP_ID, WEBHOOK_SECRET, PRIVATE_KEY or PRIVATE_KEY_PATH/,
    );
    const server = stopAfterTest(
      await serve({
        env: serveEnv({ LOG_LEVEL: "fatal" }),
        log: quiet,
        handleSignals: false,
      }),
    );
    expect(server.webhookUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/github\/webhooks$/);
    const response = await deliver(server.webhookUrl, "ping", {
      zen: "Keep it logically awesome.",
      hook_id: 1,
    });
    expect(response.status).toBe(200);
  });
});
