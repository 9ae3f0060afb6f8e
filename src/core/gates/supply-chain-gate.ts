/**
 * The supply-chain rules of the controller's human gate: a change to what runs when the project's dependencies
 * are installed or built, or to where they are downloaded from, needs a person — the same way a workflow change
 * does. The check is an allow-list: it accepts what it can show is known good and gates everything else,
 * including any lockfile or manifest it cannot read. docs/SECURITY.md ("Supply-chain gate") has the list of
 * ecosystems, files and checks.
 *
 * Three rules, each with its own switch in `humanGate.supplyChain`:
 *
 * - install scripts (`lifecycleScripts`): files the ecosystems run at install or build time — `binding.gyp`
 *   (npm runs `node-gyp rebuild`), `build.rs` (Cargo compiles and runs it first), `setup.py`, `hatch_build.py`,
 *   `pdm_build.py`,
 *   `setup.cfg`, dependency patches (`.yarn/patches/`, `patches/*.patch`), Yarn's Plug'n'Play loader and
 *   committed packages (`.pnp.cjs`, `.pnp.loader.mjs`, `.yarn/cache/`, `.yarn/unplugged/`),
 *   an in-tree PEP 517 backend (the folders `backend-path` names), a Cargo.toml `build` script — and, read from
 *   both versions of each npm-family manifest, install-time scripts and every script they reach
 *   (src/core/gates/package-manifest-rules.ts), a changed `workspaces`; pyproject.toml's build settings
 *   (src/core/gates/pyproject-rules.ts);
 * - registry settings (`registrySettings`): the package managers' settings files — npm/Yarn/pnpm/Bun (`.npmrc`,
 *   `.yarnrc`, `.yarnrc.yml`, `.pnpmfile.cjs`, `pnpm-workspace.yaml`, `.yarn/releases/`, `.yarn/plugins/`,
 *   `bunfig.toml`), Python (`pip.conf`, `pip.ini`, `uv.toml`, `poetry.toml`, `pdm.toml`; pyproject.toml's index
 *   settings), Cargo (`.cargo/config*`, `rust-toolchain.toml`) — and a changed `packageManager`, `pnpm`, `trustedDependencies` or
 *   `dependenciesMeta` in a manifest. Go reads its proxy settings from the environment, not the tree;
 *   `.pypirc` configures publishing, not installing, and publishing is a never-auto-approve rule already;
 * - package sources (`lockfileSources`): every source a lockfile's added lines or a manifest's entries name
 *   must be an allowed registry host, a registry version, or a path inside the repository
 *   (src/core/gates/source-allowance.ts): lockfiles line by line (src/core/gates/lockfile-line-sources.ts),
 *   requirements files of any name (src/core/gates/requirements-lines.ts), manifests whole
 *   (package.json/package.yaml/package.json5, Cargo.toml, pyproject.toml). `bun.lockb` is binary: refused.
 *
 * Manifests are decided on both versions of the file, which the controller reads at the merge base and the head
 * (src/github/pull-verification.ts, for the paths `readsWholeManifest` names); one it did not read is gated.
 * Pure and bounded: lines are read one at a time with patterns that cannot backtrack far.
 */
import { cargoManifestRules } from "./cargo-manifest-rules.js";
import { lockfileFormat, lockfileLineRefusal } from "./lockfile-line-sources.js";
import { PACKAGE_MANIFESTS, packageManifestRules } from "./package-manifest-rules.js";
import { pyprojectRules } from "./pyproject-rules.js";
import { isRequirementsFile, requirementsLineRefusal } from "./requirements-lines.js";
import { addedLines, shorten } from "./source-allowance.js";

export interface SupplyChainOptions {
  /** Added or changed install-time scripts in any package.json (and `workspaces`, `binding.gyp`). */
  lifecycleScripts: boolean;
  /** Package-manager settings files and index settings. */
  registrySettings: boolean;
  /** Lockfile and manifest entries resolved from outside `registries`. */
  lockfileSources: boolean;
  /** Host names packages may be downloaded from (exact match, case-insensitive; `host:port` allowed). */
  registries: readonly string[];
}

/** The public registries of the ecosystems the quality-command detection knows. */
export const DEFAULT_REGISTRIES: readonly string[] = [
  // npm, yarn (v1 writes its mirror of the npm registry into yarn.lock), pnpm
  "registry.npmjs.org",
  "registry.yarnpkg.com",
  // PyPI: the index and the files it links to
  "pypi.org",
  "files.pythonhosted.org",
  // crates.io: the sparse index and the download host
  "index.crates.io",
  "static.crates.io",
  "crates.io",
];

/** What the controller read of a manifest whose meaning the patch cannot show. */
export interface ManifestVersions {
  /** The file at the merge base; null when it did not exist there. */
  before: string | null;
  /** The file at the head. */
  after: string;
}

/** The part of a diff file these rules read (src/core/gates/diff-gate.ts's DiffFile has it). */
export interface SupplyChainFile {
  filename: string;
  status: string;
  previousFilename?: string | null;
  patch?: string | null;
  /** For a manifest (`readsWholeManifest`): both versions, read by the controller. Absent: not read (gated). */
  manifest?: ManifestVersions | null;
}

/** Manifests the rules read whole, at both commits: the controller reads these (src/github/pull-verification.ts). */
export function readsWholeManifest(path: string): boolean {
  const base = path.slice(path.lastIndexOf("/") + 1);
  return PACKAGE_MANIFESTS.includes(base) || base === "Cargo.toml" || base === "pyproject.toml";
}

