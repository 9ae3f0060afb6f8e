/**
 * The check before every push (src/worker/job/commit.ts, pushBranch and checkpoint): no secret the worker holds is
 * ever pushed.
 * - The diff of everything the branch adds since it left the default branch (every file as text, the progress
 *   notes included: they carry the agent's words) is searched for the exact value of each held secret
 *   (held-secrets.ts) in plain, base64, URL-encoded or hex form (src/core/gates/secret-leak.ts). A finding
 *   throws SecretPushRefused before git is asked to push: the job ends `needs_human`, the issue says which file
 *   and which secret's NAME (never the value), and the work stays on the runner, which discards it.
 * - Credential patterns (secret-patterns.ts) in the same added lines become human-gate hits: the PR still opens,
 *   but waits for a person.
 * The whole branch since the base is read, not only the commits since the last push: the worker pushes at the
 * end of every iteration, after the agent's run and before the next, so no commit between two pushes can remove
 * what an earlier one added; a branch resumed with a secret already on it is stopped too (a person must look).
 * The diff comes from a provider (`diff`), so whatever git the worker uses supplies it.
 */
import {
  describeSecretLeak,
  findSecretLeaks,
  type HeldSecret,
  type SecretLeak,
} from "../../core/gates/secret-leak.js";
import { HUMAN_GATE_MAX_HITS } from "../../core/gates/human-gate.js";
import type { HumanGateHit, WorkerResult } from "../../core/tasks/worker-result.js";
import { credentialPatternHits, SECRET_PATTERN_RULE } from "./secret-patterns.js";
import { branchDiff } from "./git-objects.js";
import type { Git } from "./private-git.js";

/** A push refused because the change carries a held secret's value. Its message names files and secrets only. */
export class SecretPushRefused extends Error {
  constructor(
    readonly leaks: readonly SecretLeak[],
    readonly branch: string,
  ) {
    super(
      `refused to push ${branch}: the change holds the value of a secret the worker holds (${leaks
        .slice(0, 3)
        .map(describeSecretLeak)
        .join(
          "; ",
        )}${leaks.length > 3 ? `; ${leaks.length - 3} more` : ""}); nothing of this job's work was pushed`,
    );
    this.name = "SecretPushRefused";
  }

  /** The issue comment: where, which secret, what happened to the work, what to do. Never the value. */
  comment(issue: number, label: string): string {
    return [
      "### 🔐 Push refused: the change holds a secret",
      "",
      `The agent's change holds the value of a secret the worker holds, so Autopilot did not push it to \`${this.branch}\`:`,
      "",
      ...this.leaks.map((leak) => `- ${describeSecretLeak(leak)}`),
      "",
      "Nothing of this job's work was published: it stays on the runner, which discards it when the job ends. " +
        "The value itself is not repeated here or in the log.",
      "",
      `The task is labelled \`${label}\`. Say in the issue that credentials are read from the environment at run ` +
        `time and never written into files, then comment \`/autopilot retry #${issue}\`. The secret was not ` +
        "pushed, but if you believe it left the runner some other way, rotate it.",
    ].join("\n");
  }
}

/** The diff of `base..head` as text, whatever git supplies it. */
type PushDiff = (base: string, head: string) => Promise<string>;

export interface PushGuard {
  /** Throws SecretPushRefused on a held secret's value; returns the credential-pattern hits otherwise. */
  check(branch: string, base: string, head: string): Promise<HumanGateHit[]>;
}

export function createPushGuard(options: {
  secrets: readonly HeldSecret[];
  diff: PushDiff;
  warn: (message: string) => void;
}): PushGuard {
  let warned = false;
  return {
    async check(branch, base, head) {
      const diff = await options.diff(base, head);
      const found = findSecretLeaks(diff, options.secrets);
      if (found.tooShort.length && !warned) {
        warned = true;
        options.warn(
          `secrets shorter than 8 characters are not looked for before a push: ${found.tooShort.join(", ")}`,
        );
      }
      if (found.leaks.length) throw new SecretPushRefused(found.leaks, branch);
      return credentialPatternHits(diff);
    },
  };
}

/**
 * The job's hook: checks the push when a guard is set, and returns the human gate with this push's
 * credential-pattern hits in place of the last push's (each push reads the whole branch again).
 */
export async function guardPush(
  guard: PushGuard | undefined,
  push: { branch: string; base: string | undefined; head: string | undefined },
  gate: WorkerResult["humanGate"],
): Promise<WorkerResult["humanGate"]> {
  if (!guard || push.base === undefined) return gate;
  const hits = await guard.check(push.branch, push.base, push.head ?? "HEAD");
  const others = gate.rules.filter((rule) => rule.rule !== SECRET_PATTERN_RULE);
  const rules = [
    ...hits,
    ...others.filter((r) => r.neverAutoApprove),
    ...others.filter((r) => !r.neverAutoApprove),
  ];
  return { fired: rules.length > 0, rules: rules.slice(0, HUMAN_GATE_MAX_HITS) };
}

/** What the worker's own git supplies: `base..head`, nothing excluded (not even the notes), none of it cut. */
export function gitPushDiff(git: Pick<Git, "run">): PushDiff {
  return (base, head) =>
    branchDiff(git, base, { to: head, maxBytes: Number.POSITIVE_INFINITY, withNotes: true });
}
