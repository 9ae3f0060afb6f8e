/**
 * The agent's network allow-list (`network.allow` in the configuration): what an entry may say, and whether a
 * host the agent asked the egress proxy for (src/worker/network/egress-proxy.ts) is on it. Pure: the proxy resolves names
 * and decides about the addresses itself.
 *
 * An entry is a host name (`api.anthropic.com`), a wildcard for every name under a domain (`*.npmjs.org`, which
 * does not match `npmjs.org` itself), an IPv4 address (`127.0.0.1`) or a bracketed IPv6 address (`[::1]`), each
 * optionally with `:port`. Without a port an entry allows the web's ports, 80 and 443; with one, only that port.
 */
import { z } from "zod";

const IPV4 = z.ipv4();
const IPV6 = z.ipv6();

/** 4 or 6 for an IP address literal, 0 for anything else (as node:net's isIP, without importing I/O modules). */
export function isIP(text: string): 0 | 4 | 6 {
  if (IPV4.safeParse(text).success) return 4;
  return IPV6.safeParse(text).success ? 6 : 0;
}

export interface AllowEntry {
  /** The entry as written (lower-cased), for messages. */
  text: string;
  /** `exact`: this host only; `suffix`: every name ending in `.${host}`. */
  kind: "exact" | "suffix";
  /** The host name, the IPv4 address, or the IPv6 address without brackets; lower case. */
  host: string;
  /** Null: 80 and 443. */
  port: number | null;
}

const LABEL = "[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?";
const HOST_NAME = new RegExp(`^(?:${LABEL}\\.)*${LABEL}$`);
/** Ports an entry without a port allows. */
const DEFAULT_PORTS = [80, 443] as const;

type ParsedEntry = { ok: true; entry: AllowEntry } | { ok: false; error: string };

function parsePort(text: string): number | null {
  if (!/^\d{1,5}$/.test(text)) return null;
  const port = Number(text);
  return port >= 1 && port <= 65535 ? port : null;
}

/** Splits `host[:port]`, `[v6][:port]`; the host is lower-cased and a trailing dot dropped. */
export function splitHostPort(text: string): { host: string; port: string | null } | null {
  const value = text.trim().toLowerCase();
  if (value.startsWith("[")) {
    const end = value.indexOf("]");
    if (end < 0) return null;
    const rest = value.slice(end + 1);
    if (rest !== "" && !rest.startsWith(":")) return null;
    return { host: value.slice(1, end), port: rest ? rest.slice(1) : null };
  }
  const colon = value.lastIndexOf(":");
  // More than one colon without brackets: a bare IPv6 address, which needs brackets to carry a port.
  if (colon >= 0 && value.indexOf(":") !== colon) return { host: value, port: null };
  const host = colon >= 0 ? value.slice(0, colon) : value;
  return {
    host: host.endsWith(".") ? host.slice(0, -1) : host,
    port: colon >= 0 ? value.slice(colon + 1) : null,
  };
}

/** Parses one `network.allow` entry; the error says what is wrong and how to write it. */
export function parseAllowEntry(raw: string): ParsedEntry {
  const text = raw.trim().toLowerCase();
  const fail = (why: string): ParsedEntry => ({
    ok: false,
    error: `${JSON.stringify(raw)}: ${why} (write a host such as "api.example.com", "*.example.com", "127.0.0.1:8080" or "[::1]:8080")`,
  });
  if (text === "") return fail("empty");
  if (/^[a-z][a-z0-9+.-]*:\/\//.test(text))
    return fail("a host, not a URL: leave out the scheme and the path");
  if (/[/?#@\s]/.test(text)) return fail("a host, not a URL: no path, user or spaces");
  const split = splitHostPort(text);
  if (!split) return fail("an IPv6 address needs its closing bracket");
  let port: number | null = null;
  if (split.port !== null) {
    port = parsePort(split.port);
    if (port === null) return fail(`the port ${JSON.stringify(split.port)} is not a number from 1 to 65535`);
  }
  let { host } = split;
  let kind: AllowEntry["kind"] = "exact";
  if (host.startsWith("*.")) {
    kind = "suffix";
    host = host.slice(2);
    if (isIP(host)) return fail("a wildcard covers host names, not addresses");
    if (!host.includes("."))
      return fail("a wildcard needs a domain with a dot in it (`*.example.com`), not a top-level domain");
  }
  if (host.includes("*"))
    return fail("a wildcard is allowed only as the whole first label (`*.example.com`)");
  if (isIP(host) === 6 && !text.startsWith("[")) {
    return fail("an IPv6 address is written in brackets");
  }
  if (!isIP(host) && !HOST_NAME.test(host)) return fail("not a host name");
  return { ok: true, entry: { text, kind, host, port } };
}

/** Parses every entry; throws nothing (the configuration schema reports the errors). */
export function parseAllowList(entries: readonly string[]): { entries: AllowEntry[]; errors: string[] } {
  const parsed: AllowEntry[] = [];
  const errors: string[] = [];
  for (const raw of entries) {
    const one = parseAllowEntry(raw);
    if (one.ok) parsed.push(one.entry);
    else errors.push(one.error);
  }
  return { entries: parsed, errors };
}

/** The host and port as the proxy names them in its lists and messages (`host:port`, `[v6]:port`). */
export function hostPortText(host: string, port: number): string {
  return `${isIP(host) === 6 ? `[${host}]` : host}:${port}`;
}

/**
 * The entry allowing `host:port`, or null. An address (IP literal) matches only an entry naming that same
 * address: a name never stands for an address, so no resolution can smuggle one in. An exact entry wins over a
 * wildcard (the proxy trusts an exact entry's addresses, not a wildcard's).
 */
export function matchAllowList(
  entries: readonly AllowEntry[],
  host: string,
  port: number,
): AllowEntry | null {
  const name = host.toLowerCase().replace(/\.$/, "");
  const portAllowed = (entry: AllowEntry) =>
    entry.port === null ? (DEFAULT_PORTS as readonly number[]).includes(port) : entry.port === port;
  const literal = isIP(name) !== 0;
  const exact = entries.find((entry) => entry.kind === "exact" && entry.host === name && portAllowed(entry));
  if (exact || literal) return exact ?? null;
  return (
    entries.find(
      (entry) => entry.kind === "suffix" && name.endsWith(`.${entry.host}`) && portAllowed(entry),
    ) ?? null
  );
}
