/** What every agent preset provides: how to start the CLI, and how to read what it printed. */

export type PresetName = "claude-code" | "codex" | "aider" | "opencode" | "gemini" | "custom";

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

export interface AgentPreset {
  name: PresetName;
  /** The model-provider keys this preset (and only this preset) receives from the worker's environment. */
  keyEnv: readonly string[];
  /**
   * Keys the CLI reads under another name than the one users hold: `{ CODEX_API_KEY: "OPENAI_API_KEY" }` sets
   * CODEX_API_KEY from OPENAI_API_KEY when only that one is set. Both names are in `keyEnv`.
   */
  keyAliases?: Readonly<Record<string, string>>;
  /**
   * The hosts the CLI needs with the preset's own keys (its providers' model APIs): on the agent's network
   * allow-list by default (src/worker/agent-egress.ts). A base URL passed in `agents.*.env` adds its own host.
   */
  apiHosts: readonly string[];
  buildInvocation(options: InvocationOptions): Invocation;
  parseOutput(stdout: string, stderr: string, exitCode: number | null): AgentOutput;
}
