/**
 * Vitest global setup: makes `npm test` self-sufficient on a fresh clone. The worker's real-agent tests drive
 * the real Claude Code, Codex, Gemini CLI and OpenCode CLIs, which are pinned dev tools installed outside the project's dependencies
 * (scripts/install-agent-clis.ts). Installing is a no-op when they are already there; otherwise it takes a few
 * seconds from the npm registry, once, before any test file starts.
 *
 * Several vitest runs may start at once in one checkout (a watch run and a focused run, say), and two npm
 * installs into the same folder break each other (and a binary still being written cannot be executed:
 * ETXTBSY). So the install runs under a lock — a directory created atomically — and a run that finds the lock
 * taken waits for it, then finds the CLIs installed.
 */
import { mkdirSync, rmSync, statSync } from "node:fs";
import { setTimeout as delay } from "node:timers/promises";
import { agentCliDir, agentClisInstalled, ensureAgentClis } from "../../scripts/install-agent-clis.js";

const LOCK = `${agentCliDir}.lock`;
/** A lock older than this belongs to an install that died: it is taken over. */
const STALE_LOCK_MS = 10 * 60_000;
const WAIT_LIMIT_MS = 15 * 60_000;

function installed(): boolean {
  return agentClisInstalled();
}

function tryLock(): boolean {
  try {
    mkdirSync(LOCK, { recursive: false });
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    try {
      if (Date.now() - statSync(LOCK).mtimeMs > STALE_LOCK_MS) rmSync(LOCK, { recursive: true, force: true });
    } catch {
      /* released meanwhile */
    }
    return false;
  }
}

export default async function setup(): Promise<void> {
  if (installed()) return;
  mkdirSync(`${agentCliDir}/..`, { recursive: true });
  const waitUntil = Date.now() + WAIT_LIMIT_MS;
  while (!tryLock()) {
    if (Date.now() > waitUntil) {
      throw new Error(`timed out waiting for another run's install of the agent CLIs (${LOCK})`);
    }
    await delay(500);
  }
  try {
    await ensureAgentClis();
  } catch (error) {
    throw new Error(
      `could not install the agent CLIs into ${agentCliDir} (run \`npx tsx scripts/install-agent-clis.ts\` to see why): ${
        error instanceof Error ? error.message : String(error)
      }`,
    );
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}
