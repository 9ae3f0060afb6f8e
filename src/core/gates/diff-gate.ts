/**
 * The controller's own human gate: the rules of src/core/gates/human-gate.ts applied to the diff GitHub serves for a
 * pull request's head SHA, not to whatever the worker computed inside the agent's checkout (where
 * attributes, replace objects, a size cut or a quoted path can hide a change).
 *
 * What the API cannot show is never taken as harmless: a file without a patch (binary, or too large for the
 * API to include one), a deletion, a rename or copy, a symlink or submodule, a mode change, a file whose mode
 * the head tree did not list, a path with control characters, or a file list at the API's cap each fire
 * a rule of their own, named after the reason.
 */
import { changeHash } from "../text/change-hash.js";
import { type HumanGateOptions, matchHumanGate } from "./human-gate.js";
import { type ManifestVersions, type SupplyChainOptions, supplyChainRules } from "./supply-chain-gate.js";
import { counted } from "../text/plural.js";

export interface DiffFile {
  filename: string;
  /** As the compare/pulls-files API says: added, removed, modified, renamed, copied, changed, unchanged. */
  status: string;
  previousFilename?: string | null;
  /** Lines added + removed. */
  changes: number;
  /** The unified-diff hunks; absent when GitHub leaves them out (binary files, large diffs). */
  patch?: string | null;
  /** Git mode of the file in the head commit's tree (`100644`, `100755`, `120000`, `160000`); null when unknown. */
  mode?: string | null;
  /** For a package.json: the file at the merge base and at the head, read so install scripts can be compared. */
  manifest?: ManifestVersions | null;
}

/** One pull request's diff as read from the API, pinned to a head SHA. */
export interface PullDiff {
  pr: number;
  sha: string;
  files: DiffFile[];
  /** The list has as many files as the API ever returns: more may be missing. */
  filesCapped: boolean;
  /** Reading failed (network, 404): no verdict this time, and nothing is remembered. */
  error?: string | null;
}

const DIFF_GATE_MAX_RULES = 20;
const RULE_CHARS = 120;

/** Git's modes for ordinary files; anything else (symlink 120000, submodule 160000) is gated. */
const PLAIN_MODES = new Set(["100644", "100755"]);

// C0/C1 controls, DEL, and U+FFFD (a name that was not valid UTF-8): a path a person cannot read as written.
const UNREADABLE = /[\u0000-\u001f\u007f-\u009f\ufffd]/;

function shown(path: string): string {
  const clean = path.replace(/[\u0000-\u001f\u007f-\u009f]/g, "?");
  return clean.length > 90 ? `${clean.slice(0, 89)}…` : clean;
}

/** The rules that fire for a diff (empty: nothing needs a person). Names are short and bounded. */
export function evaluateDiffGate(
  diff: PullDiff,
  options: HumanGateOptions & { supplyChain: SupplyChainOptions },
): string[] {
  const rules: string[] = [];
  const add = (rule: string) => {
    const text = rule.length > RULE_CHARS ? `${rule.slice(0, RULE_CHARS - 1)}…` : rule;
    if (!rules.includes(text)) rules.push(text);
  };
  if (diff.error) {
    add(`diff unreadable: ${diff.error}`);
    return rules;
  }
  if (diff.filesCapped) add(`diff too large: the API lists at most ${counted(diff.files.length, "file")}`);

  const patches: string[] = [];
  const paths: string[] = [];
  for (const file of diff.files) {
    const names = [file.filename, ...(file.previousFilename ? [file.previousFilename] : [])];
    if (names.some((n) => UNREADABLE.test(n) || n.trim() === ""))
      add(`unreadable path: ${shown(file.filename)}`);
    paths.push(...names);
    const where = shown(file.filename);
    switch (file.status) {
      case "removed":
        add(`deleted file: ${where}`);
        break;
      case "renamed":
        add(`renamed file: ${shown(file.previousFilename ?? "?")} → ${where}`);
        break;
      case "copied":
        add(`copied file: ${shown(file.previousFilename ?? "?")} → ${where}`);
        break;
      case "changed":
        add(`mode changed: ${where}`);
        break;
      case "added":
      case "modified":
      case "unchanged":
        break;
      default:
        add(`unknown change (${shown(file.status)}): ${where}`);
    }
    if (file.status !== "removed") {
      if (file.mode === "120000") add(`symlink: ${where}`);
      else if (file.mode === "160000") add(`submodule: ${where}`);
      else if (file.mode === null || file.mode === undefined) add(`file mode unknown: ${where}`);
      else if (!PLAIN_MODES.has(file.mode)) add(`file mode ${shown(file.mode)}: ${where}`);
      if (!file.patch) add(`no diff shown (binary or too large): ${where}`);
    }
    if (file.patch) {
      // The real path goes to the rules through `paths`; the header only labels the added lines.
      const label = shown(file.filename).replace(/["\s]/g, "_");
      patches.push(`diff --git a/${label} b/${label}\n--- a/${label}\n+++ b/${label}\n${file.patch}`);
    }
  }
  // What installs and builds is code too (src/core/gates/supply-chain-gate.ts): default rules, off with the gate.
  if (options.enabled) for (const rule of supplyChainRules(diff.files, options.supplyChain)) add(rule);
  const matched = matchHumanGate({ diff: patches.join("\n"), paths, commands: [] }, options);
  for (const hit of matched.hits) add(`${hit.rule} (${hit.where}: ${hit.match})`);
  return rules.slice(0, DIFF_GATE_MAX_RULES);
}

/**
 * Which human-gate settings a verdict was reached under: a verdict kept in the state counts only while the
 * settings are the same, so tightening `humanGate` re-reads every PR head judged under the old rules.
 */
export function humanGateDigest(options: HumanGateOptions): string {
  return changeHash(JSON.stringify(options));
}
