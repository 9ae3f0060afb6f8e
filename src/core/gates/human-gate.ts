/**
 * The human gate: does a task's change need a person's approval before it merges?
 *
 * Three places are checked: the lines the diff ADDS, the paths it touches (also read from the diff's own
 * headers, so a deleted workflow counts), and the commands the agent ran. Only added lines: removing a
 * hard-coded password or an `rm -rf` from a script makes the code safer, and a deleted file still shows
 * up as a touched path. The gate is a request for a look, not a verdict, so the keyword rules are broad
 * (a password-strength checker fires `password`) — but matched as words of prose or identifiers, never
 * inside a longer word: `deploy` fires on "deploy", "redeploy", `deploy.sh`, `deploy_prod`, not on
 * "deployment" (a docs/deployment.md typo fix) or "deployer"; `publish` does not fire on a `.publish(…)`
 * method call; `secret` fires on `clientSecret`, `CLIENT_SECRET`, `secrets.TOKEN`, not on "secretary".
 *
 * Rules (built-in keyword rules, plus path rules):
 * - default keyword rules: deploy, migrate, publish, rm -rf, drop table, delete from, terraform apply,
 *   production, api.*key, secret, password; plus `options.patterns` (regular expressions in RE2 syntax,
 *   case-insensitive, matched in linear time);
 * - default path rules: `.github/workflows/**`, everything else under `.github/`, migration directories, `.env*`,
 *   Terraform files and
 *   directories, CODEOWNERS; plus `options.paths` (globs). Dockerfiles and lockfiles are not gated as paths:
 *   they change how the project builds, which CI checks; what a lockfile downloads from, install scripts and
 *   registry settings are the controller's supply-chain rules (src/core/gates/supply-chain-gate.ts);
 * - never-auto-approve rules: push --force, rm -rf /, rm -rf ~, drop database, format c:,
 *   production deploy, npm publish — plus changes to Autopilot's own configuration
 *   (`.github/autopilot.yml`), which must never slip through unseen. These ALWAYS apply: configuration
 *   cannot remove them, and with `enabled: false` they are the only rules that still fire.
 *
 * A hit names its rule, where it was found and a short excerpt: the file and line plus the matched words
 * (never the whole line, which may hold the secret itself), the path, or the matched part of the command.
 */
import { compileGatePattern, findGatePattern, literalGatePattern } from "./gate-pattern.js";
import type { HumanGateHit } from "../tasks/worker-result.js";

interface HumanGateInput {
  /** Unified diff of the task branch against its base. */
  diff: string;
  /** Paths the change touches (repository-relative). */
  paths: readonly string[];
  /** Commands the agent ran, as far as its tool-use events show. */
  commands: readonly string[];
}

export interface HumanGateOptions {
  enabled: boolean;
  /** Extra regular expressions (RE2 syntax), matched case-insensitively in linear time. */
  patterns: readonly string[];
  /** Extra path globs (`**`, `*`, `?`, `{a,b}`; a pattern without `/` matches at any depth). */
  paths: readonly string[];
}

interface HumanGateResult {
  fired: boolean;
  hits: HumanGateHit[];
}

/** At most this many hits are reported (never-auto-approve hits first); more would only bloat the PR. */
export const HUMAN_GATE_MAX_HITS = 50;

interface TextRule {
  name: string;
  never: boolean;
  /** The matched text, or null. */
  find: (text: string) => string | null;
}

interface PathRule {
  name: string;
  never: boolean;
  test: (path: string) => boolean;
}

// ---------------------------------------------------------------------------------------------------------
// Words in prose and identifiers.

function caseVariants(part: string): string {
  const lower = part.toLowerCase();
  const capital = lower[0]!.toUpperCase() + lower.slice(1);
  return `(?:${lower}|${capital}|${lower.toUpperCase()})`;
}

/**
 * A word as a whole word of prose or a whole part of an identifier (snake_case, kebab-case, camelCase,
 * SCREAMING_CASE): `parts` joined by an optional `_`, `-`, `.` or space, each in lower, Capitalised or
 * UPPER case; `suffix` (lower-case alternatives) may follow. `deploy` matches "deploy", `deployNow`,
 * `DEPLOY_PROD`, `autoDeploy`, but not "deployment", `DEPLOYMENT` or "redeploy".
 */
