/**
 * The reconcile lock of one repository in Actions mode. Controller jobs queue in their workflow's concurrency
 * group, but a worker run's last step (the reconcile of its own end, `ending-run`) cannot join that group
 * without a billed job of its own, and two reconciles at once post the same comment twice. So every reconcile
 * there holds this lock, made of git refs: GitHub offers no lock, but it creates a ref atomically and lists refs
 * as they are. The protocol and why two holders cannot both win: src/core/scheduling/reconcile-lock-claims.ts.
 *
 * Cost: a listing before each try, then one ref creation, one listing and one deletion: 4 requests a reconcile
 * when nobody else holds it, and a listing every few seconds while somebody does. The creation and the deletion
 * count against GitHub's secondary limit on content creation (80 a minute, 500 an hour per account); a refusal
 * by a rate limit is waited out within the wait.
 */
import { holderRun, parseReconcileLock, RECONCILE_LOCK_PREFIX, reconcileLockRef } from "../core/contract.js";
import { claimStanding } from "../core/scheduling/reconcile-lock-claims.js";
import { classifyFailure, messageOf, retryAfterOf, statusOf } from "./transport/errors.js";
import type { GatewayLog, OctokitSurface, RepoRef } from "./transport/octokit-surface.js";

interface ReconcileLockOptions {
  octokit: OctokitSurface;
  repo: RepoRef;
  /** Who claims it (letters, digits, `-`, `_`): the run's id and attempt, and a random part. */
  holder: string;
  /** A commit of the repository for the claim ref to point at (the job's `GITHUB_SHA`); read when absent. */
  sha?: string | null;
  /**
   * How long a claim lasts: a holder that dies without deleting its claim holds everyone out until then. It
   * must outlast the reconcile it guards (a claim past its expiry counts for no one).
   */
  leaseMs: number;
  /** How long to wait for the lock before giving up. */
  waitMs: number;
  log: GatewayLog;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
}

export type ReconcileLock =
  | { status: "held"; release: () => Promise<void> }
  /** Somebody else held it for the whole wait, or GitHub's rate limit refused our claim until its end (`why`). */
  | { status: "busy"; holders: string[]; why: string }
  /** GitHub would not create the claim (a ruleset restricting ref creation): the lock cannot work here. */
  | { status: "refused"; reason: string };

/** How long a holder's release waits out GitHub's rate limit on its deletion. */
const RELEASE_WAIT_MS = 90_000;

/** How often a live claim's holder's workflow run is read to see whether it is over. */
const HOLDER_CHECK_MS = 10_000;

/** Between listings while somebody holds the lock, plus up to as much again at random. */
const POLL_MS = 2_000;

