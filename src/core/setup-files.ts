/**
 * What `autopilot init` writes into a repository, as pure text transforms: the workflow templates pinned to a
 * release of Autopilot, `.github/autopilot.yml` with the detected quality commands and the definition of ready,
 * the issue form for tasks, the labels with colours,
 * and the plan that keeps a second run from changing anything (a changed file is reported, not overwritten).
 */
import { parse } from "yaml";
import type { AutopilotConfig } from "./config/index.js";
import { DEPENDABOT_PATH, renderDependabotFile } from "./dependabot-file.js";
import {
  DEFAULT_PRESET,
  getPreset,
  installLine,
  type PresetName,
  unpinnedInstallLine,
} from "./presets/index.js";

const WORKER_WORKFLOW_PATH = ".github/workflows/autopilot-worker.yml";
const CONTROLLER_WORKFLOW_PATH = ".github/workflows/autopilot-controller.yml";
const CONFIG_FILE_PATH = ".github/autopilot.yml";
const ISSUE_FORM_PATH = ".github/ISSUE_TEMPLATE/autopilot-task.yml";
/** Fewer words than this is a title restated, not a task (the form's two required answers, briefly). */
const READY_MIN_WORDS = 15;

export type InstallMode = "actions" | "app";

/**
 * Where the action is published and what the files pin: the commit of the Autopilot that wrote them (a tag can be
 * moved or deleted; a commit SHA is the only immutable reference to an action,
 * https://docs.github.com/actions/reference/security/secure-use#using-third-party-actions) and its version,
 * written beside the SHA as the comment Dependabot keeps up to date
 * (https://docs.github.com/code-security/dependabot/working-with-dependabot/keeping-your-actions-up-to-date-with-dependabot).
 */
interface Release {
  /** `owner/name` of the repository holding Autopilot's action.yml. */
  source: string;
  /** package.json's version, e.g. `0.2.0`. */
  version: string;
  /** The full commit SHA of the copy that runs (src/cli/running-commit.ts). */
  commit: string;
}

/**
 * The owner the workflow templates and package.json name until Autopilot is published from a repository of its
 * own (`OWNER/autopilot`). It is never pinned: `OWNER` is an ordinary GitHub login, and a workflow pinned to
 * its `autopilot` would run whatever that account publishes there.
 */
const PLACEHOLDER_OWNER = "OWNER";

/** Whether `owner/name` is the placeholder rather than where Autopilot is published (owners ignore case). */
export function isPlaceholderSource(source: string): boolean {
  return source.split("/")[0]?.toLowerCase() === PLACEHOLDER_OWNER.toLowerCase();
}

/** `owner/name` from package.json's `repository` (`github:o/n`, `o/n`, `https://github.com/o/n(.git)`). */
export function sourceFromRepositoryField(field: unknown): string | null {
  const raw =
    typeof field === "string"
      ? field
      : field && typeof field === "object" && typeof (field as { url?: unknown }).url === "string"
        ? (field as { url: string }).url
        : null;
  if (!raw) return null;
  const match =
    /^(?:github:|git\+https:\/\/github\.com\/|https:\/\/github\.com\/)?([\w.-]+)\/([\w.-]+?)(?:\.git)?\/?$/.exec(
      raw.trim(),
    );
  return match ? `${match[1]}/${match[2]}` : null;
}

/**
 * The exact agent CLI install line of a preset (null for `custom`), from its record: the version the real-CLI
 * tests run (scripts/install-agent-clis.ts installs the same records' pins).
 */
export function agentInstallLine(agent: PresetName): string | null {
  const install = getPreset(agent).install;
  return install ? installLine(install) : null;
}

/** The secret a user sets for a preset: its first model key (null for `custom`, which has none). */
function agentKeyName(agent: PresetName): string | null {
  return getPreset(agent).keyEnv[0] ?? null;
}

/**
 * The worker template's install step: the default preset's line, at any version (test/workflow-templates.test.ts keeps
 * the template's equal to the record's pin); init swaps it for the chosen preset's pinned line.
 */
const TEMPLATE_INSTALL_RUN = templateInstallRun();

