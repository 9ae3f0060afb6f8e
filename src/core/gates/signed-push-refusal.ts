/**
 * GitHub refuses a push of unsigned commits to a branch whose protection rule or ruleset requires signed
 * commits: "contributors can only push commits that have been signed and verified to the branch"
 * (https://docs.github.com/en/repositories/configuring-branches-and-merges-in-your-repository/managing-protected-branches/about-protected-branches#require-signed-commits),
 * and git prints the pre-receive's "GH006: Protected branch update failed for refs/heads/…" with "Commits must
 * have verified signatures". The worker's `git push` (`commits: unsigned`) makes unsigned commits: this turns
 * the rejection into a reason a person can act on.
 */
const REFUSAL =
  /GH006: Protected branch update failed for [^\s:]{1,300}|Commits must have (?:valid|verified) signatures/;
const SIGNATURES = /(?:must have (?:valid|verified) signatures|signed commits)/i;

/** The explanation of a push GitHub refused for missing signatures, or null when the text is not that refusal. */
export function signedPushRefusal(gitOutput: string, issue: number): string | null {
  const match = REFUSAL.exec(gitOutput);
  if (!match || !SIGNATURES.test(gitOutput)) return null;
  return `GitHub refused the push (${match[0]}): the task branch requires signed commits and the worker pushes unsigned ones. Set \`commits: signed\` in \`.github/autopilot.yml\` (the worker then has GitHub make and sign its commits), then comment \`/autopilot retry #${issue}\`.`;
}
