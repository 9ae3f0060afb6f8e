/**
 * After the hand-over's short way (agent-objects.ts) the agent's branch is at the worker's commit, but its index
 * still holds what the last hand-back staged: the worker's own files (its progress notes, written after the
 * hand-back) differ there from HEAD, and `git status` or a quality command's `git diff --exit-code` would show
 * them as changed. The first command of the agent's user after such a hand-over — the agent, or a setup or quality
 * command — therefore starts with `git reset -q -- <those files>` in front of it, in the same sandbox, as the same
 * user, with the same environment, and then `exec`s the command (same process, same output). The worker itself
 * runs nothing over the tree; the reset touches only those entries of the index.
 */
import type { AgentUser } from "../isolation/agent-user.js";

/**
 * $1 git, $2 the worker's files (one per line, `:(top,literal)` pathspecs), then the command and its arguments.
 * The reset's failure (the agent broke its repository) is the command's to meet: it runs all the same.
 */
const PRELUDE = [
  'g=$1 f=$2; shift 2; IFS="',
  '"; set -f',
  'GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null "$g" -c core.hooksPath=/dev/null -c core.fsmonitor=false reset -q -- $f >/dev/null 2>&1',
  'exec "$@"',
].join("\n");

/**
 * `user` whose next `wrap` puts the index refresh in front of the command when `pending` names files (and takes
 * them: once is enough). Everything else is `user`'s own.
 */
export function refreshingIndex(
  user: AgentUser,
  tools: { git: string; shell: string },
  pending: () => readonly string[],
): AgentUser {
  const wrap: AgentUser["wrap"] = (command, args, env, options) => {
    const files = pending();
    if (files.length === 0) return user.wrap(command, args, env, options);
    const specs = files.map((file) => `:(top,literal)${file}`).join("\n");
    return user.wrap(
      tools.shell,
      ["-c", PRELUDE, "agent-index", tools.git, specs, command, ...args],
      env,
      options,
    );
  };
  return Object.assign(Object.create(user) as AgentUser, { wrap });
}
