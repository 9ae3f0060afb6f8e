import { tmpdir } from "node:os";
import { join } from "node:path";
import { claimSlot } from "../../src/worker/isolation/agent-slots.js";

/**
 * Which `uses:` values in a workflow stand for Autopilot's own action, so the emulator's Actions stand-in runs
 * this checkout's action for them: the templates reference `OWNER/autopilot@v1` (the worker) and
 * `OWNER/autopilot/controller@v1` (the controller), and a user's copy names their own owner and ref.
 */
export function isAutopilotActionRef(uses: string): boolean {
  return /^[\w.-]+\/autopilot(\/[\w./-]+)?@[\w./-]+$/i.test(uses);
}

/**
 * The OS user of each running job, and where the worker reads it (AUTOPILOT_AGENT_USER, src/worker/isolation/agent-user.ts).
 * On GitHub every job has a runner machine of its own; here jobs share one — within a sandbox process, and across
 * the sandbox processes that run side by side (the e2e runs four scenarios at once, vitest several files) — and
 * the worker kills every process of its agent user after each iteration. So each running job takes a user no
 * other running job on this machine holds, `ap-sbx-N`, through the worker's own slot locks (agent-slots.ts) in a
 * directory of the sandbox's.
 */
export const AUTOPILOT_JOB_USER = {
  variable: "AUTOPILOT_AGENT_USER",
  claim: () => claimJobUser(),
};

// Root's sandboxes share one set of users; another user's (a developer running the demo without root) have a
// set and a lock directory of their own, since it can neither write root's locks nor may it take root's users.
const uid = process.getuid?.() ?? 0;
const JOB_USER_PREFIX = uid === 0 ? "ap-sbx-" : `ap-sbx${uid}-`;
const JOB_USER_LOCKS = join(tmpdir(), `autopilot-sandbox-agent-users${uid === 0 ? "" : `-${uid}`}`);
/** More than any run here holds at once; past it, a claim fails loudly rather than sharing a user. */
const JOB_USER_COUNT = 64;

/** A user name no other running sandbox job on this machine holds (`locks`: tests use a directory of their own). */
export function claimJobUser(locks = JOB_USER_LOCKS): { name: string; release: () => void } {
  const claimed = claimSlot(locks, JOB_USER_COUNT, (slot) => `${JOB_USER_PREFIX}${slot}`);
  if (!claimed) throw new Error(`all ${JOB_USER_COUNT} sandbox agent users are in use (locks in ${locks})`);
  return claimed;
}
