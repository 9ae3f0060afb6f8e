/**
 * What one controller job in Actions reconciles with: the repository, the token, the event and the inputs
 * (`max-parallel`, `labels`, `dry-run` from a `workflow_dispatch`'s inputs or the action's inputs of the same
 * names; `ending-run` when it is a worker run's last step).
 */
import { readFile } from "node:fs/promises";
import * as core from "@actions/core";
import type { ConfigOverrides } from "../../core/dashboard/index.js";

export interface RunInputs {
  owner: string;
  name: string;
  token: string;
  /** The worker run whose last step this is, or null for a controller job. */
  endingRun: number | null;
  eventName: string;
  event: Record<string, unknown>;
  overrides: ConfigOverrides;
  /** The `operation-budget` input: writing effects per reconcile, at most (empty: the gateway's default). */
  operationLimit: number | null;
  baseUrl: string;
  /** Who starts the session when this is a `workflow_dispatch`. */
  actor: string;
}

/** Reads the job's inputs; throws with what to fix when one is missing or malformed. */
export async function readRunInputs(env: NodeJS.ProcessEnv): Promise<RunInputs> {
  const [owner, name] = (env.GITHUB_REPOSITORY ?? "").split("/");
  if (!owner || !name) throw new Error("GITHUB_REPOSITORY is not set (expected owner/name).");
  const token = core.getInput("github-token") || env.GITHUB_TOKEN || "";
  if (!token) throw new Error("No token: set the `github-token` input (an App installation token is best).");
  core.setSecret(token);
  const endingRun = parseEndingRun(core.getInput("ending-run"));
  // A worker run's last step: its workflow_dispatch is the worker's, never a session start with overrides.
  const eventName = endingRun === null ? (env.GITHUB_EVENT_NAME ?? "") : "workflow_run";
  const event = endingRun === null ? await readEvent(env.GITHUB_EVENT_PATH) : {};
  if (endingRun !== null) core.info(`the reconcile of worker run ${endingRun}'s end, from its last step`);
  const dispatchInputs =
    eventName === "workflow_dispatch" ? ((event.inputs ?? {}) as Record<string, unknown>) : {};
  const input = (key: string) => String(dispatchInputs[key] ?? "").trim() || core.getInput(key);
  const overrides = parseOverrides(input("max-parallel"), input("labels"), input("dry-run"));
  const limit = core.getInput("operation-budget");
  return {
    owner,
    name,
    token,
    endingRun,
    eventName,
    event,
    overrides,
    operationLimit: limit ? Number(limit) : null,
    baseUrl: env.GITHUB_API_URL || "https://api.github.com",
    actor: env.GITHUB_ACTOR || String((event.sender as { login?: string })?.login ?? "someone"),
  };
}

/** `ending-run`: the worker run's own id (`github.run_id`), or empty. */
export function parseEndingRun(text: string): number | null {
  const value = text.trim();
  if (!value) return null;
  if (!/^[1-9]\d{0,15}$/.test(value))
    throw new Error(`ending-run must be the worker run's id (github.run_id), not "${value.slice(0, 40)}".`);
  return Number(value);
}

async function readEvent(path: string | undefined): Promise<Record<string, unknown>> {
  if (!path) return {};
  try {
    return JSON.parse(await readFile(path, "utf8")) as Record<string, unknown>;
  } catch {
    return {};
  }
}

/** `max-parallel: 3`, `labels: {"ready":"go"}` or `ready=go, review=check`, `dry-run: true`. */
export function parseOverrides(maxParallel: string, labels: string, dryRun: string): ConfigOverrides {
  const out: ConfigOverrides = {};
  if (maxParallel) {
    const n = Number(maxParallel);
    if (!Number.isInteger(n) || n < 1 || n > 20)
      throw new Error(`max-parallel must be a whole number from 1 to 20, not "${maxParallel}".`);
    out.maxParallel = n;
  }
  if (labels) {
    let parsed: Record<string, string> = {};
    if (labels.startsWith("{")) {
      parsed = JSON.parse(labels) as Record<string, string>;
    } else {
      for (const pair of labels.split(/[,\n]/)) {
        if (!pair.trim()) continue;
        const [key, ...rest] = pair.split("=");
        if (!key || rest.length === 0)
          throw new Error(`labels: expected role=name pairs, got "${pair.trim()}".`);
        parsed[key.trim()] = rest.join("=").trim();
      }
    }
    if (Object.keys(parsed).length > 0) out.labels = parsed;
  }
  if (dryRun) {
    if (!/^(true|false)$/i.test(dryRun)) throw new Error(`dry-run must be true or false, not "${dryRun}".`);
    if (/^true$/i.test(dryRun)) out.dryRun = true;
  }
  return out;
}
