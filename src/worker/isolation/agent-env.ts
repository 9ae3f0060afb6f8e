/**
 * The agent's environment: never the runner's environment as a whole. What passes:
 * - PATH (with the entries setup actions added through GITHUB_PATH: the runner puts them in the worker's own
 *   PATH), LANG, LC_ALL, TERM, a scratch HOME and TMPDIR (outside the workspace);
 * - the runner's toolchain settings, by name (`isToolchainName`: JAVA_HOME, JAVA_HOME_17_X64, GOROOT, GOPATH,
 *   CARGO_HOME, RUSTUP_HOME, PNPM_HOME, PYTHONPATH, …), unless the name looks like a secret (`looksSecret`)
 *   or the value carries one (a URL with credentials, an option assigning a password or token, a value holding
 *   a secret the worker knows);
 * - the model keys of the preset being run (ANTHROPIC_API_KEY only for claude-code, and so on);
 * - the names the configuration's `env` lists (a deliberate choice of the default branch: a secret-like name
 *   passes when listed there), except the GitHub and Actions tokens and another preset's model key;
 * - the preset's own non-secret settings and Autopilot's AUTOPILOT_* variables.
 * Whatever the source, a variable whose value contains the GitHub token is dropped.
 */
import { ALL_MODEL_KEYS } from "../../core/presets/index.js";

const BASE_ENV_NAMES = ["PATH", "LANG", "LC_ALL", "TERM"] as const;

