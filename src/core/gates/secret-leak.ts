/**
 * Does a change carry a secret the worker holds? The worker refuses to push a branch whose diff ADDS the exact
 * value of one of its secrets (the GitHub token, the model keys it hands the agent, any other credential in its
 * environment: src/worker/checkout/held-secrets.ts), in one of the forms a program commonly writes it:
 * - plain (also across lines: a multi-line value);
 * - base64 and base64url: the value encoded on its own, or inside a longer encoded stream (`user:token` as an
 *   HTTP basic header, a JSON blob). Inside a stream the value may start at any of three byte offsets of a
 *   3-byte group, so each offset's characters that depend on the value alone are looked for. Line breaks and
 *   other whitespace are removed first: a wrapped stream (76 columns, PEM style) is found too;
 * - URL-encoded: each added line is percent-decoded (any escape, upper or lower case hex, `+` as a space for
 *   form encoding) and the plain value looked for, so every encoder's choice of escaped characters is covered;
 * - hex (lower or upper case) of its UTF-8 bytes.
 * Added file paths are checked the same way (an agent can name a file after a value).
 *
 * Values shorter than MIN_SECRET_LENGTH are not looked for: a short value ("true", a 4-digit PIN) is found in
 * ordinary text by chance, and refusing a push for it would stop every task. They are returned by name so the
 * caller can say which were skipped.
 *
 * Findings name the file, the line, the secret's NAME and the form; never the value. Work is linear in the diff's
 * size times the number of forms looked for (about ten per secret): plain `indexOf`, no regular expression that
 * could backtrack.
 */
import { parseUnifiedDiff } from "./human-gate.js";

/** A secret the worker holds: its name (an environment variable's, or a description) and its value. */
export interface HeldSecret {
  name: string;
  value: string;
}

export type LeakForm = "plain" | "base64" | "base64url" | "url-encoded" | "hex";

export interface SecretLeak {
  /** The repository-relative path of the file. */
  path: string;
  /** The line (of the new file) where the value starts; null when the path itself carries it. */
  line: number | null;
  /** The secret's name or names (several names holding one value are one secret). */
  secret: string;
  form: LeakForm;
}

interface SecretLeakResult {
  leaks: SecretLeak[];
  /** Names of the secrets too short to look for. */
  tooShort: string[];
}

/** Shorter values are not looked for (see the file comment). */
export const MIN_SECRET_LENGTH = 8;

/** At most this many findings: enough to name every file a person must look at, without a flood. */
const MAX_SECRET_LEAKS = 20;

interface Needle {
  text: string;
  form: LeakForm;
}

function utf8(value: string): Uint8Array {
  return new TextEncoder().encode(value);
}

function base64(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/=+$/, "");
}

/**
 * The base64 characters that depend on the value alone, for each of the three offsets it may start at inside a
 * longer stream: character i covers bits [6i, 6i+6); the value covers bits [8o, 8(o+n)) after o other bytes.
 */
function base64Cores(bytes: Uint8Array): string[] {
  const cores: string[] = [];
  for (let offset = 0; offset < 3; offset++) {
    const padded = new Uint8Array(offset + bytes.length);
    padded.set(bytes, offset);
    const start = Math.ceil((8 * offset) / 6);
    const end = Math.floor((8 * (offset + bytes.length)) / 6);
    cores.push(base64(padded).slice(start, end));
  }
  return cores;
}

function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** The forms looked for in text as written (the URL-encoded form is found by decoding the text instead). */
function needlesOf(value: string): Needle[] {
  const bytes = utf8(value);
  const cores = base64Cores(bytes);
  const needles: Needle[] = [
    { text: value, form: "plain" },
    ...cores.map((text) => ({ text, form: "base64" as const })),
    ...cores.map((text) => ({
      text: text.replace(/\+/g, "-").replace(/\//g, "_"),
      form: "base64url" as const,
    })),
    { text: hex(bytes), form: "hex" },
    { text: hex(bytes).toUpperCase(), form: "hex" },
  ];
  // A value that reads the same in two forms (hex digits only) is reported in the first.
  const seen = new Set<string>();
  return needles.filter((needle) => {
    if (seen.has(needle.text)) return false;
    seen.add(needle.text);
    return true;
  });
}

/**
 * Every text form of `value` this file looks for, to mask where it would be found (secret-masking.ts): the
 * needles, and the URL-encoded form as encodeURIComponent writes it (the search decodes text instead).
 */
export function secretForms(value: string): string[] {
  return [...needlesOf(value).map((needle) => needle.text), encodeURIComponent(value)];
}

/**
 * Percent-decoding that never throws: each `%XX` becomes its byte, read as Latin-1 (the needle is compared as
 * the value's UTF-8 bytes read the same way), and `+` a space when `form` is set.
 */
function percentDecode(text: string, form: boolean): string {
  const spaced = form ? text.replace(/\+/g, " ") : text;
  return spaced.replace(/%([0-9A-Fa-f]{2})/g, (_, code: string) =>
    String.fromCharCode(Number.parseInt(code, 16)),
  );
}

/** The value's UTF-8 bytes as a Latin-1 string: what percentDecode yields for an encoded value. */
function latin1OfUtf8(value: string): string {
  let out = "";
  for (const byte of utf8(value)) out += String.fromCharCode(byte);
  return out;
}

/** Lines joined with `separator`, and where each line starts, to turn a match's index into a line. */
class JoinedLines {
  readonly text: string;
  private readonly starts: number[] = [];
  constructor(lines: readonly string[], separator: string) {
    let at = 0;
    for (const line of lines) {
      this.starts.push(at);
      at += line.length + separator.length;
    }
    this.text = lines.join(separator);
  }
  /** The index (into the lines) of the line holding `index`. */
  lineAt(index: number): number {
    let low = 0;
    let high = this.starts.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if (this.starts[mid]! <= index) low = mid;
      else high = mid - 1;
    }
    return low;
  }
}

