/** What a run's steps see of it: the expression contexts, the server URL and the event payload file. */
import type { ActionsOptions, RunHandle } from "./actions-types.js";
import type { ExprContext, ExprValue } from "./expressions.js";
import { fullRef } from "../git/git-ref-names.js";
import { Shapes } from "../shapes.js";
import type { SandboxStore } from "../store.js";
import type { WorkflowDefinition } from "./workflow-template.js";

/**
 * The expression contexts (`github`, `inputs`, `secrets`, `vars`, …) of a run, before any job starts. `vars`
 * is the options' variables under the repository's own, which the REST API sets (store/with-variables.ts),
 * read when the run is prepared and again when each job starts, as a job's `if:` sees the value of that moment.
 */
export function runContext(
  handle: RunHandle,
  workflow: WorkflowDefinition,
  token: string | null,
  options: Pick<ActionsOptions, "url" | "secrets" | "vars">,
  repoVars: Record<string, string> = {},
): ExprContext {
  const { repo, run, ref, inputs } = handle.request;
  const declared = workflow.events.workflow_dispatch?.inputs ?? {};
  const typedInputs: Record<string, ExprValue> = {};
  const stringInputs: Record<string, string> = {};
  for (const [name, spec] of Object.entries(declared)) {
    const raw = inputs[name] ?? (spec?.default !== undefined ? String(spec.default) : undefined);
    if (raw === undefined) continue;
    stringInputs[name] = raw;
    typedInputs[name] =
      spec?.type === "boolean" ? raw === "true" : String(spec?.type) === "number" ? Number(raw) : raw;
  }
  for (const [name, value] of Object.entries(inputs)) {
    if (!(name in stringInputs)) {
      stringInputs[name] = value;
      typedInputs[name] = value;
    }
  }
  const refName = ref.replace(/^refs\/(heads|tags)\//, "");
  const payload = handle.request.payload;
  const github: Record<string, ExprValue> = {
    token: token ?? "",
    event_name: run.event,
    event: (payload as Record<string, ExprValue> | undefined) ?? { inputs: stringInputs, ref: fullRef(ref) },
    repository: repo.fullName,
    repository_owner: repo.owner,
    repository_id: String(repo.id),
    ref: fullRef(ref),
    ref_name: refName,
    ref_type: ref.startsWith("refs/tags/") ? "tag" : "branch",
    sha: run.headSha,
    run_id: String(run.id),
    run_number: String(run.runNumber),
    run_attempt: String(run.runAttempt),
    actor: run.actor,
    triggering_actor: run.triggeringActor,
    workflow: run.name,
    workflow_ref: `${repo.fullName}/${handle.request.workflow.path}@${fullRef(ref)}`,
    server_url: runnerServerUrl(options.url),
    api_url: options.url,
    graphql_url: `${options.url}/graphql`,
  };
  return {
    contexts: {
      github,
      inputs: typedInputs,
      secrets: { GITHUB_TOKEN: token ?? "", ...(fromFork(handle) ? {} : (options.secrets ?? {})) },
      vars: { ...(options.vars ?? {}), ...repoVars },
      env: {},
      steps: {},
      job: {},
      runner: { os: "Linux", arch: "X64", name: "sandbox-runner", temp: "", environment: "github-hosted" },
      matrix: {},
      needs: {},
    },
    status: "success",
  };
}

/**
 * A run of a `pull_request` (or review) event whose head lives in a fork: "With the exception of
 * GITHUB_TOKEN, secrets are not passed to the runner when a workflow is triggered from a forked repository."
 * https://docs.github.com/en/actions/reference/security/secrets#using-secrets-in-a-workflow
 */
function fromFork(handle: RunHandle): boolean {
  const pull = handle.request.payload?.pull_request as
    | { head?: { repo?: { full_name?: string } | null } }
    | undefined;
  const headRepo = pull?.head?.repo?.full_name;
  return headRepo !== undefined && headRepo.toLowerCase() !== handle.request.repo.fullName.toLowerCase();
}

/** `GITHUB_SERVER_URL`: where `<server>/<owner>/<repo>.git` is a working clone URL (the git remote). */
export function runnerServerUrl(apiUrl: string): string {
  return `${apiUrl.replace(/\/+$/, "")}/git`;
}

/** The workflow_dispatch event payload (GITHUB_EVENT_PATH), in the shapes the webhooks use. */
export function dispatchEventPayload(
  handle: RunHandle,
  store: SandboxStore,
  apiUrl: string,
): Record<string, unknown> {
  const { repo, run, ref, workflow } = handle.request;
  const shapes = new Shapes(store, apiUrl);
  return {
    inputs: handle.record.inputs,
    ref: fullRef(ref),
    workflow: workflow.path,
    repository: shapes.repository(repo),
    sender: shapes.user(run.actor),
    installation: { id: store.installationFor(repo.fullName)?.id ?? store.installationId },
  };
}
