/**
 * The controller served over HTTP against the offline sandbox: real signed webhook deliveries, real REST and
 * GraphQL answers (the sandbox checks every request against GitHub's descriptions), real worker dispatches.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type ControllerServer, startControllerServer } from "../../src/app/hosted/http-server.js";
import { parseDashboard, TRACKING_MARKER } from "../../src/core/dashboard/index.js";
import { resetCircuits } from "../../src/github/transport/circuit.js";
import { resetMemories } from "../../src/github/gateway.js";
import { type Sandbox, startSandbox } from "../../sandbox/emulator/index.js";

const repo = { owner: "acme", name: "widgets" };
let sandbox: Sandbox;
let server: ControllerServer;

beforeEach(async () => {
  resetMemories();
  resetCircuits();
  sandbox = await startSandbox();
  sandbox.store.createRepo(repo);
  sandbox.store.addUser("maintainer", { permission: "write" });
  sandbox.store.addUser("visitor", { permission: "read" });
  sandbox.store.addWorkflow(repo, { path: "autopilot-worker.yml", name: "Autopilot worker" });
  server = await startControllerServer({
    appId: sandbox.app.id,
    privateKey: sandbox.app.privateKey,
    webhookSecret: sandbox.app.webhookSecret,
    baseUrl: sandbox.url,
    retry: false,
    throttle: false,
    logLevel: "fatal",
    awaitReconcile: true,
  });
  sandbox.setWebhookTarget(server.webhookUrl);
});

afterEach(async () => {
  await server.stop();
  await sandbox.stop();
});

const tracking = () => sandbox.store.listIssues(repo).find((i) => (i.body ?? "").includes(TRACKING_MARKER));

/** Lets webhook deliveries (and the reconciles they start) settle. */
async function settle() {
  for (let i = 0; i < 5; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    await server.idle();
  }
}

describe("the controller against the sandbox", () => {
  it("on its first tick: creates and pins the dashboard, moves the ready task to in-progress, dispatches a worker", async () => {
    sandbox.store.createIssue(repo, {
      title: "Add a widget",
      body: "Please.",
      labels: ["autopilot:ready"],
      author: "maintainer",
    });
    await server.tick();
    await settle();
    const dashboard = tracking();
    expect(dashboard).toBeDefined();
    expect(sandbox.store.listPinnedIssues(repo).map((i) => i.number)).toEqual([dashboard?.number]);
    expect(parseDashboard(dashboard?.body ?? "").state?.session.status).toBe("running");
    const runs = sandbox.store.listWorkflowRuns(repo);
    expect(runs).toHaveLength(1);
    expect(sandbox.store.labelsOf(repo, sandbox.store.getIssue(repo, 1)!).map((l) => l.name)).toEqual([
      "autopilot:in-progress",
    ]);
    sandbox.assertNoValidationFailures();
  });

  it("refuses a command from someone without write access, once, and changes nothing", async () => {
    sandbox.store.createIssue(repo, {
      title: "Add a widget",
      body: "Please.",
      labels: ["autopilot:ready"],
      author: "maintainer",
    });
    await server.tick();
    await settle();
    const dashboard = tracking()!;
    const before = parseDashboard(dashboard.body ?? "").state?.session.status;
    sandbox.store.createComment(repo, dashboard.number, "/autopilot stop", "visitor");
    await settle();
    sandbox.store.createComment(repo, dashboard.number, "/autopilot pause", "visitor");
    await settle();
    const replies = sandbox.store
      .listComments(repo, dashboard.number)
      .filter((c) => c.body.includes("only takes commands from people with write access"));
    expect(replies).toHaveLength(1);
    expect(parseDashboard(tracking()?.body ?? "").state?.session.status).toBe(before);
    sandbox.assertNoValidationFailures();
  });

  it("costs two requests per reconcile once nothing changes", async () => {
    sandbox.store.createIssue(repo, {
      title: "Add a widget",
      body: "Please.",
      labels: ["autopilot:ready"],
      author: "maintainer",
    });
    await server.tick();
    await settle();
    await server.tick();
    await settle();
    const before = sandbox.requests.total;
    await server.tick();
    const byInstallation = sandbox.requests.records
      .slice(before)
      .filter((r) => r.tokenKind === "installation" && r.endpoint !== "GET /installation/repositories");
    expect(byInstallation.map((r) => r.endpoint).sort()).toEqual([
      "GET /repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs",
      "POST /graphql",
    ]);
  });
});
