/** Ref names and synthetic SHAs for the store's in-memory git. */
import { createHash } from "node:crypto";

/** A deterministic, plausible commit SHA for the in-memory ref mode. */
export function syntheticSha(...parts: string[]): string {
  return createHash("sha1").update(parts.join("\0")).digest("hex");
}

/** A branch name from a full ref (`refs/heads/x` → `x`); other refs unchanged. */
export function branchOf(ref: string): string {
  return ref.startsWith("refs/heads/") ? ref.slice("refs/heads/".length) : ref;
}

/** A full ref from a branch name (`x` → `refs/heads/x`); full refs unchanged. */
export function fullRef(ref: string): string {
  return ref.startsWith("refs/") ? ref : `refs/heads/${ref}`;
}