export async function takeReconcileLock(options: ReconcileLockOptions): Promise<ReconcileLock> {
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const random = options.random ?? Math.random;
  const { octokit, repo, log } = options;
  const owner = repo.owner;
  const name = repo.name;
  const deadline = now() + options.waitMs;
  let sha = options.sha ?? null;
  let holders: string[] = [];

  const list = async (): Promise<string[]> => {
    // https://docs.github.com/en/rest/git/refs#list-matching-references: every ref starting with the prefix.
    const response = await octokit.request("GET /repos/{owner}/{repo}/git/matching-refs/{ref}", {
      owner,
      repo: name,
      ref: RECONCILE_LOCK_PREFIX.slice("refs/".length, -1),
    });
    return (Array.isArray(response.data) ? response.data : [])
      .map((r) => (r as { ref?: unknown }).ref)
      .filter((r): r is string => typeof r === "string");
  };
  /**
   * GitHub counts ref creations and deletions against its secondary limit on content creation; a claim refused
   * or left by it is waited out as GitHub asks (`retry-after`, else a minute), while the time allows.
   */
  const rateLimited = (error: unknown) => {
    const kind = classifyFailure(error);
    return kind === "secondary-rate-limit" || kind === "rate-limit";
  };
  const limited = async (error: unknown, until: number): Promise<boolean> => {
    if (!rateLimited(error)) return false;
    const wait = (retryAfterOf(error) ?? 60) * 1000;
    if (now() + wait > until) return false;
    log.info(`the reconcile lock waits ${Math.ceil(wait / 1000)} s for GitHub's rate limit`);
    await sleep(wait);
    return true;
  };
  const remove = async (ref: string, until = now()): Promise<void> => {
    for (;;) {
      try {
        await octokit.request("DELETE /repos/{owner}/{repo}/git/refs/{ref}", {
          owner,
          repo: name,
          ref: ref.slice("refs/".length),
        });
        return;
      } catch (error) {
        // Another contender deleted the same expired claim first: it is gone either way.
        if (statusOf(error) === 422 || statusOf(error) === 404) return;
        if (!(await limited(error, until))) throw error;
      }
    }
  };
  const pause = () => sleep(POLL_MS + Math.floor(random() * POLL_MS));

  /**
   * A claim whose holder's workflow run is over (a lost runner leaves its claim behind: Actions marks the run
   * failed) is dead before its expiry. One read per holder every HOLDER_CHECK_MS at most; a holder that names
   * no run, or whose run cannot be read, counts as alive until its claim expires.
   */
  const checked = new Map<string, number>();
  const deadHolders = async (claims: string[]): Promise<string[]> => {
    const dead: string[] = [];
    for (const ref of claims) {
      const run = holderRun(parseReconcileLock(ref)?.holder ?? "");
      if (!run || now() - (checked.get(ref) ?? -Infinity) < HOLDER_CHECK_MS) continue;
      checked.set(ref, now());
      try {
        // https://docs.github.com/en/rest/actions/workflow-runs#get-a-workflow-run
        const { data } = await octokit.request("GET /repos/{owner}/{repo}/actions/runs/{run_id}", {
          owner,
          repo: name,
          run_id: run.runId,
          exclude_pull_requests: true,
        });
        const { status, run_attempt } = data as { status?: unknown; run_attempt?: unknown };
        const laterAttempt = typeof run_attempt === "number" && run_attempt > run.attempt;
        if (status === "completed" || laterAttempt) dead.push(ref);
      } catch (error) {
        // A run deleted since is over too; any other failure leaves the claim to its expiry.
        if (statusOf(error) === 404) dead.push(ref);
      }
    }
    return dead;
  };

  /** Another holder's claim that counts for no one: deleted when GitHub lets us, else left (it still counts for no one). */
  const clear = async (ref: string, why: string): Promise<void> => {
    log.info(`deleting the reconcile lock claim ${ref}: ${why}`);
    await remove(ref).catch((error) => log.warn(`could not delete ${ref}: ${messageOf(error)}`));
  };
  const dead = new Set<string>();

  for (;;) {
    let before = claimStanding(await list(), null, now(), options.leaseMs, dead);
    for (const ref of before.expired)
      await clear(ref, "past its expiry (its holder is gone) or beyond a lease");
    const over = await deadHolders(before.others);
    for (const ref of over) {
      dead.add(ref);
      await clear(ref, "its holder's workflow run is over");
    }
    if (over.length > 0) before = { ...before, others: before.others.filter((ref) => !dead.has(ref)) };
    if (before.others.length === 0) {
      sha ??= await defaultBranchHead(octokit, repo);
      const mine = reconcileLockRef(now() + options.leaseMs, options.holder);
      const create = (at: string) =>
        octokit.request("POST /repos/{owner}/{repo}/git/refs", { owner, repo: name, ref: mine, sha: at });
      try {
        try {
          await create(sha);
        } catch (error) {
          // The job's commit may be gone (a pull request's test-merge commit): the default branch's head is not.
          if (statusOf(error) !== 422 || !options.sha || sha !== options.sha) throw error;
          sha = await defaultBranchHead(octokit, repo);
          await create(sha);
        }
      } catch (error) {
        if (await limited(error, deadline)) continue;
        // Still refused by the rate limit when the wait is over: nobody holds it, yet it cannot be had.
        if (rateLimited(error))
          return {
            status: "busy",
            holders: [],
            why: `GitHub's rate limit refused the claim (${messageOf(error)})`,
          };
        if (statusOf(error) !== 422) throw error;
        return {
          status: "refused",
          reason: `GitHub refused to create ${mine} (422 ${messageOf(error).replace(/\s+/g, " ").trim().slice(0, 200)})`,
        };
      }
      const after = claimStanding(await list(), mine, now(), options.leaseMs, dead);
      // The release may wait out a rate limit (GitHub's content limit counts by the minute): a claim left behind
      // holds everyone out for a lease.
      if (after.held) return { status: "held", release: () => remove(mine, now() + RELEASE_WAIT_MS) };
      // Somebody claimed it at the same moment (or our claim expired already): both step back and try again.
      await remove(mine, deadline);
      holders = after.others;
    } else {
      holders = before.others;
    }
    if (now() >= deadline) return { status: "busy", holders, why: `held by ${holders.join(", ")}` };
    await pause();
  }
}

/** The default branch's newest commit: any commit of the repository does for a claim ref to point at. */
async function defaultBranchHead(octokit: OctokitSurface, repo: RepoRef): Promise<string> {
  const about = await octokit.request("GET /repos/{owner}/{repo}", { owner: repo.owner, repo: repo.name });
  const branch = String((about.data as { default_branch?: unknown }).default_branch ?? "main");
  const head = await octokit.request("GET /repos/{owner}/{repo}/git/ref/{ref}", {
    owner: repo.owner,
    repo: repo.name,
    ref: `heads/${branch}`,
  });
  const sha = (head.data as { object?: { sha?: unknown } }).object?.sha;
  if (typeof sha !== "string") throw new Error(`cannot read the head of ${branch} for the reconcile lock`);
  return sha;
}
