/**
 * GitHub refuses a push that creates or changes a file under `.github/workflows/` from a token without the
 * `workflows` permission — a workflow's `GITHUB_TOKEN` never has it, and an App's installation token has it
 * only when the App asked for it (https://docs.github.com/apps/creating-github-apps/registering-a-github-app/choosing-permissions-for-a-github-app
 * — "Workflows": "Create, update, or delete workflow files"; https://docs.github.com/actions/security-for-github-actions/security-guides/automatic-token-authentication#permissions-for-the-github_token
 * lists no such permission for `GITHUB_TOKEN`). The whole push is rejected with
 * "refusing to allow a GitHub App to create or update workflow `<path>` without `workflows` permission".
 *
 * The sandbox's remote enforces it with a `pre-receive` hook in each bare repository: the smart-HTTP handler
 * sets WORKFLOWS_DENIED_VARIABLE for a principal without the permission, and the hook looks at every commit
 * the push brings that no ref had yet. The same hook first refuses unsigned commits on a branch that requires
 * signed ones (signed-commits-hook.ts): the push's lines are read once and given to both checks.
 */
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SIGNED_COMMITS_CHECK } from "./signed-commits-hook.js";

export const WORKFLOWS_DENIED_VARIABLE = "SANDBOX_WORKFLOWS_DENIED";

const HOOK = `#!/bin/sh
zero=0000000000000000000000000000000000000000
input=$(cat)
${SIGNED_COMMITS_CHECK}
[ "$${WORKFLOWS_DENIED_VARIABLE}" = "1" ] || exit 0
status=0
while read old new ref; do
  [ "$new" = "$zero" ] && continue
  for commit in $(git rev-list "$new" --not --all); do
    path=$(git diff-tree -r --root --no-commit-id --name-only "$commit" -- .github/workflows | head -n 1)
    if [ -n "$path" ]; then
      echo "refusing to allow a GitHub App to create or update workflow \\\`$path\\\` without \\\`workflows\\\` permission" >&2
      status=1
      break
    fi
  done
done <<EOF
$input
EOF
exit $status
`;

/** Writes the hook into a bare repository (`<repo>.git/hooks/pre-receive`). */
export function installWorkflowPushHook(bareRepoPath: string): void {
  const dir = join(bareRepoPath, "hooks");
  mkdirSync(dir, { recursive: true });
  const file = join(dir, "pre-receive");
  writeFileSync(file, HOOK);
  chmodSync(file, 0o755);
}
