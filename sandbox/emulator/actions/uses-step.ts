/**
 * The `uses:` steps a sandbox run can take: actions/checkout (a real clone over the sandbox's git remote),
 * actions/create-github-app-token (checked against the sandbox's app), actions/upload-artifact (kept with the run),
 * no-op stand-ins for setup actions, and
 * node actions: the configured action (this repository's, by default) and local ones.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { convertActionTemplate, parseAction } from "@actions/workflow-parser/actions/index";
import { NoOperationTraceWriter } from "@actions/workflow-parser";
import type { RunHandle } from "./actions-types.js";
import { type ExprContext, tokenString } from "./expressions.js";
import type { JobHost, PostStep } from "./job-host.js";
import { run as runProcess } from "../proc.js";
import { minutes, parseKeyValueFile, truthyFlag } from "./file-commands.js";
import { evaluateToken } from "./expressions.js";
import type { WorkflowStep } from "./workflow-template.js";
import { uploadArtifact } from "./upload-artifact.js";

/** Runs a `uses:` step: checkout, the configured action, or a no-op stand-in for setup actions. */
export async function runUses(
  host: JobHost,
  handle: RunHandle,
  step: WorkflowStep,
  env: NodeJS.ProcessEnv,
  context: ExprContext,
  job: { workspace: string; token: string; posts: PostStep[]; files: { state: string } },
): Promise<number | null> {
  const uses = step.uses!.trim();
  const withValues: Record<string, string> = {};
  for (const { key, value } of step.with ?? [])
    withValues[tokenString(key, context)] = tokenString(value, context);

  if (/^actions\/checkout@/i.test(uses))
    return checkout(host, handle, withValues, env, job.workspace, job.token);
  if (/^actions\/create-github-app-token@/i.test(uses)) return createAppToken(host, handle, withValues, env);
  if (/^actions\/upload-artifact@/i.test(uses))
    return uploadArtifact(host, handle, withValues, env, job.workspace);
  if (/^actions\/(setup-node|cache|download-artifact)@/i.test(uses)) {
    host.steps.log(handle, `${uses}: not needed in the sandbox (the runner's node; no cache or download)`);
    return 0;
  }
  const underTest = host.actionDir;
  const isAction =
    underTest !== undefined && (uses === "./" || uses === "." || host.options.actionRefs?.(uses) === true);
  let actionDir: string | null = null;
  // `owner/repo/path@ref` is the action in that folder of the repository (the controller's is `controller/`).
  // https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-syntax#example-using-an-action-in-a-subdirectory
  const subPath = /^[^/@]+\/[^/@]+\/([^@]+)@/.exec(uses)?.[1];
  if (isAction) actionDir = subPath ? resolve(underTest, subPath) : underTest;
  else if (uses.startsWith("./")) actionDir = resolve(job.workspace, uses);
  if (!actionDir) {
    host.steps.log(
      handle,
      `##[error]Unable to resolve action \`${uses}\`: the sandbox runs only the configured action, checkout and local actions.`,
    );
    return 1;
  }
  const manifestPath = ["action.yml", "action.yaml"]
    .map((f) => join(actionDir!, f))
    .find((p) => existsSync(p));
  const manifest = manifestPath ? readActionManifest(manifestPath) : null;
  if (manifest && "errors" in manifest) {
    host.steps.log(handle, `##[error]Invalid action manifest ${manifestPath}: ${manifest.errors.join("; ")}`);
    return 1;
  }
  const runs = manifest?.runs;
  if (
    runs &&
    runs.using !== "node12" &&
    runs.using !== "node16" &&
    runs.using !== "node20" &&
    runs.using !== "node24"
  ) {
    host.steps.log(handle, `##[error]Unsupported action runtime '${runs.using}' (node actions only).`);
    return 1;
  }
  const main = runs?.main ?? "dist/worker/index.js";
  const mainPath = isAbsolute(main) ? main : join(actionDir, main);
  if (!existsSync(mainPath)) {
    host.steps.log(
      handle,
      `##[error]The action's entry point ${mainPath} does not exist (build it with \`npm run bundle\`).`,
    );
    return 1;
  }
  // Inputs: `with:` values, then the action's defaults (which may be expressions, e.g. ${{ github.token }}).
  const inputs: Record<string, string> = {};
  for (const input of manifest?.inputs ?? []) {
    const value = evaluateToken(input.default, context);
    if (value !== undefined && value !== null) inputs[input.id] = tokenString(input.default, context);
  }
  Object.assign(inputs, withValues);
  const actionEnv: NodeJS.ProcessEnv = {
    ...env,
    GITHUB_ACTION_PATH: actionDir,
    GITHUB_ACTION_REPOSITORY: isAction ? uses : "",
  };
  for (const [name, value] of Object.entries(inputs))
    actionEnv[`INPUT_${name.replace(/ /g, "_").toUpperCase()}`] = value;
  const code = await host.steps.exec(handle, host.options.nodePath ?? process.execPath, [mainPath], {
    cwd: job.workspace,
    env: actionEnv,
    timeoutMs: minutes(evaluateToken(step.timeoutMinutes, context)),
  });
  if (runs?.post) {
    let state: Record<string, string> = {};
    try {
      state = parseKeyValueFile(readFileSync(job.files.state, "utf8"));
    } catch {
      state = {};
    }
    job.posts.push({
      name: `Post ${tokenString(step.name, context) || uses}`,
      main: join(actionDir, runs.post),
      state,
      env: actionEnv,
      condition: runs.postIf ?? "always()",
    });
  }
  return code;
}

/**
 * An action's `action.yml`, read by GitHub's parser as the runner reads it (its inputs' defaults stay tokens,
 * evaluated per step). https://docs.github.com/en/actions/reference/workflows-and-actions/metadata-syntax
 */
