/**
 * Seeds a scenario's organization (`installations:`, scenario-installations.ts): the App's installations,
 * declared before any repository so each account is an organization, then each installation's repositories
 * with their first commit (files, `.github/autopilot.yml` with a demo agent script of their own, the worker
 * workflow), people and issues.
 */
import { join } from "node:path";
import { CONFIG_PATH, parseConfig, renderConfigError } from "../../src/core/config/index.js";
import type { SandboxGit } from "../emulator/git/sandbox-git.js";
import type { SandboxStore } from "../emulator/store.js";
import { demoAgentCommand } from "./agent/demo-agent.js";
import {
  CONTROLLER_WORKFLOW_PATH,
  controllerMode,
  controllerWorkflowYaml,
} from "./controllers/controller-mode.js";
import { repoConfigText } from "./scenario-config.js";
import { type Scenario, ScenarioError } from "./scenario-file.js";
import type { Progress } from "./scenario-progress.js";
import type { ScenarioRepo } from "./scenario-world.js";
import { openIssues, writeIssuesScript } from "./seed-scenario.js";
import { workerWorkflowYaml } from "./worker-workflow.js";

/**
 * Declares the scenario's installations on the store (none declared: the default installation stays). The
 * scenario's own repository is covered by the installation on its owner, even one with selected repositories.
 */
export function declareInstallations(scenario: Scenario, repo: ScenarioRepo, store: SandboxStore): void {
  for (const installation of scenario.installations ?? []) {
    const own = installation.account.toLowerCase() === repo.owner.toLowerCase() ? [repo.full] : [];
    store.addInstallation({
      ...(installation.id !== undefined ? { id: installation.id } : {}),
      account: installation.account,
      repositorySelection: installation.repositorySelection,
      repositories: [...own, ...installation.repositories.map((r) => `${installation.account}/${r.name}`)],
    });
  }
}

/** The installations' repositories besides the scenario's own, `owner/name` each. */
export function orgRepos(scenario: Scenario): string[] {
  return (scenario.installations ?? []).flatMap((i) => i.repositories.map((r) => `${i.account}/${r.name}`));
}

/** Seeds every repository of the installations; `agentDir` receives their demo agent scripts. */
export async function seedOrgRepos(
  scenario: Scenario,
  { store, git }: { store: SandboxStore; git: SandboxGit },
  agentDir: string,
  progress: Progress,
): Promise<void> {
  for (const [i, installation] of (scenario.installations ?? []).entries()) {
    for (const [j, repo] of installation.repositories.entries()) {
      const full = `${installation.account}/${repo.name}`;
      store.createRepo({ owner: installation.account, name: repo.name, defaultBranch: repo.defaultBranch });
      for (const user of repo.users) store.addUser(user.login, { ...(user.name ? { name: user.name } : {}) });
      for (const user of [...scenario.users, ...repo.users])
        store.setPermission(full, user.login, user.permission);
      // Each repository's agent script is its own: its issue #N is not the scenario repository's #N.
      const scriptPath = writeIssuesScript(
        repo.issues,
        join(agentDir, `${installation.account}-${repo.name}`),
      );
      const command = demoAgentCommand(scriptPath);
      const configText = repoConfigText(
        repo.config,
        command,
        `installations[${i}].repositories[${j}].config`,
      );
      const config = parseConfig(configText);
      if (!config.ok) throw new ScenarioError(renderConfigError(config.error));
      const files: Record<string, string> = { ...repo.files, [CONFIG_PATH]: configText };
      files[`.github/workflows/${config.config.workerWorkflow}`] ??= workerWorkflowYaml({
        jobTimeoutMinutes: Math.max(1, Math.ceil(scenario.limits.jobTimeoutSeconds / 60)),
        hostedController: controllerMode(scenario) !== "actions",
      });
      if (controllerMode(scenario) === "actions")
        files[CONTROLLER_WORKFLOW_PATH] ??= controllerWorkflowYaml();
      const firstUser = repo.users[0]?.login ?? scenario.users[0]?.login ?? installation.account;
      await git.seedRepo(installation.account, repo.name, files, {
        message: "Initial commit",
        author: { name: firstUser, email: `${firstUser}@users.noreply.github.com` },
        pusher: firstUser,
      });
      openIssues(repo.issues, full, store, firstUser);
      progress("setup", null, `repository ${full} seeded with ${repo.issues.length} issues`);
    }
  }
}
