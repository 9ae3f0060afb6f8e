/**
 * The supply-chain gate as an allow-list (src/core/gates/supply-chain-gate.ts): for each ecosystem and file, a
 * source or file the gate cannot show is known good is gated, and an ordinary legitimate change passes. The
 * list in docs/SECURITY.md ("Supply-chain gate") names these tests.
 */
import { describe, expect, it } from "vitest";
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

const rules = (files: SupplyChainFile[], options: Partial<SupplyChainOptions> = {}) =>
  supplyChainRules(files, { ...ON, ...options });

/** A file with a one-hunk patch adding `lines` at line 10. */
const adding = (filename: string, lines: string[]): SupplyChainFile => ({
  filename,
  status: "modified",
  patch: `@@ -10,1 +10,${lines.length + 1} @@\n ctx\n${lines.map((l) => `+${l}`).join("\n")}`,
});

/** A manifest the controller read at both commits. */
const whole = (path: string, before: string | null, after: string): SupplyChainFile => ({
  filename: path,
  status: before === null ? "added" : "modified",
  patch: "@@ -1 +1 @@\n-x\n+y",
  manifest: { before, after },
});

/** Whether one added line of `path` is gated (as a package source or otherwise). */
const gatesLine = (path: string, line: string) => rules([adding(path, [line])]).length > 0;

describe("npm: package-lock.json and npm-shrinkwrap.json", () => {
  it("package-lock: gates a non-JSON line, a package folder outside the repository and an owner/repo version", () => {
    expect(
      gatesLine("package-lock.json", '"resolved": "https://registry.npmjs.org/a/-/a-1.0.0.tgz" // x'),
    ).toBe(true);
    expect(gatesLine("package-lock.json", '    "../outside": {')).toBe(true);
    expect(gatesLine("package-lock.json", '    "node_modules/a/../../../x": {')).toBe(true);
    expect(gatesLine("npm-shrinkwrap.json", '      "version": "user/repo#abc123",')).toBe(true);
    expect(gatesLine("package-lock.json", '      "resolved": "git+ssh://git@github.com/u/r.git#abc",')).toBe(
      true,
    );
  });

  it("package-lock: passes registry tarballs, workspace links, funding links and in-repo file: tarballs", () => {
    const lock = adding("package-lock.json", [
      '    "node_modules/lodash": {',
      '      "version": "4.17.21",',
      '      "resolved": "https://registry.npmjs.org/lodash/-/lodash-4.17.21.tgz",',
      '      "funding": { "url": "https://github.com/sponsors/lodash" },',
      '    "node_modules/web": { "resolved": "packages/web", "link": true },',
      '    "packages/web": {',
      '      "resolved": "file:vendor/x-1.0.0.tgz",',
      '      "os": ["linux", "darwin"],',
      '      "dev": true',
    ]);
    expect(rules([lock])).toEqual([]);
  });
});

