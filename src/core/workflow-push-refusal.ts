/**
 * GitHub refuses a push that creates or changes a file under `.github/workflows/` from a token without the
 * `workflows` permission, which a workflow's `GITHUB_TOKEN` never has. The worker pushes with that token, so a
 * task whose change touches a workflow cannot be pushed: this turns git's rejection into a reason a person can
 * act on.
 */
const REFUSAL =
  /refusing to allow (?:a GitHub App|an OAuth App|a Personal Access Token) to create or update workflow `([^`]{1,300})` without `workflows?` (?:permission|scope)/;

/** The explanation of a push GitHub refused for `workflows`, or null when the text is not that refusal. */
export function workflowPushRefusal(gitOutput: string, issue: number): string | null {
  const match = REFUSAL.exec(gitOutput);
  if (!match) return null;
  return `GitHub refused the push: the change touches \`${match[1]}\`, and the worker's token may not create or change workflow files (GitHub never gives a workflow's token the \`workflows\` permission). Leave \`.github/workflows/\` out of this task (say so in the issue) or make that change by hand, then comment \`/autopilot retry #${issue}\`.`;
}
