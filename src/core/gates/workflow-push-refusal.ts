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
  // GitHub's own words first (a dashboard line is cut at 300 characters), then what to do.
  return `GitHub refused the push (${match[0]}): a workflow's token may never create or change workflow files. Leave \`.github/workflows/\` out of this task (say so in the issue) or make that change by hand, then comment \`/autopilot retry #${issue}\`.`;
}
