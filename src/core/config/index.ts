/**
 * `.github/autopilot.yml`: schema, cross-field checks, parsing with one error that lists every problem,
 * workflow-input overrides, the text that explains a bad file, and the generated reference.
 */
export { CONFIG_PATH, FORBIDDEN_AGENT_ENV, PROMPT_FILE_PLACEHOLDER } from "./config-constants.js";
export { ConfigError, type ConfigProblem, type ConfigResult } from "./config-error.js";
export { configJsonSchema } from "./config-json-schema.js";
export { configReference } from "./config-reference.js";
export {
  type AgentConfig,
  type AutopilotConfig,
  ConfigSchema,
  DEFAULT_CONFIG,
  agentLabel,
  everyAgent,
} from "./config-schema.js";
export { applyConfigOverrides, deepMerge, parseConfig } from "./load-config.js";
export { renderConfigError } from "./render-config-error.js";
export {
  type ConfigChoice,
  chooseConfig,
  configDigest,
  type LastGoodConfig,
  lastGoodConfig,
  needsTextAtCommit,
} from "./last-good-config.js";