describe("npm-family manifests: package.json, package.yaml, package.json5", () => {
  const pkg = (fields: Record<string, unknown>) =>
    JSON.stringify({ name: "app", version: "1.0.0", ...fields });

  it("package.json: gates an npm: alias of a git URL, a workspace: path outside and a tarball off the registries", () => {
    const before = pkg({ dependencies: {} });
    expect(
      rules([
        whole("package.json", before, pkg({ dependencies: { a: "npm:git+https://evil.example/a.git" } })),
      ]),
    ).toHaveLength(1);
    expect(
      rules([whole("package.json", before, pkg({ dependencies: { a: "workspace:../../../x" } }))]),
    ).toHaveLength(1);
    expect(
      rules([whole("package.json", before, pkg({ dependencies: { a: "https://evil.example/a.tgz" } }))]),
    ).toEqual(["package source: package.json dependencies.a: https://evil.example/a.tgz"]);
    expect(rules([whole("package.json", before, pkg({ overrides: { a: "user/repo" } }))])).toHaveLength(1);
  });

  it("package.json: passes registry versions, aliases, catalogs and local packages inside the repository", () => {
    const after = pkg({
      dependencies: {
        lodash: "^4.17.21",
        pad: "npm:@acme/left-pad@^2.0.0",
        shared: "workspace:*",
        ui: "catalog:",
        util: "file:../util",
        lib: "link:./vendor/lib",
        dist: "https://registry.npmjs.org/dist/-/dist-1.0.0.tgz",
      },
    });
    expect(rules([whole("packages/web/package.json", pkg({}), after)])).toEqual([]);
  });

  it("package.yaml and package.json5: read as pnpm reads them; install scripts and git sources gated", () => {
    const yaml = "name: app\nversion: 1.0.0\ndependencies:\n  lodash: ^4.17.21\n";
    expect(rules([whole("package.yaml", yaml, `${yaml}scripts:\n  postinstall: node x.js\n`)])).toEqual([
      "install script: package.yaml scripts.postinstall",
    ]);
    expect(rules([whole("package.yaml", yaml, yaml.replace("^4.17.21", "github:u/lodash"))])).toEqual([
      "package source: package.yaml dependencies.lodash: github:u/lodash",
    ]);
    expect(rules([whole("package.yaml", yaml, yaml.replace("^4.17.21", "^4.17.22"))])).toEqual([]);
    const json5 = "{name: 'app', // comment\n dependencies: {lodash: '^4.17.21'},}";
    expect(
      rules([
        whole("package.json5", json5, json5.replace("dependencies", "scripts: {prepare: 'x'}, dependencies")),
      ]),
    ).toEqual(["install script: package.json5 scripts.prepare"]);
    expect(rules([whole("package.json5", json5, json5.replace("'^4.17.21'", "'^4.17.22'"))])).toEqual([]);
  });

  it("package.yaml and package.json5: gated when not read or not parseable", () => {
    expect(rules([adding("package.yaml", ["scripts: {postinstall: x}"])])).toEqual([
      "install scripts not read: package.yaml",
    ]);
    expect(rules([whole("package.json5", null, "{ not: json5 ")])).toEqual([
      "package.json5 unreadable: package.json5",
    ]);
    expect(rules([whole("package.yaml", null, "a: [unclosed")])).toEqual([
      "package.yaml unreadable: package.yaml",
    ]);
  });

  it("package.json: gates trustedDependencies and dependenciesMeta, which let dependencies run scripts", () => {
    expect(rules([whole("package.json", pkg({}), pkg({ trustedDependencies: ["esbuild"] }))])).toEqual([
      "install settings: package.json trustedDependencies",
    ]);
    expect(
      rules([whole("package.json", pkg({}), pkg({ dependenciesMeta: { sharp: { built: true } } }))]),
    ).toEqual(["install settings: package.json dependenciesMeta"]);
  });
});

