/**
 * The agent's network for one job, from the configuration: the allow-list (the presets' model APIs, the hosts of
 * the base URLs the maintainer passes in `agents.*.env`, and `network.allow`), the egress proxy
 * (egress-proxy.ts) started before the first iteration, the forwarder (egress-forwarder.ts) written into the
 * agent's directory, and the `AgentNetwork` (agent-network.ts) the sandbox is given. `network: open` starts
 * nothing. Without a network namespace around the agent (`isolation: uid` or `none`) the proxy is offered
 * through the proxy variables but cannot be enforced, and the log, the job summary and the result say so.
 */
import { type AutopilotConfig, everyAgent } from "../../core/config/index.js";
import { type AllowEntry, isIP, parseAllowList } from "../../core/agent/network-allow.js";
import { getPreset } from "../../core/presets/index.js";
import { OPEN_NETWORK_ACCESS, UNENFORCED_NETWORK_ACCESS } from "../../core/tasks/worker-result.js";
import type { AgentNetwork } from "./agent-network.js";
import { writeForwarder } from "./egress-forwarder.js";
import { type HostCount, startEgressProxy } from "./egress-proxy.js";

/** Variables naming a model endpoint (ANTHROPIC_BASE_URL, OPENAI_BASE_URL, GOOGLE_GEMINI_BASE_URL, OPENAI_API_BASE…). */
const BASE_URL_NAME = /_(BASE_URL|API_BASE|API_URL|ENDPOINT)$/;

/** Loopback stays inside the sandbox: the agent's own servers (tests it runs) are reached directly. */
const NO_PROXY = "localhost,127.0.0.1,::1";

/** The lowest port an unprivileged process may listen on (the forwarder runs as the agent's user). */
const FIRST_UNPRIVILEGED_PORT = 1024;

export interface AllowListSource {
  entry: string;
  /** Where it comes from, for the log: `claude-code`, `ANTHROPIC_BASE_URL`, `network.allow`. */
  from: string;
}

/** Every entry of the agent's allow-list, with where each comes from (duplicates kept once, first source). */
export function egressAllowList(config: AutopilotConfig, parentEnv: NodeJS.ProcessEnv): AllowListSource[] {
  const sources: AllowListSource[] = [];
  const seen = new Set<string>();
  const add = (entry: string, from: string) => {
    const key = entry.toLowerCase();
    if (seen.has(key)) return;
    seen.add(key);
    sources.push({ entry, from });
  };
  const agents = everyAgent(config);
  for (const agent of agents) {
    for (const host of getPreset(agent.preset).apiHosts) add(host, agent.preset);
  }
  for (const agent of agents) {
    for (const name of agent.env) {
      const value = parentEnv[name];
      if (!BASE_URL_NAME.test(name) || !value) continue;
      let url: URL;
      try {
        url = new URL(value);
      } catch {
        continue;
      }
      if (url.protocol !== "http:" && url.protocol !== "https:") continue;
      add(`${url.hostname}:${url.port || (url.protocol === "https:" ? 443 : 80)}`, name);
    }
  }
  if (config.network !== "open") for (const entry of config.network.allow) add(entry, "network.allow");
  return sources;
}

/** Whether the isolation the configuration names puts the agent in a network namespace of its own. */
export function networkEnforced(isolation: string): boolean {
  // Only the namespace sandbox gives the agent a network namespace of its own (src/worker/isolation/agent-user.ts); `uid` is
  // the separate user alone and `none` is nothing.
  return isolation === "namespace";
}

function isLoopback(entry: AllowEntry): boolean {
  if (entry.host === "localhost") return true;
  if (isIP(entry.host) === 4) return entry.host.startsWith("127.");
  return entry.host === "::1";
}

/** The loopback entries with a port the forwarder can listen on inside the sandbox, as `host:port`. */
export function loopbackTunnels(entries: readonly AllowEntry[]): string[] {
  return entries
    .filter((entry) => entry.kind === "exact" && entry.port !== null && entry.port >= FIRST_UNPRIVILEGED_PORT)
    .filter(isLoopback)
    .map((entry) =>
      isIP(entry.host) === 6 ? `[${entry.host}]:${entry.port}` : `${entry.host}:${entry.port}`,
    );
}

