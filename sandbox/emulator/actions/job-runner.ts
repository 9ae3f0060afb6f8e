/**
 * One job of a workflow run, as a GitHub-hosted runner runs it: a fresh workspace and runner directories, the
 * `GITHUB_*` / `RUNNER_*` environment, `run:` steps in bash (or sh, node) and `uses:` steps (uses-step.ts),
 * and the file commands (`GITHUB_OUTPUT`, `GITHUB_ENV`, `GITHUB_PATH`, `GITHUB_STEP_SUMMARY`) read back after
 * each step.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { RunConclusion, RunHandle } from "./actions-types.js";
import { conditionHolds, type ExprValue, evaluateToken, tokenString } from "./expressions.js";
import { fullRef } from "../git/git-ref-names.js";
import { dispatchEventPayload, runContext, runnerServerUrl } from "./run-context.js";
import type { JobHost, PostStep } from "./job-host.js";
import { runnerBaseEnv } from "./step-process.js";
import { runUses } from "./uses-step.js";
import { minutes, parseKeyValueFile, truthyFlag } from "./file-commands.js";
import type { MappingToken, WorkflowDefinition, WorkflowJob } from "./workflow-template.js";

/** The `gh api` stand-in put on the runs' PATH. */
const GH_SHIM = fileURLToPath(new URL("./gh-shim.mjs", import.meta.url));