describe("Yarn: yarn.lock (1 and Berry) and .yarnrc.yml", () => {
  it("yarn.lock v1: gates an owner/repo shorthand in an entry header; passes registry entries", () => {
    expect(gatesLine("yarn.lock", '"left-pad@user/left-pad#abc":')).toBe(true);
    const entry = adding("yarn.lock", [
      '"@babel/core@^7.0.0", "@babel/core@^7.1.0":',
      '  version "7.1.0"',
      '  resolved "https://registry.yarnpkg.com/@babel/core/-/core-7.1.0.tgz#abc"',
      "  integrity sha512-abc",
      "  dependencies:",
      '    debug "^4.1.0"',
    ]);
    expect(rules([entry])).toEqual([]);
  });

  it("yarn.lock Berry: gates a patch file outside the repository, an archive URL, portal: outside", () => {
    expect(
      gatesLine("yarn.lock", '  resolution: "x@patch:x@npm%3A1.0.0#../../../tmp/x.patch::version=1.0.0"'),
    ).toBe(true);
    expect(
      gatesLine("yarn.lock", '  resolution: "a@npm:1.0.0::__archiveUrl=https%3A%2F%2Fevil.example%2Fa.tgz"'),
    ).toBe(true);
    expect(gatesLine("yarn.lock", '"b@portal:../../outside::locator=app%40workspace%3A.":')).toBe(true);
    expect(gatesLine("yarn.lock", '  resolution: "c@exec:./gen.js::locator=app%40workspace%3A."')).toBe(true);
  });

  it("yarn.lock Berry: passes npm:, workspaces, built-in and in-repo patches, in-repo portal:/file:", () => {
    const berry = adding("yarn.lock", [
      '"lodash@npm:^4.17.21":',
      "  version: 4.17.21",
      '  resolution: "lodash@npm:4.17.21"',
      "  checksum: 10c0/abc",
      "  languageName: node",
      '"app@workspace:.":',
      '  resolution: "app@workspace:."',
      '"resolve@patch:resolve@npm%3A^1.20.0#optional!builtin<compat/resolve>":',
      '  resolution: "x@patch:x@npm%3A1.0.0#~/.yarn/patches/x.patch::version=1.0.0&hash=abc"',
      '"tool@portal:./tools/tool::locator=app%40workspace%3A.":',
      '"util@file:../util::locator=web%40workspace%3Apackages%2Fweb":',
    ]);
    expect(rules([berry])).toEqual([]);
  });

  it("Plug'n'Play (.pnp.cjs, .pnp.loader.mjs, .yarn/cache, .yarn/unplugged): gated as install-time input", () => {
    for (const path of [
      ".pnp.cjs",
      ".pnp.loader.mjs",
      ".yarn/cache/x-npm-1.0.0-abc.zip",
      ".yarn/unplugged/x/a.js",
    ])
      expect(rules([adding(path, ["x"])])).toEqual([`install-time build: ${path}`]);
  });

  it(".yarnrc.yml: gated as registry settings", () => {
    expect(rules([adding(".yarnrc.yml", ['npmRegistryServer: "https://evil.example"'])])).toEqual([
      "registry settings: .yarnrc.yml",
    ]);
  });
});

describe("pnpm: pnpm-lock.yaml", () => {
  it("pnpm-lock: gates an owner/repo specifier, a git-host version and a link: outside the repository", () => {
    expect(gatesLine("pnpm-lock.yaml", "        specifier: user/repo")).toBe(true);
    expect(gatesLine("pnpm-lock.yaml", "        version: github.com/user/repo/abc123")).toBe(true);
    expect(gatesLine("pnpm-lock.yaml", "        version: link:../../outside")).toBe(true);
    expect(gatesLine("pnpm-lock.yaml", "  x@file:../../../x:")).toBe(true);
    // A value the line does not hold (a block scalar, continued below) is not read as accepted.
    expect(
      rules([adding("pnpm-lock.yaml", ["        version: >-", "          github.com/user/repo/abc"])]),
    ).toHaveLength(2);
    expect(
      gatesLine("pnpm-lock.yaml", "    resolution: {type: git, repo: https://github.com/u/r, commit: abc}"),
    ).toBe(true);
  });

  it("pnpm-lock: passes registry packages, peer suffixes and workspace links", () => {
    const lock = adding("pnpm-lock.yaml", [
      "  .:",
      "    dependencies:",
      "      react:",
      "        specifier: ^18.2.0",
      "        version: 18.2.0",
      "      shared:",
      "        specifier: workspace:*",
      "        version: link:packages/shared",
      "  react-dom@18.2.0(react@18.2.0):",
      "  '@types/node@20.11.0':",
      "    resolution: {integrity: sha512-abc}",
    ]);
    expect(rules([lock])).toEqual([]);
  });
});

