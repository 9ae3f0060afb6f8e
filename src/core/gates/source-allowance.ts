/**
 * What the supply-chain gate accepts as a package source, and nothing else (src/core/gates/supply-chain-gate.ts):
 *
 * - a URL over https whose host (and port) is on `registries`;
 * - a plain registry version spec (a version, range or tag, an `npm:` alias of one, `catalog:`);
 * - a relative path that stays inside the repository, where the ecosystem allows local packages.
 *
 * Every function answers with the reason a source is refused, or null when it is accepted: a caller cannot
 * forget to refuse what it did not recognise. Pure; patterns are anchored and bounded so a long line costs
 * linear time.
 */

/** The hosts a download may come from, lower-case. */
export type Registries = ReadonlySet<string>;

export function shorten(text: string, max = 60): string {
  const clean = text
    .replace(/[\u0000-\u001f\u007f-\u009f]/g, "?")
    .replace(/:\/\/[^/@\s]{1,500}@/g, "://***@")
    .trim();
  return clean.length > max ? `${clean.slice(0, max - 1)}…` : clean;
}

/** A line a patch adds, with its number in the new file. */
interface AddedLine {
  number: number;
  text: string;
}

/** The lines a patch adds, with their line numbers in the new file. */
export function addedLines(patch: string): AddedLine[] {
  const out: AddedLine[] = [];
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

// Every scheme-qualified URL in a line: `git+ssh://`, `https://`, `registry+https://`, `sparse+https://`.
const URL_IN_TEXT = /[a-z][a-z0-9+.-]{0,30}:\/\/[^\s"'`<>()[\]{},]{1,2000}/gi;

function urlsIn(text: string): string[] {
  return Array.from(text.matchAll(URL_IN_TEXT), (m) => m[0]);
}

/** Why a URL is not a download from an allowed registry (https, a host on the list); null when it is one. */
export function urlRefusal(text: string, registries: Registries): string | null {
  try {
    const url = new URL(text.trim());
    if (url.protocol !== "https:") return shorten(text);
    if (!url.host || !registries.has(url.host.toLowerCase())) return shorten(text);
    return null;
  } catch {
    return shorten(text);
  }
}

/** The first URL in a line that is not from an allowed registry; null when every URL is. */
export function strayUrl(
  text: string,
  registries: Registries,
  except?: (url: string) => boolean,
): string | null {
  for (const url of urlsIn(text)) {
    if (except?.(url)) continue;
    const why = urlRefusal(url, registries);
    if (why) return why;
  }
  return null;
}

/** The folder of a repository path (`a/b/c.json` → `a/b`; a file at the root → ``). */
export function folderOf(path: string): string {
  const slash = path.lastIndexOf("/");
  return slash < 0 ? "" : path.slice(0, slash);
}

/**
 * Why a local path is refused: absolute, home-relative, or climbing out of the repository from `folder` (the
 * folder of the file that names it). Null when it stays inside. `..` inside the tree is fine (`../shared` from
 * `packages/web`).
 */
export function pathRefusal(path: string, folder: string): string | null {
  const p = path.trim();
  if (p === "") return "an empty path";
  if (/^(?:[/\\~]|[a-z]:)/i.test(p) || p.includes("\0")) return shorten(p);
  const depth = folder === "" ? [] : folder.split("/");
  for (const part of p.split(/[/\\]/)) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (depth.length === 0) return shorten(p);
      depth.pop();
    } else depth.push(part);
  }
  return null;
}

/** A repository path from a folder and a relative path inside the repository (`a/b` + `../c.rs` → `a/c.rs`). */
export function joinPath(folder: string, relative: string): string {
  const parts = folder === "" ? [] : folder.split("/");
  for (const part of relative.split(/[/\\]/)) {
    if (part === "" || part === ".") continue;
    if (part === "..") parts.pop();
    else parts.push(part);
  }
  return parts.join("/");
}

/** A version, range or dist-tag (`^1.2.0`, `>=1 <2 || 3.x`, `latest`, `*`): a name the registry resolves. */
function isVersionRange(spec: string): boolean {
  const s = spec.trim();
  return /^[\w.*^~<>=| +-]{0,500}$/.test(s) && !/^(?:\.|~\/)/.test(s);
}

/**
 * Why an npm-family dependency spec (package.json, package.yaml, package.json5, lockfile importers) is refused.
 * Accepted: a registry version or tag, an `npm:` alias of one, `catalog:`, `workspace:` (a version or a path
 * inside the repository), `file:`/`link:`/`portal:` or a bare relative path inside the repository, an https
 * tarball on a registry host, and Yarn's `patch:` of an accepted spec with a patch file inside the repository.
 * Refused: git in every spelling, `github:`/`gitlab:`/`bitbucket:`, `owner/repo` shorthands, `exec:`, http, and
 * any other protocol. https://docs.npmjs.com/cli/v11/configuring-npm/package-json#dependencies,
 * https://yarnpkg.com/protocols, https://pnpm.io/package_json
 */
