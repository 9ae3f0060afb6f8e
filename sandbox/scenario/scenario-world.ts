/**
 * What a scenario run has started and seeded, handed to the parts that play the timeline and judge the end.
 */
import type { AlertReceiver } from "./alert-receiver.js";
import type { ActionsRunner } from "../emulator/actions/actions.js";
import type { SandboxGit } from "../emulator/git/sandbox-git.js";
import type { Sandbox } from "../emulator/index.js";
import type { SandboxStore } from "../emulator/store.js";
import type { Scenario } from "./scenario-file.js";
import type { ScenarioObserver } from "./scenario-observer.js";
import type { Progress } from "./scenario-progress.js";

export interface ScenarioRepo {
  owner: string;
  name: string;
  /** `owner/name`. */
  full: string;
}

export interface ScenarioWorld {
  scenario: Scenario;
  repo: ScenarioRepo;
  sandbox: Sandbox;
  store: SandboxStore;
  git: SandboxGit;
  actions: ActionsRunner;
  observer: ScenarioObserver;
  /** The scenario's people and the repository owner (lowercase logins): not Autopilot. */
  humans: Set<string>;
  progress: Progress;
  /** The demo agent's command, for `{demo_agent}` in files a person pushes. */
  agentCommand: string;
  /** The receiver of the alert webhook, when `expect.alertWebhook` asks for one (alert-receiver.ts). */
  alertReceiver: AlertReceiver | null;
}
