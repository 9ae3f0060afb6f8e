/**
 * What one agent preset is: the facts every list of Autopilot derives from it (its name, model keys, model API
 * hosts, prices, the CLI's pinned install) and its behaviour (how to start the CLI, how to read what it
 * printed). One record per preset, in `src/core/presets/<name>.ts`; the registry (`index.ts`) lists them.
 */

/** A model's list price. */
export interface ModelPrice {
  /** USD per million input tokens. */
  input: number;
  /** USD per million output tokens. */
  output: number;
}

/**
 * How the preset's CLI is installed on the runner, at an exact version: a new release reaches a repository's
 * jobs only when someone changes the number here. `npm` CLIs are also the ones the real-CLI tests install and
 * run (scripts/install-agent-clis.ts).
 */
export interface CliInstall {
  /** `npm`: `npm install -g <package>@<version>`; `pipx`: `pipx install <package>==<version>`. */
  manager: "npm" | "pipx";
  package: string;
  version: string;
  /** The command the package puts on PATH (what `buildInvocation` starts). */
  command: string;
}

export interface InvocationOptions {
  /** The whole prompt text. */
  prompt: string;
  /** The same prompt written to a file outside the workspace. */
  promptFile: string;
  /** The repository checkout the agent works in. */
  workdir: string;
  /** The agent's scratch home (outside the workspace). */
  home: string;
  model?: string | null;
  /** Extra arguments from the configuration, appended to the preset's own. */
  args?: string[];
  /** The shell command of the `custom` preset, with `{prompt_file}` to substitute. */
  command?: string | null;
  /** What is left of the budget for this run, in US dollars, for a CLI with a spending cap of its own. */
  maxCostUsd?: number | null;
}

export interface Invocation {
  command: string;
  args: string[];
  /** Non-secret variables the preset needs (added to the allow-listed environment). */
  env: Record<string, string>;
  /** Written to the process's stdin when set. */
  stdin?: string;
}

export interface AgentUsage {
  input: number;
  output: number;
}

export interface AgentOutput {
  /** The agent's own final message: the only text signals are read from. */
  finalMessage: string;
  /** The CLI reported a failed run (API error, max turns, turn failed…). */
  isError: boolean;
  /** What went wrong, in the CLI's words, for the classifier and the logs. */
  errorText: string;
  usage: AgentUsage;
  costUsd: number;
  /** Shell commands the agent ran (for the human gate), where the CLI reports them. */
  commands: string[];
  /** The CLI stopped at its own turn limit: not a failure, the next iteration goes on. */
  turnLimit?: boolean;
  /** The model the CLI says it used, when it says (prices tokens a CLI reports without a cost). */
  model?: string;
}

/** A run's usage so far, as its output has streamed it. */
export interface MeteredUsage {
  input: number;
  output: number;
  /** The CLI's own price of it; null when it gives none (the worker prices the tokens). */
  costUsd: number | null;
  model: string | null;
}

/**
 * Reads a run's output line by line as it streams (one meter per run: it keeps what it has counted); returns the
 * usage so far after a line that changed it, else null.
 */
export type UsageMeter = (line: string) => MeteredUsage | null;

export interface AgentPreset {
  name: string;
  /** The CLI's install; null for `custom` (the maintainer installs whatever `command` runs). */
  install: CliInstall | null;
  /**
   * The model-provider keys this preset (and only this preset) receives from the worker's environment. The
   * first is the one a user sets as a secret (`autopilot init` names it, failure texts ask for it).
   */
  keyEnv: readonly string[];
  /**
   * Keys the CLI reads under another name than the one users hold: `{ CODEX_API_KEY: "OPENAI_API_KEY" }` sets
   * CODEX_API_KEY from OPENAI_API_KEY when only that one is set. Both names are in `keyEnv`.
   */
  keyAliases?: Readonly<Record<string, string>>;
  /**
   * The hosts the CLI needs with the preset's own keys (its providers' model APIs): on the agent's network
   * allow-list by default (src/worker/network/agent-egress.ts). A base URL passed in `agents.*.env` adds its own host.
   */
  apiHosts: readonly string[];
  /**
   * Whether the CLI prices its own usage (a cost in its output). The others report tokens only, which the
   * worker prices from `prices` (every preset's, together: src/core/agent/pricing.ts).
   */
  selfPricing: boolean;
  /**
   * List prices of the models of the provider this preset's CLI is made for, by model name (the provider's
   * published prices for standard, uncached API use; src/core/agent/pricing.ts says where and when they were read).
   */
  prices: Readonly<Record<string, ModelPrice>>;
  buildInvocation(options: InvocationOptions): Invocation;
  parseOutput(stdout: string, stderr: string, exitCode: number | null): AgentOutput;
  /**
   * A meter of the run's usage while it runs, for the CLIs whose output reports usage as it goes (per API call,
   * turn or step): the worker stops a run whose usage crosses what is left of its budget. Absent: the CLI reports
   * usage only when it ends, and the budget is checked after each run.
   */
  usageMeter?(): UsageMeter;
}

/** Keeps a record's literal name in its type, so the registry's names are a union the compiler checks. */
export function definePreset<const Name extends string>(
  preset: AgentPreset & { name: Name },
): AgentPreset & {
  name: Name;
} {
  return preset;
}

/** The exact install line of a CLI, as the worker workflow runs it. */
export function installLine(install: CliInstall): string {
  return `${unpinnedInstallLine(install)}${install.manager === "npm" ? "@" : "=="}${install.version}`;
}

/** The install line without the version (what a workflow written before the pin says). */
export function unpinnedInstallLine(install: CliInstall): string {
  return install.manager === "npm" ? `npm install -g ${install.package}` : `pipx install ${install.package}`;
}
