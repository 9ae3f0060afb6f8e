/**
 * What the agent's sandbox gets as a network: the contract between the namespace sandbox (which builds the
 * `bwrap` command line, `agent-user.ts`) and the egress proxy (which the worker runs outside it).
 *
 * - `closed`: its own network namespace with nothing in it but loopback;
 * - `open`: the host's network (`network: open` in the configuration, named as such on the dashboard);
 * - a proxied network: its own network namespace, whose one way out is the worker's proxy, reached through a
 *   Unix socket bound into the sandbox and a forwarder started inside it in front of the command
 *   (src/worker/network/egress-proxy.ts, src/worker/network/egress-forwarder.ts, put together by src/worker/network/agent-egress.ts).
 *
 * Without a network namespace (`isolation: uid` or `none`) the worker still passes a proxied network, with an
 * empty `prefix`, no `readOnlyPaths`, and an `env` naming the proxy's listener on the host's loopback: whatever
 * runs the command merges `env` all the same, and the proxy is offered, not enforced.
 */
export interface ProxiedNetwork {
  /** Host directory holding the proxy's Unix socket; bound into the sandbox at the same path, writable. */
  socketDir: string;
  /** Host files the sandbox must see read-only at the same path (the Node binary and the forwarder script). */
  readOnlyPaths: string[];
  /** The argv put in front of the command inside the sandbox (ends with "--"); empty without a namespace. */
  prefix: string[];
  /**
   * Variables added to the command's environment (NO_PROXY, NODE_USE_ENV_PROXY, …). Inside a namespace the
   * forwarder adds HTTP_PROXY, HTTPS_PROXY, ALL_PROXY and their lower-case forms itself (it learns its port only
   * once it listens); without one they are here.
   */
  env: Record<string, string>;
}

export type AgentNetwork = "closed" | "open" | ProxiedNetwork;
