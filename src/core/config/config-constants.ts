/**
 * Names shared by the configuration modules: where the file lives and the rules on an agent's command and
 * environment that the schema and the cross-field checks both state. The agent presets' names come from their
 * registry (src/core/presets/index.ts).
 */

export const CONFIG_PATH = ".github/autopilot.yml";

/** The placeholder a custom agent command must contain; it is replaced by the path of the prompt file. */
export const PROMPT_FILE_PLACEHOLDER = "{prompt_file}";

/**
 * Variable names the agent's env allow-list may not contain: the job's GitHub token is never passed to the
 * agent (docs/ARCHITECTURE.md, "Worker ↔ controller").
 */
export const FORBIDDEN_AGENT_ENV = [
  "GITHUB_TOKEN",
  "GH_TOKEN",
  "ACTIONS_RUNTIME_TOKEN",
  "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
] as const;

/**
 * Meta key carrying how an error message phrases what a key expects, when the phrase generated from the
 * JSON Schema (type, bounds) would be unclear. Used internally; stripped from the published JSON Schema.
 */
export const EXPECTED = "x-expected";
