/**
 * The worker never runs under a configuration looser than the controller's: it takes the checkout's file or
 * the tracking issue's last good configuration only when its digest is the one the controller decided with.
 */
import { describe, expect, it } from "vitest";
import { configDigest, type LastGoodConfig } from "../../src/core/config/index.js";
import { emptyState, renderStateBlock, TRACKING_MARKER } from "../../src/core/dashboard/index.js";
import { chooseWorkerConfig, type WorkerConfigSources } from "../../src/worker/settings/worker-config.js";

const GOOD = "maxParallel: 1\nmerge:\n  auto: false\nhumanGate:\n  paths: ['infra/**']\n";
const NEWER = "maxParallel: 1\nmerge:\n  auto: false\n";
const TYPO = "maxParalel: 1\nmerge:\n  auto: false\n";
const COMMIT = "b".repeat(40);

function tracking(lastGoodConfig: LastGoodConfig | null): string {
  const state = { ...emptyState(new Date("2026-11-20T10:00:00Z")), lastGoodConfig };
  return `${TRACKING_MARKER}\n${renderStateBlock(state)}\n`;
}

function sources(
  fileText: string | null,
  expectedDigest: string | null,
  state: LastGoodConfig | null | "no tracking issue",
  atCommit: Record<string, string | null> = {},
): WorkerConfigSources & { commitsRead: string[] } {
  const commitsRead: string[] = [];
  return {
    fileText,
    expectedDigest,
    commitsRead,
    readTrackingBody: async () => (state === "no tracking issue" ? null : tracking(state)),
    readConfigAt: async (commit) => {
      commitsRead.push(commit);
      return atCommit[commit] ?? null;
    },
  };
}

const kept = (text: string, withText = true): LastGoodConfig => ({
  digest: configDigest(text),
  commit: COMMIT,
  ...(withText ? { text } : {}),
});

describe("the worker's configuration, with the controller's digest", () => {
  it("takes the checkout's file when its digest is the controller's", async () => {
    const chosen = await chooseWorkerConfig(sources(GOOD, configDigest(GOOD), null));
    expect(chosen).toMatchObject({ ok: true, source: "file" });
    if (chosen.ok) expect(chosen.config.humanGate.paths).toEqual(["infra/**"]);
  });

  it("takes the state's last good configuration when the file turned bad after the controller decided", async () => {
    const chosen = await chooseWorkerConfig(sources(TYPO, configDigest(GOOD), kept(GOOD)));
    expect(chosen).toMatchObject({ ok: true, source: "last-good", digest: configDigest(GOOD) });
    if (chosen.ok) {
      expect(chosen.config.maxParallel).toBe(1);
      expect(chosen.config.merge.auto).toBe(false);
      expect(chosen.config.humanGate.paths).toEqual(["infra/**"]);
    }
  });

  it("takes the state's configuration, not a newer good file pushed after the dispatch", async () => {
    // The newer file drops the human-gate path: running under it would be looser than the controller.
    const chosen = await chooseWorkerConfig(sources(NEWER, configDigest(GOOD), kept(GOOD)));
    expect(chosen).toMatchObject({ ok: true, source: "last-good" });
    if (chosen.ok) expect(chosen.config.humanGate.paths).toEqual(["infra/**"]);
  });

  it("reads the last good file at its commit when the state kept no text", async () => {
    const s = sources(TYPO, configDigest(GOOD), kept(GOOD, false), { [COMMIT]: GOOD });
    const chosen = await chooseWorkerConfig(s);
    expect(chosen).toMatchObject({ ok: true, source: "last-good" });
    expect(s.commitsRead).toEqual([COMMIT]);
  });

  it("refuses when neither the file nor the state has the controller's digest", async () => {
    // The state moved on to a newer configuration after this dispatch: the controller dispatches again.
    const chosen = await chooseWorkerConfig(sources(NEWER, configDigest(GOOD), kept(NEWER)));
    expect(chosen.ok).toBe(false);
    if (!chosen.ok) {
      expect(chosen.reason).toContain(`decided with configuration ${configDigest(GOOD).slice(0, 12)}`);
      expect(chosen.reason).toContain("dispatches the task again");
    }
  });

  it("refuses a state text that does not have the digest it claims", async () => {
    const forged = { ...kept(GOOD), text: "maxParallel: 20\n" };
    const chosen = await chooseWorkerConfig(sources(TYPO, configDigest(GOOD), forged));
    expect(chosen.ok).toBe(false);
  });

  it("refuses when the file at the last good commit is not the one the digest names", async () => {
    const s = sources(TYPO, configDigest(GOOD), kept(GOOD, false), { [COMMIT]: NEWER });
    expect((await chooseWorkerConfig(s)).ok).toBe(false);
  });
});

describe("the worker's configuration, started by hand (no digest)", () => {
  it("takes a valid file", async () => {
    expect(await chooseWorkerConfig(sources(NEWER, null, kept(GOOD)))).toMatchObject({
      ok: true,
      source: "file",
    });
  });

  it("takes a missing file as the defaults", async () => {
    const chosen = await chooseWorkerConfig(sources(null, null, "no tracking issue"));
    expect(chosen).toMatchObject({ ok: true, source: "file", digest: configDigest(null) });
  });

  it("takes the state's last good configuration when the file is bad, never the defaults", async () => {
    const chosen = await chooseWorkerConfig(sources(TYPO, null, kept(GOOD)));
    expect(chosen).toMatchObject({ ok: true, source: "last-good" });
    if (chosen.ok) expect(chosen.config.merge.auto).toBe(false);
  });

  it("refuses a bad file when there is no last good configuration, naming the problem", async () => {
    for (const state of [null, "no tracking issue"] as const) {
      const chosen = await chooseWorkerConfig(sources(TYPO, null, state));
      expect(chosen.ok).toBe(false);
      if (!chosen.ok) {
        expect(chosen.reason).toContain("maxParalel");
        expect(chosen.reason).toContain("no last good configuration");
      }
    }
  });
});
