/**
 * Monorepo workspaces (`workspaces` in .github/autopilot.yml): which quality commands a change runs, and where an
 * agent routed to a workspace works. A change runs the commands of every workspace whose paths it touches, each in
 * the workspace's directory, and the top-level `qualityCommands` (at the root) only when it also touches files of
 * no workspace — shared files, which any part may depend on — or when there are no workspaces at all. A change
 * that touches nothing the scoping can see (no path yet) runs the top-level commands: never nothing. The worker's
 * own progress notes are not among the paths (the private git leaves `.autopilot` out of `changedPaths`). Pure.
 */
import { pathGlobTest } from "./human-gate.js";

interface Workspace {
  name: string;
  paths: readonly string[];
  directory: string | null;
  qualityCommands: readonly string[];
  label: string | null;
}

/** The commands one part of the repository runs, and where (null: the root). */
interface QualityScope {
  /** The workspace's name; null for the top-level commands. */
  workspace: string | null;
  directory: string | null;
  commands: string[];
}

/** Which commands a change of `changed` (repository-relative paths) runs, workspace by workspace. */
export function qualityScopes(
  changed: readonly string[],
  workspaces: readonly Workspace[],
  rootCommands: readonly string[],
): QualityScope[] {
  const root: QualityScope = { workspace: null, directory: null, commands: [...rootCommands] };
  const paths = changed;
  if (workspaces.length === 0 || paths.length === 0) return [root];
  const tests = workspaces.map((workspace) => workspace.paths.map(pathGlobTest));
  const touched = new Set<number>();
  let shared = false;
  for (const path of paths) {
    let owned = false;
    tests.forEach((globs, i) => {
      if (globs.some((test) => test(path))) {
        touched.add(i);
        owned = true;
      }
    });
    if (!owned) shared = true;
  }
  const scopes = workspaces
    .filter((_, i) => touched.has(i))
    .map((workspace) => ({
      workspace: workspace.name,
      directory: workspace.directory,
      commands: [...workspace.qualityCommands],
    }));
  return shared ? [root, ...scopes] : scopes;
}

/** The workspace a task is routed to by its labels (the first workspace whose `label` it carries), or null. */
export function workspaceOfTask<W extends Workspace>(
  labels: readonly string[],
  workspaces: readonly W[],
): W | null {
  const carried = new Set(labels.map((label) => label.trim().toLowerCase()));
  return workspaces.find((w) => w.label !== null && carried.has(w.label.trim().toLowerCase())) ?? null;
}
