/**
 * Reads what `autopilot doctor` judges (src/core/doctor-checks.ts): the App's installation, Actions settings,
 * the worker workflow and config on the default branch, labels, branch protection and rulesets, the checks
 * seen on the default branch, push access and the tracking issue. Reads only; an answer the token may not
 * read (403) becomes "unknown" rather than a failure, so the check says how to run it.
 */
import { createSign } from "node:crypto";
import { CONFIG_PATH, DEFAULT_CONFIG, parseConfig } from "../../core/config/index.js";
import { taskBranchName } from "../../core/contract.js";
import { TRACKING_MARKER } from "../../core/dashboard/index.js";
import type { AppRequirements, SetupFacts } from "../../core/doctor-facts.js";
import { listOpenIssues } from "./open-issues.js";
import { type AutopilotOctokit, createOctokit } from "../transport/octokit.js";

interface AppCredentials {
  appId: string;
  privateKey: string;
}

interface ReadSetupOptions {
  owner: string;
  repo: string;
  baseUrl: string;
  /** A user's token (or GITHUB_TOKEN); with App credentials an installation token is minted instead. */
  token?: string;
  app?: AppCredentials;
  required: AppRequirements;
  now: Date;
  fetch?: typeof globalThis.fetch;
  /** Told the facts read so far after each read (doctor judges a check as soon as its facts are in). */
  onProgress?: (facts: Partial<SetupFacts>) => void;
}

/** An App JWT (RS256, issued a minute back against clock drift, valid nine minutes) as GitHub documents at
 * https://docs.github.com/apps/creating-github-apps/authenticating-with-a-github-app/generating-a-json-web-token-jwt-for-a-github-app */
export function appJwt(app: AppCredentials, now: Date): string {
  const seconds = Math.floor(now.getTime() / 1000);
  const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");
  const unsigned = `${encode({ alg: "RS256", typ: "JWT" })}.${encode({ iat: seconds - 60, exp: seconds + 540, iss: app.appId })}`;
  const signature = createSign("RSA-SHA256").update(unsigned).sign(app.privateKey, "base64url");
  return `${unsigned}.${signature}`;
}

function status(error: unknown): number | null {
  const s = (error as { status?: unknown }).status;
  return typeof s === "number" ? s : null;
}

/** The call's data, or `fallback` when GitHub answers one of `statuses` (404 absent, 403 not allowed). */
async function orElse<T, F>(call: () => Promise<T>, fallback: F, statuses = [404]): Promise<T | F> {
  try {
    return await call();
  } catch (error) {
    if (statuses.includes(status(error) ?? 0)) return fallback;
    throw error;
  }
}

async function fileText(octokit: AutopilotOctokit, owner: string, repo: string, path: string, ref: string) {
  return orElse(async () => {
    const { data } = await octokit.rest.repos.getContent({ owner, repo, path, ref });
    if (Array.isArray(data) || data.type !== "file" || !("content" in data)) return null;
    return Buffer.from(data.content, "base64").toString("utf8");
  }, null);
}

/** The workflow files in `.github/workflows/` on `ref` (GitHub reads `.yml` and `.yaml` there); [] when none. */
async function workflowFiles(octokit: AutopilotOctokit, owner: string, repo: string, ref: string) {
  const listing = await orElse(
    async () => (await octokit.rest.repos.getContent({ owner, repo, path: ".github/workflows", ref })).data,
    [],
  );
  const paths = (Array.isArray(listing) ? listing : [])
    .filter((entry) => entry.type === "file" && /\.ya?ml$/.test(entry.name))
    .map((entry) => entry.path);
  const files: { path: string; text: string }[] = [];
  for (const path of paths) {
    const text = await fileText(octokit, owner, repo, path, ref);
    if (text !== null) files.push({ path, text });
  }
  return files;
}

interface Rule {
  type: string;
  parameters?: {
    required_status_checks?: { context: string }[];
    required_approving_review_count?: number;
  };
}

async function branchRules(
  octokit: AutopilotOctokit,
  owner: string,
  repo: string,
  branch: string,
): Promise<Rule[]> {
  return orElse(
    async () =>
      (await octokit.request("GET /repos/{owner}/{repo}/rules/branches/{branch}", { owner, repo, branch }))
        .data as Rule[],
    [] as Rule[],
    [403, 404],
  );
}

