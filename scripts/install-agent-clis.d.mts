/** Types of install-agent-clis.mjs, for the tests that import it. */
export declare const AGENT_CLI_GROUPS: readonly {
  dir: string;
  versions: Record<string, string>;
  bins: string[];
}[];
export declare const AGENT_CLI_VERSIONS: Record<string, string>;
/** Where the first group of pinned CLIs is installed (node_modules/.cache/agent-clis). */
export declare const agentCliDir: string;
/** The path of an installed CLI's executable (`claude`, `codex`, `gemini`, `opencode`). */
export declare function agentCliBin(name: string): string;
/** Every folder holding the pinned CLIs' executables, for PATH. */
export declare function agentCliBinDirs(): string[];
/** True when every pinned CLI is installed. */
export declare function agentClisInstalled(): boolean;
/** Installs the pinned CLIs that are not there yet. */
export declare function ensureAgentClis(): void;
