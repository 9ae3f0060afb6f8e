/** What the steps of a job need of the Actions runner, and the post steps a job collects. */
import type { ActionsOptions } from "./actions-types.js";
import type { StepProcesses } from "./step-process.js";
import type { SandboxStore } from "../store.js";

/** What a job needs of the runner. */
export interface JobHost {
  store: SandboxStore;
  options: ActionsOptions;
  /** Directory of the configured action. */
  actionDir: string | undefined;
  steps: StepProcesses;
}

/** A node action's `post:` script, run after the job's steps. */
export interface PostStep {
  name: string;
  main: string;
  state: Record<string, string>;
  env: NodeJS.ProcessEnv;
  condition: string;
}
