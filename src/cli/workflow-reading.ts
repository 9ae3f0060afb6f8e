/**
 * Reads a repository's workflow files with GitHub's own parser (`@actions/workflow-parser`, the parser behind
 * GitHub's workflow editor support) and its expression language (`@actions/expressions`) into what
 * src/core/gates/agent-branch-secrets.ts judges: each job's secrets, environment, and whether its `if:` lets it run
 * on a task branch.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Lexer, Parser, data } from "@actions/expressions";
import {
  Binary,
  ContextAccess,
  type Expr,
  FunctionCall,
  Grouping,
  IndexAccess,
  Literal,
  Logical,
  Unary,
} from "@actions/expressions/ast";
import { Evaluator } from "@actions/expressions/evaluator";
import {
  convertWorkflowTemplate,
  isBasicExpression,
  isMapping,
  isString,
  NoOperationTraceWriter,
  parseWorkflow,
} from "@actions/workflow-parser";
import type {
  BranchFilterConfig,
  Step,
  TagFilterConfig,
  WorkflowJob,
} from "@actions/workflow-parser/model/workflow-template";
import { TemplateToken } from "@actions/workflow-parser/templates/tokens/template-token";
import {
  AGENT_BRANCH_EVENTS,
  type AgentBranchEvent,
  type AgentBranchFindings,
  agentBranchSecretFindings,
  type JobReading,
  type RefFilters,
  type WorkflowReading,
} from "../core/gates/agent-branch-secrets.js";
import { CONFIG_PATH, DEFAULT_CONFIG, parseConfig } from "../core/config/index.js";
import { taskBranchName } from "../core/contract.js";

interface WorkflowFile {
  /** The path in the repository, `.github/workflows/NAME.yml`. */
  path: string;
  text: string;
}

/**
 * The `github` context of a run on a task branch, per event, as the contexts reference documents it:
 * https://docs.github.com/en/actions/reference/workflows-and-actions/contexts#github-context
 * (`head_ref`/`base_ref` only for pull_request and pull_request_target; `ref_name` the pushed branch on push,
 * `<number>/merge` on pull_request; pull_request_target runs on the base branch).
 */
function githubContext(event: AgentBranchEvent, branch: string, base: string) {
  if (event === "push")
    return {
      event_name: event,
      ref: `refs/heads/${branch}`,
      ref_name: branch,
      ref_type: "branch",
      head_ref: "",
      base_ref: "",
      event: { ref: `refs/heads/${branch}` },
    };
  const merge = event === "pull_request";
  return {
    event_name: event,
    ref: merge ? "refs/pull/1/merge" : `refs/heads/${base}`,
    ref_name: merge ? "1/merge" : base,
    ref_type: "branch",
    head_ref: branch,
    base_ref: base,
    event: { pull_request: { head: { ref: branch }, base: { ref: base } } },
  };
}

/** The `github.…` paths githubContext models; a condition that reads any other is not judged. */
const MODELLED = new Set([
  "event_name",
  "ref",
  "ref_name",
  "ref_type",
  "head_ref",
  "base_ref",
  "event.ref",
  "event.pull_request.head.ref",
  "event.pull_request.base.ref",
]);

/** The job-status functions a job's `if:` may call; on a fresh run every `needs` job has succeeded. */
const STATUS_FUNCTIONS = new Map(
  [
    ["success", true],
    ["always", true],
    ["failure", false],
    ["cancelled", false],
  ].map(([name, value]) => [
    name as string,
    { name: name as string, minArgs: 0, maxArgs: 0, call: () => new data.BooleanData(value as boolean) },
  ]),
);

function parseExpression(text: string, contexts: string[]): Expr | null {
  try {
    const { tokens } = new Lexer(text).lex();
    return new Parser(tokens, contexts, [...STATUS_FUNCTIONS.values()]).parse();
  } catch {
    return null;
  }
}

