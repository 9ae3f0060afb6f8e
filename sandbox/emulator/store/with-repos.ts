/** The store's repositories. */
import { encodeNodeId } from "./node-ids.js";
import { syntheticSha } from "./ref-names.js";
import { type Repo, type RepoRef, fullNameOf } from "./repo-records.js";
import { StoreError } from "./store-error.js";
import { StoreWithUsers } from "./with-users.js";

interface CreateRepoInput {
  owner: string;
  name: string;
  defaultBranch?: string;
  private?: boolean;
  description?: string | null;
}

export class StoreWithRepos extends StoreWithUsers {
  /** Creates a repository; its owner becomes a user (admin) if unknown. */
  createRepo(input: CreateRepoInput): Repo {
    const key = `${input.owner}/${input.name}`.toLowerCase();
    if (this.repos.has(key)) throw new StoreError(422, "Repository creation failed: name already exists");
    if (!this.getUser(input.owner)) this.addUser(input.owner, { permission: "read" });
    const id = this.id();
    const at = this.now();
    const repo: Repo = {
      id,
      nodeId: encodeNodeId("Repository", id),
      owner: input.owner,
      name: input.name,
      fullName: `${input.owner}/${input.name}`,
      defaultBranch: input.defaultBranch ?? "main",
      private: input.private ?? false,
      description: input.description ?? null,
      createdAt: at,
      updatedAt: at,
      pushedAt: at,
    };
    this.repos.set(key, {
      repo,
      labels: new Map(),
      issues: new Map(),
      comments: new Map(),
      nextNumber: 1,
      refs: new Map([[`refs/heads/${repo.defaultBranch}`, syntheticSha(repo.fullName, "initial")]]),
      files: new Map(),
      checkSuites: new Map(),
      checkRuns: new Map(),
      statuses: [],
      workflows: new Map(),
      runs: new Map(),
      permissions: new Map(),
      pushes: [],
    });
    return repo;
  }

  getRepo(repo: RepoRef): Repo | undefined {
    return this.repos.get(fullNameOf(repo))?.repo;
  }

  getRepoById(id: number): Repo | undefined {
    for (const state of this.repos.values()) if (state.repo.id === id) return state.repo;
    return undefined;
  }

  listRepos(): Repo[] {
    return [...this.repos.values()].map((s) => s.repo);
  }
}
