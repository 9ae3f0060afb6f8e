/**
 * `/autopilot …` commands: parsing comment bodies, and deciding who may give them.
 *
 * Grammar (case-insensitive, one command per comment — the first one wins):
 *
 * ```
 * /autopilot start | go | pause | resume | stop | abort | mode auto|semi-auto | status [#N] | retry [#N] [--iterations M]
 *            | skip [#N] | run [#N]
 *            | rollback [#N] | cleanup [#N] | fix [#N] [instructions] | follow-up [#N] [instructions]
 *            | approve [#N] | split [#N] | report | help
 * ```
 *
 * A command counts only at the start of a line (up to three spaces of indentation), outside fenced or
 * indented code, block quotes and HTML comments — so quoting somebody's command, or an agent's transcript
 * that mentions one, does nothing. On a task issue (or its pull request) `retry`, `skip`, `run`, `rollback`,
 * `cleanup`, `fix`, `follow-up`, `approve`, `split` and `status` default to that issue. `fix` and `follow-up` take instructions: the
 * rest of the command's line and every line of the comment after it (`commandInstructions`). `--iterations M`
 * (also `--iterations=M`) raises that task's iteration limit to M.
 * Anything else after `/autopilot` is an unknown command, answered with the help.
 *
 * Authorization: only users with write, maintain or admin permission (`canWrite`); anyone else gets one
 * polite refusal (per login, remembered in the session state) and nothing changes. Comments by Autopilot's
 * own bot are never commands.
 */
import { MAX_ITERATIONS } from "./iteration-limit.js";
import { proseLines } from "../text/markdown.js";
import { nearestWord } from "../text/nearest-word.js";
import type { CommentNode, Permission } from "../world.js";
import { canWrite } from "../world.js";

type Command =
  | { name: "start" | "pause" | "resume" | "stop" | "abort" | "report" | "help" }
  /** Who starts a task from now on: Autopilot by score (`auto`), or a person with `run` (`semi-auto`). */
  | { name: "mode"; mode: "auto" | "semi-auto" }
  | { name: "status"; issue: number | null }
  | { name: "retry"; issue: number; iterations: number | null }
  | { name: "skip" | "run" | "rollback" | "cleanup" | "approve" | "split"; issue: number }
  /** A writer's instructions for another round on the task's PR (`fix`) or on a merged task (`follow-up`). */
  | { name: "fix" | "follow-up"; issue: number; instructions: string };

type ParsedCommand =
  | { kind: "command"; command: Command; line: string }
  /** `/autopilot` followed by something that is not a command (or `retry`/`skip`/`run` without an issue). */
  | { kind: "invalid"; line: string; problem: string };

interface CommandContext {
  /** The issue the comment is on. */
  issue: number;
  /** The tracking issue's number, when it exists. */
  trackingIssue: number | null;
}

const PREFIX = /^ {0,3}\/autopilot(?=\s|$)(.*)$/i;

/**
 * The first command in a comment body, or null when there is none. Never throws.
 */
export function parseCommand(body: string, context: CommandContext): ParsedCommand | null {
  for (const { line, index } of commandLineEntries(body)) {
    const m = PREFIX.exec(line);
    if (!m) continue;
    const parsed = interpret(m[1] ?? "", line.trim(), context);
    if (parsed.kind === "command" && (parsed.command.name === "fix" || parsed.command.name === "follow-up"))
      parsed.command.instructions = commandInstructions(body, index, parsed.command.instructions);
    return parsed;
  }
  return null;
}

/** Instructions are cut here: a prompt gets them fenced, and the dashboard never shows them whole. */
export const MAX_INSTRUCTIONS = 4000;

/**
 * A `fix` or `follow-up`'s instructions: what follows the issue number on the command's line, then the comment's
 * text after that line (code blocks included: an instruction may quote code). Trimmed, at most MAX_INSTRUCTIONS.
 */
function commandInstructions(body: string, lineIndex: number, onLine: string): string {
  // Split as proseLines splits, so the index names the same line.
  const after = body
    .split(/\r?\n/)
    .slice(lineIndex + 1)
    .join("\n");
  return [onLine, after].join("\n").trim().slice(0, MAX_INSTRUCTIONS);
}

/** Every command word `interpret` takes (what an unknown one is compared with). */
const COMMAND_WORDS = [
  "start",
  "go",
  "mode",
  "pause",
  "resume",
  "stop",
  "abort",
  "report",
  "help",
  "status",
  "retry",
  "skip",
  "run",
  "rollback",
  "cleanup",
  "approve",
  "split",
  "fix",
  "follow-up",
];

