/**
 * The npm-family manifest in every form the package managers read — `package.json`, and pnpm's
 * `package.yaml` and `package.json5` (https://pnpm.io/package_json) — decided on both versions of the file,
 * parsed: a patch cannot show whether a changed line lies in `scripts`, nor what `npm run build` runs. A
 * manifest that does not parse is refused, never passed.
 */
import JSON5 from "json5";
import { parse as parseYaml } from "yaml";
import { type Registries, folderOf, npmSpecRefusal, shorten } from "./source-allowance.js";

/** The names of the npm-family manifests. */
export const PACKAGE_MANIFESTS: readonly string[] = ["package.json", "package.yaml", "package.json5"];

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

/**
 * Fields that choose which dependencies may run their own install scripts or build: pnpm's settings, Bun's
 * `trustedDependencies` (https://bun.sh/docs/install/lifecycle) and `dependenciesMeta` (Yarn, pnpm).
 */
const INSTALL_SETTINGS_FIELDS: readonly string[] = ["pnpm", "trustedDependencies", "dependenciesMeta"];

const DEPENDENCY_FIELDS = [
  "dependencies",
  "devDependencies",
  "optionalDependencies",
  "peerDependencies",
  "overrides",
  "resolutions",
];

interface Manifest {
  scripts: Record<string, string>;
  raw: Record<string, unknown>;
}

function parseManifest(path: string, text: string | null): Manifest | null | "unreadable" {
  if (text === null) return null;
  try {
    const body = text.replace(/^\uFEFF/, "");
    const raw: unknown = path.endsWith(".yaml")
      ? parseYaml(body, { maxAliasCount: 50 })
      : path.endsWith(".json5")
        ? JSON5.parse(body)
        : JSON.parse(body);
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

/** Every string spec under a dependency field, flattened (`overrides` nest), with its path. */
function dependencySpecs(raw: Record<string, unknown>): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (value: unknown, path: string, depth: number) => {
    if (depth > 6 || out.size > 5000) return;
    if (typeof value === "string") out.set(path, value);
    else if (value && typeof value === "object" && !Array.isArray(value)) {
      for (const [key, inner] of Object.entries(value)) walk(inner, `${path}.${key}`, depth + 1);
    } else if (value !== undefined && value !== null && depth > 0) {
      // A number or list where a spec belongs: not something the gate can judge.
      out.set(path, JSON.stringify(value) ?? "?");
    }
  };
  for (const field of DEPENDENCY_FIELDS) walk(raw[field], field, 0);
  const pnpm = raw.pnpm as Record<string, unknown> | undefined;
  if (pnpm && typeof pnpm === "object") walk(pnpm.overrides, "pnpm.overrides", 0);
  return out;
}

interface PackageManifestRuleSwitches {
  lifecycleScripts: boolean;
  registrySettings: boolean;
  lockfileSources: boolean;
}

/** The rules an npm-family manifest fires, given both versions (before: null when the file is new). */
export function packageManifestRules(
  path: string,
  before: string | null,
  after: string,
  switches: PackageManifestRuleSwitches,
  registries: Registries,
  add: (rule: string) => void,
): void {
  const where = shorten(path, 80);
  const base = path.slice(path.lastIndexOf("/") + 1);
  const now = parseManifest(path, after);
  if (now === "unreadable" || now === null) {
    add(`${base} unreadable: ${where}`);
    return;
  }
  const was = parseManifest(path, before);
  const old =
    was === "unreadable" || was === null
      ? { scripts: Object.create(null) as Record<string, string>, raw: {} as Record<string, unknown> }
      : was;
  if (switches.lifecycleScripts) {
    for (const name of installReach(now.scripts)) {
      if (now.scripts[name] !== undefined && now.scripts[name] !== old.scripts[name])
        add(`install script: ${where} scripts.${shorten(name, 40)}`);
    }
    if (!same(now.raw.workspaces, old.raw.workspaces)) add(`workspaces changed: ${where}`);
  }
  if (switches.registrySettings) {
    if (!same(now.raw.packageManager, old.raw.packageManager))
      add(`package manager changed: ${where} packageManager`);
    for (const field of INSTALL_SETTINGS_FIELDS)
      if (!same(now.raw[field], old.raw[field])) add(`install settings: ${where} ${field}`);
  }
  if (switches.lockfileSources) {
    const previous = dependencySpecs(old.raw);
    const folder = folderOf(path);
    for (const [field, spec] of dependencySpecs(now.raw)) {
      if (previous.get(field) === spec) continue;
      const why = npmSpecRefusal(spec, folder, registries);
      if (why) add(`package source: ${where} ${shorten(field, 50)}: ${why}`);
    }
  }
}
