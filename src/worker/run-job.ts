/**
 * The worker's job once its inputs are read (worker-action.ts): the GitHub client, the configuration, the agent's OS
 * user and the boundary between the worker and the agent (agent-user.ts, boundary.ts) set up before any agent
 * runs, the real dependencies wired (git, the agent process, the quality commands), the job run (job.ts), and the
 * report — outputs, the job summary, and `core.setFailed` when the job itself should show red. Every log line
 * goes through job-log.ts (the agent's output inside stop-commands blocks, everything escaped: log-text.ts). worker-action.ts loads this file only after the inputs are read and the secrets masked,
 * so the action's first line is not held up by code it does not need yet.
 */
import { createTranscript } from "./job/transcript.js";
import { mkdtemp, readFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import * as core from "@actions/core";
import { type AutopilotConfig, CONFIG_PATH } from "../core/config/index.js";
import { readConfigAt } from "../github/snapshot/config-at-commit.js";
import { createOctokit } from "../github/transport/octokit.js";
import { weakerIsolationText } from "../core/tasks/worker-result.js";
import { createWorkerGitHub } from "../github/worker-github.js";
import { createSignedCommitWriter } from "../github/worker-signed-commits.js";
import { describeEgress, networkEnforced, startAgentEgress } from "./network/agent-egress.js";
import { setupAgentUser } from "./isolation/agent-user.js";
import { type Boundary, createIsolatedParts } from "./isolation/boundary.js";
import { commitAuthor } from "./checkout/commit-author.js";
import { heldSecrets } from "./checkout/held-secrets.js";
import { createPushGuard, gitPushDiff } from "./checkout/push-guard.js";
import { applyWorkerOverrides, jobDirections } from "./settings/config-input.js";
import { InputError, type WorkerInput } from "./settings/inputs.js";
import { createJobLog, type JobLog } from "./job-log.js";
import { refuseToStart, runWorker } from "./job/job.js";
import { chooseWorkerConfig } from "./settings/worker-config.js";
import type { WorkerRun } from "./worker-deps.js";
import { summaryRows } from "./job/progress-comment.js";

/** Outcomes after which the job itself fails (red): something a person must look at, not a task state. */
const FAILING_OUTCOMES = new Set(["failed", "auth", "quota"]);

async function readConfigFile(workspace: string): Promise<string | null> {
  try {
    return await readFile(path.join(workspace, CONFIG_PATH), "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
}

/** The `config` input's overrides over the configuration chosen (worker-config.ts). */
function withOverrides(config: AutopilotConfig, warnings: string[], overrides: string): AutopilotConfig {
  for (const warning of warnings) core.warning(warning);
  const applied = applyWorkerOverrides(config, overrides, "the `config` input");
  if (!applied.ok) throw applied.error;
  for (const warning of applied.warnings) core.warning(warning);
  return applied.config;
}

async function defaultBranchFromEvent(env: NodeJS.ProcessEnv): Promise<string | null> {
  if (!env.GITHUB_EVENT_PATH) return null;
  try {
    const event = JSON.parse(await readFile(env.GITHUB_EVENT_PATH, "utf8")) as {
      repository?: { default_branch?: string };
    };
    return event.repository?.default_branch ?? null;
  } catch {
    return null;
  }
}

function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return delay(ms, undefined, signal ? { signal } : {}).then(
    () => undefined,
    () => undefined,
  );
}

interface JobStart {
  inputs: WorkerInput;
  env: NodeJS.ProcessEnv;
  /** A fetch for the GitHub client (tests). */
  fetch?: typeof globalThis.fetch;
  /** Aborted when the job is cancelled (SIGINT, SIGTERM). */
  signal: AbortSignal;
  /** Called once the boundary exists: the caller closes it whatever happens next. */
  onBoundary(boundary: Boundary): void;
}

/** Runs the job for inputs already read; throws what should fail the job (the caller reports it). */
export async function runJob(start: JobStart): Promise<WorkerRun> {
  // One log, with its own stop-commands token, per job; whatever it holds is written, and its group ended,
  // before the job's end.
  const coreLog = createJobLog();
  try {
    return await runWith(start, coreLog);
  } finally {
    coreLog.endGroup();
  }
}

async function runWith(start: JobStart, coreLog: JobLog): Promise<WorkerRun> {
  const { inputs, env } = start;
  const workspace = env.GITHUB_WORKSPACE ?? process.cwd();
  const [owner, repo] = (env.GITHUB_REPOSITORY ?? "").split("/");
  if (!owner || !repo) throw new InputError("GITHUB_REPOSITORY is not set (expected owner/name)");
  const octokit = createOctokit({
    auth: inputs.githubToken,
    ...(env.GITHUB_API_URL ? { baseUrl: env.GITHUB_API_URL } : {}),
    userAgent: "autopilot-worker",
    ...(start.fetch ? { fetch: start.fetch } : {}),
    // Octokit logs every request (a 404 the worker expects included) at info/error: keep that for debugging.
    log: {
      debug: (message) => coreLog.debug(message),
      info: (message) => coreLog.debug(message),
      warn: (message) => coreLog.warning(message),
      error: (message) => coreLog.debug(message),
    },
  });
  const github = createWorkerGitHub(octokit, { owner, repo });
  const defaultBranch = (await defaultBranchFromEvent(env)) ?? (await github.getDefaultBranch());
  const runUrl =
    env.GITHUB_SERVER_URL && env.GITHUB_RUN_ID
      ? `${env.GITHUB_SERVER_URL}/${owner}/${repo}/actions/runs/${env.GITHUB_RUN_ID}`
      : null;
  const dispatchId =
    inputs.dispatchId || `${inputs.issue}-${inputs.attempt}-run${env.GITHUB_RUN_ID ?? Date.now()}`;
  const workerInputs = {
    repo: `${owner}/${repo}`,
    issue: inputs.issue,
    attempt: inputs.attempt,
    dispatchId,
    trackingIssue: inputs.trackingIssue,
    taskDigest: inputs.taskDigest,
    ...jobDirections(inputs.config),
    workspace,
    defaultBranch,
    runUrl,
  };

  // The configuration, before anything else runs: the controller's, or none at all.
  const trackingIssue = inputs.trackingIssue;
  const chosen = await chooseWorkerConfig({
    fileText: await readConfigFile(workspace),
    expectedDigest: inputs.configDigest,
    readTrackingBody: () =>
      trackingIssue === null ? Promise.resolve(null) : github.getIssueBody(trackingIssue),
    readConfigAt: (commit) => readConfigAt({ client: octokit, repo: { owner, name: repo } }, commit),
  });
  if (!chosen.ok) {
    core.warning(chosen.reason);
    const refused = await refuseToStart(workerInputs, chosen.reason, {
      github,
      clock: () => Date.now(),
      sleep: abortableSleep,
      log: coreLog,
      signal: start.signal,
    });
    await report(refused);
    return refused;
  }
  core.info(
    `configuration ${chosen.digest.slice(0, 12)} from ${chosen.source === "file" ? `the checkout's ${CONFIG_PATH}` : "the tracking issue's last good configuration"}`,
  );
  const config = withOverrides(chosen.config, chosen.warnings, inputs.config);

  // Before any agent runs: the agent's user, then the checkout's .git moved where only the worker reaches.
  const user = await setupAgentUser({ isolation: config.isolation, env });
  const weaker = weakerIsolationText(config.isolation);
  if (weaker) core.warning(weaker);
  const scratch = await mkdtemp(path.join(env.RUNNER_TEMP ?? os.tmpdir(), "autopilot-worker-"));
  const parts = await createIsolatedParts({
    workspace,
    workerDir: scratch,
    user,
    qualityEnvNames: config.agents.primary.env,
    parentEnv: env,
    token: inputs.githubToken,
    secretValues: [inputs.githubToken],
    // The author the inputs name; else the token's own account, set once the claim's query has read it.
    ...(inputs.gitUserName ? { userName: inputs.gitUserName } : {}),
    ...(inputs.gitUserEmail ? { userEmail: inputs.gitUserEmail } : {}),
    onLine: (line) => coreLog.output(`  │ ${line.length > 400 ? `${line.slice(0, 400)}…` : line}`),
    warn: (message) => coreLog.warning(message),
  });
  start.onBoundary(parts.boundary);

  // The agent's network, before the first iteration: every command the user wraps from now on gets it. Each
  // refused host is logged once (the summary counts them all): an agent cannot flood the log through it.
  const loggedRefusals = new Set<string>();
  const egress = await startAgentEgress({
    config,
    parentEnv: env,
    agentDir: parts.boundary.dirs.agentDir,
    enforced: user.isolated && networkEnforced(config.isolation),
    onRefused: (host, why) => {
      if (loggedRefusals.has(host) || loggedRefusals.size >= 100) return;
      loggedRefusals.add(host);
      coreLog.info(`egress proxy refused ${host}: ${why}`);
    },
  });
  user.useNetwork(egress.network);
  if (egress.access) coreLog.warning(describeEgress(egress));
  else coreLog.info(describeEgress(egress));
  for (const warning of egress.warnings) coreLog.warning(warning);

  // The agent's transcript, masked, in the worker's private directory (0700, never in the agent's reach): the
  // worker workflow keeps it as an artifact under this name.
  const candidate = workerInputs.candidate ? `-candidate-${workerInputs.candidate}` : "";
  const artifact = `autopilot-transcript-${inputs.issue}-${inputs.attempt}${candidate}`;
  const transcript = await createTranscript({
    file: path.join(scratch, `${artifact}.md`),
    artifact,
    secretValues: heldSecrets(env, inputs.githubToken).map((secret) => secret.value),
  });
  core.setOutput("transcript-file", transcript.file);
  core.setOutput("transcript-artifact", artifact);

  let run: WorkerRun;
  try {
    run = await runWorker(workerInputs, config, {
      transcript,
      git: parts.git,
      agent: parts.agent,
      quality: parts.quality,
      workTree: parts.boundary.dirs.workTree,
      github,
      clock: () => Date.now(),
      sleep: abortableSleep,
      log: coreLog,
      signal: start.signal,
      // Nothing commits before the claim: the author comes from the viewer the claim's query read with the
      // comments (no query of its own).
      afterClaim: async () => {
        const author = await commitAuthor(inputs, github);
        parts.setAuthor(author.userName, author.userEmail);
      },
      network: { access: egress.access, refused: egress.refused },
      // `commits: signed`: through the same client, so its requests are counted with the job's.
      ...(config.commits === "signed"
        ? { signedCommits: createSignedCommitWriter(octokit, { owner, repo }) }
        : {}),
      // Before every push: no value of the token, a model key or another secret of the environment goes out.
      pushGuard: createPushGuard({
        secrets: heldSecrets(env, inputs.githubToken),
        diff: gitPushDiff(parts.git.repository),
        warn: (message) => coreLog.warning(message),
      }),
    });
  } finally {
    await egress.close();
  }
  coreLog.flush();
  await report(run);
  return run;
}

async function report(run: WorkerRun): Promise<void> {
  const { result } = run;
  core.setOutput("result", result.result ?? "failed");
  core.setOutput("reason", result.reason ?? "");
  core.setOutput("iterations", String(result.iterations));
  core.setOutput("commits", String(result.commits));
  core.setOutput("pr-number", result.prNumber ? String(result.prNumber) : "");
  core.setOutput("tokens", String(result.tokens.input + result.tokens.output));
  core.setOutput("cost", result.costUsd.toFixed(4));
  core.setOutput("resume-at", result.resumeAt ?? "");
  core.setOutput("result-json", JSON.stringify(result));
  try {
    await core.summary
      .addHeading(`Autopilot worker: #${result.issue}, attempt ${result.attempt}`, 3)
      .addTable([
        [
          { data: "What", header: true },
          { data: "This run", header: true },
        ],
        ...summaryRows(result, run.elapsedMs, run.quality),
      ])
      .addRaw(
        run.warnings.length ? `\n\n**Warnings**\n\n${run.warnings.map((w) => `- ${w}`).join("\n")}\n` : "",
      )
      .addRaw(result.agentAccess ? `\n\n**Agent access:** ${result.agentAccess}\n` : "")
      .addRaw(result.networkAccess ? `\n\n**Agent network:** ${result.networkAccess}\n` : "")
      .addRaw(`\n\nGitHub requests: ${run.requests}\n`)
      .write();
  } catch (error) {
    core.warning(
      `could not write the job summary: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  if (FAILING_OUTCOMES.has(result.result ?? "failed"))
    core.setFailed(`${result.result}: ${result.reason ?? ""}`);
}
