/**
 * "Require signed commits": with it on a branch (a branch protection rule's `required_signatures`,
 * https://docs.github.com/en/rest/branches/branch-protection#get-commit-signature-protection, or a ruleset's
 * `required_signatures` rule, https://docs.github.com/en/repositories/configuring-branches-and-merges-in-your-repository/managing-rulesets/available-rules-for-rulesets#require-signed-commits),
 * "contributors can only push commits that have been signed and verified to the branch"
 * (https://docs.github.com/en/repositories/configuring-branches-and-merges-in-your-repository/managing-protected-branches/about-protected-branches#require-signed-commits).
 * GitHub's pre-receive refuses the whole push with "GH006: Protected branch update failed for <ref>." and
 * "Commits must have verified signatures.".
 *
 * The sandbox's remote does it in the pre-receive hook (workflow-push-hook.ts runs this check first): the
 * smart-HTTP handler passes, in SIGNED_BRANCHES_VARIABLE, an extended regular expression of the branch names
 * that require signatures (signedBranchPattern in sandbox/emulator/merge/branch-rules-state.ts), and every
 * commit the push brings to such a branch (since its old head; a new branch: since the default branch), even one
 * another branch already has, must be one GitHub signed: one it made through the Git Database API for an App
 * (git-database-writes.ts lists them). The sandbox has no keys, so a commit signed
 * on the client is never verified here; the worker's pushed commits never are.
 */
import { VERIFIED_COMMITS_FILE } from "./git-database-writes.js";

export const SIGNED_BRANCHES_VARIABLE = "SANDBOX_SIGNED_BRANCHES";

/** The check, reading the push's "old new ref" lines from the shell variable `input`. */
export const SIGNED_COMMITS_CHECK = `
if [ -n "$${SIGNED_BRANCHES_VARIABLE}" ]; then
  while read old new ref; do
    [ -z "$ref" ] && continue
    [ "$new" = "$zero" ] && continue
    case "$ref" in refs/heads/*) ;; *) continue ;; esac
    printf '%s\\n' "\${ref#refs/heads/}" | grep -Eqx "$${SIGNED_BRANCHES_VARIABLE}" || continue
    since=$old
    [ "$old" = "$zero" ] && since=HEAD
    for commit in $(git rev-list "$new" --not "$since"); do
      if ! grep -qx "$commit" "${VERIFIED_COMMITS_FILE}" 2>/dev/null; then
        echo "error: GH006: Protected branch update failed for $ref." >&2
        echo "error: Commits must have verified signatures." >&2
        exit 1
      fi
    done
  done <<EOF
$input
EOF
fi
`;
