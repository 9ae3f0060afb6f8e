import { describe, expect, it } from "vitest";
import { InvariantRecorder } from "../../sandbox/scenario/checks/invariant-recorder.js";
import { SandboxStore, type StoreEvent, StoreError } from "../../sandbox/emulator/store.js";

const full = "acme/widgets";

function fresh(): { store: SandboxStore; events: StoreEvent[] } {
  const store = new SandboxStore();
  store.createRepo({ owner: "acme", name: "widgets" });
  store.addUser("alice", { permission: "admin" });
  store.addUser("mallory", { permission: "triage" });
  store.setPermission(full, "alice", "admin");
  store.setPermission(full, "mallory", "triage");
  const events: StoreEvent[] = [];
  store.onEvent((e) => events.push(e));
  return { store, events };
}

describe("fault helpers", () => {
  it("deletes an issue for good: issues.deleted, then 404, comments gone", () => {
    const { store, events } = fresh();
    const issue = store.createIssue(full, { title: "Dashboard", author: "alice" });
    store.createComment(full, issue.number, "hello", "alice");
    store.deleteIssue(full, issue.number, "alice");
    expect(events.at(-1)).toMatchObject({ name: "issues", action: "deleted", sender: "alice" });
    expect(store.getIssue(full, issue.number)).toBeUndefined();
    expect(() => store.requireIssue(full, issue.number)).toThrow(StoreError);
    expect(store.listComments(full, issue.number)).toEqual([]);
  });

  it("tells a ready label from someone with write access from one without", () => {
    const { store } = fresh();
    const recorder = new InvariantRecorder(store, full, "autopilot:ready");
    store.onEvent((e) => recorder.onEvent(e));
    const byAuthor = store.createIssue(full, { title: "A", author: "alice", labels: ["autopilot:ready"] });
    const byMallory = store.createIssue(full, { title: "B", author: "alice", labels: [] });
    store.addLabels(full, byMallory.number, ["autopilot:ready"], "mallory");
    const unlabeled = store.createIssue(full, { title: "C", author: "alice", labels: [] });
    expect(recorder.readyByWriter(store.getIssue(full, byAuthor.number))).toBe(true);
    expect(recorder.readyByWriter(store.getIssue(full, byMallory.number))).toBe(false);
    expect(recorder.readyByWriter(store.getIssue(full, unlabeled.number))).toBe(false);
  });
});
