/** The controller's gateway against nock, as execute*.test.ts share it: a snapshot taken, a dashboard body, a dispatch lock. */
import nock from "nock";
import { expect } from "vitest";
import { DEFAULT_CONFIG } from "../../src/core/config/index.js";
import { parseDashboard, TRACKING_MARKER } from "../../src/core/dashboard/index.js";
import type { GatewayOptions } from "../../src/github/gateway.js";
import { snapshotSettings } from "../../src/github/snapshot/snapshot.js";
import {
  API,
  DEFAULT_HEAD,
  nockGateway,
  OWNER,
  REPO,
  replyRuns,
  replySnapshot,
  snapshotPage,
  type SnapshotSpec,
} from "./fixtures.js";

export const github = nockGateway();
export const R = `/repos/${OWNER}/${REPO}`;
const settingsFor = () => snapshotSettings(DEFAULT_CONFIG);
const revisionOf = (body: string) => parseDashboard(body).state?.revision ?? null;

export const makeGateway = (options: Partial<GatewayOptions> = {}) =>
  github.gateway({ revisionOf, ...options });

/** A gateway that has taken a snapshot of `spec` (its requests answered and checked). */
export async function withSnapshot(spec: SnapshotSpec, runs: Record<string, unknown>[] = [], options = {}) {
  const gw = makeGateway(options);
  const scope = nock(API);
  replySnapshot(scope, snapshotPage(spec));
  replyRuns(scope, runs);
  await gw.snapshot({ settingsFor, permissionsFor: () => [] });
  expect(scope.isDone()).toBe(true);
  return gw;
}

export const stateBody = (revision: number) =>
  `${TRACKING_MARKER}\n# Autopilot\n<!-- autopilot:state v1\n${JSON.stringify({
    version: 1,
    revision,
    session: {
      status: "running",
      since: "2026-11-20T09:00:00Z",
      reason: "user_start",
      actor: "maintainer",
      startedAt: null,
    },
  })}\n-->`;

/**
 * Mocks taking the dispatch lock of an attempt: creating the lock ref at the default branch's head the snapshot
 * gave (no request reads it).
 */
export function lockDispatch(
  scope: nock.Scope,
  issue: number,
  attempt: number,
  options: { taken?: boolean } = {},
) {
  const sha = DEFAULT_HEAD;
  if (options.taken) {
    // The 422 is checked by reading the ref: it exists, so another controller created it.
    scope.get(`${R}/git/ref/autopilot%2Fdispatch%2Fissue-${issue}-attempt-${attempt}`).reply(200, {
      ref: `refs/autopilot/dispatch/issue-${issue}-attempt-${attempt}`,
      node_id: "REF_2",
      url: `${API}${R}/git/refs/autopilot`,
      object: { sha, type: "commit", url: `${API}${R}/git/commits/${sha}` },
    });
  }
  return scope
    .post(`${R}/git/refs`, { ref: `refs/autopilot/dispatch/issue-${issue}-attempt-${attempt}`, sha })
    .reply(
      options.taken ? 422 : 201,
      options.taken
        ? { message: "Reference already exists" }
        : {
            ref: `refs/autopilot/dispatch/issue-${issue}-attempt-${attempt}`,
            node_id: "REF_2",
            url: `${API}${R}/git/refs/autopilot`,
            object: { sha, type: "commit", url: `${API}${R}/git/commits/${sha}` },
          },
    );
}
