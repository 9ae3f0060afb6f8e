/**
 * When a limit lifts, read from an agent's error text (classify.ts asks, for text it already knows is an error):
 * an epoch time, seconds to wait, a duration ("try again in 2h 13m"), or a wall-clock time with or without its
 * zone ("resets 3:30am (Asia/Calcutta)", "Jul 31, 2am"), as the next such moment after `now`. Pure: `now` is
 * passed in.
 */
/** Text from Google's APIs (Gemini): its quota errors are rate limits, and its daily quota resets at midnight in California. */
export const GOOGLE =
  /RESOURCE_EXHAUSTED|googleapis|generativelanguage|ai\.google\.dev|gemini|\bAI Studio\b/i;

const GRACE_MS = 60 * 60 * 1000;
const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
/** As Date's getUTCDay counts them (Sunday 0). */
const WEEKDAYS = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];

export function epochToDate(value: unknown): Date | undefined {
  const n = typeof value === "string" && /^\d+$/.test(value) ? Number(value) : value;
  if (typeof n !== "number" || !Number.isFinite(n) || n <= 0) return undefined;
  return new Date(n > 1e12 ? n : n * 1000);
}

const UNIT_MS: Record<string, number> = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};
const DURATION_PART =
  /^[\s,]*(?:and\s+)?(\d+(?:\.\d+)?)\s*(ms|milliseconds?|s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?|d|days?|w|wks?|weeks?)(?![a-z])/i;

/** "2h 13m", "4 days 6 hours 37 minutes", "20s", "6m0s", "5.289s", "~90 min" → milliseconds. */
function parseDuration(text: string): number | undefined {
  let rest = text.replace(/^\s*~\s*/, "");
  let total = 0;
  let parts = 0;
  for (let match = DURATION_PART.exec(rest); match !== null; match = DURATION_PART.exec(rest)) {
    const unit = match[2]!.toLowerCase();
    const key =
      unit === "ms" || unit.startsWith("milli")
        ? "ms"
        : unit.startsWith("mi") || unit === "m"
          ? "m"
          : unit[0]!;
    total += Number(match[1]) * UNIT_MS[key]!;
    parts++;
    rest = rest.slice(match[0].length);
  }
  return parts > 0 ? total : undefined;
}

export function parseResetTime(text: string, now: Date | undefined, timeZone: string): Date | undefined {
  const epoch =
    /usage limit reached\|(\d{10,13})\b/i.exec(text) ??
    /\\*"(?:resetsAt|resets_at|reset_at)\\*"\s*:\s*(\d{10,13})\b/.exec(text);
  if (epoch) return epochToDate(epoch[1]);
  if (!now) return undefined;
  const seconds =
    /\\*"resets_in_seconds\\*"\s*:\s*(\d+(?:\.\d+)?)/.exec(text) ??
    /\\*"retryDelay\\*"\s*:\s*\\*"(\d+(?:\.\d+)?)s/.exec(text);
  if (seconds) return new Date(now.getTime() + Number(seconds[1]) * 1000);
  for (const match of text.matchAll(
    /\b(?:try again|retry|retrying|resets?|available again)\s+(?:in|after)\s+/gi,
  )) {
    const ms = parseDuration(text.slice(match.index + match[0].length));
    if (ms !== undefined) return new Date(now.getTime() + ms);
  }
  for (const match of text.matchAll(/\b(?:resets?|try again|available again)\b(?:\s+(?:at|on))?\s+/gi)) {
    const at = parseWallClock(text.slice(match.index + match[0].length), now, timeZone);
    if (at) return at;
  }
  if (GOOGLE.test(text) && /PerDay|\bper day\b|daily quota/i.test(text))
    return nextMidnight(now, "America/Los_Angeles");
  return undefined;
}

/**
 * "3:30am (Asia/Calcutta)", "5pm", "15:00 UTC", "Jul 31, 2am (UTC)", "Sep 15 at 7pm",
 * "Apr 28th, 2026 10:03 PM", "Aug 18", "Wednesday 6:50pm" at the start of `text`, as the next such moment after
 * `now`.
 */
