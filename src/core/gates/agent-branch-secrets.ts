/**
 * Which of a repository's workflow jobs hand secrets to the agent's code: a job that reads a repository secret
 * and starts on a push to, or a pull request from, an Autopilot task branch runs whatever the agent committed
 * with that secret in reach (docs/SECURITY.md, "CI on agent branches"). Pure: the workflows come in already
 * read by GitHub's own parser (src/cli/workflow-reading.ts); this decides, per job, whether it is exposed,
 * guarded by its `if:`, or bound to an environment whose protection rules doctor cannot see.
 */
import { candidateBranchName, taskBranchName } from "../contract.js";
import { type DoctorCheck, itemized } from "../doctor-facts.js";

/** An event's ref filters as the workflow file writes them; an absent list is undefined. */
export interface RefFilters {
  branches?: string[];
  branchesIgnore?: string[];
  tags?: string[];
  tagsIgnore?: string[];
}

/** The events that run a task branch's code. */
export type AgentBranchEvent = "push" | "pull_request" | "pull_request_target";

export const AGENT_BRANCH_EVENTS: readonly AgentBranchEvent[] = [
  "push",
  "pull_request",
  "pull_request_target",
];

export interface JobReading {
  id: string;
  /** The secrets the job reads (`secrets.NAME`), `secrets: inherit`, or `secrets[…]`/`toJSON(secrets)` whole. */
  secrets: string[];
  /** The job's `environment:` name (an expression's text when it is one), null when it names none. */
  environment: string | null;
  /**
   * Whether the job's `if:` lets it run for each event on a task branch: false skips it (a guard), true runs
   * it, null when the condition reads something other than the ref and event (then it cannot be judged).
   */
  runsOn: Record<AgentBranchEvent, boolean | null>;
  /** Whether the job refers to the pull request's head (`github.event.pull_request.head.*`, `github.head_ref`). */
  readsPullHead: boolean;
  /**
   * Whether the job fetches the repository's code: an `actions/checkout` step, a local action (`uses: ./…`),
   * `git`/`gh` in a `run:` script, or a reusable workflow (whose steps are not read here). A job that does none
   * of these runs no code from the branch, whatever secrets it holds.
   */
  fetchesCode: boolean;
}

export type WorkflowReading =
  | { path: string; error: string }
  | {
      path: string;
      error: null;
      /** The events of AGENT_BRANCH_EVENTS the workflow listens to, with their filters. */
      on: Partial<Record<AgentBranchEvent, RefFilters>>;
      jobs: JobReading[];
    };

export interface ExposedJob {
  workflow: string;
  job: string;
  secrets: string[];
  /** How the agent's code reaches it, in words ("pushes to autopilot/**", …). */
  triggers: string[];
  /** Set when the job names an environment: its secrets then wait for the environment's protection rules. */
  environment: string | null;
  /** Set when the job has an `if:` that could not be judged. */
  unjudgedCondition: boolean;
}

export interface AgentBranchFindings {
  /** Workflows GitHub's parser rejects, with its message. */
  rejected: { workflow: string; error: string }[];
  /** Secret-using jobs that run on task branches with nothing in the file to stop them. */
  exposed: ExposedJob[];
  /** Secret-using jobs that run on task branches but name an environment. */
  environmentBound: ExposedJob[];
}

/**
 * GitHub's filter patterns for branches and tags:
 * https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-syntax#filter-pattern-cheat-sheet
 * `*` any characters but `/`, `**` any characters, `?` zero or one of the preceding character, `+` one or more
 * of it, `[…]` one character of a set or range, `\` escapes the next character. Hand-written because no kept
 * npm package implements this syntax (minimatch and picomatch read `?`, `+` and `!` differently).
 */
export function filterPatternMatches(pattern: string, ref: string): boolean {
  let source = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === "\\" && i + 1 < pattern.length) {
      source += escapeRegExp(pattern[++i]!);
    } else if (c === "*" && pattern[i + 1] === "*") {
      source += ".*";
      i++;
    } else if (c === "*") source += "[^/]*";
    else if (c === "?" || c === "+") source += source === "" ? escapeRegExp(c) : c;
    else if (c === "[") {
      const end = pattern.indexOf("]", i + 1);
      const set = end > i ? pattern.slice(i + 1, end) : "";
      if (end > i && /^([a-zA-Z0-9]-[a-zA-Z0-9]|[^\]\\^-])+$/.test(set)) {
        source += `[${set}]`;
        i = end;
      } else source += "\\[";
    } else source += escapeRegExp(c);
  }
  return new RegExp(`^${source}$`).test(ref);
}

