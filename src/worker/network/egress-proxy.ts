/**
 * The agent's one way out to the network: an HTTP proxy the worker runs outside the sandbox, listening on a Unix
 * socket in a directory of its own (bound into the sandbox, whose network namespace has nothing but loopback;
 * src/worker/network/egress-forwarder.ts is its other end inside). `CONNECT host:port` tunnels (https and anything
 * else over TCP) and absolute-URI requests (plain http) are let through only to hosts `network.allow` lists
 * (src/core/agent/network-allow.ts); the rest get HTTP 403 with a body naming the setting, and are counted for the job
 * summary and the progress comment.
 *
 * The decision is made on the host name the client asked for, never on what it resolves to, and then:
 * - an IP address is allowed only when the list names that address;
 * - a name allowed by a wildcard is refused when any of its addresses is loopback, private, link-local (the cloud
 *   metadata service at 169.254.169.254), carrier-grade NAT, multicast or otherwise not public: whoever controls
 *   a domain's DNS (some wildcard domains resolve any name to any address, as nip.io does) would otherwise reach
 *   the runner's own services — the Actions runner's listener, a Docker daemon's port, the metadata service that
 *   hands out the machine's cloud credentials — through the proxy, which runs on the host and is not in the
 *   sandbox;
 * - a name the list names exactly may resolve anywhere: the maintainer chose it (a model server on the runner);
 * - the connection goes to the address that was checked (no second lookup that DNS could answer differently).
 *
 * Written on Node's http and net rather than a proxy library: the kept ones (proxy-chain, http-proxy) resolve and
 * connect by name inside, so the address checked could differ from the address reached; the whole job here is
 * the check, and the plumbing around it is a few dozen lines.
 */
import { lookup } from "node:dns/promises";
import { chmod, mkdtemp, rm } from "node:fs/promises";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import type { Duplex } from "node:stream";
import {
  type AllowEntry,
  hostPortText,
  isIP,
  matchAllowList,
  splitHostPort,
} from "../../core/agent/network-allow.js";

export interface HostCount {
  /** `host:port` as the client asked for it. */
  host: string;
  count: number;
}

export interface EgressProxy {
  /** The directory holding the socket (bind it into the sandbox at the same path). */
  readonly socketDir: string;
  readonly socketPath: string;
  /** `http://127.0.0.1:PORT` when the proxy also listens on the host's loopback (no network namespace). */
  readonly loopbackUrl: string | null;
  /** Hosts refused so far, most refused first. */
  refused(): HostCount[];
  /** Hosts let through so far, most used first. */
  allowed(): HostCount[];
  close(): Promise<void>;
}

interface EgressProxyOptions {
  entries: readonly AllowEntry[];
  /** Where the socket's directory is made (default: the system temp dir; the socket path must stay short). */
  baseDir?: string;
  /**
   * Also listen on 127.0.0.1 of the host, for agents that run without a network namespace (`isolation: uid` or
   * `none`): the proxy is then offered, not enforced.
   */
  loopback?: boolean;
  /** Resolves a name to its addresses (tests); default: the system resolver. */
  resolve?: (host: string) => Promise<string[]>;
  /** Told of each refusal (the worker's log). */
  onRefused?: (host: string, why: string) => void;
}

/** Distinct hosts counted one by one; the rest are counted together under OTHER_HOSTS. */
const MAX_HOSTS_COUNTED = 1000;
const OTHER_HOSTS = "(other hosts)";

/** Addresses that are not the public internet. */
const NOT_PUBLIC = new net.BlockList();
for (const [address, prefix] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
] as const) {
  NOT_PUBLIC.addSubnet(address, prefix, "ipv4");
}
for (const [address, prefix] of [
  ["::", 128],
  ["::1", 128],
  ["64:ff9b::", 96],
  ["100::", 64],
  ["2001:db8::", 32],
  ["fc00::", 7],
  ["fe80::", 10],
  ["fec0::", 10],
  ["ff00::", 8],
] as const) {
  NOT_PUBLIC.addSubnet(address, prefix, "ipv6");
}