function parseWallClock(text: string, now: Date, defaultZone: string): Date | undefined {
  let rest = text;
  let month: number | undefined;
  let day: number | undefined;
  let year: number | undefined;
  const date = /^([A-Za-z]{3})[a-z]*\.?\s+(\d{1,2})(?:st|nd|rd|th)?\b(?:,?\s+(\d{4})\b)?/.exec(rest);
  if (date && MONTHS.includes(date[1]!.toLowerCase())) {
    month = MONTHS.indexOf(date[1]!.toLowerCase()) + 1;
    day = Number(date[2]);
    year = date[3] ? Number(date[3]) : undefined;
    rest = rest.slice(date[0].length).replace(/^,?\s*(?:at\s+)?/, "");
  }
  // A weekday instead of a date ("resets Wednesday 6:50pm"): its next occurrence, with a time only.
  let weekday: number | undefined;
  const named =
    /^(sun|mon|tue|wed|thu|fri|sat)(?:day|s|sday|nesday|rsday|r|rs|urday)?\.?,?\s+(?:at\s+)?/i.exec(rest);
  if (month === undefined && named && WEEKDAYS.includes(named[1]!.toLowerCase())) {
    weekday = WEEKDAYS.indexOf(named[1]!.toLowerCase());
    rest = rest.slice(named[0].length);
  }
  let hour: number | undefined;
  let minute = 0;
  const twelve = /^(\d{1,2})(?::(\d{2}))?\s*([ap])\.?\s?m\b\.?/i.exec(rest);
  const twentyFour = /^(\d{1,2}):(\d{2})(?!\s*[ap]\.?\s?m\b)/i.exec(rest);
  if (twelve) {
    const h = Number(twelve[1]);
    if (h < 1 || h > 12) return undefined;
    hour = (h % 12) + (twelve[3]!.toLowerCase() === "p" ? 12 : 0);
    minute = Number(twelve[2] ?? 0);
    rest = rest.slice(twelve[0].length);
  } else if (twentyFour) {
    hour = Number(twentyFour[1]);
    minute = Number(twentyFour[2]);
    rest = rest.slice(twentyFour[0].length);
  }
  if (month === undefined && hour === undefined) return undefined;
  if (weekday !== undefined && hour === undefined) return undefined;
  if ((hour ?? 0) > 23 || minute > 59) return undefined;
  const zoneMatch = /^\s*\(([A-Za-z][\w+\-/]*)\)/.exec(rest) ?? /^\s+(UTC|GMT)\b/.exec(rest);
  const zone = zoneMatch ? zoneMatch[1]! : defaultZone;
  if (!isTimeZone(zone)) return undefined;
  const today = wallClock(now.getTime(), zone);
  if (month !== undefined && day !== undefined) {
    let y = year ?? today.year;
    let t = zonedToUtc(y, month, day, hour ?? 0, minute, zone);
    if (year === undefined && t < now.getTime() - GRACE_MS) {
      y += 1;
      t = zonedToUtc(y, month, day, hour ?? 0, minute, zone);
    }
    return new Date(t);
  }
  const ahead =
    weekday === undefined
      ? 0
      : (weekday - new Date(Date.UTC(today.year, today.month - 1, today.day)).getUTCDay() + 7) % 7;
  const first = new Date(Date.UTC(today.year, today.month - 1, today.day + ahead));
  let t = zonedToUtc(
    first.getUTCFullYear(),
    first.getUTCMonth() + 1,
    first.getUTCDate(),
    hour!,
    minute,
    zone,
  );
  if (t < now.getTime() - GRACE_MS) {
    // Past already: the next day for a time alone, the next week for a weekday.
    const tomorrow = new Date(
      Date.UTC(today.year, today.month - 1, today.day + ahead + (weekday === undefined ? 1 : 7)),
    );
    t = zonedToUtc(
      tomorrow.getUTCFullYear(),
      tomorrow.getUTCMonth() + 1,
      tomorrow.getUTCDate(),
      hour!,
      minute,
      zone,
    );
  }
  return new Date(t);
}

function nextMidnight(now: Date, zone: string): Date {
  const today = wallClock(now.getTime(), zone);
  const tomorrow = new Date(Date.UTC(today.year, today.month - 1, today.day + 1));
  return new Date(
    zonedToUtc(tomorrow.getUTCFullYear(), tomorrow.getUTCMonth() + 1, tomorrow.getUTCDate(), 0, 0, zone),
  );
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
    formatters.set(zone, f);
  }
  return f;
}

function isTimeZone(zone: string): boolean {
  try {
    formatter(zone);
    return true;
  } catch {
    return false;
  }
}

interface Wall {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

function wallClock(t: number, zone: string): Wall {
  const parts: Record<string, number> = {};
  for (const part of formatter(zone).formatToParts(t)) {
    if (part.type !== "literal") parts[part.type] = Number(part.value);
  }
  return {
    year: parts.year!,
    month: parts.month!,
    day: parts.day!,
    hour: parts.hour! % 24,
    minute: parts.minute!,
    second: parts.second!,
  };
}

function offsetAt(t: number, zone: string): number {
  const w = wallClock(t, zone);
  return Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second) - Math.floor(t / 1000) * 1000;
}

/** The UTC instant at which the wall clock in `zone` shows the given time (DST-aware). */
function zonedToUtc(
  year: number,
  month: number,
  day: number,
  hour: number,
  minute: number,
  zone: string,
): number {
  const guess = Date.UTC(year, month - 1, day, hour, minute);
  const first = offsetAt(guess, zone);
  const t = guess - first;
  const second = offsetAt(t, zone);
  return second === first ? t : guess - second;
}
