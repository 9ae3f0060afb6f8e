import { describe, expect, it } from "vitest";
import {
  type GitBackend,
  SandboxStore,
  type StoreEvent,
  StoreError,
  type WorkflowRunRequest,
  decodeNodeId,
} from "../../sandbox/emulator/store.js";

const full = "acme/widgets";

function fresh(): { store: SandboxStore; events: StoreEvent[] } {
  const store = new SandboxStore();
  store.createRepo({ owner: "acme", name: "widgets" });
  store.addUser("alice", { permission: "write" });
  const events: StoreEvent[] = [];
  store.onEvent((e) => events.push(e));
  return { store, events };
}

function names(events: StoreEvent[]): string[] {
  return events.map((e) => ("action" in e ? `${e.name}.${e.action}` : e.name));
}

describe("SandboxStore", () => {
  it("numbers issues and PRs together and records label events with their actor", async () => {
    const { store, events } = fresh();
    const issue = store.createIssue(full, { title: "A", author: "alice", labels: ["autopilot:ready"] });
    store.addLabels(full, issue.number, ["autopilot:in-progress"], "autopilot[bot]");
    store.removeLabel(full, issue.number, "autopilot:ready", "autopilot[bot]");
    expect(names(events)).toEqual(["issues.opened", "issues.labeled", "issues.labeled", "issues.unlabeled"]);
    expect(issue.events.map((e) => [e.event, e.label?.name, e.actor])).toEqual([
      ["labeled", "autopilot:ready", "alice"],
      ["labeled", "autopilot:in-progress", "autopilot[bot]"],
      ["unlabeled", "autopilot:ready", "autopilot[bot]"],
    ]);
    expect(store.whoLabeled(full, issue.number, "autopilot:ready")).toBe("alice");
    await store.createRef(full, "refs/heads/x", "1".repeat(40), "alice");
    const pr = await store.createPull(full, { title: "P", head: "x", base: "main", author: "alice" });
    expect(pr.number).toBe(2);
    expect(store.listIssues(full).map((i) => [i.number, !!i.pull])).toEqual([
      [1, false],
      [2, true],
    ]);
    expect(decodeNodeId(issue.nodeId)).toEqual({ kind: "Issue", id: String(issue.id) });
    expect(() => store.removeLabel(full, issue.number, "nope", "alice")).toThrow(StoreError);
  });

  it("keeps sub-issues single-parented and acyclic, and tracks blocked-by", () => {
    const { store } = fresh();
    const [a, b, c] = ["a", "b", "c"].map((title) => store.createIssue(full, { title, author: "alice" }));
    store.addSubIssue(full, a!.number, b!.number, "alice");
    expect(() => store.addSubIssue(full, c!.number, b!.number, "alice")).toThrow(/parent/);
    expect(() => store.addSubIssue(full, b!.number, a!.number, "alice")).toThrow(/cycle/);
    store.addSubIssue(full, c!.number, b!.number, "alice", true);
    expect(store.getIssue(full, b!.number)?.parent).toBe(c!.number);
    expect(store.getIssue(full, a!.number)?.subIssues).toEqual([]);
    store.addBlockedBy(full, b!.number, a!.number, "alice");
    expect(store.listBlocking(full, a!.number).map((i) => i.number)).toEqual([b!.number]);
  });

  it("pins at most three issues", () => {
    const { store } = fresh();
    for (let i = 0; i < 4; i++) store.createIssue(full, { title: `t${i}`, author: "alice" });
    for (const n of [1, 2, 3]) store.pinIssue(full, n, "alice");
    expect(() => store.pinIssue(full, 4, "alice")).toThrow(/more than 3/);
    store.unpinIssue(full, 1, "alice");
    store.pinIssue(full, 4, "alice");
    expect(store.listPinnedIssues(full).map((i) => i.number)).toEqual([2, 3, 4]);
  });

  it("recordPush moves the ref, updates PR heads and emits push + synchronize", async () => {
    const { store, events } = fresh();
    await store.createRef(full, "refs/heads/autopilot/issue-1", "1".repeat(40), "alice");
    const pr = await store.createPull(full, {
      title: "P",
      head: "autopilot/issue-1",
      base: "main",
      author: "autopilot[bot]",
    });
    events.length = 0;
    await store.recordPush({
      repo: full,
      ref: "refs/heads/autopilot/issue-1",
      before: "1".repeat(40),
      after: "2".repeat(40),
      pusher: "github-actions[bot]",
    });
    expect(await store.resolveRef(full, "autopilot/issue-1")).toBe("2".repeat(40));
    expect(pr.pull?.head.sha).toBe("2".repeat(40));
    expect(names(events)).toEqual(["push", "pull_request.synchronize"]);
    const sync = events[1] as Extract<StoreEvent, { name: "pull_request" }>;
    expect([sync.before, sync.after, sync.sender]).toEqual([
      "1".repeat(40),
      "2".repeat(40),
      "github-actions[bot]",
    ]);
    expect(store.listPushes(full).at(-1)).toMatchObject({
      ref: "refs/heads/autopilot/issue-1",
      created: false,
    });
  });

  it("merges through a registered git backend and reports conflicts as 405", async () => {
    const { store } = fresh();
    const refs = new Map([
      ["refs/heads/main", "a".repeat(40)],
      ["refs/heads/feature", "b".repeat(40)],
    ]);
    let conflict = false;
    const backend: GitBackend = {
      listRefs: async () => [...refs].map(([ref, sha]) => ({ ref, sha })),
      resolveRef: async (_repo, ref) =>
        refs.get(ref) ?? refs.get(`refs/heads/${ref}`) ?? (/^[0-9a-f]{40}$/.test(ref) ? ref : null),
      compare: async () => ({
        files: [{ filename: "a.txt", status: "modified", additions: 1, deletions: 0, changes: 1 }],
        ahead_by: 1,
      }),
      createRef: async (_repo, ref, sha) => void refs.set(ref, sha),
      deleteRef: async (_repo, ref) => void refs.delete(ref),
      canMerge: async () => !conflict,
      mergeBranches: async (_repo, base, _head, method, message) => {
        if (conflict) return { conflict: true };
        const sha = method === "squash" && message.includes("#") ? "c".repeat(40) : "d".repeat(40);
        refs.set(`refs/heads/${base}`, sha);
        return { sha };
      },
    };
    store.setGitBackend(backend);
    const pr = await store.createPull(full, {
      title: "Feature",
      head: "feature",
      base: "main",
      author: "alice",
    });
    expect(pr.pull).toMatchObject({ mergeable: true, changedFiles: 1, additions: 1, commits: 1 });
    conflict = true;
    await expect(
      store.mergePull(full, pr.number, { method: "squash" }, "autopilot[bot]"),
    ).rejects.toMatchObject({ status: 405 });
    expect(pr.pull?.mergeableState).toBe("dirty");
    conflict = false;
    const merged = await store.mergePull(full, pr.number, { method: "squash" }, "autopilot[bot]");
    expect(merged.sha).toBe("c".repeat(40));
    expect(refs.get("refs/heads/main")).toBe("c".repeat(40));
    expect(pr).toMatchObject({ state: "closed", pull: { merged: true, mergeCommitSha: "c".repeat(40) } });
  });

  it("rolls check runs up into their suite and mergeable state", async () => {
    const { store, events } = fresh();
    await store.createRef(full, "refs/heads/f", "f".repeat(40), "alice");
    const pr = await store.createPull(full, { title: "P", head: "f", base: "main", author: "alice" });
    const lint = store.createCheckRun(full, { name: "lint", headSha: "f".repeat(40), status: "in_progress" });
    const test = store.createCheckRun(full, { name: "test", headSha: "f".repeat(40) });
    await store.refreshPull(full, pr.number);
    expect(pr.pull?.mergeableState).toBe("unstable");
    store.updateCheckRun(full, lint.id, { conclusion: "success" });
    expect(store.getCheckSuite(full, lint.checkSuiteId)?.status).not.toBe("completed");
    store.updateCheckRun(full, test.id, { conclusion: "failure" });
    expect(store.getCheckSuite(full, lint.checkSuiteId)).toMatchObject({
      status: "completed",
      conclusion: "failure",
    });
    expect(names(events).filter((n) => n.startsWith("check_"))).toEqual([
      "check_run.created",
      "check_run.created",
      "check_run.completed",
      "check_run.completed",
      "check_suite.completed",
    ]);
    expect(store.listCheckRuns(full, "f".repeat(40)).map((r) => r.name)).toEqual(["test", "lint"]);
  });

  it("hands dispatched runs to the Actions stand-in and lets it own cancellation", async () => {
    const { store, events } = fresh();
    store.addWorkflow(full, { path: "autopilot-worker.yml", name: "Worker" });
    const requests: WorkflowRunRequest[] = [];
    store.onWorkflowDispatch((r) => requests.push(r));
    const run = await store.dispatchWorkflow(full, "autopilot-worker.yml", {
      ref: "main",
      inputs: { issue: "3" },
      actor: "autopilot[bot]",
    });
    expect(requests.map((r) => [r.reason, r.run.id, r.inputs.issue, r.workflow.path])).toEqual([
      ["dispatch", run.id, "3", ".github/workflows/autopilot-worker.yml"],
    ]);
    const token = store.mintWorkerToken(run.id);
    expect(store.authenticate(token)).toMatchObject({
      kind: "worker",
      runId: run.id,
      login: "github-actions[bot]",
      repositories: [full],
    });
    store.updateWorkflowRun(full, run.id, { status: "in_progress" });
    const cancels: number[] = [];
    store.onWorkflowRunCancel(({ run: r }) => cancels.push(r.id));
    store.cancelWorkflowRun(full, run.id, "alice");
    expect(cancels).toEqual([run.id]);
    expect(store.getWorkflowRun(full, run.id)).toMatchObject({
      status: "in_progress",
      cancelRequested: true,
    });
    store.updateWorkflowRun(full, run.id, { conclusion: "cancelled" });
    expect(names(events).filter((n) => n.startsWith("workflow"))).toEqual([
      "workflow_dispatch",
      "workflow_run.requested",
      "workflow_run.in_progress",
      "workflow_run.completed",
    ]);
    await expect(
      store.dispatchWorkflow(full, "autopilot-worker.yml", { ref: "nope", actor: "alice" }),
    ).rejects.toMatchObject({ status: 422 });
  });

  it("resolves tokens: installation, worker, user; unknown users and expired tokens are rejected", () => {
    let now = new Date("2026-01-01T00:00:00Z");
    const store = new SandboxStore({ now: () => now });
    store.addUser("alice");
    const installation = store.issueInstallationToken();
    expect(store.authenticate(installation.token)?.kind).toBe("installation");
    expect(store.authenticate(store.userToken("alice"))).toMatchObject({ kind: "user", login: "alice" });
    expect(store.authenticate("ghp_ghost")).toBeNull();
    expect(() => store.userToken("ghost")).toThrow();
    now = new Date("2026-01-01T01:00:01Z");
    expect(store.authenticate(installation.token)).toBeNull();
  });

  it("reports effective permissions", () => {
    const { store } = fresh();
    store.addUser("reader");
    store.setPermission(full, "reader", "triage");
    expect(store.getPermission(full, "acme")).toBe("admin");
    expect(store.getPermission(full, "alice")).toBe("write");
    expect(store.getPermission(full, "reader")).toBe("triage");
    expect(store.getPermission(full, "ghost")).toBe("none");
  });
});
