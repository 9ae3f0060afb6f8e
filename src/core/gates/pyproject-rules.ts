/**
 * pyproject.toml, decided on both versions of the file, parsed. What is read:
 *
 * - requirements (PEP 508) in `build-system.requires`, `project.dependencies`, `project.optional-dependencies`,
 *   `dependency-groups`, uv's `dev-dependencies`/`constraint-dependencies`/`override-dependencies` and PDM's
 *   `dev-dependencies`: a direct reference (`name @ url`) must be on an allowed https host;
 * - `tool.uv.sources` and Poetry's dependency tables: `git` is refused, `url` must be on an allowed host,
 *   `path` must stay inside the repository (https://docs.astral.sh/uv/concepts/projects/dependencies/,
 *   https://python-poetry.org/docs/dependency-specification/);
 * - index settings (`tool.uv.index`, `index-url`, `extra-index-url`, `find-links`, `tool.uv.pip`,
 *   `tool.poetry.source`, `tool.pdm.source`): a change is a registry-settings change, and each URL must be on
 *   an allowed host;
 * - the build: a changed `build-system.backend-path` or `build-backend` while an in-tree backend is in use
 *   (PEP 517: the backend is imported from the repository), hatch build hooks and setuptools `cmdclass`. The
 *   folders `backend-path` names are returned, so a change to the backend's own code is gated too.
 *
 * A pyproject.toml that does not parse is refused.
 */
import {
  type Registries,
  folderOf,
  joinPath,
  pathRefusal,
  pep508Refusal,
  shorten,
  urlRefusal,
} from "./source-allowance.js";
import { isTable, manifestVersions, type Table } from "./toml-table.js";

/** `a.b.c` of a parsed table, or undefined. */
function at(root: Table, path: string): unknown {
  let value: unknown = root;
  for (const key of path.split(".")) {
    if (!isTable(value)) return undefined;
    value = value[key];
  }
  return value;
}

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : value === undefined ? [] : [value];
}

/** Every requirement string, keyed by where it is (`project.dependencies[2]`). */
function requirements(root: Table): Map<string, unknown> {
  const out = new Map<string, unknown>();
  const lists = (value: unknown, prefix: string) =>
    list(value).forEach((item, i) => {
      // `{ include-group = "x" }` in dependency-groups names another group, not a package.
      if (!isTable(item)) out.set(`${prefix}[${i}]`, item);
    });
  const groups = (value: unknown, prefix: string) => {
    if (isTable(value)) for (const [name, items] of Object.entries(value)) lists(items, `${prefix}.${name}`);
  };
  lists(at(root, "build-system.requires"), "build-system.requires");
  lists(at(root, "project.dependencies"), "project.dependencies");
  groups(at(root, "project.optional-dependencies"), "project.optional-dependencies");
  groups(at(root, "dependency-groups"), "dependency-groups");
  for (const field of ["dev-dependencies", "constraint-dependencies", "override-dependencies"])
    lists(at(root, `tool.uv.${field}`), `tool.uv.${field}`);
  groups(at(root, "tool.pdm.dev-dependencies"), "tool.pdm.dev-dependencies");
  return out;
}

/** uv sources and Poetry dependencies, keyed by where they are. */
function sourceTables(root: Table): Map<string, unknown> {
  const out = new Map<string, unknown>();
  const collect = (table: unknown, prefix: string) => {
    if (isTable(table)) for (const [name, spec] of Object.entries(table)) out.set(`${prefix}.${name}`, spec);
  };
  collect(at(root, "tool.uv.sources"), "tool.uv.sources");
  collect(at(root, "tool.poetry.dependencies"), "tool.poetry.dependencies");
  collect(at(root, "tool.poetry.dev-dependencies"), "tool.poetry.dev-dependencies");
  const poetryGroups = at(root, "tool.poetry.group");
  if (isTable(poetryGroups))
    for (const [group, table] of Object.entries(poetryGroups))
      if (isTable(table)) collect(table.dependencies, `tool.poetry.group.${group}.dependencies`);
  return out;
}

function sourceRefusal(spec: unknown, folder: string, registries: Registries): string | null {
  for (const item of list(spec)) {
    if (typeof item === "string") continue;
    if (!isTable(item)) return shorten(JSON.stringify(item) ?? "?");
    if (item.git !== undefined) return `git ${shorten(String(item.git))}`;
    if (item.url !== undefined) {
      const why = urlRefusal(String(item.url), registries);
      if (why) return why;
    }
    if (item.path !== undefined) {
      const why = typeof item.path === "string" ? pathRefusal(item.path, folder) : "path";
      if (why) return why;
    }
  }
  return null;
}

