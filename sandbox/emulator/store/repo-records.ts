/** Repositories and their labels, and how methods name a repository. */
import { StoreError } from "./store-error.js";

/** Identifies a repository; methods also accept the `"owner/name"` string. */
export interface RepoKey {
  owner: string;
  name: string;
}
export type RepoRef = RepoKey | string;

export interface Repo {
  id: number;
  nodeId: string;
  owner: string;
  name: string;
  fullName: string;
  defaultBranch: string;
  private: boolean;
  description: string | null;
  createdAt: Date;
  updatedAt: Date;
  pushedAt: Date;
}

export interface Label {
  id: number;
  nodeId: string;
  name: string;
  color: string;
  description: string | null;
  default: boolean;
}

export function repoKeyOf(ref: RepoRef): RepoKey {
  if (typeof ref !== "string") return { owner: ref.owner, name: ref.name };
  const slash = ref.indexOf("/");
  if (slash <= 0) throw new StoreError(404, "Not Found");
  return { owner: ref.slice(0, slash), name: ref.slice(slash + 1) };
}

/** The map key of a repository: `owner/name`, lower-cased. */
export function fullNameOf(ref: RepoRef): string {
  const key = repoKeyOf(ref);
  return `${key.owner}/${key.name}`.toLowerCase();
}
