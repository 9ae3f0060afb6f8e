/**
 * The GitHub App's credentials `autopilot serve` starts with, checked at start: a wrong key or id otherwise shows
 * only at the first webhook or tick, as an authentication error far from its cause. Each refusal names the
 * variable to fix.
 */
import { createPrivateKey } from "node:crypto";
import { readFile } from "node:fs/promises";

interface AppCredentials {
  appId: string;
  privateKey: string;
  webhookSecret: string;
}

const WHERE =
  "(the GitHub App's settings, which `autopilot register` writes to .env; see docs/CONTROLLER.md)";

/** A PEM as is (`\n` written for line breaks allowed), or base64 of one (for environments without multi-line variables). */
function decodeKey(value: string): string {
  if (value.includes("-----BEGIN")) return value.replace(/\\n/g, "\n");
  return Buffer.from(value, "base64").toString("utf8");
}

/** Why `pem` is not an RSA private key GitHub would accept, or null when it is one. */
function keyProblem(pem: string): string | null {
  if (!pem.includes("-----BEGIN")) return "it is neither a PEM nor base64 of one";
  try {
    const key = createPrivateKey(pem);
    return key.asymmetricKeyType === "rsa"
      ? null
      : `its type is ${key.asymmetricKeyType}, and GitHub Apps sign with RSA`;
  } catch (error) {
    return `it does not parse as a private key (${(error as Error).message})`;
  }
}

/** The credentials from `env`, or an Error naming each variable that is missing or wrong. */
export async function readAppCredentials(env: NodeJS.ProcessEnv): Promise<AppCredentials> {
  const missing = ["APP_ID", "WEBHOOK_SECRET"].filter((k) => !env[k]?.trim());
  if (!env.PRIVATE_KEY && !env.PRIVATE_KEY_PATH) missing.push("PRIVATE_KEY or PRIVATE_KEY_PATH");
  if (missing.length > 0) throw new Error(`autopilot serve needs ${missing.join(", ")} ${WHERE}.`);
  const appId = env.APP_ID!.trim();
  if (!/^[1-9]\d*$/.test(appId))
    throw new Error(
      `APP_ID must be the App's numeric id (its settings page shows "App ID"), not ${JSON.stringify(appId)} ${WHERE}.`,
    );
  let privateKey: string;
  let source: string;
  if (env.PRIVATE_KEY) {
    privateKey = decodeKey(env.PRIVATE_KEY);
    source = "PRIVATE_KEY";
  } else {
    source = `PRIVATE_KEY_PATH (${env.PRIVATE_KEY_PATH})`;
    try {
      privateKey = await readFile(env.PRIVATE_KEY_PATH!, "utf8");
    } catch (error) {
      throw new Error(
        `${source} cannot be read: ${(error as Error).message}. Point it at the App's .pem file.`,
      );
    }
  }
  const problem = keyProblem(privateKey);
  if (problem)
    throw new Error(
      `${source} is not the App's private key: ${problem}. Use the .pem GitHub generated (Settings → Developer settings → GitHub Apps → Private keys), as a PEM with \\n for line breaks, base64 of it, or PRIVATE_KEY_PATH to the file.`,
    );
  return { appId, privateKey, webhookSecret: env.WEBHOOK_SECRET! };
}
