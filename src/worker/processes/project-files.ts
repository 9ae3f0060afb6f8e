/**
 * What the quality-command detection reads of a project (processes/quality.ts): a directory's top-level files, or
 * the worker's committed tree read from objects (checkout/task-checkout.ts).
 */
import { lstat } from "node:fs/promises";
import path from "node:path";
import { readTreeFile } from "../checkout/tree-files.js";

/**
 * The files of a project that detection reads, top level only: a directory (`autopilot init` on a checkout of
 * the user's), or the worker's committed tree read from objects (task-checkout.ts), never the agent's directory.
 */
export interface ProjectFiles {
  /** Whether a regular file of that name is there. */
  has(name: string): Promise<boolean>;
  /** Its text, or null when it is not a regular file there. */
  text(name: string): Promise<string | null>;
}

/** A directory's files, never through a link (tree-files.ts). */
export function directoryFiles(dir: string): ProjectFiles {
  return {
    async has(name) {
      try {
        return (await lstat(path.join(dir, name))).isFile();
      } catch {
        return false;
      }
    },
    async text(name) {
      try {
        return await readTreeFile(dir, name);
      } catch {
        return null;
      }
    },
  };
}
