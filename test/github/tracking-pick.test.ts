/** Which open issue is the tracking issue, and which of Autopilot's beside it are duplicates to close. */
import { describe, expect, it } from "vitest";
import { TRACKING_MARKER } from "../../src/core/dashboard/index.js";
import type { SnapshotResponse } from "../../src/github/snapshot/snapshot-response.js";
import { pickTracking } from "../../src/github/snapshot/tracking-pick.js";

const APP = 77;
const node = (number: number, extra: { state?: string; author?: number; marker?: boolean } = {}) => ({
  id: `I_${number}`,
  number,
  title: "Autopilot",
  body: extra.marker === false ? "no marker" : `${TRACKING_MARKER}\n…`,
  state: extra.state ?? "OPEN",
  updatedAt: "2026-11-02T09:00:00Z",
  author: { __typename: "Bot", login: "autopilot[bot]", databaseId: extra.author ?? APP },
});
const response = (nodes: ReturnType<typeof node>[]) =>
  ({ repository: { trackingByBot: { nodes } } }) as unknown as SnapshotResponse;

describe("the tracking issue picked from the query", () => {
  it("is the oldest open one of Autopilot's; the younger open ones are duplicates", () => {
    const picked = pickTracking(response([node(4), node(3), node(6, { state: "CLOSED" })]), APP);
    expect(picked.tracking?.number).toBe(3);
    expect(picked.duplicates).toEqual([4]);
  });

  it("counts no one else's issue, nor one without the marker, as a duplicate", () => {
    const picked = pickTracking(response([node(3), node(5, { author: 9 }), node(6, { marker: false })]), APP);
    expect(picked.tracking?.number).toBe(3);
    expect(picked.duplicates).toEqual([]);
  });
});