function templateInstallRun(): RegExp {
  const install = getPreset(DEFAULT_PRESET).install;
  if (!install) throw new Error(`the default preset ${DEFAULT_PRESET} must install a CLI`);
  return new RegExp(`^(\\s*run: )${escapeRegExp(unpinnedInstallLine(install))}(?:(?:@|==)\\S+)?$`, "m");
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * The worker template's last step, the reconcile of the run's end (the controller action with `ending-run`),
 * belongs to Actions mode: with the hosted app it would reconcile beside the app. It runs from its comment
 * (`# ACTIONS MODE:`) to the end of the file.
 */
const END_RECONCILE_STEP = /\n[ \t]*# ACTIONS MODE:[\s\S]*$/;

/** The worker template for the hosted app: without its end-of-run reconcile step. */
export function withoutEndReconcile(workerTemplate: string): string {
  return workerTemplate.replace(END_RECONCILE_STEP, "\n");
}

/**
 * Pins `uses: OWNER/autopilot…@v1` to the release's commit with its version as a comment
 * (`acme/autopilot@<sha> # v0.2.0`), drops the "replace OWNER" notes, installs the agent. The template's other
 * actions are pinned by SHA already.
 */
export function pinWorkflow(template: string, release: Release, agent: PresetName): string {
  let text = template
    .replace(/^# Autopilot (worker|controller): (.*)\. Copy this file to (\S+)\.$/m, "# Autopilot $1: $2.")
    .replace(/^\s*# Replace OWNER\/autopilot .*\n/gm, "")
    .replace(/uses: OWNER\/autopilot(\/controller)?@v1\b/g, (_m, sub: string | undefined) => {
      return `uses: ${release.source}${sub ?? ""}@${release.commit} # v${release.version}`;
    });
  const install = agentInstallLine(agent);
  if (install) text = text.replace(TEMPLATE_INSTALL_RUN, (_m, prefix: string) => `${prefix}${install}`);
  return text;
}

/** The schema file of the pinned commit, raw: it resolves whatever tags exist. */
function schemaUrl(release: Release): string {
  return `https://raw.githubusercontent.com/${release.source}/${release.commit}/schema/autopilot.schema.json`;
}

/** `.github/autopilot.yml`: the schema comment for editors, the agent, and the quality commands found. */
export function renderConfigFile(options: {
  release: Release;
  agent: PresetName;
  qualityCommands: readonly string[];
  /** Install commands found for the project (`setup:`); empty: a commented example. */
  setup?: readonly string[];
  /** The sections the definition of ready asks for: the issue form's required fields (none: no definition). */
  readySections?: readonly string[];
}): string {
  const lines = [
    `# yaml-language-server: $schema=${schemaUrl(options.release)}`,
    `# Autopilot's settings for this repository; every key is optional. Reference:`,
    `# https://github.com/${options.release.source}/blob/${options.release.commit}/docs/CONFIGURATION.md (v${options.release.version})`,
    "agents:",
    "  primary:",
    `    preset: ${options.agent}`,
  ];
  if (options.agent === "custom") lines.push('    command: "my-agent --prompt-file {prompt_file}"');
  if (options.qualityCommands.length === 0) {
    lines.push("# No build or test commands were found: the worker detects them in each run.");
    lines.push("qualityCommands: auto");
  } else {
    lines.push("# Run after every iteration; a task is done only when all of them pass.");
    lines.push("qualityCommands:");
    for (const command of options.qualityCommands) lines.push(`  - ${JSON.stringify(command)}`);
  }
  const setup = options.setup ?? [];
  lines.push(
    "# Installs the project's dependencies once before the first iteration, inside the worker's sandbox as the",
    "# agent's user (never in a workflow step of its own, beside the job's secrets).",
  );
  if (setup.length === 0) lines.push('# setup: ["npm ci"]');
  else {
    lines.push("setup:");
    for (const command of setup) lines.push(`  - ${JSON.stringify(command)}`);
  }
  if (options.readySections?.length)
    lines.push(
      "# The definition of ready: a ready task waits, listed on the dashboard with what it lacks, until a writer",
      "# makes its text hold this much (.github/ISSUE_TEMPLATE/autopilot-task.yml asks for these sections).",
      "definitionOfReady:",
      `  minWords: ${READY_MIN_WORDS}`,
      `  sections: [${options.readySections.map((s) => JSON.stringify(s)).join(", ")}]`,
    );
  const registries = registryHostsFor(setup);
  lines.push(
    "# The agent's sandbox reaches only its model API and these hosts (everything else is refused and named in",
    "# the job summary); `network: open` lifts the firewall.",
  );
  if (registries.length === 0) lines.push("# network: { allow: [registry.npmjs.org] }");
  else lines.push(`network: { allow: [${registries.join(", ")}] }`);
  return `${lines.join("\n")}\n`;
}

/** The package hosts each setup command `init` writes downloads from: what the agent's firewall must let through. */
const SETUP_REGISTRIES: readonly [RegExp, readonly string[]][] = [
  [/^(npm|pnpm) /, ["registry.npmjs.org"]],
  [/^yarn /, ["registry.yarnpkg.com", "registry.npmjs.org"]],
  [/^(uv|poetry|python -m pip) /, ["pypi.org", "files.pythonhosted.org"]],
  [/^go /, ["proxy.golang.org", "sum.golang.org"]],
  [/^cargo /, ["index.crates.io", "static.crates.io"]],
  // The wrapper's distribution, the plugin portal (which redirects to its artifacts host) and Maven Central.
  [
    /^(\.\/gradlew|gradle) /,
    [
      "services.gradle.org",
      "downloads.gradle.org",
      "plugins.gradle.org",
      "plugins-artifacts.gradle.org",
      "repo.maven.apache.org",
    ],
  ],
  [/^(\.\/mvnw|mvn) /, ["repo.maven.apache.org"]],
];

/** The registries the setup commands need, in order, each once. */
function registryHostsFor(setup: readonly string[]): string[] {
  const hosts = setup.flatMap(
    (command) => SETUP_REGISTRIES.find(([pattern]) => pattern.test(command))?.[1] ?? [],
  );
  return [...new Set(hosts)];
}

export interface LabelSpec {
  name: string;
  color: string;
  description: string;
}

/** Every label Autopilot reads or sets, with a colour and a description for the labels page. */
export function labelSpecs(labels: AutopilotConfig["labels"]): LabelSpec[] {
  return [
    { name: labels.ready, color: "0e8a16", description: "Autopilot may pick this task up" },
    { name: labels.inProgress, color: "fbca04", description: "An Autopilot worker is on this task" },
    {
      name: labels.review,
      color: "1d76db",
      description: "Autopilot's pull request awaits its checks and gates",
    },
    { name: labels.blocked, color: "b60205", description: "Autopilot is blocked on this task" },
    {
      name: labels.needsHuman,
      color: "d93f0b",
      description: "Autopilot asked a question: answer in a comment",
    },
    { name: labels.timeout, color: "c5def5", description: "Autopilot ran out of time or iterations" },
    { name: labels.failed, color: "000000", description: "Autopilot failed on this task" },
    { name: labels.critical, color: "e11d21", description: "Autopilot picks this task first" },
    { name: labels.quickWin, color: "c2e0c6", description: "A small task Autopilot prefers" },
    { name: labels.exclude, color: "ededed", description: "Autopilot never touches this issue" },
  ];
}

/**
 * What a file init writes is, which decides whether init may replace it: `workflow` (the pinned workflows, which
 * an upgrade moves to the new version), `template` (the issue form, a starting point the user may edit),
 * `settings` (`.github/autopilot.yml`, the user's own: written when absent, never replaced) and `offer`
 * (`.github/dependabot.yml`, written when absent and accepted; a repository's own is never replaced).
 */
type FileKind = "workflow" | "template" | "settings" | "offer";

interface DesiredFile {
  path: string;
  content: string;
  kind: FileKind;
}

/**
 * Which differing files init replaces: `none` (each is kept, and reported as a conflict), `workflows`
 * (`init --upgrade`: the workflows; an edited template is kept without a conflict), `workflows-and-templates`
 * (`init --force`). The settings file is never among them.
 */
export type FileRefresh = "none" | "workflows" | "workflows-and-templates";

type FileAction =
  | { path: string; action: "create"; content: string }
  | { path: string; action: "unchanged" }
  | { path: string; action: "overwrite"; content: string; diff: string }
  | { path: string; action: "conflict"; diff: string }
  /** Differs and stays as it is, by design rather than as a conflict: the settings, an upgrade's template. */
  | { path: string; action: "kept"; kind: FileKind; current: string };

/** The files init wants, for a mode. */
export function desiredFiles(options: {
  mode: InstallMode;
  release: Release;
  agent: PresetName;
  qualityCommands: readonly string[];
  setup?: readonly string[];
  workerTemplate: string;
  controllerTemplate: string;
  /** templates/issue-forms/autopilot-task.yml. */
  issueForm: string;
  /** Offer `.github/dependabot.yml` for the pins (src/core/dependabot-file.ts). */
  dependabot?: boolean;
}): DesiredFile[] {
  const files: DesiredFile[] = [
    {
      path: WORKER_WORKFLOW_PATH,
      kind: "workflow",
      content: pinWorkflow(
        options.mode === "app" ? withoutEndReconcile(options.workerTemplate) : options.workerTemplate,
        options.release,
        options.agent,
      ),
    },
  ];
  if (options.mode === "actions") {
    files.push({
      path: CONTROLLER_WORKFLOW_PATH,
      kind: "workflow",
      content: pinWorkflow(options.controllerTemplate, options.release, options.agent),
    });
  }
  files.push({ path: ISSUE_FORM_PATH, kind: "template", content: options.issueForm });
  files.push({
    path: CONFIG_FILE_PATH,
    kind: "settings",
    content: renderConfigFile({
      release: options.release,
      agent: options.agent,
      qualityCommands: options.qualityCommands,
      ...(options.setup ? { setup: options.setup } : {}),
      readySections: requiredFormFields(options.issueForm),
    }),
  });
  if (options.dependabot)
    files.push({ path: DEPENDABOT_PATH, kind: "offer", content: renderDependabotFile() });
  return files;
}

/** The labels of an issue form's required fields, in order: what a task made with it always has. */
function requiredFormFields(form: string): string[] {
  const body = (
    parse(form) as { body?: { attributes?: { label?: unknown }; validations?: { required?: unknown } }[] }
  )?.body;
  return (body ?? [])
    .filter((field) => field.validations?.required === true && typeof field.attributes?.label === "string")
    .map((field) => field.attributes!.label as string);
}

/**
 * What to do with each file given what is there: absent → create; identical → nothing; different → the
 * settings kept, always (an upgrade that rewrote them lost a team's human-gate paths and budgets); a workflow or
 * template replaced when `refresh` covers it, else a conflict (a template under `workflows`: kept).
 */
export function planFiles(
  desired: readonly DesiredFile[],
  existing: ReadonlyMap<string, string | null>,
  refresh: FileRefresh,
): FileAction[] {
  return desired.map((file): FileAction => {
    const current = existing.get(file.path) ?? null;
    if (current === null) return { path: file.path, action: "create", content: file.content };
    if (current === file.content) return { path: file.path, action: "unchanged" };
    if (file.kind === "settings" || file.kind === "offer")
      return { path: file.path, action: "kept", kind: file.kind, current };
    const replaced =
      refresh === "workflows-and-templates" || (refresh === "workflows" && file.kind === "workflow");
    if (replaced)
      return {
        path: file.path,
        action: "overwrite",
        content: file.content,
        diff: lineDiff(current, file.content),
      };
    if (refresh === "workflows") return { path: file.path, action: "kept", kind: file.kind, current };
    return { path: file.path, action: "conflict", diff: lineDiff(current, file.content) };
  });
}

/**
 * A short line diff (`- ` what is there, `+ ` what init would write), from the longest common subsequence;
 * at most `maxLines` lines are shown.
 */
export function lineDiff(before: string, after: string, maxLines = 40): string {
  const a = before.split("\n");
  const b = after.split("\n");
  const n = a.length;
  const m = b.length;
  const lcs: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--)
      lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  const out: string[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) {
      i++;
      j++;
    } else if (i < n && (j >= m || lcs[i + 1]![j]! >= lcs[i]![j + 1]!)) {
      out.push(`- ${a[i]}`);
      i++;
    } else {
      out.push(`+ ${b[j]}`);
      j++;
    }
  }
  if (out.length > maxLines)
    return [...out.slice(0, maxLines), `… and ${out.length - maxLines} more`].join("\n");
  return out.join("\n");
}

/** The steps left after init, exactly, for the mode (names match the workflow templates). */
export function remainingSteps(options: {
  mode: InstallMode;
  repo: string | null;
  agent: PresetName;
  labelsCreated: boolean;
  changedFiles: readonly string[];
  /** The shell command that pipes the App's key from `.env` into `gh secret set AUTOPILOT_APP_PRIVATE_KEY`. */
  keySecretCommand: string;
  /** How the user runs Autopilot's commands, as they ran init (src/cli/invocation.ts): never a placeholder. */
  cli: string;
}): string[] {
  const repo = options.repo ?? "OWNER/NAME";
  const key = agentKeyName(options.agent);
  const steps: string[] = [];
  if (options.changedFiles.length > 0) {
    steps.push(
      `Commit and push to the default branch: git add ${options.changedFiles.join(" ")} && git commit -m "Set up Autopilot" && git push`,
    );
  }
  // A hosted controller hears of events only through webhooks: without --webhook-url the App's are off.
  const hook =
    options.mode === "app"
      ? " --webhook-url https://YOUR-HOST/api/github/webhooks (where autopilot serve is reached)"
      : "";
  steps.push(
    `Register the GitHub App and install it on the repository: ${options.cli} register${hook} (or --org ORG), then open the install link it prints`,
  );
  steps.push(
    `Set the App id (APP_ID in the .env register wrote) as a variable: gh variable set AUTOPILOT_APP_ID --repo ${repo} --body <APP_ID>`,
  );
  steps.push(`Set the App key as a secret: ${options.keySecretCommand} --repo ${repo}`);
  if (key) steps.push(`Set the agent's key as a secret: gh secret set ${key} --repo ${repo}`);
  if (options.mode === "app")
    steps.push(
      `Run the controller: ${options.cli} serve (see docs/INSTALL.md for a public URL, Docker and replicas)`,
    );
  if (!options.labelsCreated)
    steps.push("Create the labels: run init again with GITHUB_TOKEN set (or after gh auth login)");
  steps.push(`Check the setup: ${options.cli} doctor --repo ${repo}`);
  steps.push("Label an issue autopilot:ready");
  return steps;
}