function interpret(rest: string, line: string, context: CommandContext): ParsedCommand {
  const words = rest.trim().split(/\s+/).filter(Boolean);
  const word = (words[0] ?? "").toLowerCase();
  const onTask = context.issue !== context.trackingIssue;
  const target = parseIssueRef(words[1]);
  const invalid = (problem: string): ParsedCommand => ({ kind: "invalid", line, problem });

  switch (word) {
    case "":
      return invalid("no command given");
    case "start":
    case "pause":
    case "resume":
    case "stop":
    case "abort":
    case "report":
    case "help":
      return { kind: "command", command: { name: word }, line };
    // Design document 004's word for starting a session.
    case "go":
      return { kind: "command", command: { name: "start" }, line };
    case "mode": {
      const mode = (words[1] ?? "").toLowerCase();
      if (mode === "auto" || mode === "semi-auto")
        return { kind: "command", command: { name: "mode", mode }, line };
      return invalid(
        "`mode` needs `auto` (Autopilot starts ready tasks by score) or `semi-auto` (a person starts each with `run`)",
      );
    }
    case "status": {
      const issue = target ?? (onTask ? context.issue : null);
      return { kind: "command", command: { name: "status", issue }, line };
    }
    case "retry":
    case "skip":
    case "run":
    case "rollback":
    case "cleanup":
    case "approve":
    case "split": {
      const options = word === "retry" ? iterationsOption(words.slice(1)) : { rest: words.slice(1) };
      if ("problem" in options) return invalid(options.problem);
      const first = options.rest[0];
      const given = parseIssueRef(first);
      if (first !== undefined && given === null) return invalid(`\`${first}\` is not an issue number`);
      const issue = given ?? (onTask ? context.issue : null);
      if (issue === null)
        return invalid(`\`${word}\` needs an issue number on the tracking issue: \`/autopilot ${word} #N\``);
      if (word === "retry") {
        const iterations = "iterations" in options ? (options.iterations ?? null) : null;
        return { kind: "command", command: { name: "retry", issue, iterations }, line };
      }
      return { kind: "command", command: { name: word, issue }, line };
    }
    case "fix":
    case "follow-up":
    case "followup": {
      const name = word === "fix" ? "fix" : "follow-up";
      const given = parseIssueRef(words[1]);
      const issue = given ?? (onTask ? context.issue : null);
      if (issue === null)
        return invalid(
          `\`${name}\` needs an issue number on the tracking issue: \`/autopilot ${name} #N what to change\``,
        );
      // The words after the command (and the issue number) on its line, as written: spacing kept.
      const afterWord = rest.trim().slice(words[0]!.length).trim();
      const onLine = given !== null ? afterWord.slice(words[1]!.length).trim() : afterWord;
      return { kind: "command", command: { name, issue, instructions: onLine }, line };
    }
    default: {
      const meant = nearestWord(word, COMMAND_WORDS);
      const unknown = `unknown command \`${word.slice(0, 40)}\``;
      return invalid(meant ? `${unknown}; did you mean \`/autopilot ${meant}\`?` : unknown);
    }
  }
}

/** `--iterations M` or `--iterations=M` taken out of a `retry`'s words; the other words stay in order. */
function iterationsOption(words: string[]): { rest: string[]; iterations?: number } | { problem: string } {
  const rest: string[] = [];
  let iterations: number | undefined;
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    const m = /^--iterations(?:=(.*))?$/i.exec(word);
    if (!m) {
      if (word.startsWith("--"))
        return { problem: `\`retry\` has no option \`${word.slice(0, 40)}\` (only \`--iterations M\`)` };
      rest.push(word);
      continue;
    }
    const value = m[1] ?? words[++i];
    if (
      value === undefined ||
      !/^\d{1,9}$/.test(value) ||
      Number(value) < 1 ||
      Number(value) > MAX_ITERATIONS
    )
      return {
        problem: `\`--iterations\` needs a whole number from 1 to ${MAX_ITERATIONS}, e.g. \`/autopilot retry #12 --iterations 40\``,
      };
    iterations = Number(value);
  }
  return iterations === undefined ? { rest } : { rest, iterations };
}

/** `#12`, `12` → 12; anything else → null. */
function parseIssueRef(word: string | undefined): number | null {
  if (word === undefined) return null;
  const m = /^#?(\d{1,9})[.,;:!]?$/.exec(word);
  if (!m) return null;
  const n = Number(m[1]);
  return n > 0 ? n : null;
}

/**
 * The lines of a comment a command may start on: fenced code (``` and ~~~), indented code, block quotes
 * and HTML comments are left out.
 */
export function commandLines(body: string): string[] {
  return commandLineEntries(body).map((entry) => entry.line);
}

