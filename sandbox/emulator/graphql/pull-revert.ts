/**
 * GraphQL `revertPullRequest`: "Create a pull request that reverts the changes from a merged pull request"
 * (https://docs.github.com/en/graphql/reference/mutations#revertpullrequest; input `pullRequestId`, `title`,
 * `body`, `draft`; payload `pullRequest`, the reverted one, and `revertPullRequest`, the new one). Like the web's
 * Revert button (https://docs.github.com/en/pull-requests/collaborating-with-pull-requests/incorporating-changes-from-a-pull-request/reverting-a-pull-request)
 * it makes one commit that undoes the merge on top of the base branch, on a new branch
 * `revert-<number>-<head branch>`, and opens a pull request from it into the base branch, authored by the caller.
 * Untitled, the PR is `Revert "<title>"` with the body `Reverts <owner>/<repo>#<number>`, as GitHub fills them.
 *
 * Refusals: a pull request that is not merged; a revert branch that already exists; a revert that conflicts
 * with what the base branch has now (GitHub then offers no revert either). GitHub does not publish its error
 * wordings for these; the words are the sandbox's own.
 *
 * Without the git remote (the in-memory store the seeded simulation runs on) the revert commit is a SHA no
 * content backs, on top of the base branch's head, and a conflict is never found: content is modelled only with
 * git, as for merges (a merge in memory conflicts only where a pull request is marked unmergeable).
 */
import type { Issue, PullFields, Repo, SandboxStore } from "../store.js";
import { StoreError, syntheticSha } from "../store.js";

export async function revertPullRequest(
  store: SandboxStore,
  repo: Repo,
  pull: Issue & { pull: PullFields },
  actor: string,
  input: { title?: string | null; body?: string | null; draft?: boolean | null },
): Promise<Issue> {
  const merged = pull.pull.mergeCommitSha;
  if (!pull.pull.merged || !merged)
    throw new StoreError(422, `Pull request #${pull.number} is not merged, so it cannot be reverted`);
  const branch = `revert-${pull.number}-${pull.pull.head.ref}`;
  if (await store.resolveRef(repo.fullName, `refs/heads/${branch}`))
    throw new StoreError(422, `A branch named ${branch} already exists`);
  const user = store.getUser(actor);
  const author = {
    name: actor,
    email: user ? `${user.id}+${actor}@users.noreply.github.com` : `${actor}@users.noreply.github.com`,
  };
  const title = input.title ?? `Revert "${pull.title}"`;
  const message = `${title}\n\nThis reverts commit ${merged}.`;
  const backend = store.getGitBackend();
  let sha: string;
  if (backend) {
    if (!backend.revertCommit) throw new StoreError(422, "Reverting needs the sandbox's git remote");
    const key = { owner: repo.owner, name: repo.name };
    const made = await backend.revertCommit(key, pull.pull.base.ref, merged, message, author);
    if ("conflict" in made)
      throw new StoreError(
        422,
        `Pull request #${pull.number} cannot be reverted automatically: ${made.message ?? "conflict"}`,
      );
    sha = made.sha;
  } else {
    const base = await store.resolveRef(repo.fullName, `refs/heads/${pull.pull.base.ref}`);
    sha = syntheticSha("revert", base ?? "", merged, message);
  }
  await store.createRef(repo.fullName, `refs/heads/${branch}`, sha, actor);
  return store.createPull(repo.fullName, {
    title,
    body: input.body ?? `Reverts ${repo.fullName}#${pull.number}`,
    head: branch,
    base: pull.pull.base.ref,
    draft: input.draft ?? false,
    author: actor,
  });
}
