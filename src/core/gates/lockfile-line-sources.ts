/**
 * Where a lockfile's added lines download from, one line at a time: lockfiles are often larger than the contents
 * API serves (1 MB), so the controller has only the patch, and each format's source-bearing keys are read from
 * the lines themselves. Every source key must name an accepted source (src/core/gates/source-allowance.ts);
 * every URL anywhere on a line must be on an allowed host; a JSON lockfile line that is not JSON is refused.
 *
 * Formats: package-lock.json / npm-shrinkwrap.json (https://docs.npmjs.com/cli/v11/configuring-npm/package-lock-json),
 * yarn.lock v1 and Berry (https://yarnpkg.com/protocols), pnpm-lock.yaml, bun.lock (https://bun.sh/docs/install/lockfile),
 * Cargo.lock, poetry.lock, uv.lock, pdm.lock, pylock.toml, Pipfile.lock and Pipfile, go.mod and go.work.
 * Requirements files are src/core/gates/requirements-lines.ts.
 */
import {
  type Registries,
  folderOf,
  npmSpecRefusal,
  pathRefusal,
  shorten,
  strayUrl,
  urlRefusal,
} from "./source-allowance.js";

type LockfileFormat = "npm" | "yarn" | "pnpm" | "bun" | "cargo" | "python" | "go";

/** The lockfile format a path names, or null. `bun.lockb` is binary: src/core/gates/supply-chain-gate.ts refuses it. */
export function lockfileFormat(path: string): LockfileFormat | null {
  const base = path.slice(path.lastIndexOf("/") + 1);
  if (base === "package-lock.json" || base === "npm-shrinkwrap.json") return "npm";
  if (base === "yarn.lock") return "yarn";
  if (base === "pnpm-lock.yaml") return "pnpm";
  if (base === "bun.lock") return "bun";
  if (base === "Cargo.lock") return "cargo";
  if (
    base === "poetry.lock" ||
    base === "uv.lock" ||
    base === "pdm.lock" ||
    base === "Pipfile.lock" ||
    base === "Pipfile" ||
    /^pylock\.(?:[\w-]{1,100}\.)?toml$/.test(base)
  )
    return "python";
  if (base === "go.mod" || base === "go.work") return "go";
  return null;
}

/** Why an added line of a lockfile at `path` resolves from outside the accepted sources; null when it does not. */
export function lockfileLineRefusal(
  format: LockfileFormat,
  path: string,
  text: string,
  registries: Registries,
): string | null {
  const folder = folderOf(path);
  switch (format) {
    case "npm":
      return npmLockLine(text, folder, registries);
    case "yarn":
      return yarnLockLine(text, folder, registries);
    case "pnpm":
      return pnpmLockLine(text, folder, registries);
    case "bun":
      return bunLockLine(text, folder, registries);
    case "cargo":
      return cargoLockLine(text, registries);
    case "python":
      return pythonLockLine(text, folder, registries);
    case "go":
      return goLine(text, folder);
  }
}

// ---------------------------------------------------------------------------------------------------------
// JSON lines (package-lock, bun.lock, Pipfile.lock).

const JSON_STRING = /"(?:[^"\\\n]|\\.){0,4000}"/g;

function decodeJsonString(raw: string): string | null {
  try {
    const value = JSON.parse(raw);
    return typeof value === "string" ? value : null;
  } catch {
    return null;
  }
}

interface JsonLine {
  /** `"key": "value"` pairs; value null when the key opens an object or array or holds a literal. */
  pairs: { key: string; value: string | null }[];
  /** Every string on the line, decoded (keys included). */
  strings: string[];
}

/**
 * The strings of a JSON line, decoded (`\u0072esolved` reads as `resolved`, as npm reads it), paired key to
 * value; null when the line is not a piece of JSON.
 */
