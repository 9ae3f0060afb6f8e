/**
 * The command the CLI names in what it prints (src/cli/invocation.ts) is the one the user ran, never the
 * placeholder `npx github:OWNER/autopilot`.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type InvocationFacts, invokingCommand, npxSpecOf } from "../../src/cli/invocation.js";

const clone = "/home/ana/autopilot";
const facts = (over: Partial<InvocationFacts>): InvocationFacts => ({
  env: {},
  script: undefined,
  cwd: clone,
  packageRoot: clone,
  source: null,
  npxSpec: null,
  ...over,
});

describe("the invoking command", () => {
  it("npx github:OWNER/NAME: the spec npx installed from", () => {
    const root = "/root/.npm/_npx/0a1b/node_modules/autopilot";
    expect(
      invokingCommand(
        facts({ env: { npm_lifecycle_event: "npx" }, packageRoot: root, npxSpec: "github:acme/autopilot" }),
      ),
    ).toBe("npx github:acme/autopilot");
  });

  it("npx in a project that installed Autopilot: npx autopilot", () => {
    const root = "/work/shop/node_modules/autopilot";
    expect(invokingCommand(facts({ env: { npm_lifecycle_event: "npx" }, packageRoot: root }))).toBe(
      "npx autopilot",
    );
    expect(
      invokingCommand(facts({ script: "/work/shop/node_modules/.bin/autopilot", packageRoot: root })),
    ).toBe("npx autopilot");
  });

  it("npm start -- in a clone: its bin with node, from where npm was run", () => {
    const env = {
      npm_lifecycle_event: "start",
      npm_package_json: join(clone, "package.json"),
      INIT_CWD: clone,
    };
    expect(invokingCommand(facts({ env, script: join(clone, "bin/autopilot.js") }))).toBe(
      "node bin/autopilot.js",
    );
  });

  it("a global install: autopilot", () => {
    expect(invokingCommand(facts({ script: "/usr/local/bin/autopilot" }))).toBe("autopilot");
  });

  it("node bin/autopilot.js: that path, relative to the current directory", () => {
    expect(
      invokingCommand(facts({ script: join(clone, "bin/autopilot.js"), cwd: join(clone, "docs") })),
    ).toBe("node ../bin/autopilot.js");
  });

  it("embedded: the published source when known, else this copy's bin, never a placeholder", () => {
    expect(invokingCommand(facts({ source: "acme/autopilot" }))).toBe("npx github:acme/autopilot");
    expect(invokingCommand(facts({}))).toBe("node bin/autopilot.js");
    expect(invokingCommand(facts({ cwd: "/srv/far/away" }))).toBe(`node ${join(clone, "bin/autopilot.js")}`);
    // A source set to the placeholder init refuses (AUTOPILOT_SOURCE=OWNER/autopilot) is not named either.
    expect(invokingCommand(facts({ source: "OWNER/autopilot" }))).toBe("node bin/autopilot.js");
    expect(invokingCommand(facts({ env: { npm_lifecycle_event: "npx" }, source: "owner/autopilot" }))).toBe(
      "node bin/autopilot.js",
    );
  });

  it("reads npx's spec from the package.json npx keeps beside the package", () => {
    const base = mkdtempSync(join(tmpdir(), "npx-"));
    try {
      const hashDir = join(base, "_npx", "0a1b");
      const root = join(hashDir, "node_modules", "autopilot");
      mkdirSync(root, { recursive: true });
      writeFileSync(
        join(hashDir, "package.json"),
        JSON.stringify({ dependencies: { autopilot: "github:acme/autopilot" } }),
      );
      expect(npxSpecOf(root)).toBe("github:acme/autopilot");
      expect(npxSpecOf(clone)).toBeNull();
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });
});
