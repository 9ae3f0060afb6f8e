/**
 * Best of N's winner carried over to the task branch (src/core/reconcile/runs/best-of.ts): the task branch
 * pointed at the chosen candidate's head, then the task's pull request opened from it. Each step is safe to
 * repeat: a branch already at the commit is left, and an open pull request of Autopilot's on the branch ends it.
 *
 * The refs API: https://docs.github.com/en/rest/git/refs (create a reference: 422 when it exists; update a
 * reference with `force`); pulls: https://docs.github.com/en/rest/pulls/pulls#create-a-pull-request (422 when a
 * pull request from the same head to the same base is open).
 */
import type { Effect } from "../../core/effects.js";
import { distrustOf } from "../../core/gates/pull-trust.js";
import type { WorldSnapshot } from "../../core/world.js";
import { isOutage, refusalWords, statusOf } from "../transport/errors.js";
import type { GatewayLog, OctokitSurface, RepoRef } from "../transport/octokit-surface.js";

type Promotion = Extract<Effect, { type: "promoteCandidate" }>;

interface PromotionContext {
  client: OctokitSurface;
  repo: RepoRef;
  log: GatewayLog;
  world: WorldSnapshot | null;
  write: <T>(call: () => Promise<T>) => Promise<T>;
  read: <T>(call: () => Promise<T>) => Promise<T>;
}

/**
 * The snapshot already shows Autopilot's own open pull request on the task branch. Not a merged one: that is an
 * earlier attempt's (a task opened again and worked by a new round), and the round's winner still needs its own;
 * a promoted pull request merged since is seen by the round itself (best-of.ts `followThrough`), which then asks
 * for no promotion.
 */
export function promotionDone(world: WorldSnapshot | null, effect: Promotion): string | null {
  if (!world) return null;
  const trust = { repo: world.repo, branch: effect.branch, botId: world.botId };
  const own = world.pulls.find((p) => p.state === "open" && distrustOf(p, trust) === null);
  return own ? `PR #${own.number} is open on ${effect.branch}` : null;
}

export async function promoteCandidate(
  ctx: PromotionContext,
  effect: Promotion,
): Promise<{ effect: Effect; status: "done" | "skipped" | "failed"; detail?: string }> {
  const o = { owner: ctx.repo.owner, repo: ctx.repo.name };
  try {
    await pointBranch(ctx, effect);
    try {
      const { data } = await ctx.write(() =>
        ctx.client.request("POST /repos/{owner}/{repo}/pulls", {
          ...o,
          title: effect.title,
          body: effect.body,
          head: effect.branch,
          base: effect.base,
        }),
      );
      const number = (data as { number?: number }).number;
      ctx.log.info(`PR #${number ?? "?"} continues the chosen candidate of #${effect.issue}`);
      return { effect, status: "done", detail: number ? `PR #${number}` : undefined };
    } catch (error) {
      // One is open from this head to this base already: an earlier run of this effect opened it.
      // GitHub words it in the answer's `errors`, under a `Validation Failed` message.
      const said = JSON.stringify((error as { response?: { data?: unknown } }).response?.data ?? "");
      if (statusOf(error) === 422 && /pull request already exists/i.test(said))
        return { effect, status: "skipped", detail: "the pull request is open already" };
      throw error;
    }
  } catch (error) {
    if (isOutage(error)) throw error;
    return { effect, status: "failed", detail: refusalWords(error) };
  }
}

/**
 * The task branch at the winner's head: created, or moved there. A task branch at another commit holds an
 * earlier attempt's work (best of N starts every candidate from the default branch): that commit is kept under
 * `refs/autopilot/replaced/issue-N-<sha>` before the branch moves, so nothing pushed is lost.
 */
async function pointBranch(ctx: PromotionContext, effect: Promotion): Promise<void> {
  const o = { owner: ctx.repo.owner, repo: ctx.repo.name };
  let current: string | null = null;
  try {
    const { data } = await ctx.read(() =>
      ctx.client.request("GET /repos/{owner}/{repo}/git/ref/{ref}", { ...o, ref: `heads/${effect.branch}` }),
    );
    current = (data as { object?: { sha?: string } }).object?.sha ?? null;
  } catch (error) {
    if (statusOf(error) !== 404) throw error;
  }
  if (current === effect.sha) return;
  if (current === null) {
    await ctx.write(() =>
      ctx.client.request("POST /repos/{owner}/{repo}/git/refs", {
        ...o,
        ref: `refs/heads/${effect.branch}`,
        sha: effect.sha,
      }),
    );
    return;
  }
  try {
    await ctx.write(() =>
      ctx.client.request("POST /repos/{owner}/{repo}/git/refs", {
        ...o,
        ref: `refs/autopilot/replaced/issue-${effect.issue}-${current.slice(0, 12)}`,
        sha: current,
      }),
    );
  } catch (error) {
    if (statusOf(error) !== 422) throw error;
  }
  ctx.log.info(`${effect.branch} was at ${current.slice(0, 12)}: kept under refs/autopilot/replaced/`);
  await ctx.write(() =>
    ctx.client.request("PATCH /repos/{owner}/{repo}/git/refs/{ref}", {
      ...o,
      ref: `heads/${effect.branch}`,
      sha: effect.sha,
      force: true,
    }),
  );
}