function jsonLine(text: string): JsonLine | null {
  const found = Array.from(text.matchAll(JSON_STRING));
  // What is left once the strings are gone must be JSON punctuation and literals, or the line is not JSON.
  let rest = "";
  let from = 0;
  for (const m of found) {
    rest += text.slice(from, m.index);
    from = m.index + m[0].length;
  }
  rest += text.slice(from);
  if (!/^[\s{}[\]:,0-9eE.+-]{0,4000}$/.test(rest.replace(/\b(?:true|false|null)\b/g, ""))) return null;
  const strings: string[] = [];
  for (const m of found) {
    const decoded = decodeJsonString(m[0]);
    if (decoded === null) return null;
    strings.push(decoded);
  }
  const pairs: JsonLine["pairs"] = [];
  for (let i = 0; i < found.length; i++) {
    const m = found[i]!;
    const end = m.index + m[0].length;
    if (!/^\s*:/.test(text.slice(end, end + 200))) continue;
    const next = found[i + 1];
    if (next && /^\s*:\s*$/.test(text.slice(end, next.index))) {
      pairs.push({ key: strings[i]!, value: strings[i + 1]! });
      i++;
    } else pairs.push({ key: strings[i]!, value: null });
  }
  return { pairs, strings };
}

/** Keys of package-lock entries that hold no download source (funding links and license texts). */
const NPM_LOCK_NOT_SOURCES = new Set(["url", "type", "license", "integrity"]);

function npmLockLine(text: string, folder: string, registries: Registries): string | null {
  const line = jsonLine(text);
  if (!line) return `not JSON: ${shorten(text)}`;
  const judged = new Set<string>();
  for (const { key, value } of line.pairs) {
    if (value !== null) judged.add(value);
    if (key === "resolved" && value !== null) {
      // A workspace link resolves to a folder of this repository; anything else must be a registry URL.
      const why =
        /^[a-z][a-z0-9+.-]{0,30}:/i.test(value) && !value.startsWith("file:")
          ? urlRefusal(value, registries)
          : pathRefusal(value.replace(/^file:/, ""), folder);
      if (why) return why;
    } else if ((key === "version" || key === "from") && value !== null) {
      const why = npmSpecRefusal(value, folder, registries);
      if (why) return why;
    } else if (value === null && /\/|^\.\.$/.test(key)) {
      // A package entry's key is its folder (`node_modules/a`, `packages/web`): one outside the repository is a
      // link to there, however it is spelled (`node_modules/a/../../../x`).
      const why = pathRefusal(key, folder);
      if (why) return why;
    } else if (value !== null && !NPM_LOCK_NOT_SOURCES.has(key)) {
      const why = strayUrl(value, registries);
      if (why) return why;
    }
  }
  for (const value of line.strings) {
    if (judged.has(value)) continue;
    const why = strayUrl(value, registries);
    if (why) return why;
  }
  return null;
}

/** bun.lock: each package is `["name@resolution", registry-or-meta, …]`; the resolution says where from. */
function bunLockLine(text: string, folder: string, registries: Registries): string | null {
  const line = jsonLine(text);
  if (!line) return `not JSON: ${shorten(text)}`;
  for (const value of line.strings) {
    const at = /^(?:@[\w.~-]{1,214}\/)?[\w.~-]{1,214}@/.exec(value);
    if (!at) continue;
    const why = npmSpecRefusal(value.slice(at[0].length), folder, registries);
    if (why) return why;
  }
  return strayUrl(text, registries);
}

// ---------------------------------------------------------------------------------------------------------
// yarn.lock (v1 and Berry) and pnpm-lock.yaml.

/** The `name@spec` descriptors of an entry header (`"a@^1", "a@^1.1":`, Berry's `"a@npm:^1, a@npm:^1.1":`). */
function descriptors(header: string): string[] {
  return header
    .replace(/:\s*$/, "")
    .split(",")
    .map((d) => d.trim().replace(/^"|"$/g, ""))
    .filter(Boolean);
}

function descriptorRefusal(descriptor: string, folder: string, registries: Registries): string | null {
  const at = descriptor.indexOf("@", 1);
  if (at < 0) return shorten(descriptor);
  const spec = descriptor.slice(at + 1);
  // Berry names the workspace a relative path belongs to: `file:../x::locator=app%40workspace%3Apackages%2Fapp`.
  const locator = /::locator=(.{1,500})$/.exec(spec);
  let base = folder;
  if (locator) {
    const decoded = safeDecode(locator[1]!);
    const workspace = decoded.indexOf("@workspace:");
    if (workspace > 0) base = joinFolder(folder, decoded.slice(workspace + 11));
  }
  return npmSpecRefusal(spec.replace(/::locator=.*$/, ""), base, registries);
}

