/**
 * Reads what changed between two trees of the worker's repository — objects only, never the agent's directory —
 * and judges it (src/core/gates/handback-rules.ts): the check every hand-back passes before the worker commits
 * it, and the gate's view of a whole branch at its end.
 */
import { type HandbackEntry, type HandbackVerdict, judgeHandback } from "../../core/gates/handback-rules.js";
import type { Git } from "./private-git.js";
import { treeChanges } from "./tree-diff.js";

/** At most this many symbolic links' targets are read (each is one read on the object reader); more are refused. */
const MAX_LINKS_READ = 200;

interface HandbackCheck {
  verdict: HandbackVerdict;
  /** Something changed outside Autopilot's own `.autopilot/`. */
  changed: boolean;
}

export async function checkHandback(
  git: Pick<Git, "objects">,
  fromTree: string,
  toTree: string,
): Promise<HandbackCheck> {
  if (fromTree === toTree) return { verdict: { refused: [], gated: [] }, changed: false };
  const { objects } = git;
  const changes = await treeChanges(objects, fromTree, toTree);
  const present = changes.filter((c) => c.newMode !== "000000" && c.newMode !== "160000");
  // Missing: null, which the rules refuse.
  const sizes = await Promise.all(present.map(async (c) => (await objects.info(c.newObject))?.size ?? null));
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
      entry.linkTarget = (await objects.contents(change.newObject))?.data?.toString("utf8") ?? "";
    entries.push(entry);
  }
  const changed = changes.some((c) => c.path !== ".autopilot" && !c.path.startsWith(".autopilot/"));
  return { verdict: judgeHandback(entries), changed };
}
