/** Types of install-agent-clis.mjs, for the tests that import it. */
export declare const AGENT_CLI_VERSIONS: Record<string, string>;
/** Where the pinned CLIs are installed (node_modules/.cache/agent-clis). */
export declare const agentCliDir: string;
/** The path of an installed CLI's executable (`claude`, `codex`). */
export declare function agentCliBin(name: string): string;
/** Installs both pinned CLIs unless they are already there. */
export declare function ensureAgentClis(): void;
