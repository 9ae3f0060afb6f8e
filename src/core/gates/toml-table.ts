/**
 * TOML read for the supply-chain gate's manifests (Cargo.toml, pyproject.toml) with smol-toml, a TOML 1.0
 * parser (https://github.com/squirrelchat/smol-toml): one that errs rather than guessing, so a file the gate
 * cannot read is refused by its caller instead of read wrong.
 */
import { parse as parseToml } from "smol-toml";

export type Table = Record<string, unknown>;

export function isTable(value: unknown): value is Table {
  return !!value && typeof value === "object" && !Array.isArray(value);
}

/** Parses TOML; null when the text is absent or is not TOML. */
function tomlTable(text: string | null): Table | null {
  if (text === null) return null;
  try {
    return parseToml(text.replace(/^\uFEFF/, "")) as Table;
  } catch {
    return null;
  }
}

/**
 * Both versions of a TOML manifest, for rules that compare them (before: null when the file is new, read as
 * empty); null, with `unreadable` told, when the head version is not TOML.
 */
export function manifestVersions(
  before: string | null,
  after: string,
  unreadable: () => void,
): { now: Table; old: Table } | null {
  const now = tomlTable(after);
  if (!now) {
    unreadable();
    return null;
  }
  return { now, old: tomlTable(before) ?? {} };
}
