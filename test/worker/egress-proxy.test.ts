/**
 * The egress proxy's decisions over real sockets (its Unix socket, real upstream servers on loopback), with the
 * name resolution replaced where a test needs a name to resolve somewhere (the SSRF cases), and the allow-list
 * the worker builds from the configuration. The attack from inside a real network namespace is in
 * test/red-team/agent-egress.test.ts.
 */
import http from "node:http";
import net, { type AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { ConfigSchema } from "../../src/core/config/config-schema.js";
import { parseAllowList } from "../../src/core/agent/network-allow.js";
import { egressAllowList, loopbackTunnels, startAgentEgress } from "../../src/worker/network/agent-egress.js";
import {
  type EgressProxy,
  isPublicAddress,
  startEgressProxy,
} from "../../src/worker/network/egress-proxy.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function upstream(): Promise<number> {
  const server = http.createServer((req, res) => res.end(`upstream saw ${req.headers.host} ${req.url}`));
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  cleanups.push(() => new Promise((done) => server.close(() => done())));
  return (server.address() as AddressInfo).port;
}

async function proxyFor(
  allow: string[],
  resolve?: (host: string) => Promise<string[]>,
): Promise<EgressProxy> {
  const { entries } = parseAllowList(allow);
  const proxy = await startEgressProxy({ entries, ...(resolve ? { resolve } : {}) });
  cleanups.push(() => proxy.close());
  return proxy;
}

/** Sends raw text to the proxy's socket; the whole answer (the connection is closed after one exchange). */
function ask(proxy: EgressProxy, text: string, thenSend?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(proxy.socketPath);
    let data = "";
    socket.on("connect", () => socket.write(text));
    socket.on("data", (chunk) => {
      data += chunk;
      if (thenSend && data.startsWith("HTTP/1.1 200") && data.includes("\r\n\r\n")) {
        socket.write(thenSend);
        thenSend = undefined;
      }
    });
    socket.on("end", () => resolve(data));
    socket.on("error", reject);
  });
}

const getVia = (host: string, path = "/") =>
  `GET http://${host}${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`;