function identifierWord(parts: readonly string[], suffix = ""): RegExp {
  const separator = "[_\\-. ]?";
  const variants = parts.map(caseVariants);
  const tail = variants
    .slice(1)
    .map((variant) => separator + variant)
    .join("");
  const first = parts[0]!.toLowerCase();
  const capitalised = `(?:${first[0]!.toUpperCase()}${first.slice(1)}|${first.toUpperCase()})`;
  const suffixes = suffix ? `(?:${suffix}|${suffix.toUpperCase()})?` : "";
  const start = `(?:(?<![A-Za-z0-9])${variants[0]}|(?<=[a-z0-9])${capitalised})`;
  // The end: no lower-case letter or digit follows, and after an upper-case letter no upper-case one.
  const end = "(?![a-z0-9])(?!(?<=[A-Z])[A-Z])";
  return new RegExp(`${start}${tail}${suffixes}${end}`, "g");
}

function regexFind(re: RegExp): (text: string) => string | null {
  const global = re.global ? re : new RegExp(re.source, `${re.flags}g`);
  return (text) => {
    global.lastIndex = 0;
    const match = global.exec(text);
    return match ? match[0] : null;
  };
}

function wordRule(name: string, parts: readonly string[], suffix = ""): TextRule {
  return { name, never: false, find: regexFind(identifierWord(parts, suffix)) };
}

// ---------------------------------------------------------------------------------------------------------
// Commands that need more than a regular expression.

const SHELL_WORD = /(?:"[^"]*"|'[^']*'|[^\s;&|()])+/g;

