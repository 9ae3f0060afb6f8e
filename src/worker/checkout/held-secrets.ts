/**
 * The secrets the worker holds, by name, for the push guard (push-guard.ts): whatever it could hand on, the
 * agent could write into a file, and the push would publish it. They are:
 * - the `github-token` input (the worker's fetch, push and API token);
 * - every model key of every preset (ALL_MODEL_KEYS) present in the worker's environment: the agent gets its
 *   own preset's (src/worker/isolation/agent-env.ts);
 * - every other variable whose name looks like a secret (`looksSecret`, the same test that withholds a
 *   toolchain variable from the agent): registry tokens, a key listed in `agents.*.env`, the Actions runtime
 *   tokens, and the controller's WEBHOOK_SECRET should a self-hosted runner carry it. The INPUT_ and ACTIONS_
 *   prefixes alone do not make a name secret here (INPUT_CONFIG is the `config` input, ACTIONS_CACHE_URL a
 *   URL): the rest of the name must look secret too, and `…_URL` names are addresses, not credentials.
 * Values that are absolute paths (SSH_AUTH_SOCK, a `…_TOKEN_FILE`) are where a secret is, not a secret.
 */
import { ALL_MODEL_KEYS } from "../../core/presets/index.js";
import type { HeldSecret } from "../../core/gates/secret-leak.js";
import { looksSecret } from "../isolation/agent-env.js";

const MODEL_KEYS = new Set(ALL_MODEL_KEYS);

function secretName(name: string): boolean {
  if (MODEL_KEYS.has(name)) return true;
  if (/_URL$/i.test(name)) return false;
  return looksSecret(name.replace(/^(INPUT_|ACTIONS_)/i, ""));
}

/** The worker's secrets: the token, then its environment's (see the file comment). Values are never logged. */
export function heldSecrets(env: NodeJS.ProcessEnv, token: string): HeldSecret[] {
  const secrets: HeldSecret[] = [{ name: "the GitHub token (`github-token`)", value: token }];
  for (const [name, value] of Object.entries(env)) {
    if (!value || value.startsWith("/") || !secretName(name)) continue;
    secrets.push({ name, value });
  }
  return secrets;
}
