/**
 * The action's runner: reads the inputs, masks the token and every model key before anything can print them,
 * then loads and runs the job (run-job.ts: configuration, the agent's OS user and the boundary, the job, the
 * report). Only what reading the inputs needs is loaded before the first line: the rest of the worker (the
 * GitHub client, the configuration schemas, git, the agent presets' parsers) is imported after it, so a
 * bad input fails at once and the log shows the worker started without waiting for code it does not need yet.
 * Whatever fails is reported here: `result` `failed`, its reason, and `core.setFailed`.
 */
import * as core from "@actions/core";
import { ALL_MODEL_KEYS } from "../core/presets/index.js";
import type { Boundary } from "./isolation/boundary.js";
import { parseInputs } from "./settings/inputs.js";
import type { WorkerRun } from "./worker-deps.js";

interface RunOptions {
  env?: NodeJS.ProcessEnv;
  /** A fetch for the GitHub client (tests). */
  fetch?: typeof globalThis.fetch;
}

export async function run(options: RunOptions = {}): Promise<WorkerRun | null> {
  const env = options.env ?? process.env;
  const controller = new AbortController();
  const onSignal = (name: string) => () => {
    core.warning(`received ${name}: stopping the agent and checkpointing`);
    controller.abort();
  };
  const handlers: [NodeJS.Signals, () => void][] = [
    ["SIGINT", onSignal("SIGINT")],
    ["SIGTERM", onSignal("SIGTERM")],
  ];
  for (const [name, handler] of handlers) process.on(name, handler);
  let boundary: Boundary | null = null;
  try {
    const inputs = parseInputs((name) => core.getInput(name));
    core.setSecret(inputs.githubToken);
    core.setSecret(Buffer.from(`x-access-token:${inputs.githubToken}`).toString("base64"));
    for (const key of ALL_MODEL_KEYS) {
      const value = env[key];
      if (value) core.setSecret(value);
    }
    core.info(`Autopilot worker: issue #${inputs.issue}, attempt ${inputs.attempt}`);

    const { runJob } = await import("./run-job.js");
    return await runJob({
      inputs,
      env,
      ...(options.fetch ? { fetch: options.fetch } : {}),
      signal: controller.signal,
      onBoundary: (made) => {
        boundary = made;
      },
    });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    core.setOutput("result", "failed");
    core.setOutput("reason", message.split("\n")[0]);
    core.setFailed(message);
    return null;
  } finally {
    for (const [name, handler] of handlers) process.off(name, handler);
    await (boundary as Boundary | null)
      ?.close()
      .catch((error) =>
        core.warning(`could not clean up after the agent: ${error instanceof Error ? error.message : error}`),
      );
  }
}
