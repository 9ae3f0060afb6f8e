/**
 * The supply-chain rules of the controller's human gate: a change to what runs when the project's dependencies
 * are installed, or to where they are downloaded from, needs a person — the same way a workflow change does.
 *
 * Three rules, each with its own switch in `humanGate.supplyChain`:
 *
 * - install scripts (`lifecycleScripts`): a `package.json` anywhere in the tree whose install-time scripts are
 *   added or changed (the ones `npm ci`/`npm install` run for the project and its workspaces — preinstall,
 *   install, postinstall, prepublish, preprepare, prepare, postprepare, dependencies — the ones a git
 *   dependency runs when packed — prepack, postpack — and pnpm's `pnpm:devPreinstall`; see
 *   https://docs.npmjs.com/cli/v11/using-npm/scripts#life-cycle-operation-order), plus every script those
 *   reach through `npm run …` and its `pre`/`post` scripts; a changed `workspaces` list (other package.json
 *   files join the install); a `binding.gyp` (npm runs `node-gyp rebuild` on install when one is there).
 *   Decided on both versions of the file, parsed (the controller reads them at the merge base and the head),
 *   because a patch cannot show whether a changed line lies in `scripts` nor what `npm run build` runs;
 * - registry settings (`registrySettings`): the package managers' settings files the quality-command detection
 *   (src/worker/processes/quality.ts) implies — npm/yarn/pnpm (`.npmrc`, `.yarnrc`, `.yarnrc.yml`, `.pnpmfile.cjs`,
 *   `pnpm-workspace.yaml`, `.yarn/releases/`, `.yarn/plugins/`), Python (`pip.conf`, `pip.ini`, `uv.toml`,
 *   `poetry.toml`; in `pyproject.toml` the index settings of uv, Poetry and PDM), Cargo (`.cargo/config*`)
 *   — and a changed `packageManager` or `pnpm` field of package.json (the tool that installs, and which
 *   dependencies may run install scripts). Go reads its proxy settings from the environment, not the tree;
 *   `.pypirc` configures publishing, not installing, and publishing is a never-auto-approve rule already;
 * - package sources (`lockfileSources`): an added lockfile or manifest line that resolves a package from
 *   anywhere but `registries` — package-lock/npm-shrinkwrap `resolved`, yarn.lock `resolved`/`resolution`,
 *   pnpm-lock `tarball:`/git/directory resolutions, Cargo.lock `source`, poetry.lock/Pipfile.lock/uv.lock
 *   sources, requirements and constraints files (index options, URLs, VCS), a `replace` in go.mod/go.work
 *   (go.sum cannot say where a module came from), Cargo.toml `git`/`registry` dependencies and
 *   `[patch]`/`[source]` tables, and package.json dependency specs that are not registry versions
 *   (`git+…`, `github:…`, `file:`, `http(s):`, `user/repo`).
 *
 * Pure and bounded: lines are read one at a time with patterns that cannot backtrack far.
 */

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

/** Both spellings of crates.io's index that Cargo.lock writes as `source`. */
const CRATES_IO_SOURCES = new Set([
  "registry+https://github.com/rust-lang/crates.io-index",
  "sparse+https://index.crates.io/",
]);

/** What the controller read of a package.json whose meaning the patch cannot show. */
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
  /** For a package.json: both versions, read by the controller. Absent: not read (the rule fires). */
  manifest?: ManifestVersions | null;
}

/** Scripts `npm ci` and `npm install` run for the project itself (and a git dependency when it is packed). */
const INSTALL_SCRIPTS: readonly string[] = [
  "preinstall",
  "install",
  "postinstall",
  "prepublish",
  "preprepare",
  "prepare",
  "postprepare",
  "dependencies",
  "prepack",
  "postpack",
  "pnpm:devPreinstall",
];