/** Names that are never passed, whatever the configuration says. */
const NEVER_PASSED = [
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

/** Prefixes that are never passed: the action's inputs (the token among them) and the Actions runtime. */
const NEVER_PREFIX = /^(INPUT_|ACTIONS_)/i;

/**
 * Names that look like a secret. A toolchain-looking name matching one of these is withheld: only the
 * configuration's `env` (or the preset, for its model keys) can pass such a name.
 */
const SECRET_NAME = [
  /TOKEN/i,
  /SECRET/i,
  /PASS(WORD|WD|PHRASE)/i,
  /(^|_)(API_?)?KEY(S|_|$)/i,
  /APIKEY/i,
  /CREDENTIAL/i,
  /(^|_)AUTH(_|$)/i,
  /COOKIE/i,
  /SESSION/i,
];

/**
 * A URL carrying credentials (`https://user:pass@host`, or a token as the user: `https://TOKEN@host`): a registry
 * setting (PIP_INDEX_URL, GOPROXY, UV_INDEX_URL) that holds a credential.
 */
const URL_WITH_CREDENTIALS = /:\/\/[^/\s@]+@/;

/**
 * An option assignment naming a secret inside a value (`-Dsigning.password=…`, `--token=…`,
 * `-Djavax.net.ssl.trustStorePassword=…`): JVM and build-tool option variables (GRADLE_OPTS, MAVEN_OPTS,
 * JAVA_TOOL_OPTIONS) are toolchain settings, but a workflow can put a credential in them.
 */
const SECRET_ASSIGNMENT = /(pass(word|wd|phrase)?|token|secret|api[-_]?key|credentials?)\s*=\s*\S/i;

export function looksSecret(name: string): boolean {
  return NEVER_PREFIX.test(name) || SECRET_NAME.some((pattern) => pattern.test(name));
}

/** Toolchain settings by exact name: the ones runner images and setup actions set that no pattern below catches. */
const TOOLCHAIN_NAMES = new Set([
  "CC",
  "CXX",
  "CFLAGS",
  "CXXFLAGS",
  "CPPFLAGS",
  "LDFLAGS",
  "RUSTFLAGS",
  "RUSTDOCFLAGS",
  "CONDA",
  "pythonLocation",
  "VIRTUAL_ENV",
  "JAVA_TOOL_OPTIONS",
  "GRADLE_OPTS",
  "MAVEN_OPTS",
  "SBT_OPTS",
  "NODE_OPTIONS",
  "NODE_EXTRA_CA_CERTS",
  "SSL_CERT_FILE",
  "DEBIAN_FRONTEND",
  "TZ",
  "LANGUAGE",
  "RUNNER_OS",
  "RUNNER_ARCH",
  "RUNNER_TOOL_CACHE",
  "AGENT_TOOLSDIRECTORY",
  "ImageOS",
  "ImageVersion",
]);

/**
 * Toolchain settings by pattern: `*_HOME`/`*_ROOT` (JAVA_HOME, JAVA_HOME_17_X64, ANDROID_HOME, DOTNET_ROOT,
 * Python3_ROOT_DIR), `*PATH` (GOPATH, PYTHONPATH, PKG_CONFIG_PATH, CLASSPATH, LD_LIBRARY_PATH), `*_DIR`
 * (PIPX_BIN_DIR), Go's `GO*` (GOROOT, GOFLAGS, GOPROXY, GOMODCACHE, GOROOT_1_22_X64) and the settings of cargo,
 * rustup, pnpm, corepack, yarn, pip, poetry, uv, Gradle, Maven and .NET.
 */
const TOOLCHAIN_PATTERNS = [
  /_(HOME|ROOT)(_[A-Za-z0-9_]+)?$/,
  /PATH$/,
  /_DIR$/,
  /^GO[A-Z]+$/,
  /^GOROOT_[0-9_]+[A-Z0-9]+$/,
  /^(CARGO|RUSTUP|PNPM|COREPACK|YARN|PIP|POETRY|UV|GRADLE|MAVEN|DOTNET|LC)_[A-Z0-9_]+$/,
];

/**
 * Runner and workflow variables that are not toolchain settings even where a pattern above matches:
 * GITHUB_PATH/GITHUB_ENV (the runner's file commands), RUNNER_TEMP, XDG_* (the runner user's own dirs; the
 * agent has its own HOME), the worker's own AUTOPILOT_* and the home itself.
 */
const NOT_TOOLCHAIN = /^(GITHUB_|RUNNER_|XDG_|AUTOPILOT_|HOME$|TMPDIR$|SUDO_)/;

export function isToolchainName(name: string): boolean {
  if (TOOLCHAIN_NAMES.has(name)) return true;
  if (NOT_TOOLCHAIN.test(name)) return false;
  return TOOLCHAIN_PATTERNS.some((pattern) => pattern.test(name));
}

interface AgentEnvOptions {
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

interface AgentEnvResult {
  env: Record<string, string>;
  /** Configured names that were refused, and why (for a warning in the log). */
  refused: { name: string; why: string }[];
  /** Toolchain-looking names of the runner that were withheld because they look like a secret (for the log). */
  withheld: string[];
}

export function buildAgentEnv(options: AgentEnvOptions): AgentEnvResult {
  const env: Record<string, string> = {};
  const refused: { name: string; why: string }[] = [];
  const withheld: string[] = [];
  const never = new Set<string>(NEVER_PASSED);
  const presetKeys = new Set(options.presetKeys);
  const configured = new Set(options.extraNames ?? []);
  const otherModelKeys = new Set(ALL_MODEL_KEYS.filter((key) => !presetKeys.has(key)));
  const secrets = (options.secretValues ?? []).filter((value) => value.length >= 4);
  // Every value the runner keeps under a secret-like name (model keys, registry tokens, …): a toolchain
  // variable that repeats one is withheld too. Short values ("1", "true") are settings, not secrets.
  const knownSecrets = Object.entries(options.parentEnv)
    .filter(([name, value]) => value !== undefined && value.length >= 8 && looksSecret(name))
    .map(([, value]) => value as string);

  const take = (name: string) => {
    const value = options.parentEnv[name];
    if (value !== undefined) env[name] = value;
  };

  for (const name of BASE_ENV_NAMES) take(name);
  for (const [name, value] of Object.entries(options.parentEnv)) {
    if (value === undefined || name in env || !isToolchainName(name)) continue;
    if (
      looksSecret(name) ||
      URL_WITH_CREDENTIALS.test(value) ||
      SECRET_ASSIGNMENT.test(value) ||
      knownSecrets.some((secret) => value.includes(secret))
    ) {
      if (!configured.has(name) && !presetKeys.has(name)) withheld.push(name);
      continue;
    }
    env[name] = value;
  }
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
  for (const name of configured) {
    if (never.has(name) || NEVER_PREFIX.test(name)) {
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
  return { env, refused, withheld: withheld.sort() };
}
