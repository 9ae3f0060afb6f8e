/**
 * What the agent's sandbox gets as a network: the contract between the namespace sandbox (which builds the
 * `bwrap` command line, `agent-user.ts`) and the egress proxy (which the worker runs outside it).
 *
 * - `closed`: its own network namespace with nothing in it but loopback;
 * - `open`: the host's network (`network: open` in the configuration, named as such on the dashboard);
 * - a proxied network: its own network namespace, whose one way out is the worker's proxy, reached through a
 *   Unix socket bound into the sandbox and a forwarder started inside it in front of the command.
 */
export interface ProxiedNetwork {
  /** Host directory holding the proxy's Unix socket; bound into the sandbox at the same path, writable. */
  socketDir: string;
  /** Host files the sandbox must see read-only at the same path (the Node binary and the forwarder script). */
  readOnlyPaths: string[];
  /** The argv put in front of the command inside the sandbox (ends with "--"). */
  prefix: string[];
  /** Variables added to the command's environment (HTTP_PROXY, HTTPS_PROXY and their lower-case forms, …). */
  env: Record<string, string>;
}

export type AgentNetwork = "closed" | "open" | ProxiedNetwork;
