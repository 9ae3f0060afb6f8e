/**
 * `autopilot doctor`'s judgement, pure: from the facts read off a repository (src/github/setup/setup-facts.ts),
 * which checks pass, and for each one that does not, the exact fix. A check whose facts could not be read
 * (for example the App's installation without the App's credentials) is skipped, and says how to run it.
 * Each check names the facts it reads, so doctor prints its line as soon as they are read.
 */
import { type AutopilotConfig, DEFAULT_CONFIG, parseConfig } from "./config/index.js";
import { type DoctorCheck, failed, itemized, list, pass, type SetupFacts } from "./doctor-facts.js";
import {
  checkEndReconcile,
  checkPushToken,
  checkRepositoryCode,
  checkWorkerWorkflow,
} from "./doctor-workflow-checks.js";
import { labelSpecs } from "./setup-files.js";
import { counted } from "./text/plural.js";

const LEVEL: Record<string, number> = { read: 1, write: 2, admin: 3 };

function checkApp(facts: SetupFacts): DoctorCheck {
  const title = "GitHub App installed with the permissions and events Autopilot needs";
  if (facts.installation === "unknown") {
    return {
      id: "app",
      title,
      status: "skip",
      detail: "no App credentials to look the installation up with",
      fix: "Run doctor with APP_ID and PRIVATE_KEY (or PRIVATE_KEY_PATH) set to check the installation.",
    };
  }
  if (facts.installation === null) {
    return failed(
      "app",
      title,
      `the App is not installed on ${facts.repo}`,
      `Install the App on ${facts.repo} (its page on GitHub → Install App → select the repository).`,
    );
  }
  const have = facts.installation;
  const missing = Object.entries(facts.required.permissions)
    .filter(([name, level]) => (LEVEL[have.permissions[name] ?? ""] ?? 0) < (LEVEL[level] ?? 0))
    .map(([name, level]) => `${name}: ${level}`);
  const events = facts.required.events.filter((e) => !have.events.includes(e));
  if (missing.length === 0 && events.length === 0)
    return pass("app", title, "installed; permissions and events match app.yml");
  const parts = [
    ...(missing.length ? [`missing permissions ${missing.join(", ")}`] : []),
    ...(events.length ? [`not subscribed to ${events.join(", ")}`] : []),
  ];
  return failed(
    "app",
    title,
    itemized("the installation differs from app.yml:", parts),
    "Edit the App (Settings → Developer settings → GitHub Apps → Permissions & events) to match app.yml, then accept the new permissions on the installation.",
  );
}

function checkActions(facts: SetupFacts): DoctorCheck {
  const title = "GitHub Actions enabled";
  if (facts.actionsEnabled === null)
    return {
      id: "actions",
      title,
      status: "skip",
      detail: "the token cannot read the Actions settings",
      fix: "Run doctor with an admin's token to check it.",
    };
  return facts.actionsEnabled
    ? pass("actions", title, "Actions may run")
    : failed(
        "actions",
        title,
        "Actions are disabled for the repository, so no worker can run",
        `Enable them: Settings → Actions → General → "Allow all actions and reusable workflows" (or allow ${"actions/*"} and Autopilot's action).`,
      );
}

function configOf(facts: SetupFacts): { config: AutopilotConfig; error: string | null } {
  const result = parseConfig(facts.configText);
  return result.ok
    ? { config: result.config, error: null }
    : { config: DEFAULT_CONFIG, error: result.error.message };
}

function checkConfig(facts: SetupFacts): DoctorCheck {
  const title = ".github/autopilot.yml valid";
  if (facts.configText === null) return pass("config", title, "absent: the defaults apply");
  const { error } = configOf(facts);
  if (error === null) return pass("config", title, "valid");
  // ConfigError's message: a heading line, then one "- problem" line each.
  const problems = error
    .split("\n")
    .slice(1, 7)
    .map((line) => line.replace(/^- /, ""));
  return failed(
    "config",
    title,
    itemized("it is not a valid configuration:", problems.length ? problems : [error]),
    // src/core/config/last-good-config.ts: a bad file never loosens the configuration in force.
    [
      "Correct the keys named above (reference: docs/CONFIGURATION.md).",
      "Until then the last good configuration stays in force; with none, Autopilot starts and merges nothing.",
    ].join("\n"),
  );
}

function checkLabels(facts: SetupFacts, config: AutopilotConfig, cli: string): DoctorCheck {
  const title = "Autopilot's labels exist";
  const have = new Set(facts.labels.map((l) => l.toLowerCase()));
  const missing = labelSpecs(config.labels)
    .map((l) => l.name)
    .filter((name) => !have.has(name.toLowerCase()));
  return missing.length === 0
    ? pass("labels", title, "all present")
    : failed(
        "labels",
        title,
        `missing ${list(missing)}`,
        `Run \`${cli} init\` with GITHUB_TOKEN set (it creates them with colours and descriptions).`,
      );
}