function readActionManifest(path: string) {
  const parsed = parseAction(
    { name: path, content: readFileSync(path, "utf8") },
    new NoOperationTraceWriter(),
  );
  const template = parsed.value ? convertActionTemplate(parsed.context, parsed.value) : null;
  const errors = parsed.context.errors.getErrors().map((error) => error.message);
  if (errors.length > 0 || !template) return { errors: errors.length > 0 ? errors : ["not an action"] };
  return template;
}

/**
 * actions/create-github-app-token: checks the app id and private key against the sandbox's app and writes an
 * installation token to the step's outputs (`token`, `installation-id`, `app-slug`), masked in the log.
 */
function createAppToken(
  host: JobHost,
  handle: RunHandle,
  withValues: Record<string, string>,
  env: NodeJS.ProcessEnv,
): number {
  const appId = withValues["app-id"] ?? withValues.app_id ?? "";
  const key = withValues["private-key"] ?? withValues.private_key ?? "";
  const expected = host.options.app;
  if (!appId || !key) {
    host.steps.log(handle, "##[error]Input required and not supplied: app-id and private-key");
    return 1;
  }
  if (expected && (appId !== String(expected.id) || key.trim() !== expected.privateKey.trim())) {
    host.steps.log(
      handle,
      "##[error]Failed to create token for the app: the app id or private key is not the sandbox app's",
    );
    return 1;
  }
  const installationId =
    host.store.installationFor(handle.request.repo.fullName)?.id ?? host.store.installationId;
  const token = host.store.issueInstallationToken({
    installationId,
    repositories: [handle.request.repo.fullName],
  }).token;
  const output = env.GITHUB_OUTPUT;
  if (output) {
    writeFileSync(
      output,
      `token=${token}\ninstallation-id=${installationId}\napp-slug=${host.store.app.slug}\n`,
      { flag: "a" },
    );
  }
  host.steps.log(handle, `Created an installation access token for ${host.store.app.slug} (***)`);
  return 0;
}

/** actions/checkout: clones over HTTP with the token and keeps it as an extra header, as checkout does. */
async function checkout(
  host: JobHost,
  handle: RunHandle,
  withValues: Record<string, string>,
  env: NodeJS.ProcessEnv,
  workspace: string,
  defaultToken: string,
): Promise<number | null> {
  const { repo, run } = handle.request;
  const repository = withValues.repository || repo.fullName;
  const [owner = repo.owner, name = repo.name] = repository.split("/");
  const token = withValues.token || defaultToken;
  const target = withValues.path ? resolve(workspace, withValues.path) : workspace;
  const depth = withValues["fetch-depth"] ?? "1";
  const url = host.options.git.url(owner, name);
  const header = `AUTHORIZATION: basic ${Buffer.from(`x-access-token:${token}`).toString("base64")}`;
  const sameRepo = repository.toLowerCase() === repo.fullName.toLowerCase();
  const ref = withValues.ref || (sameRepo ? handle.request.ref : "");
  const branch = ref.replace(/^refs\/heads\//, "");
  const isSha = /^[0-9a-f]{40}$/i.test(ref);
  let refspec: string;
  let checkoutArgs: string[];
  if (sameRepo && !withValues.ref && !ref.startsWith("refs/tags/")) {
    // The run's own commit, on a local branch named like the ref (checkout's default).
    refspec = `+${run.headSha}:refs/remotes/origin/${branch}`;
    checkoutArgs = ["checkout", "--quiet", "--force", "-B", branch, `refs/remotes/origin/${branch}`];
  } else if (isSha) {
    refspec = ref;
    checkoutArgs = ["checkout", "--quiet", "--force", "--detach", ref];
  } else if (ref.startsWith("refs/tags/")) {
    refspec = `+${ref}:${ref}`;
    checkoutArgs = ["checkout", "--quiet", "--force", "--detach", ref];
  } else if (ref) {
    refspec = `+refs/heads/${branch}:refs/remotes/origin/${branch}`;
    checkoutArgs = ["checkout", "--quiet", "--force", "-B", branch, `refs/remotes/origin/${branch}`];
  } else {
    const record = host.store.getRepo(repository);
    const def = record?.defaultBranch ?? "main";
    refspec = `+refs/heads/${def}:refs/remotes/origin/${def}`;
    checkoutArgs = ["checkout", "--quiet", "--force", "-B", def, `refs/remotes/origin/${def}`];
  }
  const fetch = ["fetch", "--quiet", "--no-tags", "--prune", "--no-recurse-submodules"];
  if (depth !== "0") fetch.push(`--depth=${depth}`);
  fetch.push("origin", refspec);
  const persist = truthyFlag(withValues["persist-credentials"] ?? "true");
  mkdirSync(target, { recursive: true });
  const commands: string[][] = [
    ["init", "--quiet", target],
    ["-C", target, "remote", "add", "origin", url],
    ["-C", target, "config", "--local", `http.${new URL(url).origin}/.extraheader`, header],
    ["-C", target, ...fetch],
    ["-C", target, ...checkoutArgs],
    ...(persist
      ? []
      : [["-C", target, "config", "--local", "--unset-all", `http.${new URL(url).origin}/.extraheader`]]),
  ];
  for (const args of commands) {
    const result = await runProcess("git", args, { env: { ...env, GIT_TERMINAL_PROMPT: "0" } });
    if (result.code !== 0) {
      const shown = args.map((a) => (a === header ? "AUTHORIZATION: basic ***" : a)).join(" ");
      host.steps.log(handle, `##[error]git ${shown} failed: ${result.stderr.trim()}`);
      return result.code ?? 1;
    }
  }
  host.steps.log(handle, `Checked out ${repository}@${ref || "default branch"} into ${target}`);
  return 0;
}