interface FileText {
  path: string;
  lines: string[];
  numbers: number[];
}

/** The added lines of each file, in the diff's order. */
function addedByFile(diff: string): { files: FileText[]; paths: string[] } {
  const parsed = parseUnifiedDiff(diff);
  const byPath = new Map<string, FileText>();
  for (const added of parsed.added) {
    let file = byPath.get(added.file);
    if (!file) {
      file = { path: added.file, lines: [], numbers: [] };
      byPath.set(added.file, file);
    }
    file.lines.push(added.text);
    file.numbers.push(added.line);
  }
  return { files: [...byPath.values()], paths: parsed.paths };
}

interface Prepared {
  name: string;
  needles: Needle[];
  decoded: string;
  plain: string;
}

/** Secrets with one value are one secret, named by all its names; short values are set aside. */
function prepare(secrets: readonly HeldSecret[]): { prepared: Prepared[]; tooShort: string[] } {
  const byValue = new Map<string, string[]>();
  for (const secret of secrets) {
    if (!secret.value) continue;
    const names = byValue.get(secret.value) ?? [];
    if (!names.includes(secret.name)) names.push(secret.name);
    byValue.set(secret.value, names);
  }
  const prepared: Prepared[] = [];
  const tooShort: string[] = [];
  for (const [value, names] of byValue) {
    const name = names.join(" / ");
    if (value.length < MIN_SECRET_LENGTH) tooShort.push(name);
    else prepared.push({ name, needles: needlesOf(value), decoded: latin1OfUtf8(value), plain: value });
  }
  return { prepared, tooShort };
}

/** Where in `text` a secret is, in which form: the first form found, or null. */
function findIn(
  plain: JoinedLines,
  squeezed: JoinedLines,
  decoded: readonly JoinedLines[],
  secret: Prepared,
): { form: LeakForm; line: number } | null {
  for (const needle of secret.needles) {
    // Plain and hex as written (a multi-line value too); base64 with the whitespace removed (wrapped streams).
    const within = needle.form === "base64" || needle.form === "base64url" ? squeezed : plain;
    const index = within.text.indexOf(needle.text);
    if (index >= 0) return { form: needle.form, line: within.lineAt(index) };
  }
  for (const text of decoded) {
    const index = text.text.indexOf(secret.decoded);
    if (index >= 0) return { form: "url-encoded", line: text.lineAt(index) };
  }
  return null;
}

/** The secrets a unified diff's added lines and paths carry (see the file comment). Pure; never throws. */
export function findSecretLeaks(diff: string, secrets: readonly HeldSecret[]): SecretLeakResult {
  const { prepared, tooShort } = prepare(secrets);
  const leaks: SecretLeak[] = [];
  if (prepared.length === 0) return { leaks, tooShort };
  const { files, paths } = addedByFile(diff);
  for (const file of files) {
    const plain = new JoinedLines(file.lines, "\n");
    const squeezed = new JoinedLines(
      file.lines.map((line) => line.replace(/\s+/g, "")),
      "",
    );
    // Decoded only when the text has an escape or a `+` at all: most files have none.
    const decoded = [false, true]
      .filter((form) => (form ? plain.text.includes("+") : plain.text.includes("%")))
      .map(
        (form) =>
          new JoinedLines(
            file.lines.map((line) => percentDecode(line, form)),
            "\n",
          ),
      );
    for (const secret of prepared) {
      const found = findIn(plain, squeezed, decoded, secret);
      if (found)
        leaks.push({
          path: file.path,
          line: file.numbers[found.line]!,
          secret: secret.name,
          form: found.form,
        });
    }
  }
  for (const path of paths) {
    const one = new JoinedLines([path], "");
    const decoded = [new JoinedLines([percentDecode(path, false)], "")];
    for (const secret of prepared) {
      const found = findIn(one, one, decoded, secret);
      if (found) leaks.push({ path, line: null, secret: secret.name, form: found.form });
    }
  }
  return { leaks: leaks.slice(0, MAX_SECRET_LEAKS), tooShort };
}

/** One finding in words, for the issue and the log: the file, the line, the secret's name and form. */
export function describeSecretLeak(leak: SecretLeak): string {
  // The path is the agent's choice: no backtick to break out of the code span, no endless name.
  const path = leak.path.replace(/[`\r\n]/g, "?").slice(0, 200);
  const where = leak.line === null ? `the path \`${path}\`` : `\`${path}\` line ${leak.line}`;
  const form = leak.form === "plain" ? "" : ` (${leak.form})`;
  return `${where}: the value of ${leak.secret}${form}`;
}