/**
 * `a.b['c']` as "a.b.c" when every step is a literal name; null otherwise. Context names are case-insensitive
 * (https://docs.github.com/en/actions/reference/workflows-and-actions/contexts): the context comes back in
 * lower case, the rest as written.
 */
function accessPath(expr: Expr): string | null {
  if (expr instanceof ContextAccess) return expr.name.lexeme.toLowerCase();
  if (expr instanceof IndexAccess && expr.index instanceof Literal) {
    const head = accessPath(expr.expr);
    return head === null ? null : `${head}.${expr.index.literal.coerceString()}`;
  }
  return null;
}

/** Every context read and function called in an expression, as dotted paths / names. */
function reads(expr: Expr, into: { paths: string[]; whole: string[]; functions: string[] }): void {
  const path = accessPath(expr);
  if (path !== null && !(expr instanceof ContextAccess)) {
    into.paths.push(path);
    return;
  }
  if (expr instanceof ContextAccess) {
    into.whole.push(expr.name.lexeme.toLowerCase());
    return;
  }
  if (expr instanceof FunctionCall) into.functions.push(expr.functionName.lexeme.toLowerCase());
  for (const child of children(expr)) reads(child, into);
}

function children(expr: Expr): Expr[] {
  if (expr instanceof Unary) return [expr.expr];
  if (expr instanceof Binary) return [expr.left, expr.right];
  if (expr instanceof Logical || expr instanceof FunctionCall) return expr.args;
  if (expr instanceof Grouping) return [expr.group];
  if (expr instanceof IndexAccess) return [expr.expr, expr.index];
  return [];
}

const CONTEXTS = [
  "github",
  "secrets",
  "env",
  "vars",
  "inputs",
  "needs",
  "matrix",
  "strategy",
  "job",
  "steps",
  "runner",
];

/** Whether `if:` lets the job run for `event` on `branch`; null when it reads more than the ref and event. */
function conditionRuns(
  condition: string,
  event: AgentBranchEvent,
  branch: string,
  base: string | null,
): boolean | null {
  const expr = parseExpression(condition, CONTEXTS);
  if (!expr) return null;
  const found = { paths: [] as string[], whole: [] as string[], functions: [] as string[] };
  reads(expr, found);
  if (found.whole.length > 0) return null;
  // Property names are case-insensitive too.
  found.paths = found.paths.map((p) => p.toLowerCase());
  if (found.paths.some((p) => !p.startsWith("github.") || !MODELLED.has(p.slice("github.".length))))
    return null;
  // Without the base branch, a condition that reads it cannot be judged.
  const readsBase = (p: string) =>
    /^github\.(base_ref|event\.pull_request\.base\.ref)$/.test(p) ||
    (event === "pull_request_target" && /^github\.ref(_name)?$/.test(p));
  if (base === null && found.paths.some(readsBase)) return null;
  if (found.functions.some((f) => f === "hashfiles" || f === "fromjson")) return null;
  const context = JSON.parse(
    JSON.stringify({ github: githubContext(event, branch, base ?? "") }),
    data.reviver,
  );
  try {
    const result = new Evaluator(expr, context as data.Dictionary, STATUS_FUNCTIONS).evaluate();
    return truthy(result);
  } catch {
    return null;
  }
}

function truthy(value: data.ExpressionData): boolean {
  switch (value.kind) {
    case data.Kind.Null:
      return false;
    case data.Kind.Boolean:
      return (value as data.BooleanData).value;
    case data.Kind.Number:
      return (value as data.NumberData).value !== 0 && !Number.isNaN((value as data.NumberData).value);
    case data.Kind.String:
      return (value as data.StringData).value !== "";
    default:
      return true;
  }
}

