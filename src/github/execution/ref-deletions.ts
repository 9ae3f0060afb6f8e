/**
 * The refs a reconcile deletes (merged task branches, ended tasks' dispatch locks) in one GraphQL request instead
 * of one REST `DELETE` each. `updateRefs` deletes all of them or none, so only refs the snapshot saw exist go in
 * (a lock in the lock list, a branch its merged PR still names); when GitHub rejects the request anyway (a ref
 * deleted since the snapshot, a ruleset), every effect goes the REST way, where a missing ref is fine.
 */
import { DISPATCH_LOCK_PREFIX, dispatchLockRef } from "../../core/contract.js";
import type { Effect } from "../../core/effects.js";
import type { WorldSnapshot } from "../../core/world.js";
import type { GatewayLog, OctokitSurface, RepoRef } from "../transport/octokit-surface.js";
import { DELETE_REFS_MUTATION } from "../queries.js";
import { statusOf } from "../transport/errors.js";

/** What of the executor's context this needs (src/github/execution/executor.ts `ExecContext` has all of it). */
interface RefDeletionContext {
  client: OctokitSurface;
  log: GatewayLog;
  world: WorldSnapshot | null;
  facts: { repositoryNodeId?: string | null } | null;
  write: <T>(call: () => Promise<T>) => Promise<T>;
}

/** A single guarded deletion also reads the branch first (the REST path, without the repository's node id). */
interface GuardedDeletionContext extends RefDeletionContext {
  repo: RepoRef;
  read: <T>(call: () => Promise<T>) => Promise<T>;
}

type RefDeletion = Extract<Effect, { type: "deleteBranch" | "releaseDispatchLocks" }>;

const ZERO = "0".repeat(40);

export function isRefDeletion(effect: Effect): effect is RefDeletion {
  return effect.type === "deleteBranch" || effect.type === "releaseDispatchLocks";
}

/** A ref to delete, only while it is at `beforeOid` when that is given. */
interface RefToDelete {
  name: string;
  beforeOid?: string;
}

/**
 * The full names of the refs an effect deletes, when the snapshot shows each one exists; null when it cannot
 * tell for one of them (then the effect is left to REST).
 */
export function existingRefsOf(
  ctx: Pick<RefDeletionContext, "world">,
  effect: RefDeletion,
): RefToDelete[] | null {
  const world = ctx.world;
  if (!world) return null;
  if (effect.type === "deleteBranch") {
    // This repository's own closed PR on the branch (a fork's PR names a branch of the fork).
    const pull = world.pulls.find(
      (p) => p.headRef === effect.branch && p.state !== "open" && p.isCrossRepository !== true,
    );
    if (pull?.headBranchExists !== true) return null;
    // A deletion on condition (a merged branch only while it is at the merged head) keeps its condition in the
    // batch: GitHub then deletes none of the batch's refs if it moved, and each goes alone.
    const name = `refs/heads/${effect.branch}`;
    return [effect.expectOid ? { name, beforeOid: effect.expectOid } : { name }];
  }
  const listed = world.dispatchLocks;
  if (!listed) return null;
  const names = new Set(listed);
  const refs: RefToDelete[] = [];
  for (let attempt = 1; attempt <= effect.attempts; attempt++) {
    const ref = dispatchLockRef(effect.issue, attempt);
    if (names.has(ref.slice(DISPATCH_LOCK_PREFIX.length))) refs.push({ name: ref });
    // Not listed in a cut list: it may exist.
    else if (!world.dispatchLocksComplete) return null;
  }
  return refs;
}

/**
 * Deletes one branch only while it is at `expectOid` (the commit the sweep judged it at): GraphQL `updateRefs`
 * with that `beforeOid`, which GitHub carries out only while the ref is there. Without the repository's node id,
 * REST: the branch is read first and deleted only when it is at that commit (a push in between is not seen).
 * `kept` says why a branch stays: elsewhere now, gone, or GitHub refused (a rule that protects it).
 */
export async function deleteBranchAt(
  ctx: GuardedDeletionContext,
  branch: string,
  expectOid: string,
): Promise<{ deleted: true } | { deleted: false; kept: string }> {
  const at = expectOid.slice(0, 7);
  const repository = ctx.facts?.repositoryNodeId;
  if (repository) {
    try {
      await ctx.write(() =>
        ctx.client.graphql(DELETE_REFS_MUTATION, {
          repository,
          refs: [{ name: `refs/heads/${branch}`, beforeOid: expectOid, afterOid: ZERO }],
        }),
      );
      return { deleted: true };
    } catch (error) {
      if (!Array.isArray((error as { errors?: unknown }).errors)) throw error;
      return { deleted: false, kept: `not at ${at} any more, gone, or protected` };
    }
  }
  const o = { owner: ctx.repo.owner, repo: ctx.repo.name, ref: `heads/${branch}` };
  let sha: string | null;
  try {
    const { data } = await ctx.read(() => ctx.client.request("GET /repos/{owner}/{repo}/git/ref/{ref}", o));
    sha = (data as { object?: { sha?: string } }).object?.sha ?? null;
  } catch (error) {
    if (statusOf(error) === 404) return { deleted: false, kept: "already gone" };
    throw error;
  }
  if (sha !== expectOid) return { deleted: false, kept: `not at ${at} any more` };
  try {
    await ctx.write(() => ctx.client.request("DELETE /repos/{owner}/{repo}/git/refs/{ref}", o));
    return { deleted: true };
  } catch (error) {
    const status = statusOf(error);
    if (status === 404 || status === 422) return { deleted: false, kept: "already gone" };
    throw error;
  }
}

/**
 * Deletes the refs of `effects` (those whose refs the snapshot knows) in one `updateRefs` request, when that
 * saves a request; the outcomes of the effects it carried out (none when it did not try, or GitHub refused).
 */
export async function deleteRefsTogether(
  ctx: RefDeletionContext,
  effects: RefDeletion[],
): Promise<{ effect: RefDeletion; status: "done"; detail: string }[]> {
  const repository = ctx.facts?.repositoryNodeId;
  if (!repository) return [];
  const chosen: { effect: RefDeletion; refs: RefToDelete[] }[] = [];
  for (const effect of effects) {
    const refs = existingRefsOf(ctx, effect);
    if (refs && refs.length > 0) chosen.push({ effect, refs });
  }
  const byName = new Map<string, RefToDelete>();
  for (const ref of chosen.flatMap((c) => c.refs)) byName.set(ref.name, { ...byName.get(ref.name), ...ref });
  const names = [...byName.keys()];
  if (names.length < 2) return [];
  try {
    await ctx.write(() =>
      ctx.client.graphql(DELETE_REFS_MUTATION, {
        repository,
        refs: [...byName.values()].map((ref) => ({ ...ref, afterOid: ZERO })),
      }),
    );
  } catch (error) {
    // GraphQL errors: GitHub rejected one update, so it changed none; REST deletes them one by one.
    if (!Array.isArray((error as { errors?: unknown }).errors)) throw error;
    ctx.log.info(`deleting ${names.length} refs in one request was refused; deleting them one by one`);
    return [];
  }
  const detail = `with ${names.length - 1} other ref(s) in one request`;
  return chosen.map(({ effect }) => ({ effect, status: "done" as const, detail }));
}
