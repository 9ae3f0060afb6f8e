/**
 * Whether an event starts a run of a workflow, from the workflow's `on:` and GitHub's rules for the events a
 * repository raises (the Actions stand-in asks this for every store event when event-triggered runs are on).
 *
 * https://docs.github.com/en/actions/reference/workflows-and-actions/events-that-trigger-workflows
 * https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-syntax#on
 */
import type { StoreEvent } from "../store.js";
import type { EventsConfig } from "./workflow-template.js";

/** The account a run's `GITHUB_TOKEN` acts as. */
const GITHUB_TOKEN_ACTOR = "github-actions[bot]";

/**
 * Activity types an event triggers on when the workflow lists none: all of them, except `pull_request` (and
 * `pull_request_target`), which default to opened, synchronize and reopened.
 * https://docs.github.com/en/actions/reference/workflows-and-actions/events-that-trigger-workflows#pull_request
 */
const DEFAULT_TYPES: Record<string, string[]> = {
  pull_request: ["opened", "synchronize", "reopened"],
};

/** The events the stand-in can start runs for (the store's events that GitHub lists as workflow triggers). */
const TRIGGERING_EVENTS = new Set([
  "issues",
  "issue_comment",
  "pull_request",
  "pull_request_review",
  "check_run",
  "check_suite",
  "workflow_run",
  "push",
  "create",
  "delete",
  "status",
  "sub_issues",
  "merge_group",
]);

type TriggerVerdict = { starts: true } | { starts: false; why: string };

/**
 * Whether `event` starts a run of a workflow whose `on:` the parser read as `events`. `workflowName` names the workflow (a
 * `workflow_run` trigger never fires on runs of its own workflow here, which GitHub's three-level chain limit
 * would stop anyway); `checkSuiteApp` is the slug of the app that owns a `check_suite` event's suite.
 */
export function eventStartsRun(
  events: EventsConfig,
  event: StoreEvent,
  facts: { workflowName: string; checkSuiteApp?: string | null },
): TriggerVerdict {
  if (!TRIGGERING_EVENTS.has(event.name)) return { starts: false, why: `${event.name} starts no workflow` };
  // "events triggered by the GITHUB_TOKEN, with the exception of workflow_dispatch and repository_dispatch,
  // will not create a new workflow run" (workflow_dispatch runs are started by the store, not here).
  // https://docs.github.com/en/actions/concepts/security/github_token#when-github_token-triggers-workflow-runs
  if (event.sender.toLowerCase() === GITHUB_TOKEN_ACTOR)
    return { starts: false, why: "caused by a run's GITHUB_TOKEN" };
  if (!(event.name in events)) return { starts: false, why: `the workflow is not on ${event.name}` };
  const filter = (events[event.name] ?? {}) as Record<string, unknown>;
  const action = "action" in event ? event.action : null;
  const types = listOf(filter.types) ?? DEFAULT_TYPES[event.name] ?? null;
  if (action !== null && types !== null && !types.includes(action))
    return { starts: false, why: `${event.name}.${action} is not among its types` };
  switch (event.name) {
    case "push":
      return pushStarts(filter, event.push.ref, event.push.deleted);
    case "workflow_run": {
      // https://docs.github.com/en/actions/reference/workflows-and-actions/events-that-trigger-workflows#workflow_run
      const names = listOf(filter.workflows) ?? [];
      if (event.workflow.name === facts.workflowName)
        return { starts: false, why: "a run of the workflow itself" };
      if (!names.some((n) => globMatch(n, event.workflow.name)))
        return { starts: false, why: `"${event.workflow.name}" is not among its workflows` };
      return { starts: true };
    }
    case "merge_group": {
      // `branches`/`branches-ignore` filter the merge group's base branch; `checks_requested` is the only type.
      // https://docs.github.com/en/actions/reference/workflows-and-actions/events-that-trigger-workflows#merge_group
      if (event.action !== "checks_requested") return { starts: false, why: "only checks_requested runs" };
      return pushStarts(
        { branches: filter.branches, "branches-ignore": filter["branches-ignore"] },
        event.group.baseRef,
        false,
      );
    }
    case "check_suite":
      // "To prevent recursive workflows, this event does not trigger workflows if the check suite was created
      // by GitHub Actions." https://docs.github.com/en/actions/reference/workflows-and-actions/events-that-trigger-workflows#check_suite
      if (facts.checkSuiteApp === "github-actions")
        return { starts: false, why: "the check suite was created by GitHub Actions" };
      return { starts: true };
    default:
      return { starts: true };
  }
}

