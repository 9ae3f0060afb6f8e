/**
 * pip requirements and constraints files, whatever they are called, read line by line as pip reads them
 * (https://pip.pypa.io/en/stable/reference/requirements-file-format/): each added line must be a comment, a
 * requirement from the index (PEP 508, or a direct reference on an allowed host), a local path inside the
 * repository, an include of another file inside it, or one of the options that do not move where packages
 * come from. Index options are accepted only when they name an allowed host; anything else — VCS URLs,
 * `--trusted-host`, `--global-option` (options for setup.py), an option pip added later — is refused.
 */
import {
  type Registries,
  folderOf,
  pathRefusal,
  pep508Refusal,
  shorten,
  urlRefusal,
} from "./source-allowance.js";

/**
 * Whether a path names a requirements file: `*requirements*.txt`, `constraints*.txt`, any `.txt` in a
 * `requirements/` folder, `*.pip`, and pip-tools' `*.in` inputs — except the `.in` templates of other tools
 * (`MANIFEST.in`, `Makefile.in`, `config.h.in`: a name with a second extension).
 */
export function isRequirementsFile(path: string): boolean {
  const base = path.slice(path.lastIndexOf("/") + 1);
  const lower = base.toLowerCase();
  if (lower.endsWith(".txt"))
    return (
      lower.includes("requirements") ||
      lower.startsWith("constraints") ||
      /(?:^|\/)requirements\//i.test(path)
    );
  if (lower.endsWith(".pip")) return true;
  if (lower.endsWith(".in")) {
    const stem = lower.slice(0, -3);
    return stem !== "" && !stem.includes(".") && !["manifest", "makefile", "configure"].includes(stem);
  }
  return false;
}

/** Options that change nothing about where packages come from (pip's per-file and per-requirement ones). */
const HARMLESS_OPTIONS = new Set([
  "--require-hashes",
  "--only-binary",
  "--no-binary",
  "--prefer-binary",
  "--pre",
  "--hash",
  "--use-feature",
  "--no-index",
]);

const INDEX_OPTIONS = new Set(["-i", "--index-url", "--extra-index-url", "-f", "--find-links"]);
const INCLUDE_OPTIONS = new Set(["-r", "--requirement", "-c", "--constraint"]);
const EDITABLE_OPTIONS = new Set(["-e", "--editable"]);

/** Why an added line of a requirements file at `path` is refused; null when it is accepted. */
export function requirementsLineRefusal(path: string, text: string, registries: Registries): string | null {
  // A comment starts at `#` at the line's start or after whitespace; a trailing `\` continues the line.
  const line = text
    .replace(/(?:^|\s)#.*$/, "")
    .replace(/\\\s*$/, "")
    .trim();
  if (line === "") return null;
  const folder = folderOf(path);
  if (line.startsWith("-")) {
    const m = /^(-[a-zA-Z]|--[a-z][a-z-]{0,40})(?:\s*=\s*|\s+)?(.{0,4000})$/.exec(line);
    if (!m) return shorten(line);
    const option = m[1]!;
    const value = m[2]!.trim();
    if (HARMLESS_OPTIONS.has(option)) return null;
    if (INDEX_OPTIONS.has(option)) {
      if (/^[a-z][a-z0-9+.-]{0,30}:\/\//i.test(value)) return urlRefusal(value, registries);
      // A local folder of archives (`--find-links ./wheels`) stays inside the repository.
      return option === "-f" || option === "--find-links" ? pathRefusal(value, folder) : shorten(line);
    }
    if (INCLUDE_OPTIONS.has(option)) {
      if (/^[a-z][a-z0-9+.-]{0,30}:\/\//i.test(value)) return urlRefusal(value, registries);
      return pathRefusal(value, folder);
    }
    if (EDITABLE_OPTIONS.has(option)) {
      const why = localOrUrl(value, folder, registries);
      return why === undefined ? shorten(line) : why;
    }
    return shorten(line);
  }
  // Per-requirement `--hash=…` options follow the requirement; any other option after it is judged alone.
  const parts = line.split(/\s+--/);
  for (const option of parts.slice(1)) {
    if (!/^hash[=\s]/.test(option)) return shorten(`--${option}`);
  }
  const requirement = parts[0]!.trim();
  const local = localOrUrl(requirement, folder, registries);
  if (local !== undefined) return local;
  return pep508Refusal(requirement, registries);
}

/**
 * A requirement written as a URL or a path (`./pkg`, `dist/x.whl`, `file:…`, `git+https://…`): its refusal,
 * or null when accepted; undefined when the text is neither (a named requirement).
 */
function localOrUrl(text: string, folder: string, registries: Registries): string | null | undefined {
  const value = text.replace(/\s*;.*$/, "").trim();
  // `name @ url` is a PEP 508 direct reference: the caller judges it as one.
  if (/^[A-Za-z0-9][A-Za-z0-9._-]{0,200}\s*(?:\[[^\]]{0,500}\])?\s*@/.test(value)) return undefined;
  if (/^[a-z][a-z0-9+.-]{0,30}:/i.test(value)) {
    if (/^file:/i.test(value)) return shorten(value);
    return urlRefusal(value.replace(/#.*$/, ""), registries);
  }
  if (/^\.\.?(?:[/\\]|$)/.test(value) || /^[/\\~]/.test(value)) return pathRefusal(value, folder);
  if (
    /[/\\]/.test(value.split(/[\s[<>=!~;@]/)[0] ?? "") ||
    /\.(?:whl|zip|tar\.gz|tgz|tar\.bz2)$/i.test(value)
  )
    return pathRefusal(value, folder);
  return undefined;
}
