/**
 * Red team: an epic's ready label approves the sub-issues it holds, not whatever is linked to it afterwards.
 * Anyone with triage access can link any issue as a sub-issue
 * (https://docs.github.com/en/issues/tracking-your-work-with-issues/using-issues/adding-sub-issues). After alice
 * (write) labels the epic, tina (triage) links mallory's issue, opened a month before the label: it must not be
 * pooled or dispatched, whenever it was created. A sub-issue linked before the label, and one alice links after
 * it, are pooled. Run through the sandbox: the REST link, the parent's `SubIssueAddedEvent`s read by the
 * snapshot's GraphQL, and the whole reconcile.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reconcile } from "../../src/app/reconcile-repo.js";
import { EPIC_PROGRESS_MARKER } from "../../src/core/tasks/epics.js";
import { resetMemories } from "../../src/github/gateway.js";
import { resetCircuits } from "../../src/github/transport/circuit.js";
import { createOctokit } from "../../src/github/transport/octokit.js";
import { type Sandbox, startSandbox } from "../../sandbox/emulator/index.js";

const repo = { owner: "acme", name: "shop" };
const full = "acme/shop";
let clock = new Date();
const advance = (minutes: number) => {
  clock = new Date(clock.getTime() + minutes * 60_000);
};
let sandbox: Sandbox;

beforeAll(async () => {
  resetMemories();
  resetCircuits();
  sandbox = await startSandbox({ store: { now: () => clock } });
  sandbox.store.createRepo(repo);
  sandbox.store.addWorkflow(repo, { path: "autopilot-worker.yml", name: "Autopilot worker" });
  sandbox.store.addUser("alice", { permission: "write" });
  sandbox.store.addUser("tina", { permission: "triage" });
  sandbox.store.addUser("mallory", { permission: "read" });
});
afterAll(async () => {
  await sandbox?.stop();
});

const asUser = (login: string) =>
  createOctokit({ auth: sandbox.userToken(login), baseUrl: sandbox.url, retry: false, throttle: false });

async function link(login: string, parent: number, child: number): Promise<void> {
  const id = sandbox.store.getIssue(full, child)!.id;
  await asUser(login).request("POST /repos/{owner}/{repo}/issues/{issue_number}/sub_issues", {
    owner: repo.owner,
    repo: repo.name,
    issue_number: parent,
    sub_issue_id: id,
  });
}

const open = (title: string, author: string) =>
  sandbox.store.createIssue(repo, { title, body: `${title}.`, labels: [], author }).number;

/** The link queries the reconciles sent (src/github/snapshot/sub-issue-links.ts). */
let linkQueries = 0;
const counting: typeof fetch = (url, init) => {
  if (String(init?.body ?? "").includes("query AutopilotSubIssueLinks")) linkQueries++;
  return fetch(url, init);
};

const run = (extra: Partial<Parameters<typeof reconcile>[0]> = {}) =>
  reconcile({
    octokit: createOctokit({
      auth: sandbox.installationToken(),
      baseUrl: sandbox.url,
      retry: false,
      throttle: false,
      fetch: counting,
    }),
    repo,
    botLogin: `${sandbox.app.slug}[bot]`,
    baseUrl: sandbox.url,
    now: () => clock,
    ...extra,
  });

describe("an epic's sub-issue linked after the writer's label", () => {
  it("is pooled only when a writer linked it: an outsider's old issue a triager links is never dispatched", async () => {
    const old = open("Old request", "mallory");
    advance(30 * 24 * 60);
    const epic = open("Checkout", "alice");
    const before = open("Cart total", "alice");
    await link("alice", epic, before);
    advance(1);
    sandbox.store.addLabels(full, epic, ["autopilot:ready"], "alice");
    advance(1);
    // Before Autopilot's next reconcile: tina links mallory's month-old issue, alice links a new one of hers.
    await link("tina", epic, old);
    const byWriter = open("Receipt", "alice");
    await link("alice", epic, byWriter);
    advance(1);

    const first = await run();
    const labeled = first.decision.effects
      .filter((e) => e.type === "setStateLabel" && e.add === "autopilot:ready")
      .map((e) => (e as { issue: number }).issue);
    expect(labeled.sort((a, b) => a - b)).toEqual([before, byWriter]);
    expect(sandbox.store.getIssue(full, old)?.labels).toEqual([]);
    // The snapshot read the links (one query) and tina's permission, the only linker after the label.
    expect(first.snapshot.issues.find((i) => i.number === epic)?.subIssueLinks).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ issue: old, by: "tina" }),
        expect.objectContaining({ issue: before, by: "alice" }),
      ]),
    );
    expect(linkQueries).toBe(1);
    expect(Object.keys(first.snapshot.permissions).sort()).toEqual(["alice", "tina"]);
    const checklist = sandbox.store
      .listComments(full, epic)
      .find((c) => c.body.includes(EPIC_PROGRESS_MARKER))?.body;
    expect(checklist).toMatch(
      new RegExp(`#${old} Old request — not pooled: linked by \`@\\u200d?tina\`, who has no write access`),
    );

    // Started, the next reconcile dispatches the pooled sub-issues, never mallory's.
    advance(1);
    const second = await run({ start: { actor: "alice" }, dryRun: true });
    const dispatched = second.decision.effects
      .filter((e) => e.type === "dispatchWorker")
      .map((e) => (e as { issue: number }).issue);
    expect(dispatched.length).toBeGreaterThan(0);
    expect(dispatched).not.toContain(old);
    expect(second.decision.state.tasks[old]).toBeUndefined();
    expect(second.decision.state.epics?.[epic]?.pooled).not.toContain(old);
    // The epic was pooled for this label: its links are not read again.
    expect(linkQueries).toBe(1);
  });
});
