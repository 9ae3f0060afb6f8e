/**
 * What the setup commands (init, register, doctor) share: the running Autopilot's version and the repository
 * its action is published from, a token from the environment or `gh auth token`, and the repository a
 * checkout's `origin` points at.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { isPlaceholderSource, sourceFromRepositoryField } from "../core/setup-files.js";
import { PACKAGE_ROOT } from "./package-root.js";

/** Where a setup command writes its lines and reads its environment (tests hand in their own). */
export interface SetupIo {
  out: (line: string) => void;
  err: (line: string) => void;
  env: NodeJS.ProcessEnv;
}

/** Whether GitHub App credentials are configured (as Probot reads them). */
export function hasAppCredentials(env: NodeJS.ProcessEnv): boolean {
  return Boolean(env.APP_ID && (env.PRIVATE_KEY || env.PRIVATE_KEY_PATH));
}

/**
 * The release files pin to: package.json's version, and where the action lives — `--source OWNER/NAME`,
 * AUTOPILOT_SOURCE, or package.json's `repository` field. `source` is null when none of them says, and
 * `sourceUnknown` then says why: package.json names no GitHub repository, or still the placeholder
 * `OWNER/autopilot` (a copy run with `npx github:OWNER/NAME` cannot tell its OWNER otherwise).
 */
export function currentRelease(
  env: NodeJS.ProcessEnv,
  sourceFlag?: string,
  pkg: PackageFacts = readPackageFacts(),
): { source: string | null; version: string; sourceUnknown: string | null } {
  const named = sourceFromRepositoryField(pkg.repository);
  const published = named && !isPlaceholderSource(named) ? named : null;
  const source = sourceFlag ?? env.AUTOPILOT_SOURCE ?? published;
  const sourceUnknown = source
    ? null
    : named
      ? `package.json's \`repository\` still names the placeholder ${named}: this copy of Autopilot does not say where it is published`
      : "this copy of Autopilot does not know where it is published (package.json names no GitHub `repository`)";
  return { source, version: pkg.version, sourceUnknown };
}

/** What the setup commands read from Autopilot's own package.json. */
interface PackageFacts {
  version: string;
  repository?: unknown;
}

function readPackageFacts(): PackageFacts {
  return JSON.parse(readFileSync(join(PACKAGE_ROOT, "package.json"), "utf8")) as PackageFacts;
}

/** GITHUB_TOKEN, GH_TOKEN, or what the GitHub CLI is logged in with; null when none. */
export function findToken(env: NodeJS.ProcessEnv): string | null {
  const fromEnv = env.GITHUB_TOKEN || env.GH_TOKEN;
  if (fromEnv) return fromEnv;
  if (env.AUTOPILOT_NO_GH === "1") return null;
  try {
    const token = execFileSync("gh", ["auth", "token"], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
      timeout: 10_000,
    }).trim();
    return token || null;
  } catch {
    return null;
  }
}

/** `owner/name` of a checkout's `origin` on GitHub (https or ssh remote), null when there is none. */
export function originRepo(dir: string): string | null {
  let url: string;
  try {
    url = execFileSync("git", ["-C", dir, "remote", "get-url", "origin"], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
  } catch {
    return null;
  }
  const match = /(?:github\.com[:/]|\/\/[^/]+\/)([\w.-]+)\/([\w.-]+?)(?:\.git)?\/?$/.exec(url);
  return match ? `${match[1]}/${match[2]}` : null;
}

/** The API base URL: GITHUB_API_URL (GitHub Enterprise, the sandbox) or api.github.com. */
export function apiUrl(env: NodeJS.ProcessEnv): string {
  return env.GITHUB_API_URL || "https://api.github.com";
}

/** The web URL: GITHUB_SERVER_URL (GitHub Enterprise, the sandbox) or github.com. */
export function webUrl(env: NodeJS.ProcessEnv): string {
  return (env.GITHUB_SERVER_URL || "https://github.com").replace(/\/$/, "");
}

/** Pipes PRIVATE_KEY from a `.env` (as `autopilot register` writes it) into the workflows' secret. */
export function keySecretCommand(envFile = ".env"): string {
  return `node -e 'process.loadEnvFile(${JSON.stringify(envFile)}); process.stdout.write(process.env.PRIVATE_KEY)' | gh secret set AUTOPILOT_APP_PRIVATE_KEY`;
}
