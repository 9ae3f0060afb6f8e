/**
 * A rate limit is no answer about a login's permission. GitHub answers a secondary (or primary) rate limit with
 * 403 as well as a real refusal; taken for "none", a writer's changes request would vanish from the merge gate
 * (src/core/gates/gates.ts counts reviews by writers only) and be cached as such. Found by the seeded simulation
 * (seed 1058, Actions mode, sandbox/simulation/fixed/stale-changes-request-merged.yml): a PR was merged while a
 * writer's changes request still stood.
 */
import { describe, expect, it } from "vitest";
import { lookupPermissions } from "../../src/github/permissions.js";
import { newRepoMemory, type SnapshotContext } from "../../src/github/snapshot/snapshot-context.js";
import { isNotCollaborator } from "../../src/github/transport/errors.js";

/** An error as Octokit throws it for an HTTP answer. */
function httpError(status: number, message: string, headers: Record<string, string> = {}) {
  return Object.assign(new Error(message), { status, response: { status, headers, data: { message } } });
}

const secondaryLimit = () =>
  httpError(
    403,
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
    {
      "retry-after": "60",
    },
  );
const primaryLimit = () => httpError(403, "API rate limit exceeded", { "x-ratelimit-remaining": "0" });
const notCollaborator = () => httpError(403, "Must have push access to view repository collaborators.");

function context(answer: () => never | Promise<unknown>): SnapshotContext {
  return {
    client: { request: async () => answer() } as unknown as SnapshotContext["client"],
    repo: { owner: "acme", name: "widgets" },
    botLogin: "autopilot[bot]",
    memory: newRepoMemory(),
    log: { debug() {}, info() {}, warn() {}, error() {} } as unknown as SnapshotContext["log"],
    read: (call) => call(),
    now: () => Date.parse("2026-11-28T12:00:00Z"),
  };
}

describe("a permission lookup GitHub refused", () => {
  it("is 'no collaborator' for a 404 or a plain 403, never for a rate limit's 403", () => {
    expect(isNotCollaborator(httpError(404, "Not Found"))).toBe(true);
    expect(isNotCollaborator(notCollaborator())).toBe(true);
    expect(isNotCollaborator(secondaryLimit())).toBe(false);
    expect(isNotCollaborator(primaryLimit())).toBe(false);
    expect(isNotCollaborator(httpError(502, "Bad Gateway"))).toBe(false);
  });

  it("fails the snapshot on a rate limit instead of reading a writer as 'none', and caches nothing", async () => {
    const ctx = context(() => {
      throw secondaryLimit();
    });
    await expect(lookupPermissions(ctx, ["bob"], null)).rejects.toThrow(/secondary rate limit/);
    expect(ctx.memory.permissions.size).toBe(0);
  });

  it("still reads a login GitHub refuses outright as 'none'", async () => {
    const ctx = context(() => {
      throw notCollaborator();
    });
    expect(await lookupPermissions(ctx, ["mallory"], null)).toEqual({ mallory: "none" });
  });
});
