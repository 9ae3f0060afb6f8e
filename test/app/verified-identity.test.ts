/**
 * Autopilot's login is read from the token (GraphQL `viewer`), not taken from what the caller says it is: the
 * `bot-login` input of the Action can be wrong, and the hosted app falls back to `github-actions[bot]` when its
 * `GET /app` fails. A ready label "by Autopilot" needs no write access, so trusting the told login would let any
 * workflow running as that account (a labeler that acts on a stranger's issue text, say) start an agent.
 */
import nock from "nock";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { GITHUB_ACTIONS_BOT, reconcile } from "../../src/app/reconcile-repo.js";
import { emptyState, renderStateBlock, TRACKING_MARKER } from "../../src/core/dashboard/index.js";
import { GitHubCircuit } from "../../src/github/transport/circuit.js";
import { resetMemories } from "../../src/github/gateway.js";
import { createOctokit } from "../../src/github/transport/octokit.js";
import {
  API,
  BOT,
  gqlIssue,
  gqlTracking,
  OWNER,
  REPO,
  replyRuns,
  replySnapshot,
  restIssue,
  snapshotPage,
} from "../github/fixtures.js";

const R = `/repos/${OWNER}/${REPO}`;
const NOW = new Date("2026-11-20T10:00:00Z");

beforeEach(() => {
  nock.disableNetConnect();
  resetMemories();
});
afterEach(() => {
  nock.cleanAll();
  nock.enableNetConnect();
});

function runningBody(): string {
  const state = {
    ...emptyState(NOW),
    revision: 3,
    session: { ...emptyState(NOW).session, status: "running" as const, actor: "writer" },
  };
  return `${TRACKING_MARKER}\n## Autopilot\n${renderStateBlock(state)}\n`;
}

describe("Autopilot's login comes from the token, not from the caller", () => {
  it("does not take a ready label by github-actions as its own when told that is its login", async () => {
    const issue = gqlIssue({ number: 5 });
    // The ready label was applied by the GitHub Actions bot (a workflow's GITHUB_TOKEN), not by Autopilot.
    issue.timelineItems.nodes = [
      {
        createdAt: "2026-11-20T08:00:00Z",
        actor: { __typename: "Bot", login: "github-actions", databaseId: 41898282 },
        label: { name: "autopilot:ready" },
      } as (typeof issue.timelineItems.nodes)[number],
    ];
    const scope = nock(API);
    replySnapshot(
      scope,
      snapshotPage({ tracking: gqlTracking({ number: 1, body: runningBody() }), issues: [issue] }),
    );
    replyRuns(scope, []);
    scope.get(`${R}/collaborators/github-actions/permission`).reply(404, { message: "Not Found" });
    scope.get(`${R}/issues/1`).optionally().reply(200, restIssue(1, runningBody()));
    const writes: string[] = [];
    nock(API)
      .persist()
      .post(/\/repos\/.*/)
      .reply((path) => {
        writes.push(`POST ${path}`);
        return [201, {}];
      })
      .patch(/\/repos\/.*/)
      .reply((path) => {
        writes.push(`PATCH ${path}`);
        return [200, {}];
      });

    const result = await reconcile({
      octokit: createOctokit({ auth: "ghs_test", throttle: false, retry: false }),
      repo: { owner: OWNER, name: REPO },
      // What the hosted app passes when `GET /app` failed, and the Action's default without `bot-login`.
      botLogin: GITHUB_ACTIONS_BOT,
      circuit: new GitHubCircuit(),
      now: () => NOW,
    });

    expect(result.decision.effects.some((e) => e.type === "dispatchWorker")).toBe(false);
    expect(writes.filter((w) => w.includes("/dispatches") || w.endsWith("/git/refs"))).toEqual([]);
    // The snapshot's viewer (the token's own identity) is Autopilot.
    expect(result.snapshot.botLogin).toBe(BOT);
  });
});
