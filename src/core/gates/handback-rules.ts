/**
 * What the worker accepts of the agent's work, judged from objects alone (the entries that changed between the
 * worker's HEAD and the tree the agent's side handed back; src/worker/checkout/handback-check.ts reads them). Some
 * entries are refused outright — nothing of that work is committed or pushed — and some need a person (a
 * human-gate hit), the way the controller's own diff gate treats them (diff-gate.ts):
 *
 * - refused: a gitlink (mode 160000: a nested repository or submodule — git would run commands inside it with
 *   that repository's own config); any path with a `.git` component, in any spelling a file system may take for
 *   it (case, trailing dots and spaces, the 8.3 name `git~1`); a symbolic link whose target is absolute or leaves
 *   the tree; a file over GitHub's 100 MiB limit
 *   (https://docs.github.com/repositories/working-with-files/managing-large-files/about-large-files-on-github);
 *   a tree with more changed entries than `MAX_CHANGED_ENTRIES`;
 * - gated: a symbolic link inside the tree, and a `.gitmodules` anywhere.
 *
 * Everything else is an ordinary file (mode 100644 or 100755) or a directory, which is what the allow-list
 * admits: an entry of any other mode is refused.
 */
import type { HumanGateHit } from "../tasks/worker-result.js";

/** One changed entry of the handed-back tree, with what the rules need to know of its object. */
export interface HandbackEntry {
  path: string;
  /** The new side's mode (`000000`: deleted). */
  mode: string;
  /** The blob's size in bytes (null: unknown or not a blob). */
  size: number | null;
  /** A symbolic link's target (its blob's text). */
  linkTarget?: string;
}

export interface HandbackVerdict {
  /** Why the work cannot be taken, one line per entry (empty: it can). */
  refused: string[];
  /** Entries a person must look at. */
  gated: HumanGateHit[];
}

const MAX_FILE_BYTES = 100 * 1024 * 1024;
const MAX_CHANGED_ENTRIES = 200_000;
/** What a hand-back's pack may weigh (GitHub refuses a push over 2 GiB). */
export const MAX_HANDBACK_BYTES = 2 * 1024 * 1024 * 1024;

const REGULAR_MODES = new Set(["100644", "100755"]);

/** Whether a path component is `.git` as Windows (NTFS, 8.3 names) or macOS (case) would read it. */
function isGitComponent(component: string): boolean {
  const trimmed = component.toLowerCase().replace(/[. ]+$/, "");
  return trimmed === ".git" || trimmed === "git~1";
}

/** Whether a symbolic link at `at` pointing at `target` stays inside the tree. */
function linkStaysInside(at: string, target: string): boolean {
  if (target === "" || target.startsWith("/") || target.includes("\0")) return false;
  const parts = at.split("/").slice(0, -1);
  for (const part of target.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (parts.length === 0) return false;
      parts.pop();
    } else {
      if (isGitComponent(part)) return false;
      parts.push(part);
    }
  }
  return true;
}

export function judgeHandback(entries: readonly HandbackEntry[]): HandbackVerdict {
  const refused: string[] = [];
  const gated: HumanGateHit[] = [];
  if (entries.length > MAX_CHANGED_ENTRIES)
    return {
      refused: [`${entries.length} changed entries, over the limit of ${MAX_CHANGED_ENTRIES}`],
      gated,
    };
  for (const entry of entries) {
    if (entry.mode === "000000") continue;
    const where = entry.path;
    if (entry.path.split("/").some(isGitComponent)) {
      refused.push(`${where}: a path inside a .git directory`);
      continue;
    }
    if (entry.mode === "160000") {
      refused.push(`${where}: a nested git repository or submodule (gitlink)`);
      continue;
    }
    if (entry.mode === "120000") {
      const target = entry.linkTarget ?? "";
      if (!linkStaysInside(entry.path, target)) {
        refused.push(
          `${where}: a symbolic link that leaves the tree (${JSON.stringify(target.slice(0, 200))})`,
        );
        continue;
      }
      gated.push({ rule: "symlink", where: "path", match: where, neverAutoApprove: false });
      continue;
    }
    if (!REGULAR_MODES.has(entry.mode)) {
      refused.push(`${where}: an entry of mode ${entry.mode}`);
      continue;
    }
    if (entry.size === null) {
      refused.push(`${where}: its content was not handed over`);
      continue;
    }
    if (entry.size > MAX_FILE_BYTES) {
      refused.push(`${where}: ${entry.size} bytes, over GitHub's limit of ${MAX_FILE_BYTES} per file`);
      continue;
    }
    if (entry.path.split("/").at(-1)!.toLowerCase() === ".gitmodules")
      gated.push({ rule: "gitmodules", where: "path", match: where, neverAutoApprove: false });
  }
  return { refused, gated };
}
