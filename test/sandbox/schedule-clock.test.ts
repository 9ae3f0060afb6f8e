/**
 * The Actions stand-in's `schedule` runs on a clock, as GitHub's does
 * (https://docs.github.com/en/actions/reference/workflows-and-actions/events-that-trigger-workflows#schedule: a
 * cron names times in UTC): the clock reads 00:09 when the stand-in starts, so a `*\/5` cron runs first at 00:10,
 * and pushes to the default branch (each reads the workflows again) do not move its times.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { ActionsOptions } from "../../sandbox/emulator/actions/actions-types.js";
import { EventRuns } from "../../sandbox/emulator/actions/event-runs.js";
import { readWorkflow } from "../../sandbox/emulator/actions/workflow-template.js";
import { SandboxStore, type WorkflowRunRequest } from "../../sandbox/emulator/store.js";

const MINUTE_MS = 40;
const SCHEDULED = `name: Scheduled
on:
  schedule:
    - cron: "*/5 * * * *"
jobs:
  tick:
    runs-on: ubuntu-latest
    steps:
      - run: echo tick
`;

describe("the stand-in's schedule clock", () => {
  beforeEach(() => vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] }));
  afterEach(() => vi.useRealTimers());

  async function started() {
    const store = new SandboxStore();
    const repo = store.createRepo({ owner: "demo", name: "shop" });
    const workflow = store.addWorkflow(repo.fullName, { path: ".github/workflows/scheduled.yml" });
    const files = new Map([[workflow.path, (await readWorkflow(workflow.path, SCHEDULED)).workflow]]);
    const runs: WorkflowRunRequest[] = [];
    const options = {
      url: "http://127.0.0.1:1",
      store,
      scheduleMinuteMs: MINUTE_MS,
    } as unknown as ActionsOptions;
    const eventRuns = new EventRuns(store, options, (request) => runs.push(request));
    return { eventRuns, sync: () => eventRuns.sync(repo, files), runs };
  }

  it("runs a */5 cron first at the next five-minute mark of the clock (one minute in), then every five", async () => {
    const { eventRuns, sync, runs } = await started();
    sync();
    await vi.advanceTimersByTimeAsync(MINUTE_MS - 1);
    expect(runs).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(2);
    expect(runs).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(5 * MINUTE_MS);
    expect(runs).toHaveLength(2);
    expect(runs[0]).toMatchObject({ reason: "event", ref: "main" });
    eventRuns.stop();
  });

  it("keeps its times while the workflows are read again on every push to the default branch", async () => {
    const { eventRuns, sync, runs } = await started();
    sync();
    // A push every two minutes for half an hour: a schedule timed from each read would never run.
    for (let minute = 0; minute < 30; minute += 2) {
      await vi.advanceTimersByTimeAsync(2 * MINUTE_MS);
      sync();
    }
    expect(runs).toHaveLength(6);
    eventRuns.stop();
  });
});