const SETTINGS_FILES: readonly RegExp[] = [
  /(?:^|\/)\.npmrc$/,
  /(?:^|\/)\.yarnrc(?:\.yml|\.yaml)?$/,
  /(?:^|\/)\.pnpmfile\.c?js$/,
  /(?:^|\/)\.pnpmfile\.mjs$/,
  /(?:^|\/)pnpm-workspace\.ya?ml$/,
  /(?:^|\/)\.yarn\/(?:releases|plugins)\//,
  /(?:^|\/)pip\.(?:conf|ini)$/,
  /(?:^|\/)uv\.toml$/,
  /(?:^|\/)poetry\.toml$/,
  /(?:^|\/)\.cargo\/config(?:\.toml)?$/,
];

type LockKind =
  | "npm-lock"
  | "yarn-lock"
  | "pnpm-lock"
  | "cargo-lock"
  | "python-lock"
  | "requirements"
  | "pipfile"
  | "pyproject"
  | "go-mod"
  | "cargo-toml";

function lockKind(path: string): LockKind | null {
  const base = path.slice(path.lastIndexOf("/") + 1);
  if (base === "package-lock.json" || base === "npm-shrinkwrap.json") return "npm-lock";
  if (base === "yarn.lock") return "yarn-lock";
  if (base === "pnpm-lock.yaml") return "pnpm-lock";
  if (base === "Cargo.lock") return "cargo-lock";
  if (base === "poetry.lock" || base === "Pipfile.lock" || base === "uv.lock" || base === "pdm.lock")
    return "python-lock";
  if (
    /^(?:requirements|constraints)[\w.-]*\.(?:txt|in)$/i.test(base) ||
    /(?:^|\/)requirements\/[^/]+\.(?:txt|in)$/i.test(path)
  )
    return "requirements";
  if (base === "Pipfile") return "pipfile";
  if (base === "pyproject.toml") return "pyproject";
  if (base === "go.mod" || base === "go.work") return "go-mod";
  if (base === "Cargo.toml") return "cargo-toml";
  return null;
}

// ---------------------------------------------------------------------------------------------------------
// Reading patches and values.

interface Line {
  number: number;
  text: string;
}

/** The lines a patch adds, with their line numbers in the new file. */
function addedLines(patch: string): Line[] {
  const out: Line[] = [];
  let next = 0;
  let inHunk = false;
  for (const line of patch.replace(/\r\n?/g, "\n").split("\n")) {
    const hunk = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(line);
    if (hunk) {
      next = Number(hunk[1]);
      inHunk = true;
      continue;
    }
    if (!inHunk) continue;
    if (line.startsWith("+")) out.push({ number: next++, text: line.slice(1) });
    else if (line.startsWith(" ") || line === "") next++;
  }
  return out;
}

function shorten(text: string, max = 60): string {
  const clean = text
    .replace(/[\u0000-\u001f\u007f-\u009f]/g, "?")
    .replace(/:\/\/[^/@\s]+@/g, "://***@")
    .trim();
  return clean.length > max ? `${clean.slice(0, max - 1)}…` : clean;
}

/** The host (and port) of an absolute URL, lower-case; null when the text is not one. */
function urlHost(text: string): { scheme: string; host: string } | null {
  try {
    const url = new URL(text);
    if (!url.host) return null;
    return { scheme: url.protocol.replace(/:$/, "").toLowerCase(), host: url.host.toLowerCase() };
  } catch {
    return null;
  }
}

/** Whether a URL downloads from an allowed registry: https, and a host on the list. */
function fromRegistry(text: string, registries: ReadonlySet<string>): boolean {
  const parsed = urlHost(text);
  return !!parsed && parsed.scheme === "https" && registries.has(parsed.host);
}

// Every scheme-qualified URL in a line: `git+ssh://`, `https://`, `registry+https://`, `sparse+https://`.
const URL_IN_TEXT = /[a-z][a-z0-9+.-]{0,30}:\/\/[^\s"'`<>()[\]{},]{1,2000}/gi;

function urlsIn(text: string): string[] {
  return Array.from(text.matchAll(URL_IN_TEXT), (m) => m[0]);
}

/** JSON string tokens on a line, decoded (`\u0070ostinstall` reads as `postinstall`, as npm reads it). */
function jsonPairs(text: string): { key: string | null; value: string }[] {
  const out: { key: string | null; value: string }[] = [];
  const token = /"(?:[^"\\\n]|\\.){0,4000}"/g;
  const found = Array.from(text.matchAll(token));
  for (let i = 0; i < found.length; i++) {
    const raw = found[i]!;
    const after = text.slice(raw.index + raw[0].length);
    const decoded = decodeJsonString(raw[0]);
    if (decoded === null) continue;
    if (/^\s*:/.test(after)) {
      const next = found[i + 1];
      const between = next ? text.slice(raw.index + raw[0].length, next.index) : "";
      if (next && /^\s*:\s*$/.test(between)) {
        const value = decodeJsonString(next[0]);
        if (value !== null) out.push({ key: decoded, value });
        i++;
      }
      continue;
    }
    out.push({ key: null, value: decoded });
  }
  return out;
}

