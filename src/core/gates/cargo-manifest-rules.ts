/**
 * Cargo.toml, decided on both versions of the file, parsed: every dependency in every table Cargo reads —
 * `[dependencies]`, `[dev-dependencies]`, `[build-dependencies]` (and their `target.<cfg>` forms),
 * `[workspace.dependencies]`, `[patch.<source>]`, `[replace]` — is a version from crates.io, a path inside
 * the repository, or `workspace = true`; `git`, a named `registry` (its host lives in `.cargo/config.toml`,
 * out of the gate's sight) and a `registry-index` off the allowed hosts are refused. A changed `build` key
 * (which file Cargo compiles and runs before the crate) is an install-time change. A Cargo.toml that does
 * not parse is refused. https://doc.rust-lang.org/cargo/reference/specifying-dependencies.html
 */
import { type Registries, folderOf, joinPath, pathRefusal, shorten, urlRefusal } from "./source-allowance.js";
import { isTable, manifestVersions, type Table } from "./toml-table.js";

const DEPENDENCY_TABLES = [
  "dependencies",
  "dev-dependencies",
  "dev_dependencies",
  "build-dependencies",
  "build_dependencies",
];

/** Every dependency entry of a parsed Cargo.toml, keyed by where it is (`target.'cfg(unix)'.dependencies.libc`). */
function cargoDependencies(root: Table): Map<string, unknown> {
  const out = new Map<string, unknown>();
  const collect = (table: unknown, prefix: string) => {
    if (!isTable(table)) return;
    for (const [name, spec] of Object.entries(table)) out.set(`${prefix}.${name}`, spec);
  };
  for (const field of DEPENDENCY_TABLES) collect(root[field], field);
  if (isTable(root.target))
    for (const [cfg, table] of Object.entries(root.target))
      if (isTable(table))
        for (const field of DEPENDENCY_TABLES) collect(table[field], `target.${cfg}.${field}`);
  if (isTable(root.workspace)) collect(root.workspace.dependencies, "workspace.dependencies");
  if (isTable(root.patch))
    for (const [source, table] of Object.entries(root.patch)) collect(table, `patch.${source}`);
  collect(root.replace, "replace");
  return out;
}

/** Why a Cargo dependency spec is refused; null when it is a crates.io version, an in-repo path or inherited. */
function cargoSpecRefusal(spec: unknown, folder: string, registries: Registries): string | null {
  if (typeof spec === "string") return null;
  if (!isTable(spec)) return shorten(JSON.stringify(spec) ?? "?");
  if (spec.git !== undefined) return `git ${shorten(String(spec.git))}`;
  if (spec.registry !== undefined) return `registry ${shorten(String(spec.registry))}`;
  if (spec["registry-index"] !== undefined) {
    const index = String(spec["registry-index"]).replace(/^(?:registry|sparse)\+/, "");
    const why = urlRefusal(index, registries);
    if (why) return why;
  }
  if (spec.path !== undefined) return typeof spec.path === "string" ? pathRefusal(spec.path, folder) : "path";
  return null;
}

interface CargoRuleSwitches {
  lifecycleScripts: boolean;
  lockfileSources: boolean;
}

/**
 * The rules a Cargo.toml fires, given both versions (before: null when the file is new). Returns the build
 * script its head version names (a repository path), so a change to that file is gated too.
 */
export function cargoManifestRules(
  path: string,
  before: string | null,
  after: string,
  switches: CargoRuleSwitches,
  registries: Registries,
  add: (rule: string) => void,
): string[] {
  const where = shorten(path, 80);
  const versions = manifestVersions(before, after, () => add(`Cargo.toml unreadable: ${where}`));
  if (!versions) return [];
  const { now, old } = versions;
  if (switches.lifecycleScripts) {
    const build = (t: Table) => (isTable(t.package) ? JSON.stringify(t.package.build) : undefined);
    if (build(now) !== build(old)) add(`install-time build: ${where} package.build`);
  }
  if (switches.lockfileSources) {
    const previous = cargoDependencies(old);
    const folder = folderOf(path);
    for (const [field, spec] of cargoDependencies(now)) {
      if (JSON.stringify(previous.get(field)) === JSON.stringify(spec)) continue;
      const why = cargoSpecRefusal(spec, folder, registries);
      if (why) add(`package source: ${where} ${shorten(field, 50)}: ${why}`);
    }
  }
  const script = isTable(now.package) ? now.package.build : undefined;
  if (typeof script !== "string" || pathRefusal(script, folderOf(path))) return [];
  return [joinPath(folderOf(path), script)];
}
