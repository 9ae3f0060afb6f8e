/**
 * A user's human-gate pattern (`humanGate.patterns`), compiled with a linear-time engine.
 *
 * The patterns are matched against text the agent wrote (every added diff line, every command it ran), so
 * a pattern that backtracks catastrophically would let the agent stall the gate with one crafted line.
 * RE2 (the re2js port) matches in time linear in the input whatever the pattern; the price is that it has
 * no lookarounds and no backreferences. A pattern it cannot compile is a configuration error that says
 * why and what to write instead.
 */
import { RE2JS } from "re2js";

type GatePatternResult = { ok: true; regex: RE2JS } | { ok: false; reason: string; instead: string };

/** Compiles a gate pattern (case-insensitive). Never throws. */
export function compileGatePattern(source: string): GatePatternResult {
  try {
    return { ok: true, regex: RE2JS.compile(source, RE2JS.CASE_INSENSITIVE) };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return {
      ok: false,
      ...explain(source, message.replace(/^error parsing regexp:\s*/, "").replace("`(?i)", "`")),
    };
  }
}

/** The first non-empty match of a compiled gate pattern in `text`, or null. Linear in `text`. */
export function findGatePattern(regex: RE2JS, text: string): string | null {
  const matcher = regex.matcher(text);
  // An empty match (`x*` matches everywhere) is skipped: it would fire on every line.
  while (matcher.find()) {
    const found = matcher.group();
    if (found) return found;
  }
  return null;
}

/** A pattern that cannot compile, matched literally instead (the configuration check reports it). */
export function literalGatePattern(source: string): RE2JS {
  return RE2JS.compile(RE2JS.quote(source), RE2JS.CASE_INSENSITIVE);
}

function explain(source: string, detail: string): { reason: string; instead: string } {
  if (/\(\?<?[=!]/.test(source)) {
    return {
      reason: "lookahead and lookbehind (`(?=`, `(?!`, `(?<=`, `(?<!`) need a backtracking engine",
      instead: "match the neighbouring text itself, or use `\\b` for a word boundary",
    };
  }
  if (/\\[1-9]|\\k</.test(source)) {
    return {
      reason: "backreferences (`\\1`, `\\k<name>`) need a backtracking engine",
      instead: "repeat the group's pattern instead of referring back to it",
    };
  }
  if (/invalid repeat count/.test(detail)) {
    return {
      reason: `a repeat count above 1000 (${detail})`,
      instead: "`+`, `*` or a count of at most 1000",
    };
  }
  if (/nested repetition/.test(detail)) {
    return {
      reason: `possessive or doubled quantifiers such as \`a++\` are not supported (${detail})`,
      instead: "a single quantifier (`a+`): matching is linear-time anyway",
    };
  }
  if (/invalid escape/.test(detail)) {
    return {
      reason: detail,
      instead: "`\\x{41}` for a code point, `\\z` for the end of the text, `\\d \\s \\w \\b` as usual",
    };
  }
  return {
    reason: detail,
    instead: "a regular expression in RE2 syntax (https://github.com/google/re2/wiki/Syntax)",
  };
}