/** Runs one job of a run: its workspace and environment, its steps in order, then the post steps. */
export async function runJob(
  host: JobHost,
  handle: RunHandle,
  workflow: WorkflowDefinition,
  job: WorkflowJob,
  token: string,
  dir: string,
): Promise<{ conclusion: RunConclusion; reason: string | null }> {
  const { repo, run } = handle.request;
  const jobId = job.id;
  const context = runContext(handle, workflow, token, host.options, host.store.variableValues(repo.fullName));
  const jobName = tokenString(job.name, context) || jobId;
  if (!conditionHolds(job.if, context)) return { conclusion: "skipped", reason: null };
  const storeJob = host.store.addWorkflowJob(repo.fullName, run.id, {
    name: jobName,
    status: "in_progress",
  });

  const workspace = join(dir, "work", repo.name, repo.name);
  const runnerTemp = join(dir, "temp");
  const home = join(dir, "home");
  const toolCache = join(dir, "tool-cache");
  for (const d of [workspace, runnerTemp, home, toolCache]) mkdirSync(d, { recursive: true });
  handle.record.workspace = workspace;
  (context.contexts.runner as Record<string, ExprValue>).temp = runnerTemp;
  (context.contexts.github as Record<string, ExprValue>).workspace = workspace;
  (context.contexts.github as Record<string, ExprValue>).job = jobId;

  const eventPath = join(dir, "event.json");
  writeFileSync(
    eventPath,
    JSON.stringify(
      handle.request.payload ?? dispatchEventPayload(handle, host.store, host.options.url),
      null,
      2,
    ),
  );

  const jobEnv: Record<string, string> = {};
  Object.assign(jobEnv, stringsOf(workflow.env, context));
  context.contexts.env = { ...jobEnv };
  Object.assign(jobEnv, stringsOf(job.env, context));
  context.contexts.env = { ...jobEnv };

  const base = runnerBaseEnv(home);
  if (host.options.ghCli ?? true) {
    const bin = join(dir, "bin");
    mkdirSync(bin, { recursive: true });
    const node = host.options.nodePath ?? process.execPath;
    writeFileSync(join(bin, "gh"), `#!/bin/sh\nexec '${node}' '${GH_SHIM}' "$@"\n`, { mode: 0o755 });
    base.PATH = `${bin}:${base.PATH}`;
  }
  const githubEnv: NodeJS.ProcessEnv = {
    ...base,
    CI: "true",
    GITHUB_ACTIONS: "true",
    GITHUB_WORKSPACE: workspace,
    GITHUB_REPOSITORY: repo.fullName,
    GITHUB_REPOSITORY_OWNER: repo.owner,
    GITHUB_REPOSITORY_ID: String(repo.id),
    GITHUB_EVENT_NAME: run.event,
    GITHUB_EVENT_PATH: eventPath,
    GITHUB_SHA: run.headSha,
    GITHUB_REF: fullRef(handle.request.ref),
    GITHUB_REF_NAME: handle.request.ref.replace(/^refs\/(heads|tags)\//, ""),
    GITHUB_REF_TYPE: handle.request.ref.startsWith("refs/tags/") ? "tag" : "branch",
    GITHUB_RUN_ID: String(run.id),
    GITHUB_RUN_NUMBER: String(run.runNumber),
    GITHUB_RUN_ATTEMPT: String(run.runAttempt),
    GITHUB_ACTOR: run.actor,
    GITHUB_TRIGGERING_ACTOR: run.triggeringActor,
    GITHUB_WORKFLOW: run.name,
    GITHUB_WORKFLOW_REF: `${repo.fullName}/${handle.request.workflow.path}@${fullRef(handle.request.ref)}`,
    GITHUB_JOB: jobId,
    GITHUB_SERVER_URL: runnerServerUrl(host.options.url),
    GITHUB_API_URL: host.options.url,
    GITHUB_GRAPHQL_URL: `${host.options.url}/graphql`,
    GITHUB_RETENTION_DAYS: "90",
    RUNNER_OS: "Linux",
    RUNNER_ARCH: "X64",
    RUNNER_NAME: "sandbox-runner",
    RUNNER_ENVIRONMENT: "github-hosted",
    RUNNER_TEMP: runnerTemp,
    RUNNER_TOOL_CACHE: toolCache,
    ...(handle.agentUser && host.options.jobUser
      ? { [host.options.jobUser.variable]: handle.agentUser }
      : {}),
    RUNNER_WORKSPACE: join(dir, "work", repo.name),
    ...host.options.runnerEnv,
  };

  const jobTimeout =
    minutes(evaluateToken(job.timeoutMinutes, context)) ?? host.options.jobTimeoutMs ?? 30 * 60_000;
  const jobTimer = setTimeout(() => {
    handle.timedOut = true;
    host.steps.log(
      handle,
      `##[error]The job running on runner sandbox-runner has exceeded the maximum execution time of ${Math.round(jobTimeout / 60_000)} minutes.`,
    );
    host.steps.signal(handle, false);
  }, jobTimeout);
  handle.timers.push(jobTimer);

  let status: "success" | "failure" | "cancelled" = "success";
  let reason: string | null = null;
  const extraPath: string[] = [];
  const posts: PostStep[] = [];
  const steps = job.steps;
  // An unnamed step is shown as `Run <uses>` or `Run <the script's first line>`, as on GitHub.
  handle.record.steps = steps.map((s) => ({
    name: tokenString(s.name, context) || (s.uses ? `Run ${s.uses}` : `Run ${s.script.split("\n")[0]}`),
    id: s.ownId ? s.id : null,
    status: "pending",
    conclusion: null,
    exitCode: null,
    outputs: {},
  }));
  const stepsContext: Record<string, ExprValue> = {};
  context.contexts.steps = stepsContext;

  // The workspace starts empty, as on a GitHub-hosted runner: only actions/checkout fills it.
  // https://docs.github.com/en/actions/reference/workflows-and-actions/variables#default-environment-variables

  for (let index = 0; index < steps.length; index++) {
    const step = steps[index]!;
    const record = handle.record.steps[index]!;
    if (handle.cancelRequested || handle.killed || handle.timedOut) status = "cancelled";
    // Steps that still run after a cancel run to their end.
    // https://docs.github.com/en/actions/reference/workflow-cancellation-reference
    handle.cancelAcknowledged = handle.cancelRequested;
    context.status = status;
    context.contexts.env = { ...jobEnv };
    if (handle.forceCancelled || !conditionHolds(step.if, context)) {
      record.status = "skipped";
      record.conclusion = "skipped";
      if (step.ownId) stepsContext[step.id] = { outputs: {}, outcome: "skipped", conclusion: "skipped" };
      continue;
    }
    if (handle.killed) break;
    record.status = "in_progress";
    host.options.onEvent?.({ type: "step", run: handle.record, step: record.name });
    host.steps.log(handle, `##[group]${record.name}`);

    const files = {
      output: join(runnerTemp, `_runner_file_commands/set_output_${index}`),
      env: join(runnerTemp, `_runner_file_commands/set_env_${index}`),
      path: join(runnerTemp, `_runner_file_commands/add_path_${index}`),
      state: join(runnerTemp, `_runner_file_commands/save_state_${index}`),
      summary: join(runnerTemp, `_runner_file_commands/step_summary_${index}`),
    };
    mkdirSync(join(runnerTemp, "_runner_file_commands"), { recursive: true });
    for (const f of Object.values(files)) writeFileSync(f, "");

    const stepEnv: Record<string, string> = { ...jobEnv };
    for (const { key, value } of step.env ?? []) {
      const stepContext = { ...context, contexts: { ...context.contexts, env: stepEnv } };
      stepEnv[tokenString(key, context)] = tokenString(value, stepContext);
    }
    const env: NodeJS.ProcessEnv = {
      ...githubEnv,
      ...stepEnv,
      PATH: [...extraPath, githubEnv.PATH ?? ""].filter(Boolean).join(":"),
      GITHUB_OUTPUT: files.output,
      GITHUB_ENV: files.env,
      GITHUB_PATH: files.path,
      GITHUB_STATE: files.state,
      GITHUB_STEP_SUMMARY: files.summary,
      GITHUB_ACTION: step.id,
    };
    const timeout = minutes(evaluateToken(step.timeoutMinutes, context));
    let exitCode: number | null = 0;
    try {
      if (step.uses) {
        exitCode = await runUses(host, handle, step, env, context, { workspace, token, posts, files });
      } else if (step.run) {
        const script = tokenString(step.run, {
          ...context,
          contexts: { ...context.contexts, env: stepEnv },
        });
        const scriptPath = join(runnerTemp, `${index}-${Math.random().toString(36).slice(2)}.sh`);
        writeFileSync(scriptPath, script);
        const cwd = tokenString(step.workingDirectory ?? job.defaultWorkingDirectory, context);
        const shell = tokenString(step.shell ?? job.defaultShell, context) || "bash";
        const [command, args] =
          shell === "sh"
            ? ["sh", ["-e", scriptPath]]
            : shell === "node"
              ? [host.options.nodePath ?? process.execPath, [scriptPath]]
              : ["bash", ["--noprofile", "--norc", "-eo", "pipefail", scriptPath]];
        exitCode = await host.steps.exec(handle, command as string, args as string[], {
          cwd: cwd ? resolve(workspace, cwd) : workspace,
          env,
          timeoutMs: timeout,
        });
      } else {
        throw new Error(`step ${index + 1} has neither uses nor run`);
      }
    } catch (error) {
      host.steps.log(handle, `##[error]${(error as Error).message}`);
      exitCode = 1;
    }

    // File commands, read back as the runner does after each step.
    let outputs: Record<string, string> = {};
    try {
      outputs = parseKeyValueFile(readFileSync(files.output, "utf8"));
      for (const [k, v] of Object.entries(parseKeyValueFile(readFileSync(files.env, "utf8")))) jobEnv[k] = v;
      for (const p of readFileSync(files.path, "utf8").split(/\r?\n/).filter(Boolean).reverse())
        extraPath.unshift(p);
      const summary = readFileSync(files.summary, "utf8");
      if (summary.trim()) handle.record.summary += (handle.record.summary ? "\n" : "") + summary;
    } catch (error) {
      host.steps.log(handle, `##[error]${(error as Error).message}`);
      exitCode = exitCode || 1;
    }
    record.outputs = outputs;
    Object.assign(handle.record.outputs, outputs);
    const failed = exitCode !== 0;
    const continueOnError =
      typeof step.continueOnError === "boolean"
        ? step.continueOnError
        : truthyFlag(evaluateToken(step.continueOnError, context));
    record.exitCode = exitCode;
    record.status = "completed";
    record.conclusion =
      handle.cancelRequested || handle.killed
        ? "cancelled"
        : failed && !continueOnError
          ? "failure"
          : "success";
    if (step.ownId) {
      stepsContext[step.id] = {
        outputs,
        outcome: failed ? "failure" : "success",
        conclusion: failed && !continueOnError ? "failure" : "success",
      };
    }
    host.steps.log(handle, "##[endgroup]");
    if (handle.killed) break;
    if (handle.cancelRequested || handle.timedOut) {
      status = "cancelled";
      reason = handle.timedOut ? "timed out" : "cancelled";
    } else if (failed && !continueOnError && status === "success") {
      status = "failure";
      reason = `step "${record.name}" failed with exit code ${exitCode}`;
      if (exitCode === null) reason = `step "${record.name}" was killed`;
    }
  }

  // Post steps of node actions, in reverse order (post-if defaults to always()).
  for (const post of posts.reverse()) {
    if (handle.killed || handle.forceCancelled) break;
    handle.cancelAcknowledged = handle.cancelRequested;
    context.status = status;
    if (!conditionHolds(post.condition, context)) continue;
    const env: NodeJS.ProcessEnv = { ...post.env };
    for (const [k, v] of Object.entries(post.state)) env[`STATE_${k}`] = v;
    await host.steps.exec(handle, host.options.nodePath ?? process.execPath, [post.main], {
      cwd: workspace,
      env,
      timeoutMs: null,
    });
  }
  clearTimeout(jobTimer);

  Object.assign(handle.record.outputs, stringsOf(job.outputs, context));
  const conclusion: RunConclusion = handle.killed
    ? "failure"
    : handle.timedOut
      ? "timed_out"
      : status === "cancelled"
        ? "cancelled"
        : status;
  host.store.updateWorkflowJob(repo.fullName, run.id, storeJob.id, {
    conclusion,
    steps: handle.record.steps.map((s, i) => ({
      name: s.name,
      number: i + 1,
      status: s.status === "skipped" ? "completed" : s.status === "pending" ? "queued" : s.status,
      conclusion: s.conclusion,
    })),
  });
  return { conclusion, reason: handle.timedOut ? "The job exceeded its maximum execution time." : reason };
}

/** An `env:` or `outputs:` mapping's values, evaluated to strings. */
function stringsOf(
  mapping: MappingToken | undefined,
  context: Parameters<typeof tokenString>[1],
): Record<string, string> {
  const result: Record<string, string> = {};
  for (const { key, value } of mapping ?? []) result[tokenString(key, context)] = tokenString(value, context);
  return result;
}
