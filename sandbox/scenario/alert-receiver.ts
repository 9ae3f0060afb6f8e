/**
 * A stand-in for the receiver of Autopilot's outgoing alert webhook (src/app/alert-webhook.ts), started on
 * 127.0.0.1 for a scenario whose `expect` names `alertWebhook`, and stopped with it. It checks every delivery's
 * HMAC-SHA256 signature with the secret the controller was given, as a real receiver must, and keeps what came.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { SIGNATURE_HEADER } from "../../src/app/alert-webhook.js";

export interface AlertDelivery {
  /** The payload's Slack-compatible `text`. */
  text: string;
  /** The signature matched the body under the secret. */
  verified: boolean;
  key: string | null;
}

export interface AlertReceiver {
  url: string;
  secret: string;
  deliveries: AlertDelivery[];
  stop(): Promise<void>;
}

export async function startAlertReceiver(): Promise<AlertReceiver> {
  const secret = randomBytes(24).toString("hex");
  const deliveries: AlertDelivery[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size <= 1_000_000) chunks.push(chunk);
    });
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const want = Buffer.from(`sha256=${createHmac("sha256", secret).update(body).digest("hex")}`);
      const got = Buffer.from(String(req.headers[SIGNATURE_HEADER] ?? ""));
      const verified = got.length === want.length && timingSafeEqual(got, want);
      let text = "";
      try {
        text = String((JSON.parse(body) as { text?: unknown }).text ?? "");
      } catch {
        text = "";
      }
      const key = req.headers["x-autopilot-delivery"];
      deliveries.push({ text, verified, key: typeof key === "string" ? key : null });
      res.writeHead(verified ? 204 : 401).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/alerts`,
    secret,
    deliveries,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