export interface AgentEgress {
  network: AgentNetwork;
  /** `proxied` (allow-listed) or `open`. */
  mode: "proxied" | "open";
  /** True when a network namespace makes the proxy the only way out. */
  enforced: boolean;
  /** One line for the result, the job summary and the dashboard when the network is not the enforced firewall. */
  access: string | null;
  /** The allow-list in effect. */
  sources: AllowListSource[];
  /** Entries left out (a base URL whose host is not one). */
  warnings: string[];
  refused(): HostCount[];
  allowed(): HostCount[];
  close(): Promise<void>;
}

interface AgentEgressOptions {
  config: AutopilotConfig;
  parentEnv: NodeJS.ProcessEnv;
  /** The agent's directory (readable by the agent, written only by the worker): the forwarder goes there. */
  agentDir: string;
  /** A network namespace around the agent (networkEnforced). */
  enforced: boolean;
  /** The Node binary the forwarder runs on (default: the worker's own). */
  nodeBinary?: string;
  /** Where the proxy's socket directory is made (default: the system temp dir). */
  socketBase?: string;
  onRefused?: (host: string, why: string) => void;
}

/** Starts the agent's network for the job; the caller closes it at the end. */
export async function startAgentEgress(options: AgentEgressOptions): Promise<AgentEgress> {
  const { config } = options;
  const sources = egressAllowList(config, options.parentEnv);
  if (config.network === "open") {
    return {
      network: "open",
      mode: "open",
      enforced: false,
      access: OPEN_NETWORK_ACCESS,
      sources,
      warnings: [],
      refused: () => [],
      allowed: () => [],
      close: async () => {},
    };
  }
  const { entries, errors } = parseAllowList(sources.map((source) => source.entry));
  // The configuration's own entries were checked by its schema; a base URL that is not a host is left out.
  const warnings = errors.map((error) => `not on the agent's network allow-list: ${error}`);
  const proxy = await startEgressProxy({
    entries,
    loopback: !options.enforced,
    ...(options.socketBase ? { baseDir: options.socketBase } : {}),
    ...(options.onRefused ? { onRefused: options.onRefused } : {}),
  });
  const env: Record<string, string> = {
    NO_PROXY,
    no_proxy: NO_PROXY,
    // Node 24 and later honour the proxy variables in fetch and http only when asked to.
    NODE_USE_ENV_PROXY: "1",
  };
  let network: AgentNetwork;
  if (options.enforced) {
    const node = options.nodeBinary ?? process.execPath;
    const forwarder = await writeForwarder(options.agentDir);
    const tunnels = loopbackTunnels(entries).flatMap((target) => ["--tunnel", target]);
    network = {
      socketDir: proxy.socketDir,
      readOnlyPaths: [node, forwarder],
      prefix: [node, forwarder, "--socket", proxy.socketPath, ...tunnels, "--"],
      env,
    };
  } else {
    const url = proxy.loopbackUrl!;
    for (const name of ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"]) {
      env[name] = url;
      env[name.toLowerCase()] = url;
    }
    network = { socketDir: proxy.socketDir, readOnlyPaths: [], prefix: [], env };
  }
  return {
    network,
    mode: "proxied",
    enforced: options.enforced,
    access: options.enforced ? null : UNENFORCED_NETWORK_ACCESS,
    sources,
    warnings,
    refused: proxy.refused,
    allowed: proxy.allowed,
    close: proxy.close,
  };
}

/** The log's account of the agent's network at job start. */
export function describeEgress(egress: AgentEgress): string {
  if (egress.mode === "open") return `agent network: ${OPEN_NETWORK_ACCESS}`;
  const list = egress.sources.map((source) => `${source.entry} (${source.from})`).join(", ") || "nothing";
  return egress.enforced
    ? `agent network: only through the worker's egress proxy, which allows ${list}`
    : `agent network: ${UNENFORCED_NETWORK_ACCESS} The proxy allows ${list}.`;
}