function joinFolder(folder: string, sub: string): string {
  const clean = sub.replace(/^\.\/?/, "").replace(/\/$/, "");
  if (clean === "") return folder;
  return folder === "" ? clean : `${folder}/${clean}`;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function yarnLockLine(text: string, folder: string, registries: Registries): string | null {
  if (/^\s*#/.test(text) || text.trim() === "") return null;
  if (!/^\s/.test(text) && /:\s*$/.test(text)) {
    if (text.startsWith("__metadata")) return null;
    for (const d of descriptors(text)) {
      const why = descriptorRefusal(d, folder, registries);
      if (why) return why;
    }
    return null;
  }
  const resolved = /^\s{1,40}resolved:?\s{1,4}"?([^"\s]{1,2000})"?\s*$/.exec(text);
  if (resolved) {
    const value = resolved[1]!;
    if (value.startsWith("file:")) return pathRefusal(value.slice(5).replace(/#.*$/, ""), folder);
    return urlRefusal(value.replace(/#.*$/, ""), registries);
  }
  const resolution = /^\s{1,40}resolution:\s{1,4}"?([^"]{1,2000})"?\s*$/.exec(text);
  if (resolution) return descriptorRefusal(resolution[1]!, folder, registries);
  return strayUrl(text, registries);
}

/** A `key: value` of a pnpm-lock line, flow mappings included (`resolution: {tarball: …, integrity: …}`). */
function yamlPairs(text: string): { key: string; value: string }[] {
  const out: { key: string; value: string }[] = [];
  const body = text.replace(/^[\s-]{0,40}/, "");
  for (const part of body.replace(/[{}]/g, ",").split(",")) {
    const m = /^\s{0,40}['"]?([\w@/.-]{1,200})['"]?:\s{1,10}(.{1,2000})$/.exec(part);
    if (m) out.push({ key: m[1]!, value: m[2]!.trim().replace(/^['"]|['"]$/g, "") });
  }
  return out;
}

function pnpmLockLine(text: string, folder: string, registries: Registries): string | null {
  const body = text.trim();
  if (body === "" || body.startsWith("#")) return null;
  // Every line pnpm writes is `key:`, `key: value` or a `- item`; a bare scalar continues a block the gate
  // did not read (a `version: >-` whose value is on the next line), so it is refused, as are block scalars.
  if (!/^(?:- |['"]?[^\s'"]{1,500}['"]?:(?:\s|$))/.test(body)) return `not understood: ${shorten(text)}`;
  if (/:\s{1,10}[|>][-+0-9]{0,3}\s*$/.test(body)) return `block scalar: ${shorten(text)}`;
  for (const { key, value } of yamlPairs(text)) {
    if (key === "type" && value !== "directory") return shorten(text);
    if (key === "repo" || key === "commit" || key === "gitHosted") return shorten(text);
    if (key === "tarball") {
      if (value.startsWith("file:")) return pathRefusal(value.slice(5), folder);
      return urlRefusal(value, registries);
    }
    if (key === "directory" || key === "path") return pathRefusal(value, folder);
    if (key === "specifier" || key === "version") {
      const why = npmSpecRefusal(value.replace(/\(.*$/, ""), folder, registries);
      if (why) return why;
    }
  }
  // A package key that is a git host path (`github.com/x/y/sha:`) or `name@<protocol>:` (`a@file:../a:`).
  const key = /^\s{0,8}['"]?\/?((?:@[\w.~-]{1,214}\/)?[\w.~-]{1,214})@([^'"\s(]{1,2000})/.exec(text);
  if (key && /:\s*$/.test(text)) {
    const why = npmSpecRefusal(key[2]!.replace(/:$/, ""), folder, registries);
    if (why) return why;
  }
  if (/^\s{0,8}['"]?\/?(?:github\.com|gitlab\.com|bitbucket\.org)\//.test(text)) return shorten(text);
  return strayUrl(text, registries);
}

// ---------------------------------------------------------------------------------------------------------
// Cargo.lock, the Python lockfiles, go.mod and go.work.

/** Both spellings of crates.io's index that Cargo.lock writes as `source`. */
const CRATES_IO_SOURCES = new Set([
  "registry+https://github.com/rust-lang/crates.io-index",
  "sparse+https://index.crates.io/",
]);

/** Cargo.lock's `source`: crates.io, or a `registry+`/`sparse+` index on an allowed host (git is refused). */
function cargoLockLine(text: string, registries: Registries): string | null {
  const source = /^\s{0,8}source\s{0,4}=\s{0,4}"([^"]{0,2000})"/.exec(text);
  if (source) {
    const value = source[1]!;
    if (CRATES_IO_SOURCES.has(value)) return null;
    const index = /^(?:registry|sparse)\+(https:\/\/.{1,2000})$/.exec(value);
    return index ? urlRefusal(index[1]!, registries) : shorten(value);
  }
  return strayUrl(text, registries, (url) => CRATES_IO_SOURCES.has(url));
}

/** `key = "value"` (TOML) and `"key": "value"` (JSON) pairs on one line. */
function pairsOnLine(text: string): { key: string; value: string }[] {
  const out: { key: string; value: string }[] = [];
  for (const m of text.matchAll(/"?([A-Za-z_][\w-]{0,60})"?\s{0,8}[=:]\s{0,8}"((?:[^"\\]|\\.){0,2000})"/g))
    out.push({ key: m[1]!, value: m[2]! });
  for (const m of text.matchAll(/"?([A-Za-z_][\w-]{0,60})"?\s{0,8}[=:]\s{0,8}(true|false)\b/g))
    out.push({ key: m[1]!, value: m[2]! });
  return out;
}

/**
 * poetry.lock (`[package.source]` type/url), uv.lock (`source = { registry | git | url | path | directory |
 * editable | virtual }`, `sdist`/`wheels` urls), pdm.lock, pylock.toml, Pipfile.lock and Pipfile
 * (`git`, `path`, `file`, `[[source]] url`, `verify_ssl`).
 */
function pythonLockLine(text: string, folder: string, registries: Registries): string | null {
  for (const { key, value } of pairsOnLine(text)) {
    switch (key) {
      case "git":
      case "hg":
      case "svn":
      case "bzr":
      case "vcs":
        return `${key}: ${shorten(value)}`;
      case "type":
        if (value === "git" || value === "hg" || value === "svn" || value === "bzr") return shorten(text);
        break;
      case "verify_ssl":
        if (value === "false") return shorten(text);
        break;
      case "url":
      case "registry":
      case "index":
      case "file":
      case "path":
      case "directory":
      case "editable":
      case "virtual": {
        if (value === "true" || value === "false") break;
        const why = /^[a-z][a-z0-9+.-]{0,30}:\/\//i.test(value)
          ? urlRefusal(value, registries)
          : pathRefusal(value.replace(/^file:/, ""), folder);
        if (why) return why;
        break;
      }
    }
  }
  return strayUrl(text, registries);
}

/**
 * go.mod/go.work: a `replace` (`a => b`) may point only at a folder inside the repository, never at another
 * module (which moves where the code comes from); a `use` path stays inside too. Where modules are downloaded
 * from is GOPROXY, an environment setting the tree cannot show. https://go.dev/ref/mod#go-mod-file-replace
 */
function goLine(text: string, folder: string): string | null {
  const line = text.replace(/\/\/.*$/, "").trim();
  const arrow = line.indexOf("=>");
  if (arrow >= 0) {
    const target =
      line
        .slice(arrow + 2)
        .trim()
        .split(/\s+/)[0] ?? "";
    if (!/^\.\.?(?:\/|$)/.test(target)) return `replace: ${shorten(line)}`;
    return pathRefusal(target, folder);
  }
  const use = /^(?:use\s+)?([./~][^\s]{0,2000})$/.exec(line);
  if (use && line !== ")") return pathRefusal(use[1]!, folder);
  return null;
}