/** The index settings of uv, Poetry and PDM (https://docs.astral.sh/uv/reference/settings/). */
const INDEX_SETTINGS = [
  "tool.uv.index",
  "tool.uv.index-url",
  "tool.uv.extra-index-url",
  "tool.uv.find-links",
  "tool.uv.no-index",
  "tool.uv.index-strategy",
  "tool.uv.keyring-provider",
  "tool.uv.allow-insecure-host",
  "tool.uv.pip",
  "tool.poetry.source",
  "tool.pdm.source",
];

/** Every index URL the settings name. */
function indexUrls(root: Table): string[] {
  const out: string[] = [];
  for (const item of list(at(root, "tool.uv.index"))) if (isTable(item)) out.push(String(item.url));
  for (const field of ["tool.uv.index-url", "tool.uv.extra-index-url", "tool.uv.pip.index-url"])
    for (const url of list(at(root, field))) out.push(String(url));
  for (const field of ["tool.poetry.source", "tool.pdm.source"])
    for (const item of list(at(root, field)))
      if (isTable(item) && item.url !== undefined) out.push(String(item.url));
  return out;
}

/** Build-time code that pyproject.toml names, whose change is an install-time change. */
const BUILD_SETTINGS = [
  "build-system.backend-path",
  "tool.setuptools.cmdclass",
  // poetry-core runs `tool.poetry.build.script` (or the older `build = "build.py"`) when it builds.
  "tool.poetry.build",
  // pdm-backend runs `tool.pdm.build.custom-hook` (default `pdm_build.py`, gated by name).
  "tool.pdm.build.custom-hook",
];

/** Every `hooks` table under `tool.hatch` (build hooks and metadata hooks run Python at build time). */
function hatchHooks(root: Table): string {
  const found: unknown[] = [];
  const walk = (value: unknown, depth: number) => {
    if (!isTable(value) || depth > 6) return;
    for (const [key, inner] of Object.entries(value)) {
      if (key === "hooks") found.push(inner);
      else walk(inner, depth + 1);
    }
  };
  walk(at(root, "tool.hatch"), 0);
  return JSON.stringify(found);
}

interface PyprojectRuleSwitches {
  lifecycleScripts: boolean;
  registrySettings: boolean;
  lockfileSources: boolean;
}

/**
 * The rules a pyproject.toml fires, given both versions (before: null when the file is new). Returns the
 * repository folders of its in-tree build backend (`backend-path`).
 */
export function pyprojectRules(
  path: string,
  before: string | null,
  after: string,
  switches: PyprojectRuleSwitches,
  registries: Registries,
  add: (rule: string) => void,
): string[] {
  const where = shorten(path, 80);
  const versions = manifestVersions(before, after, () => add(`pyproject.toml unreadable: ${where}`));
  if (!versions) return [];
  const { now, old } = versions;
  const folder = folderOf(path);
  const changed = (field: string) => JSON.stringify(at(now, field)) !== JSON.stringify(at(old, field));
  if (switches.lifecycleScripts) {
    for (const field of BUILD_SETTINGS) if (changed(field)) add(`install-time build: ${where} ${field}`);
    const inTree = at(now, "build-system.backend-path") !== undefined;
    if (inTree && changed("build-system.build-backend"))
      add(`install-time build: ${where} build-system.build-backend`);
    if (hatchHooks(now) !== hatchHooks(old)) add(`install-time build: ${where} tool.hatch hooks`);
  }
  if (switches.registrySettings) {
    for (const field of INDEX_SETTINGS) if (changed(field)) add(`registry settings: ${where} ${field}`);
  }
  if (switches.lockfileSources) {
    const oldRequirements = requirements(old);
    for (const [field, requirement] of requirements(now)) {
      if (JSON.stringify(oldRequirements.get(field)) === JSON.stringify(requirement)) continue;
      const why =
        typeof requirement === "string"
          ? pep508Refusal(requirement, registries)
          : shorten(String(requirement));
      if (why) add(`package source: ${where} ${shorten(field, 50)}: ${why}`);
    }
    const oldSources = sourceTables(old);
    for (const [field, spec] of sourceTables(now)) {
      if (JSON.stringify(oldSources.get(field)) === JSON.stringify(spec)) continue;
      const why = sourceRefusal(spec, folder, registries);
      if (why) add(`package source: ${where} ${shorten(field, 50)}: ${why}`);
    }
    const oldIndexes = new Set(indexUrls(old));
    for (const url of indexUrls(now)) {
      if (oldIndexes.has(url)) continue;
      const why = urlRefusal(url, registries);
      if (why) add(`package source: ${where} index: ${why}`);
    }
  }
  const backend = list(at(now, "build-system.backend-path"));
  return backend
    .filter((p): p is string => typeof p === "string" && pathRefusal(p, folder) === null)
    .map((p) => joinPath(folder, p));
}
