/**
 * A bound on what the hosted server reads before it knows who sent it.
 *
 * A webhook's signature can only be checked once its whole body is read, so anyone who can reach the
 * server could otherwise make it buffer a body of any size. GitHub caps webhook payloads at 25 MB and
 * delivers nothing larger (https://docs.github.com/en/webhooks/webhook-events-and-payloads#payload-cap):
 * a bigger body is not a delivery and is refused with 413 — before reading anything when its
 * Content-Length says so, and as soon as a streamed body passes the cap otherwise.
 *
 * The cap bounds one body; many connections at once could each hold one. A pool shared by every request of
 * the server bounds them together: a body that would take the unverified bytes held past it is refused with
 * 503 (GitHub delivers one event at a time per hook and far below the cap, so real deliveries never meet it).
 */
import type { IncomingMessage, ServerResponse } from "node:http";

/** GitHub's cap (25 MB), read generously as 25 MiB: a real delivery is never refused. */
export const WEBHOOK_BODY_LIMIT = 25 * 1024 * 1024;

/** Bytes of webhook bodies held at once by one server, before and while they are verified and handled. */
interface UnverifiedBytes {
  held: number;
  max: number;
}

/** The default pool: four bodies at GitHub's cap. */
export function unverifiedBytes(limit: number): UnverifiedBytes {
  return { held: 0, max: 4 * limit };
}

/**
 * Reads the request body, at most `limit` bytes, holding its bytes against `pool` until the response is
 * finished. Resolves with the body, or with null after answering 413 (over the limit) or 503 (over the pool);
 * the connection is then closed, so the rest of the body is never read.
 */
export function readBoundedBody(
  req: IncomingMessage,
  res: ServerResponse,
  limit: number,
  pool: UnverifiedBytes = unverifiedBytes(limit),
): Promise<Buffer | null> {
  let held = 0;
  res.once("close", () => {
    pool.held -= held;
    held = 0;
  });
  const refuse = (resolve: (value: null) => void, busy = false) => {
    const body = JSON.stringify({
      error: busy
        ? "Service Unavailable: too many webhook bodies are being read at once"
        : `Payload Too Large: webhook bodies are at most ${limit} bytes (GitHub's cap)`,
    });
    res.writeHead(busy ? 503 : 413, {
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
      const busy = pool.held + chunk.length > pool.max;
      if (size > limit || busy) {
        done = true;
        chunks.length = 0;
        req.pause();
        refuse(resolve, size <= limit && busy);
        return;
      }
      chunks.push(chunk);
      held += chunk.length;
      pool.held += chunk.length;
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