describe("Bun: bun.lock, bun.lockb, bunfig.toml", () => {
  it("bun.lock: gates git, GitHub and off-registry tarball packages, and a line that is not JSON", () => {
    expect(gatesLine("bun.lock", '    "x": ["x@github:user/repo#abc", {}, "user-repo-abc"],')).toBe(true);
    expect(gatesLine("bun.lock", '    "y": ["y@git+https://evil.example/y.git#abc", {}],')).toBe(true);
    expect(gatesLine("bun.lock", '    "z": ["z@https://evil.example/z.tgz", {}],')).toBe(true);
    expect(gatesLine("bun.lock", '    "w": ["w@workspace:../../outside"],')).toBe(true);
    expect(gatesLine("bun.lock", "    x: y")).toBe(true);
  });

  it("bun.lock: passes registry packages and workspace entries", () => {
    const lock = adding("bun.lock", [
      '    "lodash": ["lodash@4.17.21", "", {}, "sha512-abc"],',
      '    "typescript": ["typescript@5.3.3", "", { "bin": { "tsc": "bin/tsc" } }, "sha512-def"],',
      '    "web": ["web@workspace:packages/web"],',
    ]);
    expect(rules([lock])).toEqual([]);
  });

  it("bun.lockb: binary, so never read: always gated", () => {
    expect(rules([{ filename: "bun.lockb", status: "modified", patch: null }])).toEqual([
      "lockfile unreadable (binary): bun.lockb",
    ]);
  });

  it("dependency patches (.yarn/patches, patches/*.patch): gated as install-time input", () => {
    expect(rules([adding(".yarn/patches/left-pad-npm-1.0.0-abc.patch", ["+x"])])).toEqual([
      "install-time build: .yarn/patches/left-pad-npm-1.0.0-abc.patch",
    ]);
    expect(rules([adding("patches/lodash+4.17.21.patch", ["+x"])])).toEqual([
      "install-time build: patches/lodash+4.17.21.patch",
    ]);
    expect(rules([adding("src/patches.ts", ["x"])])).toEqual([]);
  });

  it("bunfig.toml: gated as registry settings", () => {
    expect(rules([adding("bunfig.toml", ["[install]", 'registry = "https://evil.example"'])])).toEqual([
      "registry settings: bunfig.toml",
    ]);
  });
});