function decodeJsonString(raw: string): string | null {
  try {
    const value = JSON.parse(raw);
    return typeof value === "string" ? value : null;
  } catch {
    return null;
  }
}

/** A dependency spec npm resolves from the registry: a version, range or tag, or an `npm:` alias. */
function isRegistrySpec(spec: string): boolean {
  const s = spec.trim();
  if (/^(?:workspace|catalog):/i.test(s)) return true;
  if (/^npm:/i.test(s)) return isRegistrySpec(s.replace(/^npm:(?:@[^/@\s]+\/)?[^@\s]+@?/i, ""));
  if (/^[a-z][a-z0-9+.-]*:/i.test(s)) return false;
  if (/[/\\]/.test(s) || /^[.~]/.test(s)) return false;
  return true;
}

// ---------------------------------------------------------------------------------------------------------
// package.json, from both versions.

interface Manifest {
  scripts: Record<string, string>;
  raw: Record<string, unknown>;
}

function parseManifest(text: string | null): Manifest | null | "unreadable" {
  if (text === null) return null;
  try {
    const raw = JSON.parse(text.replace(/^\uFEFF/, "")) as unknown;
    if (!raw || typeof raw !== "object" || Array.isArray(raw)) return "unreadable";
    const record = raw as Record<string, unknown>;
    const scripts: Record<string, string> = Object.create(null);
    const listed = record.scripts;
    if (listed && typeof listed === "object" && !Array.isArray(listed)) {
      for (const [name, value] of Object.entries(listed)) scripts[name] = String(value);
    }
    return { scripts, raw: record };
  } catch {
    return "unreadable";
  }
}

/**
 * The scripts an install runs: the install-time ones, the `pre`/`post` scripts of each, and — transitively —
 * every script whose name appears as a word in one of them (`npm run build`, `yarn build`, `run-s build`).
 * Over-reaching on purpose: a script merely named in an install script counts.
 */
