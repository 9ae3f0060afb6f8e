/**
 * A configuration mistake makes Autopilot more careful, never less: while `.github/autopilot.yml` is bad, the
 * last good configuration stays in force — not the defaults, which may be looser (auto-merge, two workers, no
 * budget, fewer human-gate paths). The last good one is kept in the tracking issue's state, so it survives a
 * controller restart and a fresh Actions job: its digest, the default-branch commit it was read at, and its
 * text when that is small enough (otherwise the file is read again at that commit). With no last good one at
 * all, a bad file holds everything: nothing is dispatched or merged until it is fixed.
 *
 * The worker is held to the same configuration: the controller passes the digest it decided with, and the
 * worker takes the file of its checkout or the state's last good one only when its digest matches.
 *
 * Pure: the callers read the file, the state and (when needed) the file at a commit.
 */
import { sha256Hex } from "../text/sha256.js";
import type { ConfigError } from "./config-error.js";
import { type AutopilotConfig, DEFAULT_CONFIG } from "./config-schema.js";
import { parseConfig } from "./load-config.js";

/** Most characters of the file's text kept in the state; a longer file is kept as its commit only. */
export const LAST_GOOD_TEXT_CAP = 6_000;

/** The last good configuration as the tracking issue's state keeps it. */
export interface LastGoodConfig {
  /** `configDigest` of the file's text. */
  digest: string;
  /** The default branch's commit the file was read at (null: the repository had no commit to name). */
  commit: string | null;
  /** The file's text, when it fits LAST_GOOD_TEXT_CAP (compaction may drop it: the commit remains). */
  text?: string;
}

/**
 * SHA-256 of the file's text with line endings normalised (a checkout may turn LF into CRLF, and YAML reads
 * both alike). A missing file is a valid configuration — the defaults — and has the digest of empty text.
 */
export function configDigest(text: string | null): string {
  return sha256Hex((text ?? "").replace(/\r\n?/g, "\n"));
}

/** The record to keep for a good file read at `commit`; the same digest keeps the record it already has. */
function lastGoodRecord(
  text: string | null,
  commit: string | null,
  known: LastGoodConfig | null,
): LastGoodConfig {
  const digest = configDigest(text);
  // Same file: keep the known record as it is, so a moving default branch (or a text compaction dropped)
  // does not rewrite the tracking issue on every reconcile.
  if (known?.digest === digest) return known;
  const body = text ?? "";
  return body.length <= LAST_GOOD_TEXT_CAP ? { digest, commit, text: body } : { digest, commit };
}

export type ConfigChoice =
  /** The file is good: it is in force, and becomes the last good one. */
  | { source: "file"; config: AutopilotConfig; record: LastGoodConfig; warnings: string[]; error: null }
  /** The file is bad: the last good configuration stays in force. */
  | { source: "last-good"; config: AutopilotConfig; record: LastGoodConfig; warnings: []; error: ConfigError }
  /** The file is bad and no last good configuration is known: hold (dispatch nothing, merge nothing). */
  | { source: "none"; config: AutopilotConfig; record: null; warnings: []; error: ConfigError };

interface ConfigChoiceInput {
  /** The file's text on the default branch; null when there is no file. */
  fileText: string | null;
  /** The default branch's commit the file was read at. */
  commit: string | null;
  /** The tracking issue state's last good configuration. */
  lastGood: LastGoodConfig | null;
  /** The file's text at `lastGood.commit`, read when the state kept no text (undefined: not read). */
  textAtCommit?: string | null;
}

/** Whether `choose` needs the file at the last good commit first (the file is bad and the state kept no text). */
export function needsTextAtCommit(input: ConfigChoiceInput): string | null {
  if (parseConfig(input.fileText).ok) return null;
  const known = input.lastGood;
  if (!known || known.text !== undefined || !known.commit || input.textAtCommit !== undefined) return null;
  return known.commit;
}

/** The configuration in force, what to remember as the last good one, and the file's problems. */
export function chooseConfig(input: ConfigChoiceInput): ConfigChoice {
  const parsed = parseConfig(input.fileText);
  if (parsed.ok) {
    return {
      source: "file",
      config: parsed.config,
      record: lastGoodRecord(input.fileText, input.commit, input.lastGood),
      warnings: parsed.warnings,
      error: null,
    };
  }
  const fallback = lastGoodConfig(input.lastGood, input.textAtCommit);
  if (fallback && input.lastGood) {
    return {
      source: "last-good",
      config: fallback,
      record: input.lastGood,
      warnings: [],
      error: parsed.error,
    };
  }
  return { source: "none", config: DEFAULT_CONFIG, record: null, warnings: [], error: parsed.error };
}

/**
 * The configuration a last good record stands for: its text (or the text read at its commit) when that text
 * has the record's digest and is still valid; null otherwise.
 */
export function lastGoodConfig(
  record: LastGoodConfig | null,
  textAtCommit?: string | null,
): AutopilotConfig | null {
  if (!record) return null;
  const text = record.text !== undefined ? record.text : textAtCommit;
  if (text === undefined) return null;
  if (configDigest(text) !== record.digest) return null;
  const parsed = parseConfig(text);
  return parsed.ok ? parsed.config : null;
}
