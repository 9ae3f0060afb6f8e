/**
 * `WEBHOOK_PROXY_URL` (Probot's smee.io relay, https://probot.github.io/docs/configuration/): `autopilot serve`
 * reads the channel's deliveries and posts each to its own webhook URL, where the signature is checked as for a
 * direct delivery. The channel here is a server-sent-events server on 127.0.0.1 speaking smee.io's protocol (each
 * message a JSON object of the delivery's headers and its `body`).
 */
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { sign } from "@octokit/webhooks-methods";
import { afterEach, describe, expect, it } from "vitest";
import { serve } from "../../src/app/hosted/serve.js";
import { API, privateKey, SECRET, stopAfterTest, useControllerServer } from "./controller-server-fixture.js";

useControllerServer();

interface Channel {
  url: string;
  /** Sends one delivery to every connected relay. */
  send(headers: Record<string, string>, body: unknown): void;
  close(): Promise<void>;
}

const channels: Channel[] = [];
afterEach(async () => {
  for (const channel of channels.splice(0)) await channel.close();
});

async function startChannel(): Promise<Channel> {
  const listeners: ServerResponse[] = [];
  const server: Server = createServer((req, res) => {
    if (req.method !== "GET" || req.url !== "/channel") {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    res.write(": ready\n\n");
    listeners.push(res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const channel: Channel = {
    url: `http://127.0.0.1:${port}/channel`,
    send(headers, body) {
      const data = JSON.stringify({ ...headers, body, timestamp: Date.now() });
      for (const res of listeners) res.write(`data: ${data}\n\n`);
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of listeners) res.end();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  channels.push(channel);
  return channel;
}

function serveEnv(extra: Record<string, string>): Record<string, string> {
  return {
    APP_ID: "123",
    PRIVATE_KEY: Buffer.from(privateKey).toString("base64"),
    WEBHOOK_SECRET: SECRET,
    PORT: "0",
    GITHUB_API_URL: API,
    AUTOPILOT_TICK_SECONDS: "0",
    LOG_LEVEL: "fatal",
    ...extra,
  };
}

/** Waits until `lines` holds `count` lines matching `pattern` (the relay's report of each post). */
async function linesMatching(lines: string[], pattern: RegExp, count: number): Promise<string[]> {
  for (let i = 0; i < 200; i++) {
    const found = lines.filter((l) => pattern.test(l));
    if (found.length >= count) return found;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`never saw ${count} lines matching ${pattern}; saw:\n${lines.join("\n")}`);
}

describe("WEBHOOK_PROXY_URL", () => {
  it("relays the channel's deliveries to serve's webhook URL, where each signature is checked", async () => {
    const channel = await startChannel();
    const lines: string[] = [];
    const log = {
      debug: (m: string) => lines.push(m),
      info: (m: string) => lines.push(m),
      warn() {},
      error() {},
    };
    const server = stopAfterTest(
      await serve({ env: serveEnv({ WEBHOOK_PROXY_URL: channel.url }), log, handleSignals: false }),
    );
    expect(lines).toContain(
      `relaying webhooks from ${channel.url} to ${server.webhookUrl} (WEBHOOK_PROXY_URL)`,
    );
    const ping = { zen: "Keep it logically awesome.", hook_id: 1 };
    const headers = { "x-github-event": "ping", "x-github-delivery": "d-1" };
    channel.send({ ...headers, "x-hub-signature-256": await sign(SECRET, JSON.stringify(ping)) }, ping);
    channel.send({ ...headers, "x-hub-signature-256": `sha256=${"0".repeat(64)}` }, ping);
    // Each delivery is posted as it arrives: the two may answer in either order.
    const posts = await linesMatching(lines, /^webhook proxy: POST \S+ - \d+$/, 2);
    expect(posts.sort()).toEqual([
      `webhook proxy: POST ${server.webhookUrl} - 200`,
      `webhook proxy: POST ${server.webhookUrl} - 400`,
    ]);
  });

  it("refuses a proxy URL that is not http(s), naming the variable, before it listens", async () => {
    const quiet = { debug() {}, info() {}, warn() {}, error() {} };
    await expect(
      serve({ env: serveEnv({ WEBHOOK_PROXY_URL: "smee.io/abc" }), log: quiet, handleSignals: false }),
    ).rejects.toThrow(/^WEBHOOK_PROXY_URL must be an http\(s\) URL/);
  });

  it("fails at start, naming the variable, when the channel cannot be reached", async () => {
    const channel = await startChannel();
    await channel.close();
    const quiet = { debug() {}, info() {}, warn() {}, error() {} };
    await expect(
      serve({ env: serveEnv({ WEBHOOK_PROXY_URL: channel.url }), log: quiet, handleSignals: false }),
    ).rejects.toThrow(/^WEBHOOK_PROXY_URL: could not connect to http:\/\/127\.0\.0\.1:\d+\/channel/);
  });
});
