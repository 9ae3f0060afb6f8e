/** A repository's labels (applying them to issues is in with-issues.ts). */
import { encodeNodeId } from "./node-ids.js";
import type { Label, RepoRef } from "./repo-records.js";
import type { RepoState } from "./store-core.js";
import { StoreError } from "./store-error.js";
import { StoreWithInstallations } from "./with-installations.js";

const DEFAULT_LABEL_COLOR = "ededed";

export class StoreWithLabels extends StoreWithInstallations {
  createLabel(repo: RepoRef, input: { name: string; color?: string; description?: string | null }): Label {
    const state = this.state(repo);
    if (state.labels.has(input.name.toLowerCase())) {
      throw new StoreError(422, "Validation Failed", [
        { resource: "Label", code: "already_exists", field: "name" },
      ]);
    }
    const id = this.id();
    const label: Label = {
      id,
      nodeId: encodeNodeId("Label", id),
      name: input.name,
      color: (input.color ?? DEFAULT_LABEL_COLOR).replace(/^#/, ""),
      description: input.description ?? null,
      default: false,
    };
    state.labels.set(input.name.toLowerCase(), label);
    return label;
  }

  getLabel(repo: RepoRef, name: string): Label | undefined {
    return this.state(repo).labels.get(name.toLowerCase());
  }

  listLabels(repo: RepoRef): Label[] {
    return [...this.state(repo).labels.values()];
  }

  updateLabel(
    repo: RepoRef,
    name: string,
    patch: { newName?: string; color?: string; description?: string | null },
  ): Label {
    const state = this.state(repo);
    const label = state.labels.get(name.toLowerCase());
    if (!label) throw new StoreError(404, "Not Found");
    if (patch.newName && patch.newName !== label.name) {
      state.labels.delete(label.name.toLowerCase());
      for (const issue of state.issues.values()) {
        issue.labels = issue.labels.map((l) =>
          l.toLowerCase() === label.name.toLowerCase() ? patch.newName! : l,
        );
      }
      label.name = patch.newName;
      state.labels.set(label.name.toLowerCase(), label);
    }
    if (patch.color) label.color = patch.color.replace(/^#/, "");
    if (patch.description !== undefined) label.description = patch.description;
    return label;
  }

  deleteLabel(repo: RepoRef, name: string): void {
    const state = this.state(repo);
    const key = name.toLowerCase();
    if (!state.labels.delete(key)) throw new StoreError(404, "Not Found");
    for (const issue of state.issues.values())
      issue.labels = issue.labels.filter((l) => l.toLowerCase() !== key);
  }

  protected ensureLabel(state: RepoState, name: string): Label {
    return state.labels.get(name.toLowerCase()) ?? this.createLabel(state.repo.fullName, { name });
  }
}