function protectionOf(facts: SetupFacts) {
  return facts.protection === "unknown" ? null : facts.protection;
}

const PROTECTION_UNREADABLE =
  "the token may not read the default branch's protection (an admin's token, or an App with administration: read, may)";

function checkRequiredChecks(facts: SetupFacts, config: AutopilotConfig): DoctorCheck {
  const title = "Required checks exist and are named in merge.requiredChecks";
  const requiredByGitHub = [
    ...new Set([...(protectionOf(facts)?.requiredChecks ?? []), ...facts.rules.requiredChecks]),
  ];
  const configured = config.merge.requiredChecks;
  const problems: string[] = [];
  const fixes: string[] = [];
  if (configured.length > 0) {
    const notConfigured = requiredByGitHub.filter((c) => !configured.includes(c));
    if (notConfigured.length) {
      problems.push(
        `${facts.defaultBranch} requires ${list(notConfigured)}, which merge.requiredChecks does not name`,
      );
      fixes.push(`add ${list(notConfigured)} to merge.requiredChecks`);
    }
  }
  const expected = [...new Set([...configured, ...requiredByGitHub])];
  const neverSeen = expected.filter((c) => !facts.seenChecks.includes(c));
  if (neverSeen.length && facts.seenChecks.length > 0) {
    problems.push(
      `no check named ${list(neverSeen)} ran on ${facts.defaultBranch}'s last commit, so a PR would wait for it forever`,
    );
    fixes.push(`rename them to checks that run (seen: ${list(facts.seenChecks)})`);
  } else if (neverSeen.length) {
    problems.push(
      `no check ran on ${facts.defaultBranch}'s last commit, yet ${list(neverSeen)} are required`,
    );
    fixes.push("add a CI workflow that reports them on pull requests");
  }
  if (problems.length === 0 && facts.protection === "unknown")
    return {
      id: "required-checks",
      title,
      status: "skip",
      detail: PROTECTION_UNREADABLE,
      fix: "Run doctor with GITHUB_TOKEN set to an admin's token.",
    };
  if (problems.length === 0)
    return pass(
      "required-checks",
      title,
      requiredByGitHub.length || configured.length
        ? `required: ${list(expected)}`
        : "none required: every check on a PR counts",
    );
  return failed(
    "required-checks",
    title,
    itemized("the required checks do not add up:", problems),
    `${fixes.join("; ")}.`.replace(/^./, (c) => c.toUpperCase()),
  );
}

function checkMergeQueue(facts: SetupFacts, config: AutopilotConfig): DoctorCheck {
  const title = "A merge queue, if any, is one Autopilot can use";
  if (!facts.rules.defaultBranch.includes("merge_queue")) return pass("merge-queue", title, "no merge queue");
  if (!config.merge.auto)
    return pass("merge-queue", title, "a merge queue, and merge.auto is false: people merge");
  // GitHub refuses the merge API there; Autopilot then adds the approved head to the queue itself
  // (src/github/execution/merge-mechanisms.ts), and the queue merges it once its required checks pass on the merge group.
  return pass(
    "merge-queue",
    title,
    `${facts.defaultBranch} requires a merge queue: Autopilot adds each pull request its gates approved to the queue (the workflows of its required checks must run on \`merge_group\`)`,
  );
}

function checkReviews(facts: SetupFacts, config: AutopilotConfig): DoctorCheck {
  const title = "Required reviews agree with the human gate";
  const approvals = Math.max(protectionOf(facts)?.requiredApprovals ?? 0, facts.rules.requiredApprovals);
  if (approvals === 0 && facts.protection === "unknown")
    return {
      id: "reviews",
      title,
      status: "skip",
      detail: PROTECTION_UNREADABLE,
      fix: "Run doctor with GITHUB_TOKEN set to an admin's token.",
    };
  if (approvals === 0) return pass("reviews", title, "no review required by GitHub: the human gate decides");
  if (!config.merge.auto)
    return pass("reviews", title, `${counted(approvals, "approval")} required, and merge.auto is false`);
  if (config.humanGate.enabled && config.humanGate.paths.includes("**"))
    return pass("reviews", title, "the human gate asks for a review on every change");
  return failed(
    "reviews",
    title,
    `${facts.defaultBranch} requires ${counted(approvals, "approving review")}, but the human gate asks for one only on risky changes: every other task PR waits without anyone being asked`,
    'Either add `paths: ["**"]` under humanGate (every PR asks for a review), set merge.auto: false, or drop the required review for the default branch.',
  );
}

