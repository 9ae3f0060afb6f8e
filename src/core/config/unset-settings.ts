/**
 * The settings a repository's `.github/autopilot.yml` leaves out, by key path: what `autopilot init` reports
 * instead of rewriting the file (a user's file is never rewritten; src/cli/init.ts).
 */
import { formatPath, isPlainObject } from "./key-paths.js";

/**
 * Key paths `reference` has that `written` (the user's parsed YAML) does not set. A mapping both have is looked
 * into, so a file that sets `humanGate.paths` is told about `humanGate.supplyChain`; any other value the user
 * wrote (a list, a scalar, `network: open`) counts as setting the whole key.
 */
export function settingsNotSet(written: unknown, reference: unknown): string[] {
  const missing: string[] = [];
  const walk = (user: unknown, ref: unknown, path: string[]) => {
    if (!isPlainObject(ref)) return;
    for (const key of Object.keys(ref)) {
      if (!isPlainObject(user) || !Object.hasOwn(user, key)) missing.push(formatPath([...path, key]));
      else if (isPlainObject(user[key])) walk(user[key], ref[key], [...path, key]);
    }
  };
  walk(written, reference, []);
  return missing;
}
