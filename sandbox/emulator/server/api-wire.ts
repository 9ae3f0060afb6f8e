/** The HTTP side of the sandbox's API: reading requests and writing replies the way GitHub's API does. */
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Json } from "../shapes.js";
import type { MatchedOperation } from "./openapi.js";

/** The documentation URL of errors that have no more specific page. */
export const DOCS = "https://docs.github.com/rest";

/** An API request with its body read and parsed, on its way to the REST or GraphQL handler. */
export interface ApiCall {
  res: ServerResponse;
  method: string;
  url: URL;
  /** Lower-cased names. */
  headers: Record<string, string>;
  body: unknown;
}

/** An answer on its way out: a JSON body, a raw text body, or none (204, 304). */
export interface Reply {
  status: number;
  headers: Record<string, string>;
  body?: Json;
  text?: string;
}

/** Writes a reply with the headers GitHub sends on every API response. */
export function sendReply(res: ServerResponse, reply: Reply): void {
  const headers: Record<string, string> = {
    "x-github-request-id": randomUUID().toUpperCase().slice(0, 23),
    "x-github-api-version-selected": "2022-11-28",
    "x-github-media-type": "github.v3; format=json",
    ...reply.headers,
  };
  if (reply.status === 204 || reply.status === 304) {
    res.writeHead(reply.status, headers);
    res.end();
    return;
  }
  if (reply.text !== undefined) {
    res.writeHead(reply.status, {
      ...headers,
      "content-type": "application/vnd.github.raw; charset=utf-8",
    });
    res.end(reply.text);
    return;
  }
  const payload = JSON.stringify(reply.body ?? {});
  res.writeHead(reply.status, {
    ...headers,
    "content-type": "application/json; charset=utf-8",
    "content-length": String(Buffer.byteLength(payload)),
  });
  res.end(payload);
}

export function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

export function lowerHeaders(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    out[key.toLowerCase()] = Array.isArray(value) ? value.join(", ") : value;
  }
  return out;
}

export function queryObject(url: URL): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const key of new Set(url.searchParams.keys())) {
    const all = url.searchParams.getAll(key);
    out[key] = all.length > 1 ? all : (all[0] ?? "");
  }
  return out;
}

export function documentationUrl(match: MatchedOperation): string {
  const docs = (match.operation as { externalDocs?: { url?: string } }).externalDocs?.url;
  return docs ?? DOCS;
}
