/**
 * The inside end of the agent's network: a dependency-free Node script the worker writes into the agent's
 * directory and starts inside the sandbox in front of every agent and quality command (the `prefix` of a
 * proxied network, src/worker/network/agent-network.ts). In the sandbox's network namespace, where only loopback exists,
 * it
 * - listens on 127.0.0.1 at a port of its own and pipes each connection to the egress proxy's Unix socket
 *   (src/worker/network/egress-proxy.ts), then starts the command with HTTP_PROXY, HTTPS_PROXY, ALL_PROXY (and their
 *   lower-case forms) naming that port;
 * - listens on each loopback address `network.allow` names (`127.0.0.1:43123`, a model server on the runner)
 *   and tunnels each connection through the proxy with CONNECT, so a program that ignores the proxy variables
 *   still reaches an allowed server on the host's loopback;
 * - passes the command's exit code (or its signal) on as its own, passes SIGTERM, SIGINT, SIGHUP and SIGQUIT on
 *   to it, and exits when it exits.
 *
 * It is not a security component: it runs as the agent's user and the agent may kill or replace it. All it can
 * reach is the proxy's socket, and the proxy decides.
 *
 * Kept as text (the worker runs from one esbuild bundle, dist/worker/index.js, and writes this out at job start)
 * and CommonJS (it runs on the worker's own Node binary, whatever its version, with no package.json beside it).
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";

const FORWARDER_FILE = "egress-forwarder.cjs";

const FORWARDER_SOURCE = String.raw`"use strict";
// Autopilot's egress forwarder (src/worker/network/egress-forwarder.ts). Usage:
//   node egress-forwarder.cjs --socket <proxy.sock> [--tunnel <host:port>]... -- <command> [args...]
const net = require("node:net");
const { spawn } = require("node:child_process");

const argv = process.argv.slice(2);
let socketPath = null;
const tunnels = [];
let i = 0;
for (; i < argv.length && argv[i] !== "--"; i++) {
  if (argv[i] === "--socket") socketPath = argv[++i];
  else if (argv[i] === "--tunnel") tunnels.push(argv[++i]);
  else fail("unknown option " + argv[i]);
}
const command = argv.slice(i + 1);
if (!socketPath || command.length === 0) fail("usage: --socket <path> [--tunnel host:port]... -- command [args...]");

function fail(message) {
  process.stderr.write("autopilot egress forwarder: " + message + "\n");
  process.exit(127);
}

function splitTarget(text) {
  const bracket = /^\[([^\]]+)\]:(\d+)$/.exec(text);
  if (bracket) return { host: bracket[1], port: Number(bracket[2]) };
  const plain = /^([^:]+):(\d+)$/.exec(text);
  if (plain) return { host: plain[1], port: Number(plain[2]) };
  fail("a tunnel is host:port, got " + text);
}

function pipeBoth(a, b) {
  a.on("error", () => b.destroy());
  b.on("error", () => a.destroy());
  a.on("close", () => b.destroy());
  b.on("close", () => a.destroy());
  a.pipe(b);
  b.pipe(a);
}

function proxyListener(client) {
  pipeBoth(client, net.connect(socketPath));
}

function tunnelListener(target) {
  return (client) => {
    client.pause();
    const upstream = net.connect(socketPath);
    let answer = Buffer.alloc(0);
    const onData = (chunk) => {
      answer = Buffer.concat([answer, chunk]);
      const end = answer.indexOf("\r\n\r\n");
      if (end < 0) {
        if (answer.length > 16384) upstream.destroy();
        return;
      }
      upstream.off("data", onData);
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(answer.subarray(0, end).toString("latin1"));
      if (!status || status[1] !== "200") {
        const firstLine = answer.subarray(0, answer.indexOf("\r\n")).toString("latin1");
        const body = answer.subarray(end + 4).toString("utf8").trim();
        process.stderr.write("autopilot egress forwarder: " + target + ": " + firstLine + (body ? " — " + body : "") + "\n");
        client.destroy();
        upstream.destroy();
        return;
      }
      const rest = answer.subarray(end + 4);
      if (rest.length) client.write(rest);
      pipeBoth(client, upstream);
      client.resume();
    };
    upstream.on("data", onData);
    upstream.on("error", () => client.destroy());
    client.on("error", () => upstream.destroy());
    upstream.write("CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n\r\n");
  };
}

function listen(server, port, host) {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve(server.address().port));
  });
}

async function main() {
  const proxyPort = await listen(net.createServer(proxyListener), 0, "127.0.0.1");
  for (const target of tunnels) {
    const { host, port } = splitTarget(target);
    try {
      await listen(net.createServer(tunnelListener(target)), port, host);
    } catch (error) {
      fail("cannot listen on " + target + " inside the sandbox: " + error.message);
    }
  }
  const proxyUrl = "http://127.0.0.1:" + proxyPort;
  const env = Object.assign({}, process.env);
  for (const name of ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"]) {
    env[name] = proxyUrl;
    env[name.toLowerCase()] = proxyUrl;
  }
  const child = spawn(command[0], command.slice(1), { stdio: "inherit", env });
  const passOn = ["SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT"];
  for (const signal of passOn) {
    process.on(signal, () => {
      try { child.kill(signal); } catch {}
    });
  }
  child.on("error", (error) => fail("cannot start " + command[0] + ": " + error.message));
  child.on("exit", (code, signal) => {
    if (signal) {
      for (const name of passOn) process.removeAllListeners(name);
      process.kill(process.pid, signal);
      // A signal the forwarder cannot die of (SIGPIPE ignored, …): the shell's convention.
      setTimeout(() => process.exit(128 + (require("node:os").constants.signals[signal] || 0)), 100);
      return;
    }
    process.exit(code === null ? 1 : code);
  });
}

main().catch((error) => fail(error && error.message ? error.message : String(error)));
`;

/** Writes the forwarder into `dir` (the agent's directory: readable, not writable, by the agent). */
export async function writeForwarder(dir: string): Promise<string> {
  const file = path.join(dir, FORWARDER_FILE);
  await writeFile(file, FORWARDER_SOURCE, { mode: 0o644 });
  return file;
}
