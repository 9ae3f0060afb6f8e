/**
 * The task text is frozen when a person with write access approves it (the ready label): the controller
 * records a digest of the title and body, and the worker refuses a text whose digest differs. Later edits
 * count only when every one of them was made by a writer (they approved the new text, which is frozen
 * again); an edit by anyone else takes the task out until a writer labels it ready once more.
 *
 * Pure: the digest is the SHA-256 of text/sha256.ts, no I/O, no clock.
 */
import { quietLogin } from "../text/markdown.js";
import { sha256Hex } from "../text/sha256.js";

/** The digest of a task's text: title and body, kept apart (a title cannot end where a body begins). */
export function taskDigest(title: string, body: string | null | undefined): string {
  return sha256Hex(JSON.stringify([title, body ?? ""]));
}

/** A digest as the worker's `task-digest` input carries it. */
export const TASK_DIGEST_PATTERN = /^[0-9a-f]{64}$/;

/** One edit of an issue's title or body, as GitHub records it (userContentEdits, title renames). */
export interface TextEdit {
  /** ISO time of the edit. */
  at: string;
  /** Login of who made it; null when GitHub does not say (a deleted account). */
  by: string | null;
  what: "body" | "title";
}

/** What the controller froze: the digest, and the time after which edits are new. */
interface FrozenText {
  digest: string;
  /** Edits before this time were judged already (approved by the label, or by a writer's edit). */
  since: string;
}

type TextVerdict =
  | { kind: "unchanged" }
  /** Every edit since the freeze was a writer's: the text they left is the approved one now. */
  | { kind: "refreeze"; frozen: FrozenText }
  /** Someone without write access changed it (or who changed it cannot be told): take the task out. */
  | {
      kind: "takeOut";
      editors: (string | null)[];
      /**
       * Every edit that decided it carries the approval's own second: GitHub stamps both to the second, so the
       * edit may have come before the label (the comment says so, and how to approve the text for certain).
       */
      sameSecond?: boolean;
    };

/**
 * Judges the text an issue has now against what was approved. `frozen` is the recorded freeze, or (for a
 * task labeled but never dispatched) the ready label's time with no digest: then only edits count.
 */
export function judgeTaskText(input: {
  title: string;
  body: string;
  frozen: { digest: string | null; since: string | null };
  edits: readonly TextEdit[];
  /** Whether a login has write access (the snapshot's permissions). */
  isWriter: (login: string) => boolean;
}): TextVerdict {
  const since = input.frozen.since ? Date.parse(input.frozen.since) : Number.NaN;
  // GitHub stamps edits and labels to the second: an edit in the freeze's own second may have come after it.
  const later = input.edits.filter((e) => Number.isNaN(since) || Date.parse(e.at) >= since);
  const foreign = later.filter((e) => !e.by || !input.isWriter(e.by));
  const digest = taskDigest(input.title, input.body);
  if (input.frozen.digest === null) {
    // Not frozen yet: the label approved the text as it was; any later edit by someone else undoes that.
    return foreign.length ? takeOut(foreign, since) : { kind: "unchanged" };
  }
  if (digest === input.frozen.digest) return { kind: "unchanged" };
  if (foreign.length === 0 && later.length > 0) {
    return { kind: "refreeze", frozen: { digest, since: latest(later) } };
  }
  // Changed, and either someone without write access edited it or no edit explains the change.
  return takeOut(foreign, since);
}

function takeOut(foreign: readonly TextEdit[], since: number): TextVerdict {
  const editors = unique(foreign.map((e) => e.by));
  const sameSecond = foreign.length > 0 && foreign.every((e) => Date.parse(e.at) === since);
  return sameSecond ? { kind: "takeOut", editors, sameSecond } : { kind: "takeOut", editors };
}

/** The time of the newest edit, or `fallback` when there is none. */
export function lastEditAt(edits: readonly TextEdit[], fallback: string): string {
  return edits.length ? latest([...edits, { at: fallback, by: null, what: "body" }]) : fallback;
}

function latest(edits: readonly TextEdit[]): string {
  return edits.reduce((a, e) => (Date.parse(e.at) > Date.parse(a) ? e.at : a), edits[0]!.at);
}

function unique<T>(list: T[]): T[] {
  return [...new Set(list)];
}

/** The comment on a task taken out because its text changed after approval. */
export function textChangedComment(input: {
  editors: (string | null)[];
  readyLabel: string;
  sameSecond?: boolean;
}): string {
  const who = input.editors.filter((e): e is string => !!e);
  const by = who.length
    ? `by ${who.map(quietLogin).join(", ")}, who ${who.length > 1 ? "have" : "has"} no write access`
    : "and Autopilot cannot tell by whom";
  return [
    `The title or description of this issue was edited ${by}, after a maintainer approved the task with the \`${input.readyLabel}\` label.`,
    "",
    "Autopilot works only on text a person with write access approved, so it took the task out: its labels are removed, a running worker was stopped, and its pull request will not be merged.",
    "",
    `To put it back, a person with write access reads the text as it is now and adds the \`${input.readyLabel}\` label again.`,
    ...(input.sameSecond
      ? [
          "",
          "The edit carries the same second as the label: GitHub records both only to the second, so Autopilot cannot tell whether the edit came before the label and treats it as after. Wait a moment before adding the label again.",
        ]
      : []),
  ].join("\n");
}