describe("Cargo: Cargo.lock, Cargo.toml, build.rs", () => {
  it("Cargo.lock: gates git and off-list registries; passes crates.io and a configured registry", () => {
    expect(gatesLine("Cargo.lock", 'source = "git+https://github.com/u/serde#abc"')).toBe(true);
    expect(gatesLine("Cargo.lock", 'source = "sparse+https://evil.example/index/"')).toBe(true);
    expect(gatesLine("Cargo.lock", 'source = "registry+https://github.com/rust-lang/crates.io-index"')).toBe(
      false,
    );
    expect(
      rules([adding("Cargo.lock", ['source = "sparse+https://cargo.acme.internal/index/"'])], {
        registries: ["cargo.acme.internal"],
      }),
    ).toEqual([]);
  });

  const toml = '[package]\nname = "app"\nversion = "0.1.0"\n\n[dependencies]\nserde = "1.0"\n';

  it("Cargo.toml: gates git in a table, a path outside the repository, a named registry and a build script", () => {
    expect(
      rules([whole("Cargo.toml", toml, `${toml}\n[dependencies.x]\ngit = "https://evil.example/x"\n`)]),
    ).toEqual(["package source: Cargo.toml dependencies.x: git https://evil.example/x"]);
    expect(rules([whole("crates/a/Cargo.toml", toml, `${toml}y = { path = "../../../y" }\n`)])).toHaveLength(
      1,
    );
    expect(
      rules([
        whole(
          "Cargo.toml",
          toml,
          `${toml}\n[target.'cfg(unix)'.dependencies]\nz = { version = "1", registry = "acme" }\n`,
        ),
      ]),
    ).toHaveLength(1);
    expect(
      rules([
        whole("Cargo.toml", toml, toml.replace('version = "0.1.0"', 'version = "0.1.0"\nbuild = "gen.rs"')),
      ]),
    ).toEqual(["install-time build: Cargo.toml package.build"]);
    expect(rules([whole("Cargo.toml", toml, "[package\nname=")])).toEqual([
      "Cargo.toml unreadable: Cargo.toml",
    ]);
    expect(rules([adding("Cargo.toml", ['serde = "1.0.200"'])])).toEqual(["manifest not read: Cargo.toml"]);
  });

  it("Cargo.toml: passes version bumps, in-repo paths, workspace inheritance", () => {
    const after = `${toml.replace('"1.0"', '"1.0.200"')}shared = { path = "../shared" }\ntokio = { workspace = true }\n`;
    expect(rules([whole("crates/a/Cargo.toml", toml, after)])).toEqual([]);
  });

  it("rust-toolchain.toml: gated as registry settings", () => {
    expect(rules([adding("rust-toolchain.toml", ["[toolchain]", 'path = "/tmp/evil"'])])).toEqual([
      "registry settings: rust-toolchain.toml",
    ]);
  });

  it("build.rs and a Cargo.toml build script: gated as install-time builds", () => {
    expect(rules([adding("crates/a/build.rs", ["fn main() {}"])])).toEqual([
      "install-time build: crates/a/build.rs",
    ]);
    const withBuild = toml.replace('version = "0.1.0"', 'version = "0.1.0"\nbuild = "tools/gen.rs"');
    expect(
      rules([whole("Cargo.toml", withBuild, withBuild), adding("tools/gen.rs", ["fn main() {}"])]),
    ).toEqual(["install-time build: tools/gen.rs"]);
  });
});

