/**
 * `autopilot init`: writes the workflows and `.github/autopilot.yml` into a checkout (the text comes from
 * src/core/setup-files.ts), creates the labels when a token is at hand, and prints the steps left.
 * Idempotent: an identical file is left alone, a changed one is reported with its diff and kept unless
 * --upgrade (the workflows) or --force (the workflows and the issue form) replaces it. `.github/autopilot.yml`
 * is the team's own: written when absent, never rewritten; what this version offers is reported instead.
 * Every action is pinned by commit SHA, Autopilot's own to the commit this copy runs from (running-commit.ts),
 * with a warning when that commit is not a release (release-check.ts); `.github/dependabot.yml` is offered to
 * keep the pins current (pin-updates.ts).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { describeAgentBranchFindings } from "../core/gates/agent-branch-secrets.js";
import { DEFAULT_CONFIG } from "../core/config/index.js";
import { DEPENDABOT_PATH } from "../core/dependabot-file.js";
import { DEFAULT_PRESET, isPresetName, PRESET_NAMES } from "../core/presets/index.js";
import {
  type FileRefresh,
  type InstallMode,
  desiredFiles,
  isPlaceholderSource,
  labelSpecs,
  planFiles,
  remainingSteps,
} from "../core/setup-files.js";
import { ensureLabels } from "../github/setup/setup-labels.js";
import { readInstalledSetup } from "./installed-setup.js";
import { keptSettingsReport } from "./kept-settings-report.js";
import { PACKAGE_ROOT } from "./package-root.js";
import { detectQualityCommands } from "../worker/processes/quality.js";
import { detectSetupCommands } from "../worker/processes/setup-commands.js";
import { currentInvocation } from "./invocation.js";
import { pinUpdates, pinUpdatesLine } from "./pin-updates.js";
import { releaseWarnings } from "./release-check.js";
import { describeOrigin, readRunningCommit } from "./running-commit.js";
import {
  apiUrl,
  currentRelease,
  findToken,
  keySecretCommand,
  originRepo,
  type SetupIo,
} from "./setup-context.js";
import { localAgentBranchFindings } from "./workflow-reading.js";

interface InitIo extends SetupIo {
  input?: NodeJS.ReadableStream;
}

interface InitOptions {
  mode?: string;
  dir?: string;
  yes?: boolean;
  agent?: string;
  /** Replace the workflows and the issue form that differ (never `.github/autopilot.yml`). */
  force?: boolean;
  /** Re-pin and refresh the workflows only, taking mode and agent from what is installed, asking nothing else. */
  upgrade?: boolean;
  repo?: string;
  source?: string;
}

/** Asks questions one line at a time (lines piped in ahead of a question are kept, not lost). */
function asker(io: InitIo) {
  const rl = createInterface({ input: io.input ?? process.stdin, terminal: false });
  const lines = rl[Symbol.asyncIterator]();
  return {
    async ask(question: string, fallback: string): Promise<string> {
      io.out(fallback ? `${question} [${fallback}]` : question);
      const next = await lines.next();
      const answer = next.done ? "" : String(next.value).trim();
      return answer === "" ? fallback : answer;
    },
    close: () => rl.close(),
  };
}

