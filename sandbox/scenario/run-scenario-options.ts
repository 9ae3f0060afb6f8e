/**
 * What the caller of `runScenario` (sandbox/scenario/run-scenario.ts) may ask of a run.
 */
import type { ActionsRunner } from "../emulator/actions/actions.js";
import type { Sandbox } from "../emulator/index.js";
import type { SandboxStore } from "../emulator/store.js";
import type { StartControllerServer } from "./missing-parts.js";
import type { ProgressEvent } from "./scenario-progress.js";
import type { ScenarioReport } from "./scenario-report.js";

/** How a client reaches the kept sandbox's GitHub API: its URL, the scenario's repository, an admin's token. */
export interface SandboxAccess {
  apiUrl: string;
  repo: string;
  token: string;
}

export interface RunScenarioOptions {
  /** Where to write the JSON report. */
  report?: string;
  onProgress?: (event: ProgressEvent) => void;
  /** The action run by the worker workflow (default: this repository, i.e. dist/worker/index.js). */
  actionDir?: string;
  /** The controller factory (default: `startControllerServer` from src/app/hosted/http-server.ts). */
  startController?: StartControllerServer;
  /** Stop early (Ctrl-C is wired by default, see `handleSignals`). */
  signal?: AbortSignal;
  /** Install SIGINT/SIGTERM handlers for the duration of the run (default true). */
  handleSignals?: boolean;
  /** Keep run workspaces for inspection. */
  keepWorkspaces?: boolean;
  /**
   * End the run as soon as the session pauses, with the pause's reason as the last progress line (the demo: its
   * timeline never resumes a session, so a pause would otherwise wait out the time limit in silence).
   */
  endOnPause?: boolean;
  /** Report every line of the runs' output as progress. */
  verbose?: boolean;
  /** Port of the sandbox's web pages on 127.0.0.1 (0 or absent: a free one). */
  webPort?: number;
  /** Told the web pages' URL as soon as the sandbox is up. */
  onWebView?: (url: string) => void;
  /**
   * Called with the finished report after `inspect`, before anything stops: resolve it to stop (`--keep`
   * waits for Ctrl-C here, the pages staying up). `access` reaches the sandbox's API while it waits.
   */
  keep?: (report: ScenarioReport, access: SandboxAccess) => Promise<void>;
  /** Called after the run ends and before anything stops: look at the final state (tests, debugging). */
  inspect?: (context: {
    sandbox: Sandbox;
    store: SandboxStore;
    actions: ActionsRunner;
    repo: string;
  }) => void | Promise<void>;
}
