/**
 * actions/upload-artifact (v4 and later) in the sandbox: the files a step names are kept with the run in the
 * store, which the REST API lists (`GET …/actions/runs/{run_id}/artifacts`, sandbox/emulator/rest/actions-endpoints.ts).
 * Its inputs and refusals are the action's own (https://github.com/actions/upload-artifact, action.yml and README):
 * a name new to the run unless `overwrite`, no `"` `:` `<` `>` `|` `*` `?` `\` `/` or line breaks in it, hidden
 * files left out unless `include-hidden-files`, one file only without `archive`, and `if-no-files-found`
 * deciding what no file means. Paths are plain files or directories, relative to the workspace: wildcard patterns
 * are refused (a workflow relying on them would pass here and not be proven).
 */
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { basename, join, relative, resolve } from "node:path";
import type { RunHandle } from "./actions-types.js";
import type { JobHost } from "./job-host.js";
import { StoreError } from "../store/store-error.js";

const INVALID_NAME = /[":<>|*?\\/\r\n]/;

/** Every file under `path` (itself when it is a file), by its path relative to `root`; hidden ones when asked. */
function filesUnder(path: string, root: string, hidden: boolean, into: Map<string, string>): void {
  const stat = statSync(path);
  if (stat.isFile()) {
    into.set(relative(root, path) || basename(path), path);
    return;
  }
  if (!stat.isDirectory()) return;
  for (const entry of readdirSync(path)) {
    if (!hidden && entry.startsWith(".")) continue;
    filesUnder(join(path, entry), root, hidden, into);
  }
}

export function uploadArtifact(
  host: JobHost,
  handle: RunHandle,
  withValues: Record<string, string>,
  env: NodeJS.ProcessEnv,
  workspace: string,
): number {
  const log = (line: string) => host.steps.log(handle, line);
  const archive = (withValues.archive ?? "true").trim().toLowerCase() !== "false";
  let name = (withValues.name ?? "").trim() || "artifact";
  const lines = (withValues.path ?? "")
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean);
  if (lines.length === 0) {
    log("##[error]Input required and not supplied: path");
    return 1;
  }
  const patterns = lines.filter((l) => !l.startsWith("!"));
  if (patterns.some((l) => /[*?[\]]/.test(l))) {
    log(
      "##[error]The sandbox's upload-artifact takes plain file and directory paths, not wildcard patterns.",
    );
    return 1;
  }
  const hidden = (withValues["include-hidden-files"] ?? "false").trim().toLowerCase() === "true";
  const excluded = lines.filter((l) => l.startsWith("!")).map((l) => resolve(workspace, l.slice(1)));
  const found = new Map<string, string>();
  for (const line of patterns) {
    const path = resolve(workspace, line);
    if (!existsSync(path)) continue;
    const root = statSync(path).isDirectory() ? path : resolve(path, "..");
    filesUnder(path, root, hidden, found);
  }
  for (const [key, path] of [...found])
    if (excluded.some((x) => path === x || path.startsWith(`${x}/`))) found.delete(key);

  if (found.size === 0) {
    const mode = (withValues["if-no-files-found"] ?? "warn").trim().toLowerCase();
    const message = `No files were found with the provided path: ${lines.join(", ")}. No artifacts will be uploaded.`;
    if (mode === "error") {
      log(`##[error]${message}`);
      return 1;
    }
    log(mode === "ignore" ? message : `##[warning]${message}`);
    return 0;
  }
  if (!archive) {
    if (found.size > 1) {
      log("##[error]When 'archive' is false, only a single file can be uploaded.");
      return 1;
    }
    name = basename([...found.values()][0]!);
  }
  const bad = INVALID_NAME.exec(name);
  if (bad) {
    log(
      `##[error]The artifact name is not valid: ${name}. Contains the following character: ${JSON.stringify(bad[0])}`,
    );
    return 1;
  }
  const retentionText = (withValues["retention-days"] ?? "").trim();
  const retentionDays = retentionText ? Number(retentionText) : 0;
  if (!Number.isInteger(retentionDays) || retentionDays < 0) {
    log(`##[error]Invalid retention-days: ${retentionText}`);
    return 1;
  }
  const files: Record<string, Buffer> = {};
  for (const [key, path] of found) files[key] = readFileSync(path);
  let artifact: ReturnType<JobHost["store"]["addArtifact"]>;
  try {
    artifact = host.store.addArtifact(handle.request.repo.fullName, handle.record.id, {
      name,
      files,
      retentionDays,
      overwrite: (withValues.overwrite ?? "false").trim().toLowerCase() === "true",
    });
  } catch (error) {
    if (!(error instanceof StoreError)) throw error;
    log(
      `##[error]Failed to CreateArtifact: Received non-retryable error: Failed request: (${error.status}) ${error.message}`,
    );
    return 1;
  }
  const server = (env.GITHUB_SERVER_URL || host.options.url).replace(/\/$/, "");
  const url = `${server}/${handle.request.repo.fullName}/actions/runs/${handle.record.id}/artifacts/${artifact.id}`;
  if (env.GITHUB_OUTPUT)
    writeFileSync(
      env.GITHUB_OUTPUT,
      `artifact-id=${artifact.id}\nartifact-url=${url}\nartifact-digest=${artifact.digest.replace(/^sha256:/, "")}\n`,
      { flag: "a" },
    );
  log(
    `Artifact ${name} has been successfully uploaded! Final size is ${artifact.sizeInBytes} bytes. Artifact ID is ${artifact.id}`,
  );
  return 0;
}
