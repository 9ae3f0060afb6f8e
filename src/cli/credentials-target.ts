/**
 * Where `autopilot register` will write the App's credentials, checked before the manifest flow starts: GitHub
 * shows the private key and webhook secret once, so a folder that turns out missing or unwritable after the App
 * exists would lose them. Every refusal here names the fix and leaves nothing registered.
 */
import { accessSync, constants, existsSync, readFileSync, realpathSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { keepOutOfGit } from "./credentials-git-ignore.js";
import { CredentialsTargetError } from "./credentials-target-error.js";

const CREDENTIAL_KEYS = ["APP_ID", "PRIVATE_KEY", "WEBHOOK_SECRET"] as const;
const FILE_NAME = ".env";

/** Null when `path` holds none of the App's credentials (absent, or other variables only). */
export function existingCredentialsProblem(path: string): string | null {
  if (!existsSync(path)) return null;
  const text = readFileSync(path, "utf8");
  const found = CREDENTIAL_KEYS.filter((k) => new RegExp(`^\\s*(export\\s+)?${k}\\s*=`, "m").test(text));
  return found.length
    ? `${path} already holds ${found.join(", ")}: move it away (or remove those lines) to register another App; nothing was changed.`
    : null;
}

/**
 * The `.env` to write, after checking that its folder exists and is writable, that it holds no credentials yet,
 * and that git will not commit it (adding it to the work tree's .gitignore when needed, told through `say`).
 * `dirFlag` is register's `--dir` (absent: `cwd`). Throws CredentialsTargetError.
 */
export function prepareCredentialsTarget(
  dirFlag: string | undefined,
  cwd: string,
  say: (line: string) => void,
): string {
  const wanted = resolve(dirFlag ?? cwd);
  const where = dirFlag === undefined ? `The current directory ${wanted}` : `--dir ${wanted}`;
  const flagHint = "pass --dir an existing directory you can write to";
  if (!existsSync(wanted))
    throw new CredentialsTargetError(
      `${where} does not exist: create it first (mkdir -p ${wanted}) or ${flagHint}. Nothing was registered.`,
    );
  if (!statSync(wanted).isDirectory())
    throw new CredentialsTargetError(`${where} is not a directory: ${flagHint}. Nothing was registered.`);
  const dir = realpathSync(wanted);
  const path = join(dir, FILE_NAME);
  try {
    accessSync(existsSync(path) ? path : dir, constants.W_OK);
  } catch {
    throw new CredentialsTargetError(
      `${existsSync(path) ? path : where} is not writable by this user: fix its permissions or ${flagHint}. Nothing was registered.`,
    );
  }
  const problem = existingCredentialsProblem(path);
  if (problem) throw new CredentialsTargetError(problem);
  keepOutOfGit(dir, FILE_NAME, say);
  return path;
}
