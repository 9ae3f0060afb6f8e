/**
 * The hosted app's image and a production install hold the product only: the packages only the sandbox
 * (sandbox/: the GitHub emulator and the scenario harness) imports are development dependencies in the lock
 * file, so `npm ci --omit=dev` installs none of them, and the Dockerfile installs that way and copies no part
 * of the sandbox. test/cli/packed-install.test.ts runs such an install for real. It has no TypeScript compiler
 * (the CLI and the server run the bundles of dist/), and `engines` admits no Node a production package refuses.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { subset } from "semver";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..");

/**
 * The one door from the product to the sandbox (src/cli/load-sandbox.ts) imports tsx, which compiles the
 * sandbox's sources: what it imports is the sandbox's, since a production install has neither.
 */
const SANDBOX_DOOR = join(root, "src", "cli", "load-sandbox.ts");

/** The npm packages the .ts/.mjs files under `dir` import (by static, dynamic or require'd specifier). */
function packagesImportedUnder(dir: string, only?: (file: string) => boolean): Set<string> {
  const names = new Set<string>();
  const files = readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && /\.(ts|mts|mjs|js)$/.test(entry.name))
    .map((entry) => join(entry.parentPath, entry.name))
    .filter((file) => only?.(file) ?? true);
  for (const file of files) {
    const text = readFileSync(file, "utf8");
    for (const match of text.matchAll(
      /(?:\bfrom\s+|\bimport\s*\(\s*|(?<![.\w])require(?:\.resolve)?\s*\(\s*|^import\s+)["']([^"'.][^"']*)["']/gm,
    )) {
      const specifier = match[1]!;
      if (specifier.startsWith("node:")) continue;
      const parts = specifier.split("/");
      names.add(specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]!);
    }
  }
  return names;
}

interface LockEntry {
  version?: string;
  engines?: { node?: string };
  dev?: boolean;
  devOptional?: boolean;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
}
const lock = JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8")) as {
  packages: Record<string, LockEntry>;
};
const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
  engines: { node: string };
  dependencies: Record<string, string>;
  files: string[];
};

/** Every package the given ones need, following the lock file (hoisted `node_modules/<name>` entries). */
function closure(names: Iterable<string>): Set<string> {
  const seen = new Set<string>();
  const queue = [...names];
  while (queue.length > 0) {
    const name = queue.pop()!;
    if (seen.has(name)) continue;
    seen.add(name);
    const entry = lock.packages[`node_modules/${name}`];
    queue.push(...Object.keys({ ...entry?.dependencies, ...entry?.optionalDependencies }));
  }
  return seen;
}

/** Whether `npm ci --omit=dev` installs the package (the lock marks what only development needs `dev`). */
function installedInProduction(name: string): boolean {
  const entry = lock.packages[`node_modules/${name}`];
  return entry !== undefined && entry.dev !== true && entry.devOptional !== true;
}

describe("a production install holds the product only", () => {
  const product = new Set([
    ...packagesImportedUnder("src", (file) => file !== SANDBOX_DOOR),
    ...packagesImportedUnder("bin"),
    ...packagesImportedUnder("controller"),
  ]);
  const sandboxOnly = [
    ...packagesImportedUnder("sandbox"),
    ...packagesImportedUnder("src", (file) => file === SANDBOX_DOOR),
  ].filter((name) => !product.has(name));

  it("installs none of the packages only the sandbox imports", () => {
    // The emulator's heavy parts among them, so the list cannot go empty unnoticed.
    expect(sandboxOnly).toEqual(
      expect.arrayContaining(["@octokit/openapi", "openapi-backend", "mermaid", "@octokit/graphql-schema"]),
    );
    // None is a production dependency of its own; one the product's own dependencies need anyway (probot
    // verifies webhook signatures with @octokit/webhooks-methods) is installed for them, not for the sandbox.
    expect(sandboxOnly.filter((name) => name in manifest.dependencies)).toEqual([]);
    const neededByProduct = closure(Object.keys(manifest.dependencies));
    expect(sandboxOnly.filter((name) => installedInProduction(name) && !neededByProduct.has(name))).toEqual(
      [],
    );
    for (const heavy of ["@octokit/openapi", "openapi-backend", "mermaid", "@octokit/graphql-schema"]) {
      expect({ heavy, installed: installedInProduction(heavy) }).toEqual({ heavy, installed: false });
    }
  });

  it("installs no TypeScript compiler: the CLI and the server run compiled JavaScript", () => {
    for (const compiler of ["tsx", "esbuild", "typescript"])
      expect({ compiler, installed: installedInProduction(compiler) }).toEqual({
        compiler,
        installed: false,
      });
    expect(sandboxOnly).toContain("tsx");
    const launcher = readFileSync(join(root, "bin", "autopilot.js"), "utf8");
    expect([...launcher.matchAll(/import\("([^"]+)"\)/g)].map((m) => m[1])).toEqual([
      "../dist/serve/index.js",
      "../dist/cli/index.js",
    ]);
  });

  it("asks for a Node every production package accepts (engines)", () => {
    const refused = Object.entries(lock.packages)
      .filter(([path, entry]) => path !== "" && entry.dev !== true && entry.devOptional !== true)
      .filter(([, entry]) => entry.engines?.node && !subset(manifest.engines.node, entry.engines.node))
      .map(([path, entry]) => `${path}@${entry.version}: ${entry.engines?.node}`);
    expect(refused).toEqual([]);
  });

  it("installs what the product imports", () => {
    const missing = [...product].filter((name) => !name.startsWith("@types/") && name !== "mdast");
    expect(missing.filter((name) => !installedInProduction(name))).toEqual([]);
  });

  it("builds the image with production dependencies only and without the sandbox", () => {
    const dockerfile = readFileSync(join(root, "Dockerfile"), "utf8");
    const installs = dockerfile.split("\n").filter((line) => /\bnpm (ci|install|i)\b/.test(line));
    expect(installs.length).toBeGreaterThan(0);
    for (const line of installs) expect(line).toMatch(/--omit=dev\b/);
    const copied = dockerfile
      .split("\n")
      .filter((line) => /^\s*(COPY|ADD)\s/i.test(line))
      .flatMap((line) => line.trim().split(/\s+/).slice(1, -1));
    expect(copied.length).toBeGreaterThan(0);
    for (const source of copied) expect(source).not.toMatch(/^(\.\/)?(sandbox|scenarios|test|bench|\.)\/?$/);
  });

  it("packs no sandbox into the npm package", () => {
    expect(manifest.files.filter((entry) => /^(sandbox|scenarios|test|bench)\b/.test(entry))).toEqual([]);
  });
});