/** What an expression token's text reads of `secrets` and of the pull request's head. */
function scanExpression(text: string, secrets: Set<string>, head: { reads: boolean }): void {
  const expr = parseExpression(text, CONTEXTS);
  if (!expr) return;
  const found = { paths: [] as string[], whole: [] as string[], functions: [] as string[] };
  reads(expr, found);
  for (const path of found.paths) {
    if (path.startsWith("secrets.")) {
      const name = path.slice("secrets.".length).split(".")[0]!;
      // GITHUB_TOKEN is not a repository secret: GitHub mints it for each run, and it reaches the branch's
      // code whether or not the workflow names it (docs/SECURITY.md, "CI on agent branches"). Names are
      // case-insensitive; GitHub shows them in capitals.
      if (name.toUpperCase() !== "GITHUB_TOKEN") secrets.add(name.toUpperCase());
    }
    const lower = path.toLowerCase();
    if (lower.startsWith("github.event.pull_request.head.") || lower === "github.head_ref") head.reads = true;
  }
  if (found.whole.includes("secrets")) secrets.add("secrets[…]");
}

/** Every expression anywhere under a token (keys included). */
function scanToken(token: TemplateToken | undefined, secrets: Set<string>, head: { reads: boolean }): void {
  if (!token) return;
  for (const [, node] of TemplateToken.traverse(token)) {
    if (isBasicExpression(node)) scanExpression(node.expression, secrets, head);
  }
}

