/**
 * The job log folds each iteration of the loop under its own heading (`::group::`, job-log.ts), and the job's
 * outcome line comes after the last group has ended, so a reader of the log sees the result without unfolding.
 */
import { describe, expect, it } from "vitest";
import { runWorker } from "../../src/worker/job/job.js";
import type { WorkerLog } from "../../src/worker/worker-deps.js";
import { config, harness } from "./fakes.js";

/** The log's calls in order: groups opened and ended, and the info lines. */
function eventLog(): WorkerLog & { events: string[] } {
  const events: string[] = [];
  return {
    events,
    debug() {},
    info: (message) => events.push(`info ${message}`),
    warning() {},
    error() {},
    group: (title) => events.push(`group ${title}`),
    endGroup: () => events.push("endgroup"),
  };
}

describe("the job log's groups", () => {
  it("open one group per iteration and end the last before the result", async () => {
    const h = await harness([
      { message: "Made some progress; more to do." },
      { message: "All done.\n\n<promise>COMPLETE</promise>" },
    ]);
    const log = eventLog();
    const run = await runWorker(h.inputs, config(), { ...h.deps, log });

    expect(run.result.result).toBe("complete");
    const groups = log.events.filter((e) => e.startsWith("group ") || e === "endgroup");
    expect(groups).toEqual([
      "group iteration 1/50: running claude-code",
      "group iteration 2/50: running claude-code",
      "endgroup",
    ]);
    const result = log.events.findIndex((e) => e.startsWith("info result: complete"));
    expect(result).toBeGreaterThan(log.events.lastIndexOf("endgroup"));
  });
});
