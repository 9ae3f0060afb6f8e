/**
 * Attack: an issue body that names thousands of issues ("Depends on #10, #11, … #4009"). Every reference
 * the snapshot does not know costs a lookup (aliased GraphQL queries of 50), on every reconcile: before
 * the bound, this one body cost 1 + 4,000 / 50 = 81 GraphQL calls per reconcile. The work must be bounded
 * per issue and per reconcile, and the cut reported on the dashboard.
 */
import nock from "nock";
import { describe, expect, it } from "vitest";
import {
  MAX_REFERENCE_LOOKUPS,
  MAX_REFERENCES_PER_ISSUE,
  parseDependencies,
  referencesToLookUp,
} from "../../src/core/tasks/dependency-references.js";
import { decide } from "../../src/core/reconcile/decide.js";
import { input, issue, only, world } from "../core/world.js";
import {
  API,
  gqlIssue,
  nockGateway,
  OWNER,
  REPO,
  replyRuns,
  replySnapshot,
  settingsFor,
  snapshotPage,
} from "../github/fixtures.js";

const REFS = 4_000;
const bomb = (from: number) =>
  `Depends on ${Array.from({ length: REFS }, (_, i) => `#${from + i}`).join(", ")}`;

const { gateway } = nockGateway();

/** Answers every lookup of referenced issues with "not found" (they do not exist), recording the aliases. */
function replyLookups(scope: nock.Scope, asked: number[]) {
  scope
    .post("/graphql", (b: { query: string }) => b.query.includes("AutopilotIssueStates"))
    .times(1_000)
    .reply(200, (_uri, body) => {
      const query = (body as { query: string }).query;
      const numbers = Array.from(query.matchAll(/\bi(\d+): issueOrPullRequest/g), (m) => Number(m[1]));
      asked.push(...numbers);
      return { data: { repository: Object.fromEntries(numbers.map((n) => [`i${n}`, null])) } };
    });
}

describe("a dependency bomb", () => {
  // Without the bound: the snapshot query plus one lookup per 50 unknown references, 81 calls.
  it("one body naming 4,000 issues costs 2 GraphQL calls per reconcile, not 81", async () => {
    const scope = nock(API);
    replySnapshot(scope, snapshotPage({ issues: [gqlIssue({ number: 5, body: bomb(10), readyBy: null })] }));
    replyRuns(scope, []);
    const asked: number[] = [];
    replyLookups(scope, asked);
    const gw = gateway();
    await gw.snapshot({ settingsFor });
    const calls = gw.requests()["POST /graphql"];
    expect(calls).toBe(2);
    // The first 50 references, in the order written, are the ones looked up.
    expect(asked).toEqual(Array.from({ length: MAX_REFERENCES_PER_ISSUE }, (_, i) => 10 + i));
  });

  it("many bombed issues share one bound per reconcile, and a modest issue's reference is still looked up", async () => {
    const scope = nock(API);
    const bombs = Array.from({ length: 20 }, (_, k) =>
      gqlIssue({ number: 100 + k, body: bomb(10_000 + k * REFS), readyBy: null }),
    );
    const modest = gqlIssue({ number: 200, body: "Depends on #99999", readyBy: null });
    replySnapshot(scope, snapshotPage({ issues: [...bombs, modest] }));
    replyRuns(scope, []);
    const asked: number[] = [];
    replyLookups(scope, asked);
    const gw = gateway();
    await gw.snapshot({ settingsFor });
    expect(gw.requests()["POST /graphql"]).toBe(1 + MAX_REFERENCE_LOOKUPS / 50);
    expect(asked).toHaveLength(MAX_REFERENCE_LOOKUPS);
    expect(asked).toContain(99999);
  });

  it("the dashboard says the issue names 4,000 issues and that the first 50 are used", () => {
    const w = world({ issues: [issue(5, { body: bomb(10) }), issue(6)] });
    const d = decide(input(w));
    const body = only(d.effects, "writeTrackingIssue")[0]!.body;
    expect(body).toContain("#5 references 4,000 issues; the first 50 are used");
    // The line stays short: it names a few of the 50 it waits on, not all 4,000.
    const line = body.split("\n").find((l) => l.includes("references 4,000 issues"))!;
    expect(line).toContain("and 41 more");
    expect(line.length).toBeLessThan(400);
    // The rest of the pool goes on.
    expect(only(d.effects, "dispatchWorker").map((e) => e.issue)).toEqual([6]);
  });

  it("parsing counts what it leaves out, and lookups are taken in turns", () => {
    const parsed = parseDependencies(bomb(10), { owner: OWNER, name: REPO });
    expect(parsed.numbers).toHaveLength(MAX_REFERENCES_PER_ISSUE);
    expect(parsed.omitted).toBe(REFS - MAX_REFERENCES_PER_ISSUE);
    const { lookUp, left } = referencesToLookUp([[1, 2, 3, 4], [10], [20, 21]], (n) => n === 2, 4);
    expect(lookUp).toEqual([1, 3, 10, 20]);
    expect(left).toBe(2);
  });
});
