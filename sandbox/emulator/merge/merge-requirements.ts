/**
 * What GitHub's merge endpoint refuses on a protected branch, from the branch's classic protection and the
 * rulesets that target it (sandbox/emulator/server/app-setup.ts): a required merge queue, required approving
 * reviews (stale approvals dismissed or not), and required status checks by name (strict: the head must
 * contain the base). Each refusal is the 405 and message GitHub answers
 * (https://docs.github.com/rest/pulls/pulls#merge-a-pull-request — "405: Method Not Allowed if merge cannot
 * be performed").
 */
import { type BranchRule, protectionOf } from "./branch-rules-state.js";
import type { Issue, PullFields, Repo, SandboxStore } from "../store.js";
import { permissionAtLeast } from "../store.js";

interface MergeRequirements {
  mergeQueue: boolean;
  requiredApprovals: number;
  dismissStaleReviews: boolean;
  requiredChecks: string[];
  strict: boolean;
  /** Whether any of them comes from a ruleset (GitHub words the refusal as a rule violation then). */
  fromRuleset: boolean;
}

function numberParam(rule: BranchRule, key: string): number {
  const value = rule.parameters?.[key];
  return typeof value === "number" ? value : 0;
}

function boolParam(rule: BranchRule, key: string): boolean {
  return rule.parameters?.[key] === true;
}

/** The requirements of a base branch: classic protection and every ruleset that targets it, combined. */
export function mergeRequirementsOf(store: SandboxStore, repo: Repo, branch: string): MergeRequirements {
  const { protection, rules } = protectionOf(store, repo, branch);
  const out: MergeRequirements = {
    mergeQueue: protection?.mergeQueue === true,
    requiredApprovals: protection?.requiredApprovals ?? 0,
    dismissStaleReviews: protection?.dismissStaleReviews === true,
    requiredChecks: [...(protection?.requiredChecks ?? [])],
    strict: protection?.strict === true,
    fromRuleset: false,
  };
  // https://docs.github.com/repositories/configuring-branches-and-merges-in-your-repository/managing-rulesets/available-rules-for-rulesets
  // — "Require a pull request before merging" (`pull_request`), "Require status checks to pass"
  // (`required_status_checks`), "Require merge queue" (`merge_queue`); several rulesets aggregate, the
  // most restrictive wins.
  for (const rule of rules) {
    if (rule.type === "merge_queue") {
      out.mergeQueue = true;
      out.fromRuleset = true;
    } else if (rule.type === "pull_request") {
      out.requiredApprovals = Math.max(
        out.requiredApprovals,
        numberParam(rule, "required_approving_review_count"),
      );
      out.dismissStaleReviews ||= boolParam(rule, "dismiss_stale_reviews_on_push");
      out.fromRuleset = true;
    } else if (rule.type === "required_status_checks") {
      const list = rule.parameters?.required_status_checks;
      if (Array.isArray(list)) {
        for (const entry of list) {
          const context = (entry as { context?: unknown }).context;
          if (typeof context === "string" && !out.requiredChecks.includes(context))
            out.requiredChecks.push(context);
        }
      }
      out.strict ||= boolParam(rule, "strict_required_status_checks_policy");
      out.fromRuleset = true;
    }
  }
  return out;
}

/** The state of one required check on a commit: the latest check run or commit status of that name. */
export function checkState(
  store: SandboxStore,
  repo: Repo,
  sha: string,
  name: string,
): "success" | "pending" | "failing" | "missing" {
  const run = store.listCheckRuns(repo.fullName, sha, { checkName: name })[0];
  if (run) {
    if (run.status !== "completed") return "pending";
    return ["success", "neutral", "skipped"].includes(run.conclusion ?? "") ? "success" : "failing";
  }
  const status = store.listStatuses(repo.fullName, sha).find((s) => s.context === name);
  if (!status) return "missing";
  return status.state === "success" ? "success" : status.state === "pending" ? "pending" : "failing";
}

