/**
 * `autopilot doctor [--repo OWNER/NAME] [--json]`: reads a repository's setup (src/github/setup/setup-facts.ts),
 * judges it (src/core/doctor-checks.ts) and prints ✓/✗ with the fix for each check as soon as the facts it
 * reads are in (src/core/doctor-report.ts). Exit 0 only when none fails. Without `--repo`, the repository the
 * current directory's `origin` remote points at.
 * With APP_ID and PRIVATE_KEY (or PRIVATE_KEY_PATH) it also checks the App's installation and reads the rest
 * with an installation token, as Autopilot itself would; otherwise with GITHUB_TOKEN or `gh auth token`.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { agentBranchSecretFindings, agentBranchSecretsCheck } from "../core/gates/agent-branch-secrets.js";
import { DEFAULT_CONFIG, parseConfig } from "../core/config/index.js";
import { doctorChecksInOrder, doctorPassed } from "../core/doctor-checks.js";
import type { AppRequirements, DoctorCheck, SetupFacts } from "../core/doctor-facts.js";
import { doctorCheckLines, doctorHeading, doctorSummary } from "../core/doctor-report.js";
import { readSetupFacts } from "../github/setup/setup-facts.js";
import { currentInvocation } from "./invocation.js";
import { PACKAGE_ROOT } from "./package-root.js";
import { readWorkflows } from "./workflow-reading.js";
import { apiUrl, currentRelease, findToken, originRepo, type SetupIo } from "./setup-context.js";

type DoctorIo = SetupIo;

/** The permissions and events app.yml asks for. */
function appRequirements(): AppRequirements {
  const manifest = parseYaml(readFileSync(join(PACKAGE_ROOT, "app.yml"), "utf8")) as {
    default_permissions?: Record<string, string>;
    default_events?: string[];
  };
  return { permissions: manifest.default_permissions ?? {}, events: manifest.default_events ?? [] };
}

function privateKey(env: NodeJS.ProcessEnv): string | null {
  if (env.PRIVATE_KEY) {
    const value = env.PRIVATE_KEY;
    return value.includes("-----BEGIN")
      ? value.replace(/\\n/g, "\n")
      : Buffer.from(value, "base64").toString("utf8");
  }
  if (env.PRIVATE_KEY_PATH) return readFileSync(env.PRIVATE_KEY_PATH, "utf8");
  return null;
}

/** Which workflow jobs hand a secret to the agent's code (src/core/gates/agent-branch-secrets.ts). */
async function agentBranchCheck(facts: SetupFacts) {
  const parsed = parseConfig(facts.configText);
  const prefix = (parsed.ok ? parsed.config : DEFAULT_CONFIG).branchPrefix;
  const readings = await readWorkflows(facts.workflows, prefix, facts.defaultBranch);
  return agentBranchSecretsCheck(agentBranchSecretFindings(readings, prefix, facts.defaultBranch), prefix);
}

interface DoctorOptions {
  repo?: string;
  json?: boolean;
  /** Where `origin` is read when `repo` is not given (default: the current directory). */
  dir?: string;
}

export async function runDoctor(io: DoctorIo, options: DoctorOptions): Promise<number> {
  const cli = currentInvocation(io.env, currentRelease(io.env).source);
  const repo = options.repo ?? originRepo(options.dir ?? process.cwd());
  if (!repo) {
    io.err(
      `autopilot doctor checks the repository the current directory's \`origin\` remote points at, and there is none on GitHub here: run it in your repository's checkout, or name it (\`${cli} doctor --repo OWNER/NAME\`).`,
    );
    return 2;
  }
  const [owner, name, extra] = repo.split("/");
  if (!owner || !name || extra !== undefined) {
    io.err(`--repo expects OWNER/NAME, got "${repo}".`);
    return 2;
  }
  const key = io.env.APP_ID ? privateKey(io.env) : null;
  // With the App's key, an installation token reads the rest; a user's token is the fallback when the App
  // is not installed.
  const token = findToken(io.env) ?? undefined;
  if (!key && !token) {
    io.err(
      "autopilot doctor needs a token: GITHUB_TOKEN, `gh auth login`, or the App's APP_ID and PRIVATE_KEY.",
    );
    return 2;
  }
  const judge = doctorChecksInOrder(cli);
  const checks: DoctorCheck[] = [];
  // Each line as soon as its check is judged; with --json, one document at the end.
  const judged = (found: DoctorCheck[]) => {
    for (const check of found) {
      checks.push(check);
      if (!options.json) for (const line of doctorCheckLines(check)) io.out(line);
    }
  };
  if (!options.json) for (const line of doctorHeading(`${owner}/${name}`)) io.out(line);
  let facts: SetupFacts;
  try {
    facts = await readSetupFacts({
      owner,
      repo: name,
      baseUrl: apiUrl(io.env),
      ...(token ? { token } : {}),
      ...(key ? { app: { appId: io.env.APP_ID!, privateKey: key } } : {}),
      required: appRequirements(),
      now: new Date(),
      onProgress: (partial) => judged(judge(partial)),
    });
  } catch (error) {
    const status = (error as { status?: number }).status;
    io.err(
      status === 404
        ? `${owner}/${name} was not found, or the token cannot see it.`
        : `Could not read ${owner}/${name}: ${(error as Error).message}`,
    );
    return 1;
  }
  judged(judge(facts));
  judged([await agentBranchCheck(facts)]);
  if (options.json)
    io.out(JSON.stringify({ repo: facts.repo, passed: doctorPassed(checks), checks }, null, 2));
  else for (const line of doctorSummary(checks)) io.out(line);
  return doctorPassed(checks) ? 0 : 1;
}
