/**
 * Which `uses:` values in a workflow stand for Autopilot's own action, so the emulator's Actions stand-in runs
 * this checkout's action for them: the templates reference `OWNER/autopilot@v1` (the worker) and
 * `OWNER/autopilot/controller@v1` (the controller), and a user's copy names their own owner and ref.
 */
export function isAutopilotActionRef(uses: string): boolean {
  return /^[\w.-]+\/autopilot(\/[\w./-]+)?@[\w./-]+$/i.test(uses);
}

/** Where the worker reads the OS user its agent runs as (src/worker): the emulator names each job's own. */
export const AUTOPILOT_JOB_USER_VARIABLE = "AUTOPILOT_AGENT_USER";