const SETTINGS_FILES: readonly RegExp[] = [
  /(?:^|\/)\.npmrc$/,
  /(?:^|\/)\.yarnrc(?:\.yml|\.yaml)?$/,
  /(?:^|\/)\.pnpmfile\.[cm]?js$/,
  /(?:^|\/)pnpm-workspace\.ya?ml$/,
  /(?:^|\/)\.yarn\/(?:releases|plugins)\//,
  // Bun's install settings: registry, scopes, lifecycle scripts (https://bun.sh/docs/runtime/bunfig).
  /(?:^|\/)\.?bunfig\.toml$/,
  /(?:^|\/)pip\.(?:conf|ini)$/,
  /(?:^|\/)uv\.toml$/,
  /(?:^|\/)poetry\.toml$/,
  /(?:^|\/)pdm\.toml$/,
  /(?:^|\/)\.cargo\/config(?:\.toml)?$/,
  // rustup reads the toolchain to install from it, and `path` runs a local toolchain
  // (https://rust-lang.github.io/rustup/overrides.html#the-toolchain-file).
  /(?:^|\/)rust-toolchain(?:\.toml)?$/,
];

/**
 * Files an install or build runs: node-gyp's `binding.gyp`, Cargo's `build.rs`
 * (https://doc.rust-lang.org/cargo/reference/build-scripts.html), setuptools' `setup.py`, Hatch's
 * `hatch_build.py` (https://hatch.pypa.io/latest/plugins/build-hook/custom/), pdm-backend's `pdm_build.py`
 * (https://backend.pdm-project.org/hooks/), setuptools' `setup.cfg`, and the patches installs apply to
 * dependencies.
 */
const BUILD_FILES: readonly RegExp[] = [
  /(?:^|\/)binding\.gyp$/,
  /(?:^|\/)build\.rs$/,
  /(?:^|\/)setup\.py$/,
  /(?:^|\/)hatch_build\.py$/,
  /(?:^|\/)pdm_build\.py$/,
  // setuptools reads `cmdclass` and `setup_requires` from setup.cfg when it builds.
  /(?:^|\/)setup\.cfg$/,
  // Patches applied to dependencies when they are installed (Yarn's `patch:`, pnpm's patchedDependencies,
  // patch-package's postinstall): a patch can give a dependency an install script.
  /(?:^|\/)\.yarn\/patches\//,
  /(?:^|\/)patches\/.{1,500}\.(?:patch|diff)$/,
  // Yarn Plug'n'Play: the loader Yarn runs with every script, and the committed packages and their builds
  // (https://yarnpkg.com/features/pnp).
  /(?:^|\/)\.pnp\.(?:c?js|loader\.mjs)$/,
  /(?:^|\/)\.yarn\/(?:cache|unplugged)\//,
];

/** Whether `path` is the build file `target`, or Python code under the backend folder `target`. */
function within(path: string, target: string): boolean {
  if (path === target) return true;
  return /\.pyw?$/.test(path) && (target === "" || path.startsWith(`${target}/`));
}

/** The supply-chain rules that fire for a diff's files (see the file comment). */
export function supplyChainRules(files: readonly SupplyChainFile[], options: SupplyChainOptions): string[] {
  const rules: string[] = [];
  const add = (rule: string) => {
    if (!rules.includes(rule)) rules.push(rule);
  };
  const registries = new Set(options.registries.map((r) => r.trim().toLowerCase()).filter(Boolean));
  const anyRule = options.lifecycleScripts || options.registrySettings || options.lockfileSources;
  // Build code the manifests name (an in-tree backend, a Cargo build script): gated where the diff touches it.
  const buildPaths: string[] = [];
  for (const file of files) {
    if (file.status === "removed") continue;
    const path = file.filename;
    const where = shorten(path, 80);
    const names = [path, ...(file.previousFilename ? [file.previousFilename] : [])];
    const base = path.slice(path.lastIndexOf("/") + 1);
    if (options.registrySettings && names.some((name) => SETTINGS_FILES.some((re) => re.test(name))))
      add(`registry settings: ${where}`);
    if (options.lifecycleScripts && names.some((name) => BUILD_FILES.some((re) => re.test(name))))
      add(`install-time build: ${where}`);
    if (readsWholeManifest(path)) {
      if (!anyRule) continue;
      if (!file.manifest) {
        // Without both versions nothing here can be decided: a person looks.
        add(
          PACKAGE_MANIFESTS.includes(base)
            ? `install scripts not read: ${where}`
            : `manifest not read: ${where}`,
        );
        continue;
      }
      const before = file.status === "added" ? null : file.manifest.before;
      const after = file.manifest.after;
      if (PACKAGE_MANIFESTS.includes(base))
        packageManifestRules(path, before, after, options, registries, add);
      else if (base === "Cargo.toml")
        buildPaths.push(...cargoManifestRules(path, before, after, options, registries, add));
      else buildPaths.push(...pyprojectRules(path, before, after, options, registries, add));
      continue;
    }
    if (!options.lockfileSources) continue;
    if (base === "bun.lockb") {
      add(`lockfile unreadable (binary): ${where}`);
      continue;
    }
    const format = lockfileFormat(path);
    const requirements = !format && isRequirementsFile(path);
    if (!format && !requirements) continue;
    if (!file.patch) {
      add(`lockfile not shown: ${where}`);
      continue;
    }
    for (const line of addedLines(file.patch)) {
      const why = format
        ? lockfileLineRefusal(format, path, line.text, registries)
        : requirementsLineRefusal(path, line.text, registries);
      if (why) add(`package source: ${where}:${line.number}: ${why}`);
    }
  }
  if (options.lifecycleScripts && buildPaths.length > 0) {
    for (const file of files) {
      const names = [file.filename, ...(file.previousFilename ? [file.previousFilename] : [])];
      if (names.some((name) => buildPaths.some((target) => within(name, target))))
        add(`install-time build: ${shorten(file.filename, 80)}`);
    }
  }
  return rules;
}
