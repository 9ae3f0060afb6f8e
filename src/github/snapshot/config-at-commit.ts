/**
 * `.github/autopilot.yml` as it was at one commit: the last good configuration when the tracking issue's state
 * kept only its digest and commit (the text did not fit). Read only when the current file is bad.
 *
 * REST "Get repository content" with `ref` set to the commit
 * (https://docs.github.com/en/rest/repos/contents#get-repository-content): the file comes base64-encoded;
 * 404 means there was no file at that commit (the defaults).
 */
import { CONFIG_PATH } from "../../core/config/index.js";
import type { OctokitSurface, RepoRef } from "../transport/octokit-surface.js";
import { statusOf } from "../transport/errors.js";

interface ConfigReadContext {
  client: Pick<OctokitSurface, "request">;
  repo: RepoRef;
  /** Every call goes through this (the controller's circuit breaker); default: called directly. */
  read?: <T>(call: () => Promise<T>) => Promise<T>;
}

/** The file's text at `commit`; null when it had no such file. Other errors are thrown. */
export async function readConfigAt(ctx: ConfigReadContext, commit: string): Promise<string | null> {
  const read = ctx.read ?? (<T>(call: () => Promise<T>) => call());
  try {
    const response = await read(() =>
      ctx.client.request("GET /repos/{owner}/{repo}/contents/{path}", {
        owner: ctx.repo.owner,
        repo: ctx.repo.name,
        path: CONFIG_PATH,
        ref: commit,
      }),
    );
    const data = response.data as { type?: string; encoding?: string; content?: string };
    if (data?.type !== "file" || data.encoding !== "base64" || typeof data.content !== "string") {
      throw new Error(`${CONFIG_PATH} at ${commit.slice(0, 12)} is not a file GitHub returned as base64`);
    }
    return Buffer.from(data.content.replace(/\s+/g, ""), "base64").toString("utf8");
  } catch (error) {
    if (statusOf(error) === 404) return null;
    throw error;
  }
}
