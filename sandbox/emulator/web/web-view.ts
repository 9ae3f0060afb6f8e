/**
 * The sandbox's read-only web pages: the repositories, issues, pull requests and Actions runs of the store
 * as GitHub shows them, on a port of their own on 127.0.0.1. Started and stopped with the sandbox.
 *
 * Issue text is untrusted, so besides sanitizing every Markdown body the pages carry a Content-Security-Policy
 * that lets scripts, styles, images and fetches come from this server only, and a request whose Host header
 * names another host (a DNS-rebinding page in the reader's browser) is refused.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { SandboxStore } from "../store.js";
import { readAsset } from "./assets.js";
import type { PageContext, RunDetailsSource } from "./page-context.js";
import { route } from "./routes.js";

export type { RunDetails, RunDetailsSource } from "./page-context.js";

/**
 * Scripts only from this server (mermaid's bundle and the page script); inline styles are allowed for the
 * SVG mermaid draws and the label colours (the sanitizer removes `style` from issue text); no frames, forms,
 * plugins or other origins.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

export interface WebView {
  /** `http://127.0.0.1:PORT/` */
  readonly url: string;
  readonly port: number;
  /** Where run pages find logs and step summaries (the Actions stand-in); null clears it. */
  setRunDetails(source: RunDetailsSource | null): void;
  /** Whether pages say the scenario is running and keep refreshing themselves. */
  setLive(live: boolean): void;
  /** Closes the server and every open connection. Idempotent. */
  stop(): Promise<void>;
}

interface WebViewOptions {
  store: SandboxStore;
  /** Port on 127.0.0.1; 0 (default) picks a free one. */
  port?: number;
}

/** Thrown when the chosen port cannot be used. */
export class WebViewPortError extends Error {
  constructor(port: number, cause: NodeJS.ErrnoException) {
    super(
      cause.code === "EADDRINUSE"
        ? `Port ${port} on 127.0.0.1 is already in use: choose another port for the web view.`
        : `The web view cannot listen on 127.0.0.1:${port}: ${cause.message}`,
    );
    this.name = "WebViewPortError";
  }
}

const BASE_HEADERS = {
  "content-security-policy": CONTENT_SECURITY_POLICY,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
};

export async function startWebView(options: WebViewOptions): Promise<WebView> {
  const ctx: PageContext = { store: options.store, runDetails: () => undefined, live: true };
  const sockets = new Set<Socket>();
  let port = 0;

  const send = (
    res: ServerResponse,
    status: number,
    headers: Record<string, string>,
    body: string | Buffer,
  ) => {
    res.writeHead(status, { ...BASE_HEADERS, ...headers, "content-length": String(Buffer.byteLength(body)) });
    res.end(res.req.method === "HEAD" ? undefined : body);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const host = req.headers.host ?? "";
    if (host !== `127.0.0.1:${port}` && host !== `localhost:${port}`) {
      send(
        res,
        421,
        { "content-type": "text/plain; charset=utf-8" },
        "This server answers only 127.0.0.1.\n",
      );
      return;
    }
    if (req.method !== "GET" && req.method !== "HEAD") {
      send(res, 405, { allow: "GET, HEAD", "content-type": "text/plain; charset=utf-8" }, "Read-only.\n");
      return;
    }
    const url = new URL(req.url ?? "/", `http://${host}`);
    const asset = readAsset(url.pathname);
    if (asset) {
      send(res, 200, { "content-type": asset.type, "cache-control": "max-age=3600" }, asset.body);
      return;
    }
    const result = await route(ctx, url);
    if ("redirect" in result) {
      send(res, 302, { location: result.redirect, "content-type": "text/plain; charset=utf-8" }, "");
      return;
    }
    send(
      res,
      result.status,
      { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" },
      result.html,
    );
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      const message = (error as Error).message ?? String(error);
      send(res, 500, { "content-type": "text/plain; charset=utf-8" }, `The page failed: ${message}\n`);
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  const wanted = options.port ?? 0;
  await new Promise<void>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => reject(new WebViewPortError(wanted, error));
    server.once("error", onError);
    server.listen(wanted, "127.0.0.1", () => {
      server.off("error", onError);
      resolve();
    });
  });
  port = (server.address() as AddressInfo).port;
  let stopping: Promise<void> | null = null;
  return {
    url: `http://127.0.0.1:${port}/`,
    port,
    setRunDetails: (source) => {
      ctx.runDetails = source ?? (() => undefined);
    },
    setLive: (live) => {
      ctx.live = live;
    },
    stop: () => {
      stopping ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        for (const socket of sockets) socket.destroy();
      });
      return stopping;
    },
  };
}