describe("Python: pyproject.toml, setup.py, requirements files, lockfiles", () => {
  const pyproject =
    '[build-system]\nrequires = ["setuptools>=68"]\nbuild-backend = "setuptools.build_meta"\n\n' +
    '[project]\nname = "app"\nversion = "1.0"\ndependencies = ["requests>=2"]\n';

  it("pyproject.toml: gates direct references, Poetry git tables, uv sources outside, new indexes", () => {
    const with_ = (extra: string) => rules([whole("pyproject.toml", pyproject, `${pyproject}${extra}`)]);
    expect(
      rules([
        whole(
          "pyproject.toml",
          pyproject,
          pyproject.replace('"requests>=2"', '"requests @ git+https://evil.example/r"'),
        ),
      ]),
    ).toHaveLength(1);
    expect(with_('\n[tool.poetry.dependencies.x]\ngit = "https://evil.example/x.git"\n')).toEqual([
      "package source: pyproject.toml tool.poetry.dependencies.x: git https://evil.example/x.git",
    ]);
    expect(with_('\n[tool.uv.sources]\ny = { path = "../../y" }\n')).toHaveLength(1);
    expect(with_('\n[[tool.uv.index]]\nname = "evil"\nurl = "https://evil.example/simple"\n')).toEqual([
      "registry settings: pyproject.toml tool.uv.index",
      "package source: pyproject.toml index: https://evil.example/simple",
    ]);
    expect(rules([whole("pyproject.toml", pyproject, "[project\n")])).toEqual([
      "pyproject.toml unreadable: pyproject.toml",
    ]);
  });

  it("pyproject.toml: passes version bumps, in-repo uv sources, project URLs", () => {
    const after =
      pyproject.replace(
        '"requests>=2"',
        '"requests>=2.32", "httpx @ https://files.pythonhosted.org/h/httpx.whl"',
      ) +
      '\n[project.urls]\nHomepage = "https://github.com/acme/app"\n\n[tool.uv.sources]\nlib = { path = "libs/lib" }\n';
    expect(rules([whole("pyproject.toml", pyproject, after)])).toEqual([]);
  });

  it("pyproject.toml: an in-tree build backend (backend-path) and its code are gated", () => {
    const inTree = pyproject.replace(
      'build-backend = "setuptools.build_meta"',
      'build-backend = "backend"\nbackend-path = ["_build"]',
    );
    expect(rules([whole("pyproject.toml", pyproject, inTree)])).toEqual([
      "install-time build: pyproject.toml build-system.backend-path",
      "install-time build: pyproject.toml build-system.build-backend",
    ]);
    expect(
      rules([whole("pyproject.toml", inTree, inTree), adding("_build/backend.py", ["import os"])]),
    ).toEqual(["install-time build: _build/backend.py"]);
  });

  it("setup.py, setup.cfg, hatch_build.py, pdm_build.py and a Poetry build script: gated as install-time builds", () => {
    expect(rules([adding("setup.py", ["import os"])])).toEqual(["install-time build: setup.py"]);
    expect(rules([adding("pkg/hatch_build.py", ["x = 1"])])).toEqual([
      "install-time build: pkg/hatch_build.py",
    ]);
    expect(rules([adding("pdm_build.py", ["x = 1"])])).toEqual(["install-time build: pdm_build.py"]);
    expect(rules([adding("setup.cfg", ["[options]", "cmdclass = build=tools.evil:Build"])])).toEqual([
      "install-time build: setup.cfg",
    ]);
    expect(
      rules([whole("pyproject.toml", pyproject, `${pyproject}\n[tool.poetry.build]\nscript = "build.py"\n`)]),
    ).toEqual(["install-time build: pyproject.toml tool.poetry.build"]);
  });

  it("requirements files of any name: gates VCS, editable paths outside, trusted hosts, setup.py options", () => {
    expect(gatesLine("dev-requirements.txt", "pkg @ git+https://github.com/u/pkg")).toBe(true);
    expect(gatesLine("deps/test.pip", "git+https://github.com/u/pkg#egg=pkg")).toBe(true);
    expect(gatesLine("dev.in", "-e ../../outside")).toBe(true);
    expect(gatesLine("requirements.txt", "--trusted-host pypi.evil.example")).toBe(true);
    expect(gatesLine("requirements.txt", "pkg==1.0 --global-option=--evil")).toBe(true);
    expect(gatesLine("requirements.txt", "pkg==1.0 -C key=value")).toBe(true);
    expect(gatesLine("requirements.txt", "--extra-index-url https://pypi.evil.example/simple")).toBe(true);
    expect(gatesLine("requirements.txt", "pkg @ https://evil.example/pkg-1.0-py3-none-any.whl")).toBe(true);
  });

  it("requirements files: passes pinned requirements, hashes, the registry index, in-repo includes", () => {
    const file = adding("requirements/dev.in", [
      "# tools",
      "-r base.txt",
      "--index-url https://pypi.org/simple",
      "-e .",
      "requests[socks]==2.32.3 ; python_version >= '3.9' \\",
      "    --hash=sha256:abc",
      "./vendor/pkg-1.0-py3-none-any.whl",
    ]);
    expect(rules([file])).toEqual([]);
    // Other tools' `.in` templates are not requirements files.
    expect(
      rules([adding("MANIFEST.in", ["include README.md"]), adding("config.h.in", ["#undef X"])]),
    ).toEqual([]);
  });

  it("poetry.lock, uv.lock, Pipfile.lock: gates git, paths outside, TLS off; passes PyPI", () => {
    expect(gatesLine("poetry.lock", 'url = "../../outside"')).toBe(true);
    expect(gatesLine("poetry.lock", 'type = "git"')).toBe(true);
    expect(gatesLine("uv.lock", 'source = { git = "https://github.com/u/x?rev=abc" }')).toBe(true);
    expect(gatesLine("Pipfile.lock", '            "verify_ssl": false,')).toBe(true);
    expect(gatesLine("pylock.toml", 'vcs = { type = "git", url = "https://github.com/u/x" }')).toBe(true);
    const ok = adding("uv.lock", [
      'source = { registry = "https://pypi.org/simple" }',
      'sdist = { url = "https://files.pythonhosted.org/p/x.tar.gz", hash = "sha256:abc" }',
      'source = { editable = "." }',
    ]);
    expect(rules([ok])).toEqual([]);
  });
});

