import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createRequire } from "node:module";
import { verify } from "@octokit/webhooks-methods";
import { Octokit } from "@octokit/rest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Sandbox, startSandbox } from "../../sandbox/emulator/index.js";

const owner = "acme";
const repo = "widgets";
const full = `${owner}/${repo}`;

interface Received {
  event: string;
  delivery: string;
  signatureOk: boolean;
  payload: Record<string, unknown>;
}

interface Example {
  name: string;
  examples: Array<Record<string, unknown>>;
}

const examples = createRequire(import.meta.url)("@octokit/webhooks-examples") as Example[];

let sandbox: Sandbox;
let receiver: Server;
let received: Received[] = [];
let respondWith = 200;

function exampleOf(event: string, action?: string): Record<string, unknown> {
  const list = examples.find((e) => e.name === event)?.examples ?? [];
  const found = list.find((e) => action === undefined || e.action === action);
  if (!found) throw new Error(`no example for ${event}.${action}`);
  return found;
}

function keysOf(value: unknown): string[] {
  return value && typeof value === "object" ? Object.keys(value).sort() : [];
}

function field(value: unknown, key: string): unknown {
  return value && typeof value === "object" ? (value as Record<string, unknown>)[key] : undefined;
}

/** Top-level keys (plus `installation`, which only some examples carry) and the nested keys of `nested`. */
function expectShapeLike(
  actual: Record<string, unknown>,
  example: Record<string, unknown>,
  nested: string[],
): void {
  const expected = new Set(keysOf(example));
  expected.add("installation");
  expected.delete("organization"); // only for organization-owned repositories
  expected.delete("enterprise");
  for (const key of expected) expect(actual, `payload key ${key}`).toHaveProperty(key);
  for (const key of nested) {
    const missing = keysOf(field(example, key)).filter((k) => !(k in (field(actual, key) as object)));
    expect(missing, `keys missing in ${key}`).toEqual([]);
  }
}

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const signature = String(req.headers["x-hub-signature-256"] ?? "");
      received.push({
        event: String(req.headers["x-github-event"]),
        delivery: String(req.headers["x-github-delivery"]),
        signatureOk: await verify(sandbox.app.webhookSecret, body, signature),
        payload: JSON.parse(body) as Record<string, unknown>,
      });
      res.writeHead(respondWith);
      res.end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  sandbox = await startSandbox({
    webhookTarget: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/api/github/webhooks`,
  });
  sandbox.store.createRepo({ owner, name: repo });
  sandbox.store.addUser("alice", { permission: "write" });
});

afterAll(async () => {
  await sandbox?.stop();
  await new Promise((resolve) => receiver?.close(resolve));
});

describe("webhook deliveries", () => {
  it("signs deliveries with the app secret and sends GitHub's headers", async () => {
    received = [];
    const octokit = new Octokit({ auth: sandbox.userToken("alice"), baseUrl: sandbox.url });
    await octokit.issues.create({ owner, repo, title: "Hello", labels: ["autopilot:ready"] });
    await sandbox.webhooks.flush();
    expect(received.map((r) => `${r.event}.${String(r.payload.action)}`)).toEqual([
      "issues.opened",
      "issues.labeled",
    ]);
    expect(received.every((r) => r.signatureOk)).toBe(true);
    expect(received[0]!.delivery).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Set(received.map((r) => r.delivery)).size).toBe(2);
    expect(received[1]!.payload).toMatchObject({
      label: { name: "autopilot:ready" },
      sender: { login: "alice" },
      installation: { id: sandbox.app.installationId },
      repository: { full_name: full },
    });
    expect(sandbox.webhooks.deliveries.map((d) => d.status)).toEqual([200, 200]);
    expect(await verify("wrong secret", JSON.stringify(received[0]!.payload), "sha256=00")).toBe(false);
  });

  it("records failing status codes", async () => {
    received = [];
    respondWith = 500;
    sandbox.store.createComment(full, 1, "hi", "alice");
    await sandbox.webhooks.flush();
    respondWith = 200;
    const last = sandbox.webhooks.deliveries[sandbox.webhooks.deliveries.length - 1]!;
    expect(last).toMatchObject({ event: "issue_comment", action: "created", status: 500, attempts: 1 });
  });

  it("emits payloads shaped like GitHub's real ones (@octokit/webhooks-examples)", async () => {
    received = [];
    const { store } = sandbox;
    const issue = store.createIssue(full, { title: "Shape", author: "alice" });
    store.addLabels(full, issue.number, ["bug"], "alice");
    store.removeLabel(full, issue.number, "bug", "alice");
    store.updateIssue(full, issue.number, { title: "Shape 2" }, "alice");
    const comment = store.createComment(full, issue.number, "c", "alice");
    store.updateComment(full, comment.id, "c2", "alice");
    store.closeIssue(full, issue.number, "alice", "completed");
    await store.createRef(full, "refs/heads/feature", "b".repeat(40), "alice");
    const pr = await store.createPull(full, { title: "PR", head: "feature", base: "main", author: "alice" });
    store.addLabels(full, pr.number, ["autopilot:review"], "alice");
    await store.recordPush({
      repo: full,
      ref: "refs/heads/feature",
      before: "b".repeat(40),
      after: "c".repeat(40),
      pusher: "alice",
    });
    store.addUser("bob", { permission: "write" });
    const remark = store.createReview(full, pr.number, {
      author: "bob",
      event: "COMMENT",
      comments: [{ path: "a.js", line: 1, body: "rename" }],
    });
    store.setReviewThreadResolved(full, remark.comments[0]!.id, "alice", true);
    store.createReview(full, pr.number, { author: "bob", event: "APPROVE" });
    const check = store.createCheckRun(full, { name: "ci", headSha: "c".repeat(40), status: "in_progress" });
    store.updateCheckRun(full, check.id, { conclusion: "success" });
    store.addWorkflow(full, { path: ".github/workflows/w.yml", name: "W" });
    const run = await store.dispatchWorkflow(full, "w.yml", {
      ref: "main",
      inputs: { issue: "1" },
      actor: "autopilot[bot]",
    });
    store.updateWorkflowRun(full, run.id, { status: "in_progress" });
    store.updateWorkflowRun(full, run.id, { conclusion: "success" });
    await store.mergePull(full, pr.number, { method: "squash" }, "autopilot[bot]");
    await sandbox.webhooks.flush();

    const byKey = new Map<string, Record<string, unknown>>();
    for (const r of received) byKey.set(`${r.event}.${String(r.payload.action ?? "")}`, r.payload);
    expect([...byKey.keys()]).toEqual(
      expect.arrayContaining([
        "issues.opened",
        "issues.labeled",
        "issues.unlabeled",
        "issues.edited",
        "issues.closed",
        "issue_comment.created",
        "issue_comment.edited",
        "pull_request.opened",
        "pull_request.labeled",
        "pull_request.synchronize",
        "pull_request.closed",
        "pull_request_review.submitted",
        "pull_request_review_thread.resolved",
        "check_run.created",
        "check_run.completed",
        "check_suite.completed",
        "workflow_dispatch.",
        "workflow_run.requested",
        "workflow_run.in_progress",
        "workflow_run.completed",
        "push.",
        "create.",
      ]),
    );
    const cases: Array<[string, string | undefined, string[]]> = [
      ["issues", "labeled", ["issue", "label", "repository", "sender"]],
      ["issues", "opened", ["issue", "repository", "sender"]],
      ["issues", "edited", ["issue"]],
      ["issue_comment", "created", ["issue", "comment"]],
      ["pull_request", "opened", ["pull_request"]],
      ["pull_request", "synchronize", ["pull_request"]],
      ["pull_request", "closed", ["pull_request"]],
      ["pull_request_review", "submitted", ["review", "pull_request"]],
      ["pull_request_review_thread", "resolved", ["thread", "pull_request"]],
      ["check_run", "completed", ["check_run"]],
      ["check_suite", "completed", ["check_suite"]],
      ["workflow_run", "completed", ["workflow_run", "workflow"]],
      ["workflow_dispatch", undefined, []],
      ["push", undefined, ["pusher"]],
    ];
    for (const [event, action, nested] of cases) {
      const actual = byKey.get(`${event}.${action ?? ""}`)!;
      expectShapeLike(actual, exampleOf(event, action), nested);
    }
    const sync = byKey.get("pull_request.synchronize")!;
    expect(sync).toMatchObject({
      before: "b".repeat(40),
      after: "c".repeat(40),
      pull_request: { head: { sha: "c".repeat(40) } },
    });
    expect(byKey.get("pull_request.closed")).toMatchObject({ pull_request: { merged: true } });
    expect(byKey.get("pull_request_review.submitted")).toMatchObject({
      review: { state: "approved", commit_id: "c".repeat(40) },
    });
    expect(byKey.get("workflow_dispatch.")).toMatchObject({
      inputs: { issue: "1" },
      ref: "refs/heads/main",
      workflow: ".github/workflows/w.yml",
    });
  });
});
