import type { WorkerGitHub } from "../../github/worker-github.js";

/**
 * The commit author: the inputs' name and email, or else the token's own account (the App's bot user,
 * `<id>+<login>@users.noreply.github.com` as GitHub attributes it) from the query the claim makes anyway (the
 * viewer is asked with the task's comments), so a job spends no request of its own on it. Nothing known: the defaults of boundary.ts.
 */
export async function commitAuthor(
  inputs: { gitUserName: string; gitUserEmail: string },
  github: Pick<WorkerGitHub, "getSelf">,
): Promise<{ userName?: string; userEmail?: string }> {
  if (inputs.gitUserName && inputs.gitUserEmail)
    return { userName: inputs.gitUserName, userEmail: inputs.gitUserEmail };
  const self = await github.getSelf().catch(() => ({ id: null, login: null }));
  const userName = inputs.gitUserName || self.login || "";
  const userEmail =
    inputs.gitUserEmail ||
    (self.id !== null && self.login ? `${self.id}+${self.login}@users.noreply.github.com` : "");
  return { ...(userName ? { userName } : {}), ...(userEmail ? { userEmail } : {}) };
}
