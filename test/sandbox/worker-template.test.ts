import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseRunTitle } from "../../src/core/contract.js";
import { type ActionsRunner, startActions } from "../../sandbox/emulator/actions/actions.js";
import { isAutopilotActionRef } from "../../sandbox/scenario/autopilot-action.js";
import { attachGit, type SandboxGit } from "../../sandbox/emulator/git/sandbox-git.js";
import { type Sandbox, startSandbox } from "../../sandbox/emulator/index.js";
import { workerWorkflowYaml } from "../../sandbox/scenario/worker-workflow.js";

const FIXTURE = join(import.meta.dirname, "..", "fixtures", "echo-action");

let sandbox: Sandbox;
let git: SandboxGit;
let actions: ActionsRunner;

beforeAll(async () => {
  sandbox = await startSandbox();
  git = await attachGit(sandbox);
  sandbox.store.addUser("alice", { permission: "admin" });
  sandbox.store.createRepo({ owner: "demo", name: "shop" });
  await git.seedRepo("demo", "shop", {
    "README.md": "# shop\n",
    ".github/workflows/autopilot-worker.yml": workerWorkflowYaml({ jobTimeoutMinutes: 5 }),
  });
  actions = startActions({
    url: sandbox.url,
    store: sandbox.store,
    git,
    actionDir: FIXTURE,
    actionRefs: isAutopilotActionRef,
    app: { id: sandbox.app.id, privateKey: sandbox.app.privateKey },
    vars: { AUTOPILOT_APP_ID: String(sandbox.app.id) },
    secrets: { AUTOPILOT_APP_PRIVATE_KEY: sandbox.app.privateKey },
  });
  await actions.syncWorkflows("demo/shop");
});

afterAll(async () => {
  await actions?.stop();
  await git?.stop();
  await sandbox?.stop();
});

describe("the product's worker workflow template on the Actions stand-in", () => {
  it("runs as the controller dispatches it: App token, gh, checkout, the action with every input, then the reconcile of its end", async () => {
    const token = sandbox.installationToken();
    const response = await fetch(
      `${sandbox.url}/repos/demo/shop/actions/workflows/autopilot-worker.yml/dispatches`,
      {
        method: "POST",
        headers: {
          authorization: `token ${token}`,
          "content-type": "application/json",
          accept: "application/vnd.github+json",
        },
        body: JSON.stringify({
          ref: "main",
          inputs: { issue: "4", attempt: "2", "dispatch-id": "4-2-abc", "tracking-issue": "9" },
        }),
      },
    );
    expect(response.status).toBe(204);
    const [run] = sandbox.store.listWorkflowRuns("demo/shop", { workflow: "autopilot-worker.yml" });
    const record = await actions.waitForRun(run!.id);
    expect(record.log.filter((l) => l.startsWith("##[error]"))).toEqual([]);
    expect(record.conclusion).toBe("success");
    expect(parseRunTitle(sandbox.store.getWorkflowRun("demo/shop", run!.id)!.displayTitle)).toEqual({
      issue: 4,
      attempt: 2,
      dispatchId: "4-2-abc",
    });
    const inputs = JSON.parse(record.outputs["inputs-json"]!) as Record<string, string>;
    expect(inputs).toMatchObject({
      ISSUE: "4",
      ATTEMPT: "2",
      "DISPATCH-ID": "4-2-abc",
      "TRACKING-ISSUE": "9",
      "GITHUB-TOKEN": "ghs_…",
    });
    // The commit author is the token's own account, which the worker reads with the query it makes anyway: the
    // template spends no request on looking the bot user up.
    expect(inputs["GIT-USER-NAME"] ?? "").toBe("");
    expect(inputs["GIT-USER-EMAIL"] ?? "").toBe("");
    expect(sandbox.requests.records.filter((r) => r.endpoint.startsWith("GET /users/"))).toEqual([]);
    // The token the action got is an installation token (pushes with it start CI), not the run's GITHUB_TOKEN.
    expect(record.outputs.token).not.toBe(record.token);
    expect(sandbox.store.authenticate(record.outputs.token!)?.kind).toBe("installation");
    expect(record.outputs["workspace-has-readme"]).toBe("true");
    // Its last step: the controller action, told this run is the one ending, with the App token.
    expect(record.outputs["controller-ending-run"]).toBe(String(run!.id));
    expect(record.outputs["controller-run-id"]).toBe(String(run!.id));
    expect(record.outputs["controller-has-token"]).toBe("true");
    expect(sandbox.validationFailures).toEqual([]);
  });
});