export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  // An IPv4 address written as IPv6 (::ffff:10.0.0.1) is that IPv4 address.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return !NOT_PUBLIC.check(mapped[1]!, "ipv4");
  return !NOT_PUBLIC.check(address, family === 6 ? "ipv6" : "ipv4");
}

async function systemResolve(host: string): Promise<string[]> {
  const found = await lookup(host, { all: true, verbatim: true });
  return found.map((entry) => entry.address);
}

type Decision = { ok: true; address: string } | { ok: false; status: number; why: string };

/** Headers that belong to one hop (RFC 9110 §7.6.1) or to the proxy, never forwarded. */
const HOP_HEADERS = new Set([
  "connection",
  "proxy-connection",
  "keep-alive",
  "proxy-authorization",
  "proxy-authenticate",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
]);

function refusalText(target: string, why: string): string {
  return (
    `Autopilot's egress proxy refused ${target}: ${why}. The agent's network reaches only the hosts ` +
    "`network.allow` lists in .github/autopilot.yml on the default branch; add this host there " +
    "(or set `network: open`) if the agent needs it.\n"
  );
}

/** Starts the proxy; the caller closes it. */
export async function startEgressProxy(options: EgressProxyOptions): Promise<EgressProxy> {
  const resolve = options.resolve ?? systemResolve;
  const socketDir = await mkdtemp(path.join(options.baseDir ?? os.tmpdir(), "autopilot-egress-"));
  // Reachable by the agent's uid (which connects to the socket); only the worker writes the directory.
  await chmod(socketDir, 0o755);
  const socketPath = path.join(socketDir, "proxy.sock");
  const refusedCounts = new Map<string, number>();
  const allowedCounts = new Map<string, number>();
  const open = new Set<Duplex>();
  const track = (socket: Duplex) => {
    open.add(socket);
    socket.once("close", () => open.delete(socket));
  };
  // Bounded: an agent asking for a million names costs a counter, not a million entries.
  const count = (map: Map<string, number>, key: string) => {
    const name = map.has(key) || map.size < MAX_HOSTS_COUNTED ? key : OTHER_HOSTS;
    map.set(name, (map.get(name) ?? 0) + 1);
  };

  const decide = async (host: string, port: number): Promise<Decision> => {
    const target = hostPortText(host, port);
    const refuse = (why: string): Decision => {
      count(refusedCounts, target);
      options.onRefused?.(target, why);
      return { ok: false, status: 403, why };
    };
    const entry = matchAllowList(options.entries, host, port);
    if (!entry) {
      return refuse(
        isIP(host) ? "an address is reachable only when network.allow names it" : "not in network.allow",
      );
    }
    if (isIP(host)) {
      count(allowedCounts, target);
      return { ok: true, address: host };
    }
    let addresses: string[];
    try {
      addresses = await resolve(host);
    } catch (error) {
      return { ok: false, status: 502, why: `could not resolve ${host}: ${(error as Error).message}` };
    }
    if (addresses.length === 0) return { ok: false, status: 502, why: `${host} has no address` };
    if (entry.kind === "suffix") {
      const inner = addresses.find((address) => !isPublicAddress(address));
      if (inner) {
        return refuse(
          `it resolves to ${inner}, not a public address, and only the wildcard ${entry.text} allows it ` +
            "(list the host itself to allow that)",
        );
      }
    }
    count(allowedCounts, target);
    return { ok: true, address: addresses[0]! };
  };

  const onConnect = async (req: http.IncomingMessage, client: Duplex, head: Buffer) => {
    track(client);
    client.on("error", () => client.destroy());
    const reply = (status: number, text: string) => {
      const body = Buffer.from(text);
      client.end(
        `HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? ""}\r\nContent-Type: text/plain; charset=utf-8\r\n` +
          `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n${text}`,
      );
    };
    const split = splitHostPort(req.url ?? "");
    const port = split?.port ? Number(split.port) : Number.NaN;
    if (!split?.host || !Number.isInteger(port) || port < 1 || port > 65535) {
      reply(400, "Autopilot's egress proxy: CONNECT needs host:port\n");
      return;
    }
    const target = hostPortText(split.host, port);
    const decision = await decide(split.host, port);
    if (!decision.ok) {
      reply(decision.status, refusalText(target, decision.why));
      return;
    }
    const upstream = net.connect({ host: decision.address, port });
    track(upstream);
    upstream.once("connect", () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on("error", (error) => {
      if (upstream.connecting)
        reply(502, `Autopilot's egress proxy could not reach ${target}: ${error.message}\n`);
      else client.destroy();
    });
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  };

  const onRequest = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const reply = (status: number, text: string) => {
      if (res.headersSent) return res.destroy();
      res.writeHead(status, { "content-type": "text/plain; charset=utf-8", connection: "close" }).end(text);
    };
    let url: URL;
    try {
      url = new URL(req.url ?? "");
    } catch {
      reply(400, "Autopilot's egress proxy forwards absolute http:// URLs; use CONNECT for anything else\n");
      return;
    }
    if (url.protocol !== "http:") {
      reply(400, `Autopilot's egress proxy forwards http:// URLs; use CONNECT for ${url.protocol}\n`);
      return;
    }
    const host = url.hostname.replace(/^\[|\]$/g, "");
    const port = url.port ? Number(url.port) : 80;
    const target = hostPortText(host, port);
    const decision = await decide(host, port);
    if (!decision.ok) {
      reply(decision.status, refusalText(target, decision.why));
      return;
    }
    const headers: http.OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined && !HOP_HEADERS.has(name)) headers[name] = value;
    }
    headers.host = url.host;
    const upstream = http.request({
      host: decision.address,
      port,
      method: req.method,
      path: `${url.pathname}${url.search}`,
      headers,
      setHost: false,
    });
    upstream.on("socket", track);
    upstream.on("response", (response) => {
      const back: http.OutgoingHttpHeaders = {};
      for (const [name, value] of Object.entries(response.headers)) {
        if (value !== undefined && !HOP_HEADERS.has(name)) back[name] = value;
      }
      res.writeHead(response.statusCode ?? 502, back);
      response.pipe(res);
    });
    upstream.on("error", (error) =>
      reply(502, `Autopilot's egress proxy could not reach ${target}: ${error.message}\n`),
    );
    res.on("close", () => upstream.destroy());
    req.pipe(upstream);
  };

  const makeServer = () => {
    const server = http.createServer((req, res) => void onRequest(req, res));
    server.on("connect", (req, socket, head) => void onConnect(req, socket, head));
    server.on("connection", track);
    // A client that never sends a full request must not hold the proxy open forever.
    server.headersTimeout = 60_000;
    server.requestTimeout = 0;
    return server;
  };
  const listen = (server: http.Server, where: net.ListenOptions) =>
    new Promise<void>((done, fail) => {
      server.once("error", fail);
      server.listen(where, () => {
        server.off("error", fail);
        done();
      });
    });

  const servers: http.Server[] = [];
  const socketServer = makeServer();
  await listen(socketServer, { path: socketPath });
  servers.push(socketServer);
  // The agent's uid connects to it; the directory (worker-owned, 0755) is what keeps others from replacing it.
  await chmod(socketPath, 0o666);
  let loopbackUrl: string | null = null;
  if (options.loopback) {
    const tcp = makeServer();
    await listen(tcp, { host: "127.0.0.1", port: 0 });
    servers.push(tcp);
    loopbackUrl = `http://127.0.0.1:${(tcp.address() as net.AddressInfo).port}`;
  }

  const sorted = (map: Map<string, number>): HostCount[] =>
    [...map]
      .map(([host, n]) => ({ host, count: n }))
      .sort((a, b) => b.count - a.count || (a.host < b.host ? -1 : 1));
  return {
    socketDir,
    socketPath,
    loopbackUrl,
    refused: () => sorted(refusedCounts),
    allowed: () => sorted(allowedCounts),
    async close() {
      const closed = servers.map((server) => new Promise<void>((done) => server.close(() => done())));
      // Open tunnels would hold close() until they end: the job is over, they end now.
      for (const socket of open) socket.destroy();
      await Promise.all(closed);
      await rm(socketDir, { recursive: true, force: true });
    },
  };
}
