/**
 * What `autopilot doctor` judges and how a judgement reads: the facts read off a repository
 * (src/github/setup/setup-facts.ts), one check's verdict, and the small helpers every check writes with.
 */
export interface AppRequirements {
  permissions: Record<string, string>;
  events: string[];
}

export interface SetupFacts {
  repo: string;
  defaultBranch: string;
  /** The App's installation on the repository; null: not installed; "unknown": no App credentials. */
  installation: AppRequirements | null | "unknown";
  /** What app.yml asks for. */
  required: AppRequirements;
  /** Whether GitHub Actions may run in the repository; null when it could not be read. */
  actionsEnabled: boolean | null;
  workerWorkflowPath: string;
  /** The worker workflow's text on the default branch, null when absent. */
  workerWorkflowText: string | null;
  /** The workflow's state (`active`, `disabled_manually`, …), null when GitHub does not list it. */
  workerWorkflowState: string | null;
  /** Every workflow file in `.github/workflows/` on the default branch. */
  workflows: { path: string; text: string }[];
  /** `.github/autopilot.yml` on the default branch, null when absent. */
  configText: string | null;
  labels: string[];
  /** The default branch's classic protection, null when none, "unknown" when the token may not read it. */
  protection: { requiredChecks: string[]; requiredApprovals: number } | null | "unknown";
  /** Rules that apply to the default branch and to a task branch (rulesets). */
  rules: {
    defaultBranch: string[];
    taskBranch: string[];
    requiredChecks: string[];
    requiredApprovals: number;
  };
  /** Check and status names seen on the default branch's head commit. */
  seenChecks: string[];
  /** Whether the token may push to the repository; null when unknown. */
  canPush: boolean | null;
  /** The open tracking issue, null when no session has run yet. */
  trackingIssue: { number: number; pinned: boolean } | null;
}

/** `warn`: works, but unsafe or costly; the fix says what to change. Only `fail` makes doctor exit 1. */
export type CheckStatus = "pass" | "warn" | "fail" | "skip";

export interface DoctorCheck {
  id: string;
  title: string;
  status: CheckStatus;
  /** What was found: one line, or a lead line and then one line per problem (printed as a list). */
  detail: string;
  /** What to do (empty when it passes); lines after the first continue it. */
  fix: string;
}

export function pass(id: string, title: string, detail: string): DoctorCheck {
  return { id, title, status: "pass", detail, fix: "" };
}

export function failed(id: string, title: string, detail: string, fix: string): DoctorCheck {
  return { id, title, status: "fail", detail, fix };
}

export function list(items: readonly string[]): string {
  return items.map((i) => `"${i}"`).join(", ");
}

/**
 * One problem as a line; several as a lead line and one line each, which the report prints as a list
 * (doctor-report.ts) and `--json` keeps as lines.
 */
export function itemized(lead: string, items: readonly string[]): string {
  return items.length === 1 ? items[0]! : [lead, ...items].join("\n");
}
