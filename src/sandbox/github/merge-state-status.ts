/**
 * GraphQL `PullRequest.mergeStateStatus` for an open pull request GitHub could merge cleanly: BEHIND when the
 * base branch requires branches to be up to date (strict required status checks) and the head lacks the base's
 * newest commit, BLOCKED when the base branch's protection or rulesets would refuse the merge now, otherwise the
 * stored state (CLEAN, or UNSTABLE with checks that are not green).
 * https://docs.github.com/en/graphql/reference/enums#mergestatestatus
 */
import { mergeRefusal, mergeRequirementsOf } from "./merge-requirements.js";
import type { Issue, PullFields, Repo, SandboxStore } from "./store.js";

export async function mergeStateStatus(
  store: SandboxStore,
  repo: Repo,
  pull: Issue & { pull: PullFields },
): Promise<string> {
  // As the REST merge does: the base (and head) as they are now, not as the PR last recorded them.
  if (pull.state === "open") await store.refreshPull(repo.fullName, pull.number);
  const stored = pull.pull.mergeableState.toUpperCase();
  if (pull.state !== "open" || (stored !== "CLEAN" && stored !== "UNSTABLE")) return stored;
  const req = mergeRequirementsOf(store, repo, pull.pull.base.ref);
  if (req.strict && req.requiredChecks.length > 0) {
    const diff = await store.compare(repo.fullName, pull.pull.base.sha, pull.pull.head.sha);
    if ((diff.behind_by ?? 0) > 0) return "BEHIND";
  }
  return (await mergeRefusal(store, repo, pull)) ? "BLOCKED" : stored;
}
