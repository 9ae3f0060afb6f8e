/**
 * Attack: anyone who can reach the hosted server sends a huge body to its webhook URL. The signature can
 * only be checked after reading the body, so an unbounded read is a memory exhaustion any outsider can
 * trigger. The server must refuse bodies over GitHub's 25 MB cap before reading them (Content-Length),
 * or as soon as a streamed body passes the cap, and reconcile nothing. Real HTTP over 127.0.0.1.
 */
import { request } from "node:http";
import { sign } from "@octokit/webhooks-methods";
import nock from "nock";
import { describe, expect, it } from "vitest";
import { WEBHOOK_BODY_LIMIT } from "../../src/app/hosted/webhook-body-limit.js";
import { API, calls, SECRET, startServer, useControllerServer } from "../app/controller-server-fixture.js";
import { webhookExample } from "../github/fixtures.js";

useControllerServer();

const start = (webhookBodyLimit?: number) =>
  startServer({ awaitReconcile: true, ...(webhookBodyLimit !== undefined ? { webhookBodyLimit } : {}) });

interface Sent {
  status: number;
  /** Bytes of the body written before the answer came. */
  written: number;
}

/**
 * POSTs to the webhook URL. With `declared`, sends that Content-Length but only `body`'s first `send`
 * bytes, then waits for the answer; without it, streams `body` chunked until it is answered or sent.
 */
function post(url: string, body: Buffer, headers: Record<string, string>, declared?: number, send?: number) {
  return new Promise<Sent>((resolve, reject) => {
    let written = 0;
    const req = request(
      url,
      {
        method: "POST",
        headers: {
          ...headers,
          ...(declared !== undefined ? { "content-length": String(declared) } : {}),
        },
      },
      (res) => {
        res.resume();
        res.on("end", () => resolve({ status: res.statusCode ?? 0, written }));
      },
    );
    // The server closes the connection after refusing: writes after that fail, which is the point.
    req.on("error", (error) => (written > 0 ? undefined : reject(error)));
    if (declared !== undefined) {
      const part = body.subarray(0, send ?? 0);
      written = part.length;
      req.write(part);
      return;
    }
    const chunk = 64 * 1024;
    const pump = () => {
      while (written < body.length) {
        const ok = req.write(body.subarray(written, written + chunk));
        written = Math.min(body.length, written + chunk);
        if (!ok) {
          req.once("drain", pump);
          return;
        }
      }
      req.end();
    };
    pump();
  });
}

async function signedHeaders(body: Buffer) {
  return {
    "content-type": "application/json",
    "x-github-event": "issues",
    "x-github-delivery": "d-big",
    "x-hub-signature-256": await sign(SECRET, body.toString("utf8")),
  };
}

/** A real `issues` payload padded with a long field to `size` bytes. */
function paddedPayload(size: number): Buffer {
  const payload = {
    ...webhookExample("issues", "labeled"),
    installation: { id: 42 },
    padding: "",
  } as Record<string, unknown>;
  const base = Buffer.byteLength(JSON.stringify(payload));
  payload.padding = "x".repeat(Math.max(0, size - base));
  return Buffer.from(JSON.stringify(payload));
}

describe("an oversized webhook body", () => {
  it("is refused with 413 from its Content-Length, before its body is sent, and nothing is reconciled", async () => {
    const s = await start();
    const declared = WEBHOOK_BODY_LIMIT + 1;
    const body = Buffer.from('{"action":"labeled"');
    // Only 19 bytes of the declared 25 MiB are ever sent: the answer comes without waiting for the rest.
    const sent = await post(s.webhookUrl, body, await signedHeaders(body), declared, body.length);
    expect(sent).toEqual({ status: 413, written: body.length });
    await s.idle();
    expect(calls).toEqual([]);
  });

  it("is refused with 413 once a streamed (chunked) body passes GitHub's cap, even correctly signed", async () => {
    const s = await start();
    const body = paddedPayload(WEBHOOK_BODY_LIMIT + 2 * 1024 * 1024);
    const sent = await post(s.webhookUrl, body, await signedHeaders(body));
    expect(sent.status).toBe(413);
    await s.idle();
    expect(calls).toEqual([]);
  });

  it("a body within the limit is read, verified and reconciled as before", async () => {
    nock(API).get("/app").reply(200, { id: 123, slug: "autopilot-test" });
    // A lowered limit keeps the test small; the same code path reads a 25 MB delivery.
    const s = await start(64 * 1024);
    const body = paddedPayload(60 * 1024);
    const ok = await post(s.webhookUrl, body, await signedHeaders(body));
    expect(ok.status).toBe(200);
    await s.idle();
    expect(calls).toHaveLength(1);
    const over = paddedPayload(70 * 1024);
    expect((await post(s.webhookUrl, over, await signedHeaders(over))).status).toBe(413);
    const declared = await post(s.webhookUrl, over, await signedHeaders(over), over.length, 0);
    expect(declared.status).toBe(413);
    await s.idle();
    expect(calls).toHaveLength(1);
  });

  it("a bad signature on a bounded body is still refused by the signature check", async () => {
    const s = await start();
    const body = paddedPayload(4 * 1024);
    const headers = { ...(await signedHeaders(body)), "x-hub-signature-256": await sign("wrong", "x") };
    expect((await post(s.webhookUrl, body, headers)).status).toBe(400);
    await s.idle();
    expect(calls).toEqual([]);
  });
});
