/**
 * The machine's git by absolute path, for the tests' own git commands. Never `git` by name: that is the first on
 * PATH, and `npm run`/`npx` put `/tmp/node_modules/.bin` there for a checkout under /tmp, where any user (the
 * red-team tests' hostile agents included) can plant one that would then run as the test's user. Test equipment
 * imports nothing of Autopilot's for this (src/worker/isolation/trusted-binaries.ts is the worker's own).
 */
import { existsSync } from "node:fs";

const CANDIDATES = ["/usr/bin/git", "/usr/local/bin/git", "/bin/git", "/opt/homebrew/bin/git"];

export function systemGit(): string {
  const found = CANDIDATES.find((file) => existsSync(file));
  if (!found) throw new Error(`git is not installed (looked for ${CANDIDATES.join(", ")})`);
  return found;
}