/**
 * `push` with `branches`/`branches-ignore`/`tags`/`tags-ignore`: a branch push runs only when a branch filter
 * (or none at all) admits it, likewise for tags; a push that deletes a ref runs nothing here.
 * https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-syntax#onpushbranchestagsbranches-ignoretags-ignore
 */
function pushStarts(filter: Record<string, unknown>, ref: string, deleted: boolean): TriggerVerdict {
  if (deleted) return { starts: false, why: "a deleted ref" };
  const branches = listOf(filter.branches);
  const branchesIgnore = listOf(filter["branches-ignore"]);
  const tags = listOf(filter.tags);
  const tagsIgnore = listOf(filter["tags-ignore"]);
  const anyFilter = branches || branchesIgnore || tags || tagsIgnore;
  const isTag = ref.startsWith("refs/tags/");
  const name = ref.replace(/^refs\/(heads|tags)\//, "");
  const [only, ignore] = isTag ? [tags, tagsIgnore] : [branches, branchesIgnore];
  if (!only && !ignore) {
    return anyFilter
      ? { starts: false, why: `only ${isTag ? "branch" : "tag"} pushes are listed` }
      : { starts: true };
  }
  if (only && !only.some((p) => globMatch(p, name))) return { starts: false, why: `${name} is not listed` };
  if (ignore?.some((p) => globMatch(p, name))) return { starts: false, why: `${name} is ignored` };
  return { starts: true };
}

function listOf(value: unknown): string[] | null {
  if (value === undefined || value === null) return null;
  return (Array.isArray(value) ? value : [value]).map(String);
}

/**
 * GitHub's filter patterns: `*` matches within one path segment, `**` across them, `?` one character.
 * https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-syntax#filter-pattern-cheat-sheet
 */
export function globMatch(pattern: string, value: string): boolean {
  let source = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === "*" && pattern[i + 1] === "*") {
      source += ".*";
      i++;
    } else if (c === "*") source += "[^/]*";
    else if (c === "?") source += ".";
    else source += c.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${source}$`).test(value);
}

/**
 * The period of a `schedule` cron in minutes, for the forms a controller schedule uses (`*\/N * * * *`,
 * `M * * * *` hourly, `M H * * *` daily); null for anything else. GitHub runs schedules at most every 5
 * minutes. https://docs.github.com/en/actions/reference/workflows-and-actions/events-that-trigger-workflows#schedule
 */
export function cronPeriodMinutes(cron: string): number | null {
  const fields = cron.trim().split(/\s+/);
  if (fields.length !== 5) return null;
  const [minute, hour, ...rest] = fields as [string, string, string, string, string];
  if (rest.some((f) => f !== "*")) return null;
  const step = /^\*\/(\d+)$/.exec(minute);
  if (step && hour === "*") return Math.max(5, Number(step[1]));
  if (/^\d+$/.test(minute) && hour === "*") return 60;
  if (/^\d+$/.test(minute) && /^\d+$/.test(hour)) return 24 * 60;
  if (minute === "*" && hour === "*") return 5;
  return null;
}

/**
 * Where in its period a `schedule` cron fires, in minutes after midnight UTC modulo the period (what
 * {@link cronPeriodMinutes} reads): `*\/N` and `* * * * *` at the period's marks (0), `M * * * *` at minute M of
 * each hour, `M H * * *` at H:M each day. GitHub runs a schedule on the clock, not from when the file landed.
 */
export function cronOffsetMinutes(cron: string): number {
  const [minute = "*", hour = "*"] = cron.trim().split(/\s+/);
  const m = /^\d+$/.test(minute) ? Number(minute) : 0;
  return /^\d+$/.test(hour) ? Number(hour) * 60 + m : m;
}

/** The `cron` lines of a workflow's `on.schedule`. */
export function scheduleCrons(events: EventsConfig | undefined): string[] {
  return (events?.schedule ?? []).map((entry) => entry.cron);
}
