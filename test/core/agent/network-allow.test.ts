import { describe, expect, it } from "vitest";
import { parseConfig } from "../../../src/core/config/load-config.js";
import {
  type AllowEntry,
  matchAllowList,
  parseAllowEntry,
  parseAllowList,
} from "../../../src/core/agent/network-allow.js";

function entries(...texts: string[]): AllowEntry[] {
  const parsed = parseAllowList(texts);
  expect(parsed.errors).toEqual([]);
  return parsed.entries;
}

describe("the network allow-list", () => {
  it("matches a host exactly, on the web's ports when no port is given", () => {
    const list = entries("api.anthropic.com");
    expect(matchAllowList(list, "api.anthropic.com", 443)?.text).toBe("api.anthropic.com");
    expect(matchAllowList(list, "API.Anthropic.com.", 80)).not.toBeNull();
    expect(matchAllowList(list, "api.anthropic.com", 22)).toBeNull();
    expect(matchAllowList(list, "evil-api.anthropic.com", 443)).toBeNull();
    expect(matchAllowList(list, "api.anthropic.com.evil.com", 443)).toBeNull();
  });

  it("matches a wildcard on every name under the domain, not the domain itself", () => {
    const list = entries("*.npmjs.org");
    expect(matchAllowList(list, "registry.npmjs.org", 443)?.kind).toBe("suffix");
    expect(matchAllowList(list, "a.b.npmjs.org", 443)).not.toBeNull();
    expect(matchAllowList(list, "npmjs.org", 443)).toBeNull();
    expect(matchAllowList(list, "evilnpmjs.org", 443)).toBeNull();
  });

  it("matches a port only where the entry names it", () => {
    const list = entries("127.0.0.1:43123", "models.internal:8080");
    expect(matchAllowList(list, "127.0.0.1", 43123)).not.toBeNull();
    expect(matchAllowList(list, "127.0.0.1", 43124)).toBeNull();
    expect(matchAllowList(list, "127.0.0.1", 443)).toBeNull();
    expect(matchAllowList(list, "models.internal", 8080)).not.toBeNull();
    expect(matchAllowList(list, "models.internal", 443)).toBeNull();
  });

  it("lets an address through only when the list names that address (never through a name or a wildcard)", () => {
    const list = entries("*.example.com", "localhost:8080", "[::1]:9000");
    expect(matchAllowList(list, "127.0.0.1", 8080)).toBeNull();
    expect(matchAllowList(list, "169.254.169.254", 80)).toBeNull();
    expect(matchAllowList(list, "::1", 9000)?.host).toBe("::1");
  });

  it("prefers an exact entry over a wildcard (the proxy trusts only an exact entry's private addresses)", () => {
    const list = entries("*.corp.example", "models.corp.example");
    expect(matchAllowList(list, "models.corp.example", 443)?.kind).toBe("exact");
    expect(matchAllowList(list, "other.corp.example", 443)?.kind).toBe("suffix");
  });

  it("refuses entries that are not hosts, saying how to write one", () => {
    const cases: [string, string][] = [
      ["https://api.example.com/v1", "leave out the scheme"],
      ["api.example.com/v1", "not a URL"],
      ["*", "the whole first label"],
      ["exa_mple.com", "not a host name"],
      ["*.com", "a wildcard needs a domain with a dot"],
      ["api.*.example.com", "the whole first label"],
      ["*.10.0.0.1", "not addresses"],
      ["example.com:0", "from 1 to 65535"],
      ["example.com:http", "is not a number"],
      ["::1", "in brackets"],
      ["[::1", "closing bracket"],
      ["", "empty"],
    ];
    for (const [text, why] of cases) {
      const parsed = parseAllowEntry(text);
      expect(parsed.ok, text).toBe(false);
      if (!parsed.ok) expect(parsed.error, text).toContain(why);
    }
  });
});

describe("`network` in the configuration", () => {
  it("defaults to an allow-list with nothing added, and takes `open` or a list", () => {
    const none = parseConfig("maxParallel: 1\n");
    expect(none.ok && none.config.network).toEqual({ allow: [] });
    const open = parseConfig("network: open\n");
    expect(open.ok && open.config.network).toBe("open");
    const list = parseConfig("network:\n  allow: [registry.npmjs.org, '*.pypi.org', '127.0.0.1:43123']\n");
    expect(list.ok && list.config.network).toEqual({
      allow: ["registry.npmjs.org", "*.pypi.org", "127.0.0.1:43123"],
    });
  });

  it("names the bad entry, its line, and how to write a host", () => {
    const result = parseConfig(
      "network:\n  allow:\n    - registry.npmjs.org\n    - https://pypi.org/simple\n",
    );
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.error.message).toContain("`network.allow[1]` (line 4)");
      expect(result.error.message).toContain("leave out the scheme and the path");
    }
  });

  it("names the two forms when the value is neither, and the known key for a misspelt one", () => {
    const closed = parseConfig("network: closed\n");
    expect(!closed.ok && closed.error.message).toContain('expected "open" or a mapping { allow: [hosts] }');
    const misspelt = parseConfig("network:\n  alow: []\n");
    expect(!misspelt.ok && misspelt.error.message).toContain("allow");
  });
});