/** Approvals that count: the latest review per reviewer with write access, approving (this head, if stale ones are dismissed). */
function countingApprovals(
  store: SandboxStore,
  repo: Repo,
  pull: Issue & { pull: PullFields },
  dismissStale: boolean,
): number {
  const latest = new Map<string, { state: string; commitId: string }>();
  for (const review of pull.pull.reviews) {
    if (review.state === "PENDING" || review.state === "COMMENTED") continue;
    latest.set(review.user.toLowerCase(), { state: review.state, commitId: review.commitId });
  }
  let count = 0;
  for (const [user, review] of latest) {
    if (review.state !== "APPROVED") continue;
    // https://docs.github.com/repositories/configuring-branches-and-merges-in-your-repository/managing-protected-branches/about-protected-branches#require-pull-request-reviews-before-merging
    // — only reviews by people with write or admin permission count; with "Dismiss stale pull request
    // approvals when new commits are pushed", an approval of an earlier commit no longer does.
    if (!permissionAtLeast(store.getPermission(repo.fullName, user), "write")) continue;
    if (dismissStale && review.commitId !== pull.pull.head.sha) continue;
    count += 1;
  }
  return count;
}

/**
 * GitHub's refusal of merging this pull request now through `PUT …/merge`, or null when the branch's
 * requirements are met. `viaQueue` is GitHub itself merging a merge-queue entry or an auto-merge.
 */
export async function mergeRefusal(
  store: SandboxStore,
  repo: Repo,
  pull: Issue & { pull: PullFields },
  viaQueue = false,
): Promise<{ status: 405; message: string } | null> {
  const req = mergeRequirementsOf(store, repo, pull.pull.base.ref);
  const refuse = (message: string) => ({
    status: 405 as const,
    // A ruleset's refusal is listed under "Repository rule violations found" (the REST answer's message).
    message: req.fromRuleset ? `Repository rule violations found\n\n${message}\n\n` : message,
  });
  // https://docs.github.com/repositories/configuring-branches-and-merges-in-your-repository/configuring-pull-request-merges/managing-a-merge-queue
  // — with a required merge queue, pull requests merge only through the queue.
  if (req.mergeQueue && !viaQueue) return refuse("Changes must be made through the merge queue");
  if (req.requiredApprovals > 0) {
    const have = countingApprovals(store, repo, pull, req.dismissStaleReviews);
    if (have < req.requiredApprovals) {
      const n = req.requiredApprovals;
      return refuse(
        `At least ${n} approving review${n === 1 ? " is" : "s are"} required by reviewers with write access.`,
      );
    }
  }
  if (req.requiredChecks.length > 0) {
    // https://docs.github.com/repositories/configuring-branches-and-merges-in-your-repository/managing-protected-branches/about-protected-branches#require-status-checks-before-merging
    // — strict: the branch must be up to date with the base; until then its checks count as expected.
    let behind = false;
    if (req.strict) {
      const diff = await store.compare(repo.fullName, pull.pull.base.sha, pull.pull.head.sha);
      behind = (diff.behind_by ?? 0) > 0;
    }
    const states = req.requiredChecks.map((name) => ({
      name,
      state: behind ? ("missing" as const) : checkState(store, repo, pull.pull.head.sha, name),
    }));
    const expected = states.filter((s) => s.state === "missing" || s.state === "pending");
    const failing = states.filter((s) => s.state === "failing");
    if (failing.length === 1 && expected.length === 0)
      return refuse(`Required status check "${failing[0]!.name}" is failing.`);
    if (failing.length > 0)
      return refuse(`${failing.length} of ${states.length} required status checks have not succeeded.`);
    if (expected.length === 1) return refuse(`Required status check "${expected[0]!.name}" is expected.`);
    if (expected.length > 1)
      return refuse(`${expected.length} of ${states.length} required status checks are expected.`);
  }
  return null;
}

/**
 * The merge state GitHub reports for a pull request (REST `mergeable_state`, GraphQL `mergeStateStatus`), with
 * the branch's requirements counted: `behind` when up-to-date branches are required and the head is behind its
 * base, `blocked` when another requirement is unmet, otherwise what git and the checks say (`clean`,
 * `unstable`, `dirty`, `draft`, `unknown`). A required merge queue alone does not block: the queue is how such a
 * pull request merges. https://docs.github.com/graphql/reference/enums#mergestatestatus
 */
export async function mergeStateOf(
  store: SandboxStore,
  repo: Repo,
  pull: Issue & { pull: PullFields },
): Promise<PullFields["mergeableState"]> {
  const state = pull.pull.mergeableState;
  if (pull.state !== "open" || !["clean", "unstable"].includes(state)) return state;
  const refusal = await mergeRefusal(store, repo, pull, true);
  if (!refusal) return state;
  const req = mergeRequirementsOf(store, repo, pull.pull.base.ref);
  if (req.strict && refusal.message.includes("status check")) {
    const diff = await store.compare(repo.fullName, pull.pull.base.sha, pull.pull.head.sha);
    if ((diff.behind_by ?? 0) > 0) return "behind";
  }
  return "blocked";
}