/** Each `rm` invocation with recursive and force flags: the matched text and its targets. */
function forcedRemovals(text: string): { match: string; targets: string[] }[] {
  const found: { match: string; targets: string[] }[] = [];
  for (const segment of text.split(/[;&|\n]+|\$\(|`/)) {
    const words = Array.from(segment.matchAll(SHELL_WORD), (m) => m[0]);
    for (let i = 0; i < words.length; i++) {
      if (!/^(?:\S*\/)?rm$/.test(words[i]!)) continue;
      let recursive = false;
      let force = false;
      const targets: string[] = [];
      let j = i + 1;
      for (; j < words.length; j++) {
        const word = words[j]!;
        if (word === "--") continue;
        if (word === "--recursive") recursive = true;
        else if (word === "--force") force = true;
        else if (/^-[a-zA-Z]+$/.test(word)) {
          if (/[rR]/.test(word)) recursive = true;
          if (/f/.test(word)) force = true;
        } else if (word.startsWith("--")) continue;
        else targets.push(word.replace(/^["']|["']$/g, ""));
      }
      if (recursive && force) found.push({ match: words.slice(i, j).join(" "), targets });
      i = j;
    }
  }
  return found;
}

const ROOT_TARGET = /^\/\*?$/;
const HOME_TARGET = /^(?:~|~\/|~\/\*|\$HOME|\$\{HOME\}|\$HOME\/|\$HOME\/\*|\$\{HOME\}\/\*?)$/;

function removalRule(name: string, never: boolean, target?: RegExp): TextRule {
  return {
    name,
    never,
    find: (text) => {
      const hit = forcedRemovals(text).find(
        (removal) => !target || removal.targets.some((t) => target.test(t)),
      );
      return hit ? hit.match : null;
    },
  };
}

/** Global git options that take their value as the next word (`git -C repo push`). */
const GIT_OPTION_WITH_VALUE = new Set([
  "-C",
  "-c",
  "--git-dir",
  "--work-tree",
  "--namespace",
  "--config-env",
]);
const FORCE_FLAG = /^(?:--force(?:-with-lease|-if-includes)?(?:=.*)?|-[a-zA-Z]*f[a-zA-Z]*)$/;
const FORCE_REFSPEC = /^\+[\w./-]/;

/**
 * A `git … push` that forces: `--force`, `--force-with-lease`, `--force-if-includes`, a short flag group
 * with `f` (`-f`, `-uf`), or a `+refspec`. Read word by word, like `rm` above: a regular expression with
 * the global options as a repeated optional group backtracks exponentially on `git -a -a -a …`.
 */
function forcedPush(text: string): string | null {
  for (const segment of text.split(/[;&|\n]+|\$\(|`/)) {
    const words = Array.from(segment.matchAll(SHELL_WORD), (m) => m[0]);
    for (let i = 0; i < words.length; i++) {
      if (!/^(?:\S*\/)?git$/.test(words[i]!)) continue;
      // Skip global options (and one value after an option without `=`) up to `push`.
      let j = i + 1;
      let valueMayFollow = false;
      for (; j < words.length; j++) {
        const word = words[j]!;
        if (word === "push") break;
        if (word.startsWith("-")) valueMayFollow = !word.includes("=");
        else if (valueMayFollow || GIT_OPTION_WITH_VALUE.has(words[j - 1]!)) valueMayFollow = false;
        else break;
      }
      if (words[j] !== "push") {
        // A `git` inside the skipped run would skip the same options to the same word: resume there.
        i = j - 1;
        continue;
      }
      for (let k = j + 1; k < words.length; k++) {
        if (FORCE_FLAG.test(words[k]!) || FORCE_REFSPEC.test(words[k]!))
          return words.slice(i, k + 1).join(" ");
      }
      // The rest of the segment holds no force flag: a later `git … push` in it cannot find one either.
      break;
    }
  }
  return null;
}

// ---------------------------------------------------------------------------------------------------------
// The rule sets.

const NEVER_TEXT_RULES: readonly TextRule[] = [
  { name: "push --force", never: true, find: forcedPush },
  removalRule("rm -rf /", true, ROOT_TARGET),
  removalRule("rm -rf ~", true, HOME_TARGET),
  { name: "drop database", never: true, find: regexFind(/\bdrop\s+(?:database|schema)\b/i) },
  { name: "format c:", never: true, find: regexFind(/\bformat(?:\.com|\.exe)?\s+[a-z]:/i) },
  {
    name: "production deploy",
    never: true,
    find: regexFind(
      /\b(?:re)?deploy(?:s|ed|ing|ment)?\b[^\n]{0,60}?(?:\bto\s+)?(?:--)?\bprod(?:uction)?\b|\bprod(?:uction)?\b[^\n]{0,20}?\b(?:re)?deploy(?:s|ed|ing|ment)?\b/i,
    ),
  },
  { name: "npm publish", never: true, find: regexFind(/\b(?:npm|pnpm|yarn(?:\s+npm)?|bun)\s+publish\b/) },
];

const DEFAULT_TEXT_RULES: readonly TextRule[] = [
  wordRule("deploy", ["deploy"], "s|ed|ing"),
  { name: "deploy", never: false, find: regexFind(/(?<![A-Za-z0-9])redeploy(?:s|ed|ing)?(?![a-z0-9])/i) },
  wordRule("migrate", ["migrate"], "s|d"),
  { name: "migrate", never: false, find: regexFind(/(?<![A-Za-z0-9])migrating(?![a-z0-9])/i) },
  {
    name: "publish",
    never: false,
    find: regexFind(
      /(?<![A-Za-z0-9_.$])(?:publish|Publish|PUBLISH)(?:es|ed|ing|ES|ED|ING)?(?![A-Za-z0-9_])(?!\s*\()/,
    ),
  },
  removalRule("rm -rf", false),
  { name: "drop table", never: false, find: regexFind(/\bdrop\s+table\b/i) },
  {
    name: "delete from",
    never: false,
    // SQL, not prose: the table name is followed by WHERE, `;`, a quote, a parenthesis or the line end.
    find: regexFind(/\bdelete\s+from\s+[`"'[]?[A-Za-z_][\w.$]*[`"'\]]?\s*(?:\bwhere\b|;|\)|["'`]|$)/im),
  },
  {
    name: "terraform apply",
    never: false,
    find: regexFind(/\b(?:terraform|tofu)\s+(?:-[\w-]+(?:=\S+)?\s+)*apply\b/),
  },
  wordRule("production", ["production"]),
  wordRule("api.*key", ["api", "key"], "s"),
  wordRule("secret", ["secret"], "s"),
  wordRule("password", ["password"], "s"),
];

/** The default keyword rules' names. */
export const DEFAULT_HUMAN_GATE_PATTERNS: readonly string[] = [
  ...new Set(DEFAULT_TEXT_RULES.map((rule) => rule.name)),
];

/** Never-auto-approve rules: always checked, whatever the configuration says. */
export const NEVER_AUTO_APPROVE: readonly string[] = [
  ...NEVER_TEXT_RULES.map((rule) => rule.name),
  ".github/autopilot.{yml,yaml}",
];

/** Default path rules (globs). */
export const DEFAULT_HUMAN_GATE_PATHS: readonly string[] = [
  ".github/workflows/**",
  // Actions, CODEOWNERS, dependabot and every other file GitHub reads from .github/ decide what CI runs with
  // the repository's secrets and who must review: never merged without a person.
  ".github/**",
  "**/migrations/**",
  "**/db/migrate/**",
  ".env*",
  "terraform/**",
  "*.tf",
  "*.tfvars",
  "CODEOWNERS",
];

// ---------------------------------------------------------------------------------------------------------
// Globs.

function globBody(glob: string): string {
  let out = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === "*") {
      if (glob[i + 1] === "*") {
        const slash = glob[i + 2] === "/";
        out += slash ? "(?:.*/)?" : ".*";
        i += slash ? 2 : 1;
      } else out += "[^/]*";
    } else if (c === "?") out += "[^/]";
    else if (c === "{") {
      const end = glob.indexOf("}", i);
      if (end < 0) out += "\\{";
      else {
        out += `(?:${glob
          .slice(i + 1, end)
          .split(",")
          .map(globBody)
          .join("|")})`;
        i = end;
      }
    } else if (c === "[") {
      const end = glob.indexOf("]", i + 1);
      if (end < 0) out += "\\[";
      else {
        out += `[${glob
          .slice(i + 1, end)
          .replace(/^!/, "^")
          .replace(/\\/g, "\\\\")}]`;
        i = end;
      }
    } else out += c.replace(/[.+^$()|\\/]/g, "\\$&");
  }
  return out;
}

/**
 * A glob as a regular expression over repository-relative paths, with gitignore-like conveniences: a
 * pattern without `/` matches at any depth (`.env*`, `CODEOWNERS`), a leading `/` anchors at the root, a
 * trailing `/` means everything below. `*` and `?` stay within a path segment and match dot-files.
 */
export function globToRegExp(glob: string): RegExp {
  let pattern = glob.trim().replace(/\\/g, "/").replace(/^\.\//, "");
  if (pattern.endsWith("/")) pattern += "**";
  if (pattern.startsWith("/")) pattern = pattern.slice(1);
  else if (!pattern.includes("/")) pattern = `**/${pattern}`;
  return new RegExp(`^${globBody(pattern)}$`);
}

/**
 * A path matches when it or one of its parent directories matches the glob (`terraform` covers
 * `terraform/x.tf`): one anchored match with an optional `/…` tail, not one match per parent (quadratic in
 * the depth of an agent-chosen path).
 */
function pathRule(glob: string, never: boolean): PathRule {
  return { name: glob, never, test: pathGlobTest(glob) };
}

/** Whether a path, or one of its parent directories, matches the glob (see pathRule). */
export function pathGlobTest(glob: string): (path: string) => boolean {
  const re = new RegExp(`${globToRegExp(glob).source.replace(/\$$/, "")}(?:/.*)?$`);
  return (path) => re.test(path);
}

const NEVER_PATH_RULES: readonly PathRule[] = [pathRule(".github/autopilot.{yml,yaml}", true)];
const DEFAULT_PATH_RULES: readonly PathRule[] = DEFAULT_HUMAN_GATE_PATHS.map((glob) => pathRule(glob, false));

/**
 * A configured pattern, compiled with the linear-time engine (see gate-pattern.ts). The configuration check
 * refuses a pattern it cannot compile; one that arrives anyway is matched as literal text.
 */
function userPatternRule(source: string): TextRule {
  const compiled = compileGatePattern(source);
  const regex = compiled.ok ? compiled.regex : literalGatePattern(source);
  return { name: source, never: false, find: (text) => findGatePattern(regex, text) };
}

// ---------------------------------------------------------------------------------------------------------
// Diffs.

interface AddedLine {
  file: string;
  line: number;
  text: string;
}

function unquoteGitPath(path: string): string {
  const p = path.trim();
  if (!p.startsWith('"')) return p;
  return p.slice(1, -1).replace(/\\(["\\])/g, "$1");
}

function stripPrefix(path: string): string | null {
  const p = unquoteGitPath(path).replace(/\t.*$/, "");
  if (p === "/dev/null") return null;
  return p.replace(/^[abciow]\//, "");
}

/** The added lines of a unified diff, with their file and line number, and every path it touches. */
export function parseUnifiedDiff(diff: string): { added: AddedLine[]; paths: string[] } {
  const added: AddedLine[] = [];
  const paths = new Set<string>();
  let file = "";
  let oldLeft = 0;
  let newLeft = 0;
  let newLine = 0;
  for (const line of diff.replace(/\r\n?/g, "\n").split("\n")) {
    if (oldLeft > 0 || newLeft > 0) {
      const marker = line[0];
      if (marker === "+") {
        added.push({ file, line: newLine, text: line.slice(1) });
        newLine++;
        newLeft--;
      } else if (marker === "-") oldLeft--;
      else if (marker === " " || line === "") {
        oldLeft--;
        newLeft--;
        newLine++;
      }
      // "\ No newline at end of file" and anything else: no count.
      continue;
    }
    const git =
      /^diff --git a\/(.*) b\/(.*)$/.exec(line) ?? /^diff --git (?:"(?:[^"\\]|\\.)*"|\S+) (.+)$/.exec(line);
    if (git) {
      const path = git.length === 3 ? git[2]! : stripPrefix(git[1]!);
      if (path) {
        file = path;
        paths.add(path);
      }
      continue;
    }
    const header = /^(?:---|\+\+\+) (.+)$/.exec(line);
    if (header) {
      const path = stripPrefix(header[1]!);
      if (path) {
        paths.add(path);
        if (line.startsWith("+++")) file = path;
        else if (!file) file = path;
      }
      continue;
    }
    const rename = /^(?:rename|copy) (?:from|to) (.+)$/.exec(line);
    if (rename) {
      paths.add(unquoteGitPath(rename[1]!));
      continue;
    }
    const hunk = /^@@ -\d+(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/.exec(line);
    if (hunk) {
      oldLeft = hunk[1] === undefined ? 1 : Number(hunk[1]);
      newLine = Number(hunk[2]);
      newLeft = hunk[3] === undefined ? 1 : Number(hunk[3]);
    }
  }
  return { added, paths: [...paths] };
}

// ---------------------------------------------------------------------------------------------------------
// Matching.

/** Keeps excerpts short and free of credentials: URL userinfo and long token-like runs are masked. */
function excerpt(text: string, max = 120): string {
  const clean = text
    .replace(/\s+/g, " ")
    .trim()
    .replace(/:\/\/[^/@\s]+@/g, "://***@")
    .replace(/[A-Za-z0-9+_=-]{32,}/g, "[redacted]");
  return clean.length > max ? `${clean.slice(0, max - 1)}…` : clean;
}

function normalizePath(path: string): string {
  return path.trim().replace(/\\/g, "/").replace(/^\.\//, "").replace(/^\/+/, "");
}

/** Matches the change against the gate's rules (see the file comment). Pure; never throws on odd input. */
export function matchHumanGate(input: HumanGateInput, options: HumanGateOptions): HumanGateResult {
  const textRules: TextRule[] = [...NEVER_TEXT_RULES];
  const pathRules: PathRule[] = [...NEVER_PATH_RULES];
  if (options.enabled) {
    textRules.push(
      ...DEFAULT_TEXT_RULES,
      ...options.patterns.filter((p) => p.trim() !== "").map(userPatternRule),
    );
    pathRules.push(
      ...DEFAULT_PATH_RULES,
      ...options.paths.filter((p) => p.trim() !== "").map((g) => pathRule(g, false)),
    );
  }
  const hits: HumanGateHit[] = [];
  const seen = new Set<string>();
  const add = (rule: TextRule | PathRule, where: HumanGateHit["where"], match: string) => {
    const key = `${rule.name}\u0000${where}\u0000${match}`;
    if (seen.has(key)) return;
    seen.add(key);
    hits.push({ rule: rule.name, where, match, neverAutoApprove: rule.never });
  };

  for (const command of input.commands) {
    for (const rule of textRules) {
      const found = rule.find(command);
      if (found) add(rule, "command", excerpt(found));
    }
  }
  const diff = parseUnifiedDiff(input.diff);
  const paths = [...new Set([...input.paths, ...diff.paths].map(normalizePath).filter(Boolean))];
  for (const path of paths) {
    for (const rule of pathRules)
      if (rule.test(path)) add(rule, "path", path.length > 200 ? `${path.slice(0, 199)}…` : path);
  }
  for (const line of diff.added) {
    for (const rule of textRules) {
      const found = rule.find(line.text);
      if (found) add(rule, "diff", `${excerpt(line.file, 80)}:${line.line}: ${excerpt(found, 80)}`);
    }
  }
  const ordered = [
    ...hits.filter((hit) => hit.neverAutoApprove),
    ...hits.filter((hit) => !hit.neverAutoApprove),
  ];
  return { fired: hits.length > 0, hits: ordered.slice(0, HUMAN_GATE_MAX_HITS) };
}