function installReach(scripts: Record<string, string>): Set<string> {
  const reached = new Set<string>();
  const queue = [...INSTALL_SCRIPTS];
  const names = Object.keys(scripts);
  while (queue.length > 0) {
    const name = queue.shift()!;
    if (reached.has(name)) continue;
    reached.add(name);
    const command = scripts[name];
    if (command === undefined) continue;
    // `npm run x` runs `prex` and `postx` too (only those that exist are followed, so this ends).
    if (!INSTALL_SCRIPTS.includes(name)) {
      for (const around of [`pre${name}`, `post${name}`])
        if (Object.hasOwn(scripts, around)) queue.push(around);
    }
    const words = command.split(/[^\w:.@/*-]+/).filter(Boolean);
    for (const other of names) {
      if (reached.has(other)) continue;
      // `run-s build:*` (npm-run-all) names scripts by a prefix.
      if (words.some((w) => w === other || (w.includes("*") && other.startsWith(w.slice(0, w.indexOf("*"))))))
        queue.push(other);
    }
  }
  return reached;
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

const DEPENDENCY_FIELDS = [
  "dependencies",
  "devDependencies",
  "optionalDependencies",
  "peerDependencies",
  "bundleDependencies",
  "overrides",
  "resolutions",
];

/** Every string spec under a dependency field, flattened (`overrides` nest), with its path. */
function dependencySpecs(raw: Record<string, unknown>): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (value: unknown, path: string, depth: number) => {
    if (depth > 6 || out.size > 5000) return;
    if (typeof value === "string") out.set(path, value);
    else if (value && typeof value === "object" && !Array.isArray(value)) {
      for (const [key, inner] of Object.entries(value)) walk(inner, `${path}.${key}`, depth + 1);
    }
  };
  for (const field of DEPENDENCY_FIELDS) walk(raw[field], field, 0);
  const pnpm = raw.pnpm as Record<string, unknown> | undefined;
  if (pnpm && typeof pnpm === "object") walk(pnpm.overrides, "pnpm.overrides", 0);
  return out;
}

function manifestRules(
  file: SupplyChainFile,
  options: SupplyChainOptions,
  add: (rule: string) => void,
): void {
  const where = shorten(file.filename, 80);
  if (!file.manifest) {
    // Without both versions nothing here can be decided: a person looks.
    if (options.lifecycleScripts || options.registrySettings || options.lockfileSources)
      add(`install scripts not read: ${where}`);
    return;
  }
  const after = parseManifest(file.manifest.after);
  const before = parseManifest(file.status === "added" ? null : file.manifest.before);
  if (after === "unreadable" || after === null) {
    add(`package.json unreadable: ${where}`);
    return;
  }
  const old =
    before === "unreadable" || before === null
      ? { scripts: Object.create(null) as Record<string, string>, raw: {} }
      : before;
  if (options.lifecycleScripts) {
    for (const name of installReach(after.scripts)) {
      if (after.scripts[name] !== undefined && after.scripts[name] !== old.scripts[name])
        add(`install script: ${where} scripts.${shorten(name, 40)}`);
    }
    if (!same(after.raw.workspaces, old.raw.workspaces)) add(`workspaces changed: ${where}`);
  }
  if (options.registrySettings) {
    if (!same(after.raw.packageManager, old.raw.packageManager))
      add(`package manager changed: ${where} packageManager`);
    if (!same(after.raw.pnpm, old.raw.pnpm)) add(`install settings: ${where} pnpm`);
  }
  if (options.lockfileSources) {
    const was = dependencySpecs(old.raw);
    for (const [path, spec] of dependencySpecs(after.raw)) {
      if (was.get(path) === spec || isRegistrySpec(spec)) continue;
      add(`package source: ${where} ${shorten(path, 50)}: ${shorten(spec)}`);
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// Lockfiles and manifests, from the lines a patch adds.

/** Why an added line resolves from outside the registries, or null when it does not. */
function strangeSource(kind: LockKind, text: string, registries: ReadonlySet<string>): string | null {
  const checkUrls = (line: string): string | null => {
    for (const url of urlsIn(line)) {
      if (kind === "cargo-lock" && CRATES_IO_SOURCES.has(url.replace(/^"|"$/g, ""))) continue;
      if (!fromRegistry(url, registries)) return shorten(url);
    }
    return null;
  };
  switch (kind) {
    case "npm-lock": {
      for (const { key, value } of jsonPairs(text)) {
        if (key === "url" || key === "license" || key === "type") continue;
        if (key === "resolved") {
          // A workspace link resolves to a folder of this repository; anything else must be a registry URL.
          if (/^[\w@][\w@./-]*$/.test(value) && !value.split("/").includes("..")) continue;
          if (!fromRegistry(value, registries)) return shorten(value);
          continue;
        }
        if (key === "version" || key === "from" || key === null) {
          if (
            /^(?:git\+|git:|github:|gitlab:|bitbucket:|file:|link:|https?:)/i.test(value) ||
            /:\/\//.test(value)
          ) {
            if (!fromRegistry(value, registries)) return shorten(value);
          }
        }
      }
      return null;
    }
    case "yarn-lock": {
      const protocol =
        /(?:^|[\s"@,])(git\+[a-z]+|git|github|gitlab|bitbucket|file|portal|exec|ssh|https?):/i.exec(text);
      if (protocol && !/^https?$/i.test(protocol[1]!)) return shorten(text);
      if (/(?:^|[\s"@,])link:\s*\//.test(text)) return shorten(text);
      return checkUrls(text);
    }
    case "pnpm-lock": {
      if (/\btype:\s*['"]?(?:git|directory)\b/.test(text) || /\b(?:directory|repo|path):\s/.test(text))
        return shorten(text);
      if (/(?:^|[\s'"({,:])(?:file:|link:\/|git\+|github:)/.test(text)) return shorten(text);
      return checkUrls(text);
    }
    case "cargo-lock":
      return checkUrls(text);
    case "python-lock": {
      if (/\btype\s*=\s*"(?:git|directory|file|url)"/.test(text)) return shorten(text);
      const local = /\b(path|directory|editable|file)"?\s*[=:]\s*"([^"]*)"/.exec(text);
      if (local && local[2] !== "." && !/\.(?:whl|tar\.gz|zip|tar\.bz2)$/i.test(local[2]!))
        return shorten(text);
      return checkUrls(text);
    }
    case "requirements": {
      const line = text.replace(/\s+#.*$/, "").trim();
      if (/^(?:-i|--index-url|--extra-index-url|-f|--find-links|--trusted-host)\b/.test(line))
        return shorten(line);
      if (/(?:^|[\s@=])(?:git|hg|svn|bzr)\+/i.test(line) || /(?:^|[\s@=])file:/i.test(line))
        return shorten(line);
      return checkUrls(line);
    }
    case "pipfile":
      if (/\b(?:git|path|file)\s*=/.test(text)) return shorten(text);
      return checkUrls(text);
    case "pyproject": {
      // Project URLs (`Homepage = "https://…"`) are not sources: only direct references and inline sources.
      const direct = /@\s*((?:git\+|hg\+|https?:|file:)[^\s"',]*)/i.exec(text);
      if (direct && !fromRegistry(direct[1]!, registries)) return shorten(direct[1]!);
      if (/\{[^}]*\b(?:git|url|path|index)\s*=/.test(text)) return shorten(text);
      return null;
    }
    case "go-mod":
      return /=>/.test(text) ? shorten(text) : null;
    case "cargo-toml":
      if (/\b(?:git|registry|registry-index)\s*=/.test(text) || /^\s*\[(?:patch|source)[.\]]/.test(text))
        return shorten(text);
      return null;
  }
}

/** pyproject.toml lines that choose a package index (uv, Poetry, PDM). */
const PYPROJECT_INDEX =
  /^\s*(?:\[\[?tool\.(?:uv\.index|uv\.sources|poetry\.source|pdm\.source)\b|(?:index-url|extra-index-url|find-links|index-strategy|no-index|url)\s*=)/;

// ---------------------------------------------------------------------------------------------------------

/** The supply-chain rules that fire for a diff's files (see the file comment). */
export function supplyChainRules(files: readonly SupplyChainFile[], options: SupplyChainOptions): string[] {
  const rules: string[] = [];
  const add = (rule: string) => {
    if (!rules.includes(rule)) rules.push(rule);
  };
  const registries = new Set(options.registries.map((r) => r.trim().toLowerCase()).filter(Boolean));
  for (const file of files) {
    if (file.status === "removed") continue;
    const path = file.filename;
    const names = [path, ...(file.previousFilename ? [file.previousFilename] : [])];
    const base = path.slice(path.lastIndexOf("/") + 1);
    if (options.registrySettings && names.some((name) => SETTINGS_FILES.some((re) => re.test(name))))
      add(`registry settings: ${shorten(path, 80)}`);
    if (options.lifecycleScripts && names.some((name) => /(?:^|\/)binding\.gyp$/.test(name)))
      add(`install-time build: ${shorten(path, 80)}`);
    if (base === "package.json") {
      manifestRules(file, options, add);
      continue;
    }
    const kind = lockKind(path);
    if (!kind || !file.patch) continue;
    for (const line of addedLines(file.patch)) {
      if (kind === "pyproject" && options.registrySettings && PYPROJECT_INDEX.test(line.text))
        add(`registry settings: ${shorten(path, 80)}:${line.number}`);
      if (!options.lockfileSources) continue;
      const why = strangeSource(kind, line.text, registries);
      if (why) add(`package source: ${shorten(path, 80)}:${line.number}: ${why}`);
    }
  }
  return rules;
}
