/**
 * A bound on what the hosted server reads before it knows who sent it.
 *
 * A webhook's signature can only be checked once its whole body is read, so anyone who can reach the
 * server could otherwise make it buffer a body of any size. GitHub caps webhook payloads at 25 MB and
 * delivers nothing larger (https://docs.github.com/en/webhooks/webhook-events-and-payloads#payload-cap):
 * a bigger body is not a delivery and is refused with 413 — before reading anything when its
 * Content-Length says so, and as soon as a streamed body passes the cap otherwise.
 */
import type { IncomingMessage, ServerResponse } from "node:http";

/** GitHub's cap (25 MB), read generously as 25 MiB: a real delivery is never refused. */
export const WEBHOOK_BODY_LIMIT = 25 * 1024 * 1024;

/**
 * Reads the request body, at most `limit` bytes. Resolves with the body, or with null after answering 413
 * (the connection is then closed, so the rest of the body is never read).
 */
export function readBoundedBody(
  req: IncomingMessage,
  res: ServerResponse,
  limit: number,
): Promise<Buffer | null> {
  const refuse = (resolve: (value: null) => void) => {
    const body = JSON.stringify({
      error: `Payload Too Large: webhook bodies are at most ${limit} bytes (GitHub's cap)`,
    });
    res.writeHead(413, {
      "content-type": "application/json",
      "content-length": Buffer.byteLength(body).toString(),
      connection: "close",
    });
    res.end(body, () => req.destroy());
    resolve(null);
  };
  return new Promise((resolve, reject) => {
    const declared = req.headers["content-length"];
    if (declared !== undefined && !(Number(declared) <= limit)) {
      refuse(resolve);
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    req.on("data", (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > limit) {
        done = true;
        chunks.length = 0;
        req.pause();
        refuse(resolve);
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => {
      if (done) return;
      done = true;
      resolve(Buffer.concat(chunks));
    });
    req.on("error", (error) => {
      if (done) return;
      done = true;
      reject(error);
    });
  });
}