describe("Go: go.mod and go.work", () => {
  it("go.mod/go.work: gates a replace by another module, a replace or use outside the repository", () => {
    expect(gatesLine("go.mod", "replace golang.org/x/net => evil.example/net v0.30.0")).toBe(true);
    expect(gatesLine("go.mod", "\tgolang.org/x/net => ../../net")).toBe(true);
    expect(gatesLine("go.work", "use ../../outside")).toBe(true);
    expect(gatesLine("go.work", "\t/abs/module")).toBe(true);
  });

  it("go.mod/go.work: passes requires, in-repo replaces and uses", () => {
    const mod = adding("go.mod", [
      "require golang.org/x/net v0.30.0",
      "replace example.com/lib => ./internal/lib",
      "toolchain go1.22.1",
    ]);
    expect(rules([mod, adding("go.work", ["use ./tools", "\t./cmd"])])).toEqual([]);
  });
});

describe("docs/SECURITY.md's list of ecosystems", () => {
  it("names only tests that exist here (a quoted name is the start of one)", async () => {
    const { readFileSync } = await import("node:fs");
    const security = readFileSync("docs/SECURITY.md", "utf8");
    const section = security.slice(
      security.indexOf("### Supply-chain gate"),
      security.indexOf("## What is not"),
    );
    const here = readFileSync("test/core/gates/supply-chain-allow-list.test.ts", "utf8");
    const tests = Array.from(here.matchAll(/\bit\(\s*"([^"]+)"/g), (m) => m[1]!);
    // One entry per ecosystem and file ("- **npm**: …"), its tests in a "  - tests: …" item, wrapped over lines.
    const rows = section
      .split("\n- **")
      .slice(1)
      .map((entry) => entry.replace(/\n\s+/g, " "));
    expect(rows.length).toBeGreaterThan(15);
    for (const row of rows) {
      const cell = row.split(" - tests: ")[1] ?? "";
      expect(cell, row.slice(0, 40)).not.toBe("");
      // Names of tests in other files follow that file's name; the rest are this file's.
      const own = cell.split("`supply-chain-gate.test.ts`")[0]!;
      for (const [, name] of own.matchAll(/"([^"]+)"/g)) {
        const start = name!.replace(/(?:, )?…$/, "");
        expect(
          tests.some((t) => t.startsWith(start)),
          `${start} (in: ${row.slice(0, 40)})`,
        ).toBe(true);
      }
    }
  });
});

describe("bounded work on hostile lines", () => {
  const paths = [
    "package-lock.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "bun.lock",
    "Cargo.lock",
    "poetry.lock",
    "uv.lock",
    "Pipfile.lock",
    "go.mod",
    "requirements.txt",
  ];
  const hostile = [
    " ".repeat(100_000),
    '"a'.repeat(50_000),
    "a@".repeat(50_000),
    "a: ".repeat(33_000),
    `${'x = "'.repeat(20_000)}`,
    `https://${"a".repeat(100_000)}`,
    `"${"\\\\".repeat(50_000)}`,
    `pkg ${"=".repeat(100_000)}`,
    `- ${"-".repeat(100_000)}`,
  ];
  for (const path of paths) {
    it(`${path}: a 100 KB crafted line is judged quickly`, () => {
      for (const line of hostile) {
        const started = performance.now();
        supplyChainRules([adding(path, [line])], ON);
        expect(performance.now() - started).toBeLessThan(1000);
      }
    });
  }
});
