/**
 * The one place the task branch leaves the runner (commit.ts calls it after the secret guard): `commits:
 * unsigned` pushes with git; `commits: signed` has GitHub make the commits as the App
 * (src/github/worker-signed-commits.ts), which signs them, from the entries the worker reads out of its own
 * objects (src/worker/checkout/publish-plan.ts), then moves the private branch onto GitHub's commits so the
 * next iteration builds on them. Either way the commit returned is the one the remote branch now points at.
 */
import type { JobContext } from "./job-context.js";

/** Jobs already warned that GitHub left a commit unverified: once per job, not once per iteration. */
const warnedUnverified = new WeakSet<JobContext>();

/** Publishes `head` (HEAD when absent) to the task branch; returns the remote branch's commit. */
export async function publishBranch(ctx: JobContext, head: string | undefined): Promise<string> {
  const { git, signedCommits } = ctx.deps;
  if (ctx.config.commits !== "signed") return git.push(ctx.branch, head);
  if (!signedCommits)
    throw new Error("commits: signed needs the worker's GitHub client for the Git Database API");
  const local = head ?? (await git.headSha());
  const plan = await git.publishPlan(ctx.branch, local);
  const published = await signedCommits.publish({ branch: ctx.branch, ...plan, head: local });
  if (!published.verified && !warnedUnverified.has(ctx)) {
    warnedUnverified.add(ctx);
    ctx.warn(`GitHub did not report every commit it made on ${ctx.branch} as verified`);
  }
  if (published.head !== local) await git.adoptPublished(ctx.branch, published.head, local);
  ctx.state.knownHead = published.head;
  return published.head;
}