export async function readSetupFacts(options: ReadSetupOptions): Promise<SetupFacts> {
  const { owner, repo, baseUrl } = options;
  const client = (auth: string) =>
    createOctokit({ auth, baseUrl, retry: false, ...(options.fetch ? { fetch: options.fetch } : {}) });
  let installation: SetupFacts["installation"] = "unknown";
  let token = options.token;
  if (options.app) {
    const appClient = client(appJwt(options.app, options.now));
    const found = await orElse(
      async () => (await appClient.rest.apps.getRepoInstallation({ owner, repo })).data,
      null,
    );
    installation = found
      ? { permissions: { ...(found.permissions as Record<string, string>) }, events: [...found.events] }
      : null;
    // A user's token, when given, reads the rest (it may read admin settings an installation token cannot).
    if (found && !token) {
      const minted = await appClient.rest.apps.createInstallationAccessToken({
        installation_id: found.id,
        repositories: [repo],
      });
      token = minted.data.token;
    }
  }
  if (!token)
    throw new Error(
      installation === null
        ? `the App is not installed on ${owner}/${repo}: install it, or give a user's token (GITHUB_TOKEN) to check the rest`
        : "doctor needs a token: GITHUB_TOKEN, `gh auth login`, or the App's APP_ID and PRIVATE_KEY",
    );
  const octokit = client(token);
  const { data: repository } = await octokit.rest.repos.get({ owner, repo });
  const branch = repository.default_branch;
  const facts: Partial<SetupFacts> = {
    repo: `${owner}/${repo}`,
    defaultBranch: branch,
    installation,
    required: options.required,
  };
  const read = <K extends keyof SetupFacts>(key: K, value: SetupFacts[K]): SetupFacts[K] => {
    facts[key] = value;
    options.onProgress?.(facts);
    return value;
  };
  options.onProgress?.(facts);

  const actions = read(
    "actionsEnabled",
    await orElse(
      async () =>
        (await octokit.rest.actions.getGithubActionsPermissionsRepository({ owner, repo })).data.enabled,
      null,
      [403, 404],
    ),
  );
  const configText = await fileText(octokit, owner, repo, CONFIG_PATH, branch);
  const parsed = parseConfig(configText);
  const config = parsed.ok ? parsed.config : DEFAULT_CONFIG;
  const workflowPath = `.github/workflows/${config.workerWorkflow}`;
  facts.workerWorkflowPath = workflowPath;
  read("configText", configText);
  const workerWorkflowText = read(
    "workerWorkflowText",
    await fileText(octokit, owner, repo, workflowPath, branch),
  );
  const workflows = read("workflows", await workflowFiles(octokit, owner, repo, branch));
  const workflowState = read(
    "workerWorkflowState",
    await orElse(
      async () =>
        (await octokit.rest.actions.getWorkflow({ owner, repo, workflow_id: config.workerWorkflow })).data
          .state,
      null,
    ),
  );
  const labels = read(
    "labels",
    (await octokit.paginate(octokit.rest.issues.listLabelsForRepo, { owner, repo, per_page: 100 })).map(
      (l) => l.name,
    ),
  );

  // 404: not protected; 403: this token may not read it (an App needs `administration: read`).
  const protectionData = await orElse(
    async () => (await octokit.rest.repos.getBranchProtection({ owner, repo, branch })).data,
    null,
  ).catch((error: unknown) => {
    if (status(error) === 403) return "unknown" as const;
    throw error;
  });
  const protection: SetupFacts["protection"] =
    protectionData === "unknown"
      ? "unknown"
      : protectionData
        ? {
            requiredChecks: [
              ...new Set([
                ...(protectionData.required_status_checks?.contexts ?? []),
                ...(protectionData.required_status_checks?.checks ?? []).map((c) => c.context),
              ]),
            ],
            requiredApprovals:
              protectionData.required_pull_request_reviews?.required_approving_review_count ?? 0,
          }
        : null;
  read("protection", protection);

  const defaultRules = await branchRules(octokit, owner, repo, branch);
  const taskRules = await branchRules(octokit, owner, repo, taskBranchName(config.branchPrefix, 1));
  const rules = read("rules", {
    defaultBranch: defaultRules.map((r) => r.type),
    taskBranch: taskRules.map((r) => r.type),
    requiredChecks: defaultRules.flatMap(
      (r) => r.parameters?.required_status_checks?.map((c) => c.context) ?? [],
    ),
    requiredApprovals: Math.max(
      0,
      ...defaultRules.map((r) => r.parameters?.required_approving_review_count ?? 0),
    ),
  });

  const head = await orElse(
    async () => (await octokit.rest.repos.getBranch({ owner, repo, branch })).data.commit.sha,
    null,
  );
  const seen = new Set<string>();
  if (head) {
    const runs = await octokit.rest.checks.listForRef({ owner, repo, ref: head, per_page: 100 });
    for (const run of runs.data.check_runs) seen.add(run.name);
    const statuses = await octokit.rest.repos.getCombinedStatusForRef({
      owner,
      repo,
      ref: head,
      per_page: 100,
    });
    for (const s of statuses.data.statuses) seen.add(s.context);
  }
  const seenChecks = read("seenChecks", [...seen]);

  const canPush = read(
    "canPush",
    repository.permissions?.push ??
      (installation && installation !== "unknown" ? installation.permissions.contents === "write" : null),
  );

  const open = await listOpenIssues(octokit, owner, repo);
  const tracking = open.find((issue) => !issue.pull_request && (issue.body ?? "").includes(TRACKING_MARKER));
  let trackingIssue: SetupFacts["trackingIssue"] = null;
  if (tracking) {
    const pinned = await octokit.graphql<{
      repository: { pinnedIssues: { nodes: { issue: { number: number } }[] } };
    }>(
      "query($owner: String!, $name: String!) { repository(owner: $owner, name: $name) { pinnedIssues(first: 3) { nodes { issue { number } } } } }",
      { owner, name: repo },
    );
    trackingIssue = {
      number: tracking.number,
      pinned: pinned.repository.pinnedIssues.nodes.some((n) => n.issue.number === tracking.number),
    };
  }

  read("trackingIssue", trackingIssue);
  return {
    repo: `${owner}/${repo}`,
    defaultBranch: branch,
    installation,
    required: options.required,
    actionsEnabled: actions,
    workerWorkflowPath: workflowPath,
    workerWorkflowText,
    workerWorkflowState: workflowState,
    workflows,
    configText,
    labels,
    protection,
    rules,
    seenChecks,
    canPush,
    trackingIssue,
  };
}
