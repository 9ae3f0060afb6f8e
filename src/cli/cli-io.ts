/**
 * What every `autopilot` command writes to and answers with: its output streams and environment (tests pass
 * their own) and the exit codes the help text lists.
 */

/** 0 success; 1 the scenario ended but did not pass; 2 usage error or invalid scenario; 3 a part the sandbox
 * needs is missing (not built yet, or the sandbox is not installed); 130 interrupted. */
export const EXIT = { ok: 0, failed: 1, usage: 2, missing: 3, interrupted: 130 } as const;

type Out = (line: string) => void;

export interface CliIo {
  out: Out;
  err: Out;
  env: NodeJS.ProcessEnv;
  /** Answers to init's questions (default: stdin). */
  input?: NodeJS.ReadableStream;
}

/** Resolves at the first Ctrl-C (SIGINT) or SIGTERM, and stops listening for them. */
export function untilInterrupted(): Promise<void> {
  return new Promise<void>((resolve) => {
    const stop = () => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      resolve();
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
}
