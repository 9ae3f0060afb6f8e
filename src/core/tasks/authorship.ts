/**
 * Whose words count. Autopilot believes its own markers (worker results, state, the tracking issue) and its
 * own status labels only when GitHub says Autopilot wrote or set them — by the account id of the token's
 * identity, never by a login string a person could imitate. Text from anyone else that reaches a log is
 * capped and escaped first, so it cannot issue workflow commands (`::set-output`, `::add-mask::`) or flood it.
 */

/** The most characters of someone else's text a log line carries. */
export const LOG_TEXT_MAX = 200;

/**
 * Text fit for one log line: control characters and line breaks escaped (a workflow command must start a
 * line), `::` broken up (so no part reads as a command either), and at most `max` characters kept.
 */
export function logSafe(text: string, max: number = LOG_TEXT_MAX): string {
  const head = text.length > max ? text.slice(0, max) : text;
  const escaped = head
    .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (c) =>
      c === "\n"
        ? "\\n"
        : c === "\r"
          ? "\\r"
          : c === "\t"
            ? "\\t"
            : `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
    )
    .replace(/::/g, ":%3A")
    .replace(/%0A|%0D/gi, (m) => `%25${m.slice(1)}`);
  return text.length > max ? `${escaped}… (${text.length - max} more characters)` : escaped;
}

/** Who set a label, as a label event tells it. */
interface LabelEvent {
  label: string;
  at: string;
  /** Login of the actor; null when GitHub does not say (a deleted account). */
  by: string | null;
  /** The actor is Autopilot's own account (matched by id). */
  byApp: boolean;
}

/**
 * The status labels (other than ready) an issue carries that Autopilot did not set: for each, the newest
 * labeled event decides; a label whose event is not among those read counts as set by someone unknown.
 */
export function foreignStatusLabels(input: {
  labels: readonly string[];
  /** Status labels that count only from Autopilot (in-progress, review, blocked, needs-human, …). */
  statusLabels: readonly string[];
  events: readonly LabelEvent[];
}): { label: string; by: string | null }[] {
  const out: { label: string; by: string | null }[] = [];
  const status = new Set(input.statusLabels.map((l) => l.toLowerCase()));
  for (const label of input.labels) {
    if (!status.has(label.toLowerCase())) continue;
    let newest: LabelEvent | null = null;
    for (const e of input.events) {
      if (e.label.toLowerCase() !== label.toLowerCase()) continue;
      if (!newest || Date.parse(e.at) >= Date.parse(newest.at)) newest = e;
    }
    if (!newest?.byApp) out.push({ label, by: newest?.by ?? null });
  }
  return out;
}
