/**
 * Seeds a scenario on the sandbox: its people and their permissions, the repository's first commit (the
 * scenario's files, `.github/autopilot.yml` with the demo agent, the worker workflow, and in Actions mode the
 * controller workflow), and its issues with
 * their relations and comments. The demo agent's script is written outside the repository.
 */
import { join } from "node:path";
import {
  type AutopilotConfig,
  CONFIG_PATH,
  parseConfig,
  renderConfigError,
} from "../../src/core/config/index.js";
import { repoSettings } from "../emulator/server/app-setup.js";
import type { SandboxGit } from "../emulator/git/sandbox-git.js";
import type { JsonObject } from "../emulator/shapes.js";
import type { SandboxStore } from "../emulator/store.js";
import {
  type DemoAgentEntry,
  DemoAgentEntrySchema,
  demoAgentCommand,
  writeDemoScript,
} from "./agent/demo-agent.js";
import {
  CONTROLLER_WORKFLOW_PATH,
  controllerMode,
  controllerWorkflowYaml,
} from "./controllers/controller-mode.js";
import { type Scenario, ScenarioError } from "./scenario-file.js";
import { scenarioConfigText } from "./scenario-config.js";
import type { Progress } from "./scenario-progress.js";
import type { ScenarioRepo } from "./scenario-world.js";
import { workerWorkflowYaml } from "./worker-workflow.js";
import { counted } from "../../src/core/text/plural.js";

export interface SeededScenario {
  /** The demo agent's script. */
  scriptPath: string;
  /** The repository's `.github/autopilot.yml`, parsed. */
  config: AutopilotConfig;
}

/** Seeds people, repository and issues; `tempDir` receives the demo agent's script. */
export async function seedScenario(
  scenario: Scenario,
  repo: ScenarioRepo,
  { store, git }: { store: SandboxStore; git: SandboxGit },
  tempDir: string,
  progress: Progress,
): Promise<SeededScenario> {
  for (const user of scenario.users) {
    store.addUser(user.login, { permission: user.permission, ...(user.name ? { name: user.name } : {}) });
  }
  store.createRepo({ owner: repo.owner, name: repo.name, defaultBranch: scenario.repo.defaultBranch });
  for (const user of scenario.users) store.setPermission(repo.full, user.login, user.permission);

  const scriptPath = writeDemoAgentScript(scenario, tempDir);
  const configText = scenarioConfigText(scenario, demoAgentCommand(scriptPath));
  const config = parseConfig(configText);
  if (!config.ok) throw new ScenarioError(renderConfigError(config.error));
  // A scenario that needs the file broken from the start gives its text in `repo.files` (`{demo_agent}`
  // replaced); `repo.config` still names the settings the harness itself reads (labels, branch prefix).
  const given = scenario.repo.files[CONFIG_PATH];
  const files: Record<string, string> = {
    ...scenario.repo.files,
    [CONFIG_PATH]:
      given === undefined ? configText : given.replaceAll("{demo_agent}", demoAgentCommand(scriptPath)),
  };
  files[`.github/workflows/${config.config.workerWorkflow}`] ??= workerWorkflowYaml({
    jobTimeoutMinutes: Math.max(1, Math.ceil(scenario.limits.jobTimeoutSeconds / 60)),
    hostedController: controllerMode(scenario) !== "actions",
  });
  if (controllerMode(scenario) === "actions") files[CONTROLLER_WORKFLOW_PATH] ??= controllerWorkflowYaml();
  const firstUser = scenario.users[0]?.login ?? repo.owner;
  await git.seedRepo(repo.owner, repo.name, files, {
    message: "Initial commit",
    author: { name: firstUser, email: `${firstUser}@users.noreply.github.com` },
    pusher: firstUser,
  });
  progress("setup", null, `repository ${repo.full} seeded with ${Object.keys(files).length} files`);

  if (scenario.repo.protection)
    repoSettings.setBranchProtection(store, repo.full, scenario.repo.defaultBranch, scenario.repo.protection);
  for (const ruleset of scenario.repo.rulesets)
    repoSettings.addRuleset(store, repo.full, {
      branches: ruleset.branches,
      rules: ruleset.rules.map((r) => ({
        type: r.type,
        ...(r.parameters ? { parameters: r.parameters as JsonObject } : {}),
      })),
    });

  if (scenario.repo.allowAutoMerge) repoSettings.setAllowAutoMerge(store, repo.full, true);

  openIssues(scenario.issues, repo.full, store, firstUser);
  progress("setup", null, `${counted(scenario.issues.length, "issue")} opened`);
  return { scriptPath, config: config.config };
}

/** The demo agent's script: one entry per issue, outside the repository. */
function writeDemoAgentScript(scenario: Scenario, tempDir: string): string {
  return writeIssuesScript(scenario.issues, join(tempDir, "agent"));
}

/** A demo agent script in `dir` for one repository's issues (its entry for #N is the Nth issue's). */
export function writeIssuesScript(issues: Scenario["issues"], dir: string): string {
  const agentEntries: Record<number, DemoAgentEntry> = {};
  issues.forEach((issue, i) => {
    agentEntries[i + 1] = { ...(issue.agent ?? DemoAgentEntrySchema.parse({})), title: issue.title };
  });
  return writeDemoScript(dir, agentEntries);
}

/** Opens a repository's issues in order (the first is #1), then adds their relations and comments. */
export function openIssues(
  issues: Scenario["issues"],
  repoFull: string,
  store: SandboxStore,
  firstUser: string,
): void {
  for (const [i, issue] of issues.entries()) {
    const created = store.createIssue(repoFull, {
      title: issue.title,
      body: issueBody(issue),
      labels: issue.labels,
      author: issue.author ?? firstUser,
    });
    if (created.number !== i + 1)
      throw new Error(`issue "${issue.title}" got #${created.number}, expected #${i + 1}`);
  }
  for (const [i, issue] of issues.entries()) {
    const number = i + 1;
    for (const blocker of issue.blockedBy)
      store.addBlockedBy(repoFull, number, blocker, issue.author ?? firstUser);
    // Linking needs triage access (https://docs.github.com/en/issues/tracking-your-work-with-issues/using-issues/adding-sub-issues),
    // which an issue's author may lack: the scenario's first user, who sets the repository up, links them.
    if (issue.parent !== undefined) store.addSubIssue(repoFull, issue.parent, number, firstUser);
    for (const comment of issue.comments) store.createComment(repoFull, number, comment.body, comment.author);
  }
}

function issueBody(issue: Scenario["issues"][number]): string {
  const lines = issue.dependsOn.map((n) => `Depends on #${n}`);
  return [issue.body.trim(), lines.join("\n")].filter(Boolean).join("\n\n");
}