function escapeRegExp(c: string): string {
  return c.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

/**
 * Whether a list of patterns admits a ref. Patterns apply in order: a `!pattern` after a match excludes the ref
 * again, a later positive pattern includes it again (same page, "Patterns to match branches and tags").
 */
export function patternsAdmit(patterns: readonly string[], ref: string): boolean {
  let admitted = false;
  for (const pattern of patterns) {
    if (pattern.startsWith("!")) {
      if (admitted && filterPatternMatches(pattern.slice(1), ref)) admitted = false;
    } else if (filterPatternMatches(pattern, ref)) admitted = true;
  }
  return admitted;
}

/**
 * Whether a branch filter lets the event through for `branch`. For `push`, the filters name the pushed branch,
 * and a workflow that lists only tags runs for no branch push; for `pull_request`/`pull_request_target` they
 * name the pull request's BASE branch:
 * https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-syntax#onpull_requestpull_request_targetbranchesbranches-ignore
 */
function branchFilterAdmits(filters: RefFilters, branch: string, isPush: boolean): boolean {
  const { branches, branchesIgnore } = filters;
  if (!branches && !branchesIgnore) return !(isPush && (filters.tags || filters.tagsIgnore));
  if (branches && !patternsAdmit(branches, branch)) return false;
  if (branchesIgnore && patternsAdmit(branchesIgnore, branch)) return false;
  return true;
}

function triggerWords(event: AgentBranchEvent, prefix: string): string {
  if (event === "push") return `pushes to ${prefix}**`;
  if (event === "pull_request") return `pull requests from ${prefix}**`;
  return `pull_request_target runs that read the head of pull requests from ${prefix}**`;
}

/**
 * The judgement. `defaultBranch` is the base of Autopilot's pull requests; null when unknown (a local checkout),
 * and then a pull request's base-branch filters are taken to admit it.
 */
export function agentBranchSecretFindings(
  workflows: readonly WorkflowReading[],
  branchPrefix: string,
  defaultBranch: string | null,
): AgentBranchFindings {
  const findings: AgentBranchFindings = { rejected: [], exposed: [], environmentBound: [] };
  // The agent's work is pushed to the task branch, or a best-of candidate's beside it.
  const agentBranches = [taskBranchName(branchPrefix, 1), candidateBranchName(branchPrefix, 1, 1)];
  for (const workflow of workflows) {
    if (workflow.error !== null) {
      findings.rejected.push({ workflow: workflow.path, error: workflow.error });
      continue;
    }
    for (const job of workflow.jobs) {
      if (job.secrets.length === 0 || !job.fetchesCode) continue;
      let unjudged = false;
      const triggers = AGENT_BRANCH_EVENTS.filter((event) => {
        const filters = workflow.on[event];
        if (!filters) return false;
        const admits =
          event === "push"
            ? agentBranches.some((branch) => branchFilterAdmits(filters, branch, true))
            : defaultBranch === null || branchFilterAdmits(filters, defaultBranch, false);
        // pull_request_target runs the base branch's workflow, not the agent's code, unless the job fetches
        // the pull request's head.
        if (!admits || (event === "pull_request_target" && !job.readsPullHead)) return false;
        const runs = job.runsOn[event];
        if (runs === null) unjudged = true;
        return runs !== false;
      });
      if (triggers.length === 0) continue;
      const exposed: ExposedJob = {
        workflow: workflow.path,
        job: job.id,
        secrets: job.secrets,
        triggers: triggers.map((event) => triggerWords(event, branchPrefix)),
        environment: job.environment,
        unjudgedCondition: unjudged,
      };
      (job.environment === null ? findings.exposed : findings.environmentBound).push(exposed);
    }
  }
  return findings;
}

/** The job-level condition docs/SECURITY.md documents, for `branchPrefix`. */
export function agentBranchGuard(branchPrefix: string): string {
  return `if: \${{ !startsWith(github.head_ref || github.ref_name, '${branchPrefix.replace(/'/g, "''")}') }}`;
}

/** One line per finding, for doctor's detail and init's output. */
export function describeAgentBranchFindings(findings: AgentBranchFindings, branchPrefix: string): string[] {
  const lines: string[] = [];
  for (const { workflow, error } of findings.rejected)
    lines.push(`${workflow}: GitHub's parser rejects it, so it was not checked: ${error}`);
  const guard = agentBranchGuard(branchPrefix);
  for (const job of findings.exposed)
    lines.push(
      `${job.workflow} › ${job.job} reads ${job.secrets.join(", ")} and runs on ${job.triggers.join(" and ")}` +
        (job.unjudgedCondition ? " (its `if:` reads more than the branch, so it could not be judged)" : "") +
        `: add \`${guard}\` to the job`,
    );
  for (const job of findings.environmentBound)
    lines.push(
      `${job.workflow} › ${job.job} reads ${job.secrets.join(", ")} on ${job.triggers.join(" and ")} and relies on environment ${job.environment}'s protection rules (required reviewers, or deployment branches without ${branchPrefix}**), which the workflow file does not show: check them in Settings → Environments`,
    );
  return lines;
}

/** doctor's check: fails while a secret-using job runs on task branches unguarded, or a workflow does not parse. */
export function agentBranchSecretsCheck(findings: AgentBranchFindings, branchPrefix: string): DoctorCheck {
  const id = "agent-branch-secrets";
  const title = `No workflow job hands a secret to code on ${branchPrefix}** branches`;
  const lines = describeAgentBranchFindings(findings, branchPrefix);
  if (findings.exposed.length === 0 && findings.rejected.length === 0)
    return {
      id,
      title,
      status: "pass",
      detail: lines.length
        ? itemized("these jobs rely on what doctor cannot see:", lines)
        : "no secret-using job runs on them",
      fix: "",
    };
  return {
    id,
    title,
    status: "fail",
    detail: itemized("these jobs or workflows need attention:", lines),
    fix: `Keep each job named above off agent branches with \`${agentBranchGuard(branchPrefix)}\`, or move its secrets into an environment with required reviewers (docs/SECURITY.md, "CI on agent branches"); correct any workflow GitHub's parser rejects.`,
  };
}