export async function runInit(io: InitIo, options: InitOptions): Promise<number> {
  const dir = resolve(options.dir ?? process.cwd());
  if (!existsSync(dir)) {
    io.err(`--dir ${dir} does not exist.`);
    return 2;
  }
  const current = currentRelease(io.env, options.source);
  let source = current.source;
  const detected = await detectQualityCommands(dir);
  const installed = readInstalledSetup(dir);
  let mode = options.mode ?? installed.mode ?? "actions";
  let agent = options.agent ?? installed.agent ?? DEFAULT_PRESET;
  let quality = detected;
  let createLabels = true;
  const updates = pinUpdates(dir);
  // Offered to a new setup, not added by an upgrade (which refreshes the workflows only).
  let addDependabot = updates.kind === "none" && !options.upgrade;
  if (!options.yes) {
    const q = asker(io);
    try {
      source ??=
        (await q.ask(
          "Where is Autopilot published (the OWNER/NAME of `npx github:OWNER/NAME`)? The workflows pin its action.",
          "",
        )) || null;
      // An upgrade keeps what is installed: only where Autopilot is published can be unknown.
      if (!options.upgrade) {
        mode =
          options.mode ??
          (await q.ask("Run the controller in GitHub Actions (actions) or as a hosted app (app)?", mode));
        agent = options.agent ?? (await q.ask(`Agent (${PRESET_NAMES.join(", ")})?`, agent));
        const answer = await q.ask(
          "Quality commands, separated by ';' (\"auto\": detect in each run)?",
          detected.length ? detected.join("; ") : "auto",
        );
        quality =
          answer === "auto"
            ? []
            : answer
                .split(";")
                .map((c) => c.trim())
                .filter(Boolean);
        createLabels = /^y/i.test(await q.ask("Create the labels on GitHub (needs a token)?", "yes"));
        if (addDependabot)
          addDependabot = /^y/i.test(
            await q.ask(
              `Add ${DEPENDABOT_PATH}, so Dependabot proposes each new release of the actions the workflows pin?`,
              "yes",
            ),
          );
      }
    } finally {
      q.close();
    }
  }
  if (mode !== "actions" && mode !== "app") {
    io.err(
      `--mode must be "actions" (controller in GitHub Actions) or "app" (hosted \`autopilot serve\`), not "${mode}".`,
    );
    return 2;
  }
  if (!isPresetName(agent)) {
    io.err(`--agent must be one of ${PRESET_NAMES.join(", ")}, not "${agent}".`);
    return 2;
  }
  // A workflow pinned to a placeholder fails on GitHub at its first run, or runs a stranger's action: stop
  // before writing one.
  if (!source) {
    io.err(
      `init cannot pin the workflows: ${current.sourceUnknown}. Pass --source OWNER/NAME — the OWNER/NAME you ran \`npx github:OWNER/NAME init\` with — or set AUTOPILOT_SOURCE. Nothing was written.`,
    );
    return 2;
  }
  if (!/^[\w.-]+\/[\w.-]+$/.test(source)) {
    io.err(`--source expects OWNER/NAME (a GitHub repository), not "${source}". Nothing was written.`);
    return 2;
  }
  if (isPlaceholderSource(source)) {
    io.err(
      `--source ${source} is the placeholder of the templates, not a repository Autopilot is published from: name the OWNER/NAME you ran \`npx github:OWNER/NAME init\` with. Nothing was written.`,
    );
    return 2;
  }
  const running = readRunningCommit(PACKAGE_ROOT, io.env);
  if (!running.ok) {
    io.err(
      `init pins the workflows to the commit of the Autopilot it runs from, and cannot tell it: ${running.reason}. Run it from a clone of Autopilot or with \`npx github:${source} init\` (npm records the commit it installs), or set AUTOPILOT_COMMIT to the full SHA of the commit this copy is. Nothing was written.`,
    );
    return 2;
  }
  const release = { source, version: current.version, commit: running.commit.sha };
  const cli = currentInvocation(io.env, source);
  const releaseRun =
    running.commit.from === "checkout"
      ? `\`git -C ${PACKAGE_ROOT} checkout vX.Y.Z\`, then ${cli} init again`
      : `\`npx github:${source}#vX.Y.Z init\``;
  io.out(
    `pin        ${source}@${running.commit.sha} # v${release.version} (from ${describeOrigin(running.commit.from)})`,
  );
  for (const warning of await releaseWarnings({
    commit: running.commit,
    source,
    version: release.version,
    fromRelease: releaseRun,
    baseUrl: apiUrl(io.env),
    token: findToken(io.env),
  }))
    io.err(`warning: ${warning}`);
  const templates = join(PACKAGE_ROOT, "templates", "workflows");
  const desired = desiredFiles({
    mode: mode as InstallMode,
    release,
    agent,
    qualityCommands: quality,
    setup: await detectSetupCommands(dir),
    workerTemplate: readFileSync(join(templates, "autopilot-worker.yml"), "utf8"),
    controllerTemplate: readFileSync(join(templates, "autopilot-controller.yml"), "utf8"),
    issueForm: readFileSync(join(PACKAGE_ROOT, "templates", "issue-forms", "autopilot-task.yml"), "utf8"),
    // Init's own file, once written, is planned again so a second run reports it unchanged.
    dependabot: addDependabot || (updates.kind === "dependabot" && updates.ours),
  });
  const existing = new Map(
    desired.map((f) => {
      const path = join(dir, f.path);
      return [f.path, existsSync(path) ? readFileSync(path, "utf8") : null] as const;
    }),
  );
  const refresh: FileRefresh = options.force
    ? "workflows-and-templates"
    : options.upgrade
      ? "workflows"
      : "none";
  const plan = planFiles(desired, existing, refresh);
  const changed: string[] = [];
  let conflicts = 0;
  for (const step of plan) {
    if (step.action === "unchanged") {
      io.out(`unchanged  ${step.path}`);
      continue;
    }
    if (step.action === "kept") {
      if (step.kind === "settings") {
        io.out(`kept       ${step.path}: your settings; init never rewrites this file`);
        const content = desired.find((f) => f.path === step.path)?.content ?? "";
        for (const line of keptSettingsReport(step.current, content)) io.out(`    ${line}`);
      } else io.out(`kept       ${step.path}: it differs from this version's (--force replaces it)`);
      continue;
    }
    if (step.action === "conflict") {
      conflicts++;
      io.out(`kept       ${step.path}: it differs from what init writes (--upgrade or --force replaces it):`);
      for (const line of step.diff.split("\n")) io.out(`    ${line}`);
      continue;
    }
    const path = join(dir, step.path);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, step.content);
    changed.push(step.path);
    io.out(`${step.action === "create" ? "created   " : "overwrote "} ${step.path}`);
    if (step.action === "overwrite") for (const line of step.diff.split("\n")) io.out(`    ${line}`);
  }
  const updatesLine = pinUpdatesLine(updates, addDependabot);
  if (updatesLine) io.out(updatesLine);

  const repo = options.repo ?? originRepo(dir);
  let labelsDone = false;
  if (createLabels) {
    const token = findToken(io.env);
    if (!token || !repo) {
      io.out(
        `labels     not created: ${!repo ? "no GitHub remote named origin (pass --repo OWNER/NAME)" : "no token (GITHUB_TOKEN or `gh auth login`)"}`,
      );
    } else {
      const [owner, name] = repo.split("/") as [string, string];
      try {
        const result = await ensureLabels({
          owner,
          repo: name,
          token,
          baseUrl: apiUrl(io.env),
          labels: labelSpecs(DEFAULT_CONFIG.labels),
        });
        io.out(`labels     ${result.created.length} created, ${result.existing.length} already there`);
        labelsDone = true;
      } catch (error) {
        io.err(`labels     not created: ${(error as Error).message}`);
      }
    }
  }

  const { findings, branchPrefix } = await localAgentBranchFindings(dir);
  const exposure = describeAgentBranchFindings(findings, branchPrefix);
  if (exposure.length) {
    io.out("");
    io.out(
      `Workflows to check before agents push to ${branchPrefix}** (docs/SECURITY.md, "CI on agent branches"):`,
    );
    for (const line of exposure) io.out(`  - ${line}`);
  }

  io.out("");
  io.out("Remaining steps:");
  remainingSteps({
    mode: mode as InstallMode,
    repo,
    agent,
    labelsCreated: labelsDone,
    changedFiles: changed,
    keySecretCommand: keySecretCommand(),
    cli,
  }).forEach((step, i) => {
    io.out(`  ${i + 1}. ${step}`);
  });
  return conflicts > 0 ? 1 : 0;
}
