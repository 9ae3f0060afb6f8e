/**
 * GitHub's own reading of a workflow file: `@actions/workflow-parser`, the parser GitHub publishes from its
 * Actions language services (https://github.com/actions/languageservices/tree/main/workflow-parser), checks
 * the file against GitHub's workflow schema and converts it as GitHub does (`convertWorkflowTemplate`: the
 * events, the jobs in order, each `if:` with its implicit `success() && (…)`, the step ids GitHub generates,
 * every `${{ }}` string turned into one expression). A file it rejects is one GitHub would show as "Invalid
 * workflow file" and start no job of
 * (https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-syntax), so the Actions
 * stand-in fails such a run at startup instead of guessing what it meant.
 *
 * The converted template leaves out what only the runner reads (a step's `with:`, `shell`,
 * `working-directory`, `timeout-minutes`; a job's `timeout-minutes` and `defaults`; `name` and `run-name`):
 * those are taken, still as the parser's tokens, from the same parse, so every value is evaluated from
 * GitHub's tokens (expressions.ts).
 */
import {
  convertWorkflowTemplate,
  isBasicExpression,
  isMapping,
  isSequence,
  isString,
  NoOperationTraceWriter,
  parseWorkflow,
} from "@actions/workflow-parser";
import type { EventsConfig } from "@actions/workflow-parser/model/workflow-template";
import type { MappingToken, TemplateToken } from "@actions/workflow-parser/templates/tokens/index";

export type { EventsConfig, MappingToken, TemplateToken };

/** One step as the runner sees it. */
export interface WorkflowStep {
  /** The step's `id:`, or the one GitHub generates (`__run`, `__actions_checkout`, …). */
  id: string;
  /** Whether the workflow gave the id (only those are in the `steps` context). */
  ownId: boolean;
  name: TemplateToken | undefined;
  /** The condition to evaluate, with GitHub's implicit `success()` already added. */
  if: string;
  env: MappingToken | undefined;
  continueOnError: boolean | TemplateToken | undefined;
  run: TemplateToken | undefined;
  /** The `run:` script as written (for the step's display name). */
  script: string;
  uses: string | undefined;
  with: MappingToken | undefined;
  shell: TemplateToken | undefined;
  workingDirectory: TemplateToken | undefined;
  timeoutMinutes: TemplateToken | undefined;
}

export interface WorkflowJob {
  id: string;
  name: TemplateToken;
  if: string;
  env: MappingToken | undefined;
  concurrency: TemplateToken | undefined;
  outputs: MappingToken | undefined;
  timeoutMinutes: TemplateToken | undefined;
  defaultShell: TemplateToken | undefined;
  defaultWorkingDirectory: TemplateToken | undefined;
  steps: WorkflowStep[];
}

export interface WorkflowDefinition {
  /** The workflow's `name:` (null: GitHub shows the file's path). */
  name: string | null;
  runName: TemplateToken | undefined;
  events: EventsConfig;
  env: MappingToken | undefined;
  concurrency: TemplateToken | undefined;
  jobs: WorkflowJob[];
}

type WorkflowReading = { errors: string[]; workflow: null } | { errors: []; workflow: WorkflowDefinition };

const read = new Map<string, Promise<WorkflowReading>>();

/** Reads a workflow file as GitHub does: its errors, or what it defines. Cached by path and text. */
export function readWorkflow(path: string, text: string): Promise<WorkflowReading> {
  const key = `${path}\n${text}`;
  let known = read.get(key);
  if (!known) {
    if (read.size > 200) read.clear();
    known = readUncached(path, text);
    read.set(key, known);
  }
  return known;
}

/** The errors GitHub's parser finds in a workflow file (none: GitHub accepts it). */
export async function workflowErrors(path: string, text: string): Promise<string[]> {
  return (await readWorkflow(path, text)).errors;
}

async function readUncached(path: string, text: string): Promise<WorkflowReading> {
  const parsed = parseWorkflow({ name: path, content: text }, new NoOperationTraceWriter());
  const template = parsed.value ? await convertWorkflowTemplate(parsed.context, parsed.value) : null;
  const errors = parsed.context.errors.getErrors().map((error) => error.message);
  if (errors.length > 0 || !template || !parsed.value) {
    return { errors: errors.length > 0 ? errors : [`${path}: not a workflow`], workflow: null };
  }
  const root = parsed.value.assertMapping("workflow");
  const jobTokens = mapping(root.find("jobs"));
  const jobs: WorkflowJob[] = [];
  for (const job of template.jobs) {
    if (job.type !== "job") {
      return {
        errors: [`${path}: job ${job.id.value} calls a reusable workflow, which the sandbox does not run`],
        workflow: null,
      };
    }
    const raw = mapping(jobTokens?.find(job.id.value));
    const rawSteps = raw?.find("steps");
    const runDefaults = mapping(mapping(mapping(raw?.find("defaults"))?.find("run")) ?? undefined);
    jobs.push({
      id: job.id.value,
      name: job.name ?? job.id,
      if: job.if.expression,
      env: job.env,
      concurrency: job.concurrency,
      outputs: job.outputs,
      timeoutMinutes: raw?.find("timeout-minutes"),
      defaultShell: runDefaults?.find("shell"),
      defaultWorkingDirectory: runDefaults?.find("working-directory"),
      steps: job.steps.map((step, index) => {
        if (!("run" in step) && !("uses" in step))
          throw new Error(`${path}: job ${job.id.value} step ${index + 1} is neither run nor uses`);
        const rawStep = rawSteps && isSequence(rawSteps) ? mapping(rawSteps.get(index)) : undefined;
        const given = rawStep?.find("id");
        return {
          id: step.id,
          ownId: given !== undefined && isString(given) && given.value !== "",
          name: step.name,
          if: step.if.expression,
          env: step.env,
          continueOnError: step["continue-on-error"],
          run: "run" in step ? step.run : undefined,
          script: rawScript(rawStep?.find("run")),
          uses: "uses" in step ? step.uses.value : undefined,
          with: mapping(rawStep?.find("with")),
          shell: rawStep?.find("shell"),
          workingDirectory: rawStep?.find("working-directory"),
          timeoutMinutes: rawStep?.find("timeout-minutes"),
        };
      }),
    });
  }
  const name = root.find("name");
  return {
    errors: [],
    workflow: {
      name: name && isString(name) && name.value ? name.value : null,
      runName: root.find("run-name"),
      events: template.events,
      env: mapping(template.env),
      concurrency: template.concurrency,
      jobs,
    },
  };
}

function mapping(token: TemplateToken | undefined): MappingToken | undefined {
  return token && isMapping(token) ? token : undefined;
}

function rawScript(token: TemplateToken | undefined): string {
  if (!token) return "";
  if (isString(token)) return token.value;
  return isBasicExpression(token) ? (token.source ?? token.toString()) : token.toString();
}
