/**
 * Who linked an epic's sub-issues, and when (src/github/snapshot/sub-issue-links.ts): read from the parent's
 * `SubIssueAddedEvent`s in one query while its ready label is new, with a permission lookup only for a linker
 * whose link does not come before the label.
 */
import nock from "nock";
import { describe, expect, it } from "vitest";
import { newRepoMemory } from "../../src/github/snapshot/snapshot.js";
import { totalOf } from "../../src/github/transport/counter.js";
import {
  API,
  gqlIssue,
  nockGateway,
  OWNER,
  REPO,
  replyRuns,
  replySnapshot,
  replySubIssueLinks,
  settingsFor,
  snapshotPage,
} from "./fixtures.js";

const github = nockGateway();
const R = `/repos/${OWNER}/${REPO}`;
// gqlIssue's ready label is the maintainer's, at 2026-11-20T08:00:00Z.
const epic = () =>
  gqlIssue({
    number: 5,
    subIssues: [7, 8, 9].map((number) => ({ number, state: "OPEN" })),
  });

describe("an epic's sub-issue links, as the snapshot reads them", () => {
  it("are the newest link of each sub-issue of this repository, and only a later linker's permission is asked", async () => {
    const scope = nock(API);
    replySnapshot(scope, snapshotPage({ issues: [epic()] }));
    replyRuns(scope, []);
    replySubIssueLinks(scope, {
      5: [
        { number: 7, at: "2026-11-20T07:00:00Z", by: "reader" },
        { number: 8, at: "2026-11-20T07:30:00Z", by: "maintainer" },
        // Unlinked and linked again after the label, by a triager.
        { number: 8, at: "2026-11-20T09:00:00Z", by: "tina" },
        // Another repository's issue #9 (this repository's #9 has no link read: unknown).
        { number: 9, at: "2026-11-20T07:00:00Z", by: "maintainer", repo: "other/repo" },
      ],
    });
    scope
      .get(`${R}/collaborators/maintainer/permission`)
      .reply(200, { permission: "admin", role_name: "admin" })
      .get(`${R}/collaborators/tina/permission`)
      .reply(200, { permission: "read", role_name: "triage" });
    const gw = github.gateway({ memory: newRepoMemory() });
    const { world } = await gw.snapshot({ settingsFor });
    expect(scope.isDone()).toBe(true);
    expect(world.issues.find((i) => i.number === 5)?.subIssueLinks).toEqual([
      { issue: 7, at: "2026-11-20T07:00:00Z", by: "reader" },
      { issue: 8, at: "2026-11-20T09:00:00Z", by: "tina" },
    ]);
    // reader linked before the label: no lookup.
    expect(world.permissions).toEqual({ maintainer: "admin", tina: "triage" });
    // The query, the runs, the links, two permissions.
    expect(totalOf(gw.requests())).toBe(5);
  });

  it("stay unknown when the server answers the links query with errors, and the snapshot stands", async () => {
    const scope = nock(API);
    replySnapshot(scope, snapshotPage({ issues: [epic()] }));
    replyRuns(scope, []);
    scope
      .post("/graphql", (body: { query: string }) => body.query.includes("query AutopilotSubIssueLinks"))
      .reply(200, { data: null, errors: [{ message: "Field 'SUB_ISSUE_ADDED_EVENT' doesn't exist" }] });
    scope.get(`${R}/collaborators/maintainer/permission`).reply(200, { permission: "admin" });
    const { world } = await github.gateway({ memory: newRepoMemory() }).snapshot({ settingsFor });
    expect(scope.isDone()).toBe(true);
    expect(world.issues.find((i) => i.number === 5)?.subIssueLinks).toBeUndefined();
  });
});