describe("the egress proxy", () => {
  it("forwards plain http to an allowed host, with the Host header the client sent", async () => {
    const port = await upstream();
    const proxy = await proxyFor([`models.test:${port}`], async () => ["127.0.0.1"]);
    const answer = await ask(proxy, getVia(`models.test:${port}`, "/v1/messages?x=1"));
    expect(answer).toMatch(/^HTTP\/1\.1 200/);
    expect(answer).toContain(`upstream saw models.test:${port} /v1/messages?x=1`);
    expect(proxy.allowed()).toEqual([{ host: `models.test:${port}`, count: 1 }]);
  });

  it("tunnels CONNECT to an allowed host", async () => {
    const port = await upstream();
    const proxy = await proxyFor([`127.0.0.1:${port}`]);
    const answer = await ask(
      proxy,
      `CONNECT 127.0.0.1:${port} HTTP/1.1\r\n\r\n`,
      "GET /inside HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    expect(answer).toMatch(/^HTTP\/1\.1 200 Connection Established/);
    expect(answer).toContain("upstream saw x /inside");
  });

  it("refuses a wildcard name that resolves to a private, loopback or metadata address (SSRF through DNS)", async () => {
    const port = await upstream();
    for (const address of ["127.0.0.1", "169.254.169.254", "10.1.2.3", "::ffff:192.168.1.1", "fd00::1"]) {
      const proxy = await proxyFor([`*.nip.test:${port}`], async () => ["93.184.216.34", address]);
      const answer = await ask(proxy, `CONNECT 127-0-0-1.nip.test:${port} HTTP/1.1\r\n\r\n`);
      expect(answer, address).toMatch(/^HTTP\/1\.1 403/);
      expect(answer, address).toContain(`resolves to ${address}, not a public address`);
      expect(proxy.refused()).toEqual([{ host: `127-0-0-1.nip.test:${port}`, count: 1 }]);
    }
  });

  it("lets a name listed exactly resolve to loopback (the maintainer's own model server)", async () => {
    const port = await upstream();
    const proxy = await proxyFor([`*.nip.test:${port}`, `models.nip.test:${port}`], async () => [
      "127.0.0.1",
    ]);
    expect(await ask(proxy, getVia(`models.nip.test:${port}`))).toMatch(/^HTTP\/1\.1 200/);
  });

  it("refuses an address literal unless that address is listed, whatever names are", async () => {
    const port = await upstream();
    const proxy = await proxyFor(["localhost", `*.example.com:${port}`]);
    const answer = await ask(proxy, `CONNECT 127.0.0.1:${port} HTTP/1.1\r\n\r\n`);
    expect(answer).toMatch(/^HTTP\/1\.1 403/);
    expect(answer).toContain("an address is reachable only when network.allow names it");
  });

  it("answers a malformed request with 400 and counts nothing", async () => {
    const proxy = await proxyFor(["example.com"]);
    expect(await ask(proxy, "CONNECT example.com HTTP/1.1\r\n\r\n")).toMatch(/^HTTP\/1\.1 400/);
    expect(
      await ask(proxy, "GET /relative HTTP/1.1\r\nHost: example.com\r\nConnection: close\r\n\r\n"),
    ).toMatch(/^HTTP\/1\.1 400/);
    expect(proxy.refused()).toEqual([]);
  });

  it("classifies addresses", () => {
    for (const address of [
      "127.0.0.1",
      "10.0.0.1",
      "172.16.5.4",
      "192.168.0.1",
      "169.254.169.254",
      "100.64.0.1",
      "0.0.0.0",
      "::1",
      "fe80::1",
      "fd12::1",
      "::ffff:127.0.0.1",
      "224.0.0.1",
    ])
      expect(isPublicAddress(address), address).toBe(false);
    for (const address of ["93.184.216.34", "160.79.104.10", "2606:4700::1111", "::ffff:8.8.8.8"])
      expect(isPublicAddress(address), address).toBe(true);
  });
});

describe("the agent's allow-list from the configuration", () => {
  it("is every agent's model API, the hosts of the base URLs passed in agents.*.env, and network.allow", () => {
    const config = ConfigSchema.parse({
      agents: {
        primary: { preset: "claude-code", env: ["ANTHROPIC_BASE_URL", "CLAUDE_CODE_MAX_RETRIES"] },
        fallbacks: [{ preset: "gemini", env: ["GOOGLE_GEMINI_BASE_URL"] }],
      },
      network: { allow: ["registry.npmjs.org"] },
    });
    const sources = egressAllowList(config, {
      ANTHROPIC_BASE_URL: "http://127.0.0.1:43123",
      CLAUDE_CODE_MAX_RETRIES: "0",
      GOOGLE_GEMINI_BASE_URL: "https://gateway.example.com/gemini",
      OPENAI_BASE_URL: "https://not-passed.example.com",
    });
    expect(sources).toEqual([
      { entry: "api.anthropic.com", from: "claude-code" },
      { entry: "generativelanguage.googleapis.com", from: "gemini" },
      { entry: "127.0.0.1:43123", from: "ANTHROPIC_BASE_URL" },
      { entry: "gateway.example.com:443", from: "GOOGLE_GEMINI_BASE_URL" },
      { entry: "registry.npmjs.org", from: "network.allow" },
    ]);
  });

  it("tunnels the loopback entries with an unprivileged port, and nothing else", () => {
    const { entries } = parseAllowList([
      "127.0.0.1:43123",
      "localhost:8080",
      "[::1]:9000",
      "127.0.0.1",
      "127.0.0.1:80",
      "example.com:8080",
    ]);
    expect(loopbackTunnels(entries)).toEqual(["127.0.0.1:43123", "localhost:8080", "[::1]:9000"]);
  });

  it("without a network namespace offers the proxy on the host's loopback, and says it is not enforced", async () => {
    const port = await upstream();
    const config = ConfigSchema.parse({ network: { allow: [`127.0.0.1:${port}`] } });
    const egress = await startAgentEgress({
      config,
      parentEnv: {},
      agentDir: "/nonexistent",
      enforced: false,
    });
    cleanups.push(() => egress.close());
    expect(egress.access).toContain("not enforced");
    if (typeof egress.network !== "object") throw new Error("expected a proxied network");
    expect(egress.network.prefix).toEqual([]);
    const proxyUrl = new URL(egress.network.env.HTTP_PROXY!);
    expect(egress.network.env.https_proxy).toBe(egress.network.env.HTTP_PROXY);
    const answer = await new Promise<string>((resolve) => {
      const req = http.request(
        {
          host: proxyUrl.hostname,
          port: proxyUrl.port,
          path: `http://127.0.0.1:${port}/x`,
          headers: { host: `127.0.0.1:${port}` },
        },
        (res) => {
          let body = "";
          res.on("data", (chunk) => (body += chunk));
          res.on("end", () => resolve(body));
        },
      );
      req.end();
    });
    expect(answer).toContain("upstream saw");
  });

  it("`network: open` starts no proxy and names the open network", async () => {
    const config = ConfigSchema.parse({ network: "open" });
    const egress = await startAgentEgress({
      config,
      parentEnv: {},
      agentDir: "/nonexistent",
      enforced: true,
    });
    expect(egress.network).toBe("open");
    expect(egress.access).toContain("network: open");
  });
});