function checkPush(facts: SetupFacts, config: AutopilotConfig): DoctorCheck {
  const title = `The token can push to ${config.branchPrefix}… branches`;
  const blocked = facts.rules.taskBranch.filter((r) =>
    ["creation", "update", "non_fast_forward", "restrict_pushes"].includes(r),
  );
  if (facts.canPush === false)
    return failed(
      "push",
      title,
      "the token has no write access to the repository",
      "Give the App `contents: write` (app.yml) and accept it on the installation; a user token needs write access.",
    );
  if (blocked.length)
    return failed(
      "push",
      title,
      `rulesets restrict ${config.branchPrefix}issue-N branches (${blocked.join(", ")})`,
      `Exclude \`${config.branchPrefix}**\` from the ruleset, or add the App to its bypass list.`,
    );
  if (facts.canPush === null)
    return {
      id: "push",
      title,
      status: "skip",
      detail: "the token's access could not be read",
      fix: "Run doctor with the App's credentials.",
    };
  return pass("push", title, "write access, no ruleset on task branches");
}

function checkTracking(facts: SetupFacts): DoctorCheck {
  const title = "Tracking issue pinned";
  if (!facts.trackingIssue)
    return pass("tracking-issue", title, "none yet: the first session creates and pins it");
  if (facts.trackingIssue.pinned)
    return pass("tracking-issue", title, `#${facts.trackingIssue.number} is pinned`);
  return failed(
    "tracking-issue",
    title,
    `#${facts.trackingIssue.number} (the Autopilot dashboard) is not pinned, so people will not find it`,
    `Pin it: open #${facts.trackingIssue.number} → "Pin issue" (a repository pins at most three issues; unpin one if needed).`,
  );
}

/** One check: the facts it reads, and its verdict from them. */
interface DoctorCheckSpec {
  id: string;
  reads: readonly (keyof SetupFacts)[];
  judge: (facts: SetupFacts, config: AutopilotConfig, cli: string) => DoctorCheck;
}

const WORKFLOW = ["workerWorkflowPath", "workerWorkflowText"] as const;

/**
 * Every check, in the order a new installation meets them. `cli` is how the user runs Autopilot's commands in
 * the fixes (src/cli/invocation.ts).
 */
const DOCTOR_CHECKS: readonly DoctorCheckSpec[] = [
  { id: "app", reads: ["installation", "required"], judge: (f) => checkApp(f) },
  { id: "actions", reads: ["actionsEnabled"], judge: (f) => checkActions(f) },
  {
    id: "worker-workflow",
    reads: [...WORKFLOW, "workerWorkflowState"],
    judge: (f, _, cli) => checkWorkerWorkflow(f, cli),
  },
  { id: "push-token", reads: WORKFLOW, judge: (f) => checkPushToken(f) },
  { id: "repository-code", reads: WORKFLOW, judge: (f) => checkRepositoryCode(f) },
  { id: "end-reconcile", reads: [...WORKFLOW, "workflows"], judge: (f) => checkEndReconcile(f) },
  { id: "config", reads: ["configText"], judge: (f) => checkConfig(f) },
  { id: "labels", reads: ["configText", "labels"], judge: (f, c, cli) => checkLabels(f, c, cli) },
  {
    id: "required-checks",
    reads: ["configText", "protection", "rules", "seenChecks"],
    judge: (f, c) => checkRequiredChecks(f, c),
  },
  { id: "merge-queue", reads: ["configText", "rules"], judge: (f, c) => checkMergeQueue(f, c) },
  { id: "reviews", reads: ["configText", "protection", "rules"], judge: (f, c) => checkReviews(f, c) },
  { id: "push", reads: ["configText", "canPush", "rules"], judge: (f, c) => checkPush(f, c) },
  { id: "tracking-issue", reads: ["trackingIssue"], judge: (f) => checkTracking(f) },
];

/**
 * Judges checks in order as the facts arrive: `next(facts read so far)` returns the checks, from where the last
 * call stopped, whose facts are all read — so each line can be printed while the rest is still being read.
 */
export function doctorChecksInOrder(cli: string): (facts: Partial<SetupFacts>) => DoctorCheck[] {
  let done = 0;
  return (facts) => {
    const judged: DoctorCheck[] = [];
    while (done < DOCTOR_CHECKS.length && DOCTOR_CHECKS[done]!.reads.every((key) => key in facts)) {
      const complete = facts as SetupFacts;
      // Only a check that reads configText uses the configuration.
      const config = "configText" in facts ? configOf(complete).config : DEFAULT_CONFIG;
      judged.push(DOCTOR_CHECKS[done]!.judge(complete, config, cli));
      done += 1;
    }
    return judged;
  };
}

export function doctorPassed(checks: readonly DoctorCheck[]): boolean {
  return checks.every((c) => c.status !== "fail");
}
