/**
 * Reads what changed between two trees of the worker's repository — objects only, never the agent's directory —
 * and judges it (src/core/gates/handback-rules.ts): the check every hand-back passes before the worker commits
 * it, and the gate's view of a whole branch at its end.
 */
import { type HandbackEntry, type HandbackVerdict, judgeHandback } from "../../core/gates/handback-rules.js";
import { blobText, objectSizes, treeChanges } from "./git-objects.js";
import type { Git } from "./private-git.js";

/** At most this many symbolic links' targets are read (each is one small process); more are refused. */
const MAX_LINKS_READ = 200;

interface HandbackCheck {
  verdict: HandbackVerdict;
  /** Something changed outside Autopilot's own `.autopilot/`. */
  changed: boolean;
}

export async function checkHandback(git: Git, fromTree: string, toTree: string): Promise<HandbackCheck> {
  if (fromTree === toTree) return { verdict: { refused: [], gated: [] }, changed: false };
  const changes = await treeChanges(git, fromTree, toTree);
  const present = changes.filter((c) => c.newMode !== "000000" && c.newMode !== "160000");
  const sizes = await objectSizes(
    git,
    present.map((c) => c.newObject),
  );
  const sizeOf = new Map(present.map((c, i) => [c.path, sizes[i] ?? null]));
  const entries: HandbackEntry[] = [];
  let links = 0;
  for (const change of changes) {
    const entry: HandbackEntry = {
      path: change.path,
      mode: change.newMode,
      size: sizeOf.get(change.path) ?? null,
    };
    if (change.newMode === "120000" && links++ < MAX_LINKS_READ && (entry.size ?? 0) <= 4096)
      entry.linkTarget = await blobText(git, change.newObject);
    entries.push(entry);
  }
  const changed = changes.some((c) => c.path !== ".autopilot" && !c.path.startsWith(".autopilot/"));
  return { verdict: judgeHandback(entries), changed };
}