/** `commandLines` with each line's index among the body's lines. */
function commandLineEntries(body: string): { line: string; index: number }[] {
  const out: { line: string; index: number }[] = [];
  let previousBlank = true;
  for (const [index, raw] of proseLines(body).entries()) {
    if (raw === null) {
      previousBlank = false;
      continue;
    }
    const blank = raw.trim() === "";
    // Indented code starts only after a blank line (otherwise it is a lazy paragraph continuation).
    const indentedCode: boolean = /^(?: {4}|\t)/.test(raw) && previousBlank;
    if (!blank && !indentedCode) out.push({ line: raw, index });
    previousBlank = blank || (indentedCode && previousBlank);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// Authorization

interface CommentAuthority {
  /** Comments by Autopilot's own bot (or any bot) are never commands. */
  ignored: boolean;
  /** The author may steer Autopilot (write, maintain or admin). */
  authorized: boolean;
}

/** Whether a comment is Autopilot's own (or another bot's), and whether its author has write access. */
export function commentAuthority(
  comment: Pick<CommentNode, "author" | "authorIsBot">,
  botLogin: string,
  permissions: Readonly<Record<string, Permission>>,
): CommentAuthority {
  const author = comment.author;
  if (!author || comment.authorIsBot || sameLogin(author, botLogin) || /\[bot\]$/i.test(author)) {
    return { ignored: true, authorized: false };
  }
  return { ignored: false, authorized: canWrite(lookupPermission(permissions, author)) };
}

/** Permission of a login (GitHub logins are case-insensitive). */
function lookupPermission(
  permissions: Readonly<Record<string, Permission>>,
  login: string | null | undefined,
): Permission | undefined {
  if (!login) return undefined;
  const exact = permissions[login];
  if (exact) return exact;
  const lower = login.toLowerCase();
  for (const [key, value] of Object.entries(permissions)) if (key.toLowerCase() === lower) return value;
  return undefined;
}

/** Whether a login may steer Autopilot (write, maintain or admin). */
export function hasWriteAccess(
  permissions: Readonly<Record<string, Permission>>,
  login: string | null | undefined,
): boolean {
  return canWrite(lookupPermission(permissions, login));
}

export function sameLogin(a: string | null | undefined, b: string | null | undefined): boolean {
  if (!a || !b) return false;
  const norm = (s: string) => s.toLowerCase().replace(/\[bot\]$/, "");
  return norm(a) === norm(b);
}

// ---------------------------------------------------------------------------------------------------------
// Texts

/** The command reference, shown on the dashboard and as the reply to `help` and unknown commands. */
export function commandHelp(): string {
  return [
    "| command | what it does |",
    "|---|---|",
    "| `/autopilot start` (or `go`) | start a session (or start again after a stop or completion) |",
    "| `/autopilot pause` | dispatch nothing new; running workers stop at their next iteration boundary |",
    "| `/autopilot resume` | continue a paused session |",
    "| `/autopilot stop` | end the session once running workers reach their next iteration boundary |",
    "| `/autopilot abort` | end the session now: running worker runs are cancelled at once, their tasks ready again with what they pushed kept on their branches |",
    "| `/autopilot status` | reply with the session's status (on a task issue: that task's status) |",
    "| `/autopilot retry #N` | put a blocked, failed, timed-out or needs-human task back in the queue with a fresh iteration counter |",
    "| `/autopilot retry #N --iterations M` | the same, with that task's iteration limit raised to M |",
    "| `/autopilot skip #N` | take a task out of Autopilot's hands (it gets the exclude label; the issue stays open) |",
    "| `/autopilot run #N` | start this ready task now, in a free slot (the way to start tasks with `mode: semi-auto`) |",
    "| `/autopilot mode auto` / `mode semi-auto` | from now on Autopilot starts ready tasks by score / a person starts each with `run` (instead of the file's `mode`, until the next `mode`) |",
    "| `/autopilot rollback #N` | merged: open a revert pull request (through the same gates); once it merges the task is ready again. Not merged: close its PR, delete its branch, task ready again |",
    "| `/autopilot cleanup #N` | delete a failed, timed-out or skipped task's branch and close its PR; the task keeps its state |",
    "| `/autopilot fix #N what to change` | send the task's open pull request back to a worker with these instructions (the rest of the line and of the comment; on the PR or the task issue `#N` can be left out) |",
    "| `/autopilot follow-up #N what to add` | a merged task: open its issue again and start a new attempt on a fresh branch from the default branch, with these instructions |",
    "| `/autopilot approve #N` | approve the plan a planning run posted on the task (the plan gate): a worker implements it |",
    "| `/autopilot split #N` | a planning run proposes sub-issues of #N (titles, descriptions, the order between them) in a comment on #N; `approve #N` creates them as #N's sub-issues and works them as an epic, any other comment gets a revised proposal |",
    "| `/autopilot report` | reply with the session report: each task's outcome, attempts, iterations, time, tokens and cost, and what waits for whom |",
    "| `/autopilot help` | this list |",
    "",
    "Commands count only from people with write access, at the start of a line of a comment on the tracking issue, on a task issue or on a task's pull request (there `retry`, `skip`, `run`, `rollback`, `cleanup`, `fix`, `follow-up`, `approve`, `split` and `status` default to that issue; an issue with no Autopilot label is split from the tracking issue).",
  ].join("\n");
}

/** The one reply somebody without write access gets. */
export function refusalText(login: string): string {
  return [
    `Thanks for the suggestion, @${login}! Autopilot only takes commands from people with write access to this repository, so nothing has changed.`,
    "A maintainer can run the command for you.",
  ].join(" ");
}
