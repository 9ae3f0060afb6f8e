/**
 * The agent's environment is an allow-list, never the runner's environment minus a deny-list: the GitHub token,
 * the Actions runtime tokens and every unrelated secret stay out because nothing is inherited by default.
 *
 * Passed: PATH, LANG, LC_ALL, TERM, a scratch HOME and TMPDIR (outside the workspace), the model keys of the
 * preset being run (ANTHROPIC_API_KEY only for claude-code, and so on), the names the configuration's `env`
 * lists, and the preset's own non-secret settings.
 */
import { ALL_MODEL_KEYS } from "./agents/index.js";

export const BASE_ENV_NAMES = ["PATH", "LANG", "LC_ALL", "TERM"] as const;

/** Names that are never passed, whatever the configuration says. */
export const NEVER_PASSED = [
  "GITHUB_TOKEN",
  "GH_TOKEN",
  "INPUT_GITHUB-TOKEN",
  "INPUT_GITHUB_TOKEN",
  "ACTIONS_RUNTIME_TOKEN",
  "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
  "ACTIONS_ID_TOKEN_REQUEST_URL",
  "ACTIONS_RESULTS_URL",
  "ACTIONS_CACHE_URL",
  "ACTIONS_RUNTIME_URL",
] as const;

export interface AgentEnvOptions {
  /** The worker's own environment (the source of allowed values). */
  parentEnv: NodeJS.ProcessEnv;
  /** The preset's model keys (from `AgentPreset.keyEnv`). */
  presetKeys: readonly string[];
  /** The preset's key aliases (from `AgentPreset.keyAliases`): name → the preset key it is filled from. */
  keyAliases?: Readonly<Record<string, string>>;
  /** The configuration's `env` allow-list for this agent. */
  extraNames?: readonly string[];
  home: string;
  tmpdir: string;
  /** The preset's non-secret settings and Autopilot's own AUTOPILOT_* variables. */
  additions?: Record<string, string>;
  /** Values that must never appear in the environment (the GitHub token): any variable holding one is dropped. */
  secretValues?: readonly string[];
}

export interface AgentEnvResult {
  env: Record<string, string>;
  /** Configured names that were refused, and why (for a warning in the log). */
  refused: { name: string; why: string }[];
}

export function buildAgentEnv(options: AgentEnvOptions): AgentEnvResult {
  const env: Record<string, string> = {};
  const refused: { name: string; why: string }[] = [];
  const never = new Set<string>(NEVER_PASSED);
  const presetKeys = new Set(options.presetKeys);
  const otherModelKeys = new Set(ALL_MODEL_KEYS.filter((key) => !presetKeys.has(key)));
  const secrets = (options.secretValues ?? []).filter((value) => value.length >= 4);

  const take = (name: string) => {
    const value = options.parentEnv[name];
    if (value !== undefined) env[name] = value;
  };

  for (const name of BASE_ENV_NAMES) take(name);
  if (!env.PATH) env.PATH = "/usr/local/bin:/usr/bin:/bin";
  if (!env.LANG) env.LANG = "C.UTF-8";
  if (!env.TERM) env.TERM = "dumb";
  for (const name of presetKeys) take(name);
  for (const [name, source] of Object.entries(options.keyAliases ?? {})) {
    const value = env[source];
    if (presetKeys.has(name) && presetKeys.has(source) && env[name] === undefined && value !== undefined) {
      env[name] = value;
    }
  }
  for (const name of options.extraNames ?? []) {
    if (never.has(name) || /^(INPUT_|ACTIONS_)/.test(name)) {
      refused.push({ name, why: "the GitHub and Actions tokens never reach the agent" });
    } else if (otherModelKeys.has(name)) {
      refused.push({ name, why: "another agent's model key goes only to that agent" });
    } else {
      take(name);
    }
  }
  Object.assign(env, options.additions ?? {});
  env.HOME = options.home;
  env.TMPDIR = options.tmpdir;

  for (const [name, value] of Object.entries(env)) {
    if (secrets.some((secret) => value.includes(secret))) {
      delete env[name];
      refused.push({ name, why: "its value contains the GitHub token" });
    }
  }
  return { env, refused };
}