export function npmSpecRefusal(
  spec: string,
  folder: string,
  registries: Registries,
  depth = 0,
): string | null {
  const s = spec.trim();
  if (depth > 3) return shorten(s);
  if (s === "" || isVersionRange(s)) return null;
  const protocol = /^([a-z][a-z0-9+.-]{0,30}):/i.exec(s)?.[1]?.toLowerCase();
  if (protocol === "npm") {
    // `npm:name@range` or `npm:range` (Yarn); a URL after `npm:` is judged as a URL.
    const rest = s.slice(4);
    const at = rest.indexOf("@", 1);
    if (/^[a-z][a-z0-9+.-]{0,30}:/i.test(rest)) return npmSpecRefusal(rest, folder, registries, depth + 1);
    if (at < 0)
      return isVersionRange(rest) || /^@[\w.~-]{1,214}\/[\w.~-]{1,214}$/.test(rest) ? null : shorten(s);
    return isVersionRange(rest.slice(at + 1)) ? null : shorten(s);
  }
  if (protocol === "catalog") return null;
  if (protocol === "workspace") {
    const rest = s.slice(10);
    if (rest === "" || isVersionRange(rest)) return null;
    // pnpm's `workspace:name@range` alias, or a path to the workspace package.
    if (/^(?:@[\w.~-]{1,214}\/)?[\w.~-]{1,214}@/.test(rest)) return null;
    return pathRefusal(rest, folder) && shorten(s);
  }
  if (protocol === "file" || protocol === "link" || protocol === "portal") {
    const rest = s.slice(protocol.length + 1).replace(/::locator=.*$/, "");
    return pathRefusal(rest.replace(/^\/\/(?=\.)/, ""), folder) && shorten(s);
  }
  if (protocol === "patch") return yarnPatchRefusal(s, folder, registries, depth);
  if (protocol === "https") return urlRefusal(s, registries);
  if (protocol) return shorten(s);
  if (s.startsWith("./") || s.startsWith("../") || s === "." || s === "..") return pathRefusal(s, folder);
  // `owner/repo`, `owner/repo#ref`: GitHub; an absolute or home path: outside the repository.
  return shorten(s);
}

/**
 * Yarn's `patch:<descriptor>#<patch files>`: the patched package's own spec must be accepted, and each patch
 * file (`~/` is the project root) must lie inside the repository or be one of Yarn's built-in patches.
 * https://yarnpkg.com/protocol/patch
 */
function yarnPatchRefusal(
  spec: string,
  folder: string,
  registries: Registries,
  depth: number,
): string | null {
  const body = spec.slice(6).replace(/::.*$/, "");
  const hash = body.indexOf("#");
  const descriptor = decodeSafely(hash < 0 ? body : body.slice(0, hash));
  const at = descriptor.indexOf("@", 1);
  if (at < 0) return shorten(spec);
  const inner = npmSpecRefusal(descriptor.slice(at + 1), folder, registries, depth + 1);
  if (inner) return inner;
  if (hash < 0) return null;
  for (const file of decodeSafely(body.slice(hash + 1)).split("&")) {
    if (/^(?:optional!|~)?builtin<[\w/-]{1,100}>$/.test(file)) continue;
    const path = file.replace(/^optional!/, "");
    const why = path.startsWith("~/") ? pathRefusal(path.slice(2), "") : pathRefusal(path, folder);
    if (why) return why;
  }
  return null;
}

function decodeSafely(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

const PEP508_NAME = /^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,200})/;

/**
 * Why a Python requirement (PEP 508: `name[extras] >=1 ; marker`, or `name @ url`) is refused: a direct
 * reference not on an allowed https host (git, a local or absolute `file:` URL, another host), or text that is
 * not a requirement at all. https://packaging.python.org/en/latest/specifications/dependency-specifiers/
 */
export function pep508Refusal(requirement: string, registries: Registries): string | null {
  const semi = requirement.indexOf(";");
  const head = (semi < 0 ? requirement : requirement.slice(0, semi)).trim();
  const name = PEP508_NAME.exec(head);
  if (!name) return shorten(requirement);
  let rest = head.slice(name[0].length).trimStart();
  if (rest.startsWith("[")) {
    const close = rest.indexOf("]");
    if (close < 0) return shorten(requirement);
    rest = rest.slice(close + 1).trimStart();
  }
  if (rest.startsWith("@")) return urlRefusal(rest.slice(1).trim(), registries);
  // A version specifier never holds ` -`: that is an option (`-C`, `--global-option`) riding on the line.
  if (/\s-/.test(rest)) return shorten(requirement);
  return /^[\s<>=!~,.*()A-Za-z0-9+_-]{0,500}$/.test(rest) ? null : shorten(requirement);
}
