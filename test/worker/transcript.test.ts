/**
 * The job keeps the agent's transcript (src/worker/job/transcript.ts): each run's prompt and output appended,
 * masked, to the file the workflow uploads, and the progress comment names the artifact.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runWorker } from "../../src/worker/job/job.js";
import { createTranscript } from "../../src/worker/job/transcript.js";
import { config, harness } from "./fakes.js";

const SECRET = "ghs_transcript_secret_value";
const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

describe("the agent's transcript", () => {
  it("keeps every run's prompt and output with the held secrets masked, and the comment links the artifact", async () => {
    const dir = await mkdtemp(join(tmpdir(), "autopilot-transcript-"));
    dirs.push(dir);
    const h = await harness([
      { message: `Made some progress with ${SECRET}; more to do.` },
      { message: "All done.\n\n<promise>COMPLETE</promise>" },
    ]);
    const transcript = await createTranscript({
      file: join(dir, "t.md"),
      artifact: "autopilot-transcript-7-1",
      secretValues: [SECRET],
    });
    const run = await runWorker(h.inputs, config(), { ...h.deps, transcript });
    expect(run.result.result).toBe("complete");
    const text = await readFile(transcript.file, "utf8");
    expect(text).toContain("## Iteration 1:");
    expect(text).toContain("## Iteration 2:");
    expect(text).toContain("Made some progress with ***; more to do.");
    expect(text).not.toContain(SECRET);
    const comment = [...h.github.comments.values()].find((c) => c.body.includes("Autopilot"))?.body ?? "";
    expect(comment).toContain(
      "`autopilot-transcript-7-1` in the [run's artifacts](https://github.example/acme/widgets/actions/runs/1#artifacts)",
    );
  });
});
