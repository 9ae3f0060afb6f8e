/** Checks of the names git commands get as arguments, and the normalization of short ref names. */
import { GitRemoteError } from "./git-remote-error.js";

const SAFE_NAME = /^[A-Za-z0-9_.-]+$/;

export function assertName(kind: string, value: string): void {
  if (!SAFE_NAME.test(value) || value.startsWith(".") || value.includes(".."))
    throw new GitRemoteError(`invalid ${kind}: ${value}`, 404);
}

export function assertRefArg(value: string): void {
  if (!value || value.startsWith("-") || /[\s\0~^:?*[\\]/.test(value.replace(/\^\{commit\}$/, ""))) {
    throw new GitRemoteError(`invalid ref: ${value}`);
  }
}

/** Normalizes a branch name or short ref to a full ref name. */
export function fullRef(ref: string): string {
  if (ref.startsWith("refs/")) return ref;
  if (ref.startsWith("heads/") || ref.startsWith("tags/") || ref.startsWith("pull/")) return `refs/${ref}`;
  return `refs/heads/${ref}`;
}