/** Whether a step brings the repository's code into the job (see JobReading.fetchesCode). */
function fetchesCode(step: Step): boolean {
  if ("uses" in step) return /^(actions\/checkout@|\.\/)/i.test(step.uses.value);
  if ("run" in step) {
    const script = isString(step.run)
      ? step.run.value
      : isBasicExpression(step.run)
        ? step.run.expression
        : "";
    return /(^|[\s;&|(`])(git|gh)\s/.test(script);
  }
  if ("parallel" in step) return step.parallel.some(fetchesCode);
  return false;
}

function filtersOf(config: unknown): RefFilters {
  const c = (config ?? {}) as BranchFilterConfig & TagFilterConfig;
  return {
    ...(c.branches ? { branches: c.branches } : {}),
    ...(c["branches-ignore"] ? { branchesIgnore: c["branches-ignore"] } : {}),
    ...(c.tags ? { tags: c.tags } : {}),
    ...(c["tags-ignore"] ? { tagsIgnore: c["tags-ignore"] } : {}),
  };
}

function environmentName(token: TemplateToken | undefined): string | null {
  if (!token) return null;
  const name = isMapping(token) ? token.find("name") : token;
  if (!name) return null;
  if (isString(name)) return name.value;
  if (isBasicExpression(name)) return `\${{ ${name.expression} }}`;
  return null;
}

function rawJobs(root: TemplateToken | undefined): Map<string, TemplateToken> {
  const jobs = new Map<string, TemplateToken>();
  const mapping = root && isMapping(root) ? root.find("jobs") : undefined;
  if (mapping && isMapping(mapping))
    for (const pair of mapping) if (isString(pair.key)) jobs.set(pair.key.value, pair.value);
  return jobs;
}

/**
 * One workflow file read the way GitHub reads it. A file the parser rejects comes back with the parser's
 * messages; `branch` is a task branch (`<branchPrefix>issue-1`), `base` the branch its pull requests target
 * (null when unknown: then a condition that reads the base is not judged).
 */
async function readWorkflow(
  file: WorkflowFile,
  branch: string,
  base: string | null,
): Promise<WorkflowReading> {
  const parsed = parseWorkflow({ name: file.path, content: file.text }, new NoOperationTraceWriter());
  const parseErrors = parsed.context.errors.getErrors();
  if (parseErrors.length > 0 || !parsed.value)
    return { path: file.path, error: parseErrors.map((e) => e.message).join("; ") || "empty workflow" };
  const template = await convertWorkflowTemplate(parsed.context, parsed.value);
  const conversionErrors = [...parsed.context.errors.getErrors(), ...(template.errors ?? [])];
  if (conversionErrors.length > 0)
    return {
      path: file.path,
      error: conversionErrors.map((e) => ("message" in e ? e.message : e.Message)).join("; "),
    };
  const on: Partial<Record<AgentBranchEvent, RefFilters>> = {};
  for (const event of AGENT_BRANCH_EVENTS)
    if (event in template.events) on[event] = filtersOf(template.events[event]);
  // A workflow-level `env:` is every job's environment.
  const workflowSecrets = new Set<string>();
  const ignored = { reads: false };
  if (isMapping(parsed.value)) scanToken(parsed.value.find("env"), workflowSecrets, ignored);
  const raw = rawJobs(parsed.value);
  const jobs: JobReading[] = template.jobs.map((job: WorkflowJob) => {
    const secrets = new Set(workflowSecrets);
    const head = { reads: false };
    // The job's own `if:` is left out: reading `github.head_ref` there is a guard, not a checkout.
    const rawJob = raw.get(job.id.value);
    if (rawJob && isMapping(rawJob))
      for (const pair of rawJob)
        if (!(isString(pair.key) && pair.key.value === "if")) scanToken(pair.value, secrets, head);
    if (job.type === "reusableWorkflowJob" && job["inherit-secrets"]) secrets.add("secrets: inherit");
    const condition = job.if?.expression ?? "success()";
    const runsOn = Object.fromEntries(
      AGENT_BRANCH_EVENTS.map((event) => [event, conditionRuns(condition, event, branch, base)]),
    ) as Record<AgentBranchEvent, boolean | null>;
    return {
      id: job.id.value,
      secrets: [...secrets],
      environment: job.type === "job" ? environmentName(job.environment) : null,
      runsOn,
      readsPullHead: head.reads,
      fetchesCode: job.type === "reusableWorkflowJob" || job.steps.some(fetchesCode),
    };
  });
  return { path: file.path, error: null, on, jobs };
}

/** Whether a path in `.github/workflows/` is a workflow file (GitHub reads `.yml` and `.yaml` there). */
function isWorkflowFile(name: string): boolean {
  return /\.ya?ml$/.test(name);
}

/** Every workflow read, for a task branch of `branchPrefix` whose pull requests target `base`. */
export async function readWorkflows(
  files: readonly WorkflowFile[],
  branchPrefix: string,
  base: string | null,
): Promise<WorkflowReading[]> {
  const branch = taskBranchName(branchPrefix, 1);
  return Promise.all(files.map((file) => readWorkflow(file, branch, base)));
}

/** The branch `origin/HEAD` names in a checkout (the default branch a clone recorded); null when none. */
function localDefaultBranch(dir: string): string | null {
  try {
    const ref = execFileSync("git", ["-C", dir, "symbolic-ref", "--short", "refs/remotes/origin/HEAD"], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
    return ref.replace(/^origin\//, "") || null;
  } catch {
    return null;
  }
}

/**
 * What `init` prints about a checkout's own workflows: each secret-using job that runs on task branches, with
 * the guard to add (the branch prefix from the checkout's `.github/autopilot.yml`, else the default).
 */
export async function localAgentBranchFindings(
  dir: string,
): Promise<{ findings: AgentBranchFindings; branchPrefix: string }> {
  const folder = join(dir, ".github", "workflows");
  const names = existsSync(folder) ? readdirSync(folder).filter(isWorkflowFile).sort() : [];
  const files = names.map((name) => ({
    path: `.github/workflows/${name}`,
    text: readFileSync(join(folder, name), "utf8"),
  }));
  const configPath = join(dir, CONFIG_PATH);
  const parsed = parseConfig(existsSync(configPath) ? readFileSync(configPath, "utf8") : null);
  const branchPrefix = (parsed.ok ? parsed.config : DEFAULT_CONFIG).branchPrefix;
  const base = localDefaultBranch(dir);
  const readings = await readWorkflows(files, branchPrefix, base);
  return { findings: agentBranchSecretFindings(readings, branchPrefix, base), branchPrefix };
}
