/** Readers of git's machine output (log records, `-z` diffs, ls-tree, diff-tree) into the remote's types. */
import type { ChangedFile, CommitInfo, FileStatus } from "./git-remote-types.js";

/** `git log --format` for {@link parseLog}: fields split by 0x1f, records ended by 0x1e. */
export const LOG_FORMAT = `${["%H", "%T", "%P", "%an", "%ae", "%aI", "%cn", "%ce", "%cI", "%B"].join("%x1f")}%x1e`;

export function parseLog(out: string): CommitInfo[] {
  return out
    .split("\x1e")
    .map((record) => record.replace(/^\n/, ""))
    .filter((record) => record.includes("\x1f"))
    .map((record) => {
      const [sha, tree, parents, an, ae, ad, cn, ce, cd, ...message] = record.split("\x1f");
      return {
        sha: sha!,
        tree: tree!,
        parents: parents ? parents.split(" ").filter(Boolean) : [],
        message: message.join("\x1f").replace(/\n+$/, ""),
        author: { name: an!, email: ae!, date: ad! },
        committer: { name: cn!, email: ce!, date: cd! },
      };
    });
}

/** The changed files of `git diff --name-status -z -M`, split at NUL, with no line counts yet. */
export function parseNameStatus(nameStatus: string[]): ChangedFile[] {
  const files: ChangedFile[] = [];
  for (let i = 0; i < nameStatus.length - 1; ) {
    const code = nameStatus[i++]!;
    if (!code) continue;
    const letter = code[0];
    if (letter === "R" || letter === "C") {
      const previous = nameStatus[i++]!;
      const filename = nameStatus[i++]!;
      files.push({
        filename,
        previousFilename: previous,
        status: letter === "R" ? "renamed" : "copied",
        additions: 0,
        deletions: 0,
        changes: 0,
      });
    } else {
      const filename = nameStatus[i++]!;
      const status: FileStatus =
        letter === "A" ? "added" : letter === "D" ? "removed" : letter === "M" ? "modified" : "changed";
      files.push({ filename, status, additions: 0, deletions: 0, changes: 0 });
    }
  }
  return files;
}

/** Sets the line counts of `git diff --numstat -z -M` (split at NUL) on the files it names. */
export function applyNumstat(files: ChangedFile[], numstat: string[]): void {
  // numstat -z: "add\tdel\tpath\0" or for renames "add\tdel\t\0old\0new\0".
  for (let i = 0; i < numstat.length; ) {
    const entry = numstat[i++];
    if (!entry) continue;
    const [add, del, path] = entry.split("\t");
    let filename = path;
    if (path === "") {
      i++;
      filename = numstat[i++];
    }
    const file = files.find((f) => f.filename === filename);
    if (!file) continue;
    file.additions = add === "-" ? 0 : Number(add);
    file.deletions = del === "-" ? 0 : Number(del);
    file.changes = file.additions + file.deletions;
  }
}

/** The entries of `git ls-tree -l -z` of the directory `dir` ("" for the root), with paths from the root. */
export function parseLsTree(
  out: string,
  dir: string,
): { path: string; type: "blob" | "tree"; sha: string; size?: number }[] {
  return out
    .split("\0")
    .filter(Boolean)
    .map((line) => {
      const [meta = "", name = ""] = line.split("\t");
      const [, type, objectSha, size] = meta.split(/\s+/);
      return {
        path: dir ? `${dir}/${name}` : name,
        type: type === "tree" ? ("tree" as const) : ("blob" as const),
        sha: objectSha!,
        ...(size && size !== "-" ? { size: Number(size) } : {}),
      };
    });
}

/** The entries of `git ls-tree -r -t -l -z` with their git modes. */
export function parseLsTreeRecursive(
  out: string,
): { path: string; mode: string; type: "blob" | "tree" | "commit"; sha: string; size?: number }[] {
  return out
    .split("\0")
    .filter(Boolean)
    .map((line) => {
      const tab = line.indexOf("\t");
      const [mode = "", kind = "", objectSha = "", size = ""] = line.slice(0, tab).split(/\s+/);
      return {
        path: line.slice(tab + 1),
        mode,
        type:
          kind === "tree" ? ("tree" as const) : kind === "commit" ? ("commit" as const) : ("blob" as const),
        sha: objectSha,
        ...(size && size !== "-" ? { size: Number(size) } : {}),
      };
    });
}

/** The paths one commit added, removed and modified, from `git diff-tree --name-status -r -z`. */
export function parseChangedPaths(out: string): { added: string[]; removed: string[]; modified: string[] } {
  const parts = out.split("\0").filter(Boolean);
  const added: string[] = [];
  const removed: string[] = [];
  const modified: string[] = [];
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const status = parts[i]!;
    const path = parts[i + 1]!;
    if (status.startsWith("A")) added.push(path);
    else if (status.startsWith("D")) removed.push(path);
    else modified.push(path);
  }
  return { added, removed, modified };
}
