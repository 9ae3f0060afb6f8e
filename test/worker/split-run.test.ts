/**
 * The worker's side of `/autopilot split` (src/worker/job/split.ts): a splitting run keeps and pushes nothing,
 * posts the validated proposal and waits for a writer; it revises only Autopilot's own unedited proposal; an
 * unusable proposal posts nothing.
 */
import { describe, expect, it } from "vitest";
import {
  splitComment,
  splitDigest,
  splitFromComment,
  splitOfFinalMessage,
} from "../../src/core/tasks/split-proposal.js";
import { runWorker } from "../../src/worker/job/job.js";
import { config, harness } from "./fakes.js";

const LIST = [
  { title: "Cart total", body: "Add total() to src/cart.js." },
  { title: "Tax line", body: "Add tax() to src/tax.js.", dependsOn: [1] },
];
const MESSAGE = `I read the code.\n<subissues>${JSON.stringify(LIST)}</subissues>`;

function itemsOf(message: string) {
  const read = splitOfFinalMessage(message);
  if (!read.ok) throw new Error(read.problem);
  return read.items;
}

describe("a splitting run", () => {
  it("posts the proposed sub-issues, moves the issue to needs-human and pushes nothing", async () => {
    const h = await harness([{ message: MESSAGE }], { inputs: { plan: "split" } });
    const run = await runWorker(h.inputs, config(), h.deps);
    const digest = splitDigest(itemsOf(MESSAGE));
    expect(run.result.result).toBe("needs_human");
    expect(run.result.reason).toMatch(/sub-issues proposed/);
    expect(run.result.plan).toEqual({ digest, postedAt: expect.any(String) });
    expect(h.git.pushes).toEqual([]);
    expect(h.agent.requests).toHaveLength(1);
    const prompt = h.agent.requests[0]!.prompt;
    expect(prompt).toMatch(/## This is a planning run: split the issue into sub-issues/);
    expect(prompt).not.toMatch(/<promise>COMPLETE<\/promise>/);
    const posted = h.github.comments.find((c) => c.body.includes("Autopilot's proposal: #7 split into 2"));
    expect(posted && splitFromComment(posted.body, digest)).toEqual(itemsOf(MESSAGE));
    expect(h.github.labels.get(7)).toContain("autopilot:needs-human");
  });

  it("revises Autopilot's own earlier proposal, never a copy in someone else's comment", async () => {
    const h = await harness([{ message: MESSAGE }], { inputs: { plan: "split" } });
    h.github.addComment(
      7,
      "autopilot[bot]",
      splitComment(7, itemsOf(MESSAGE.replace("Tax line", "EARLIER-ITEM"))),
      "Bot",
    );
    h.github.addComment(7, "alice", "Add a receipt step.");
    h.github.addComment(
      7,
      "mallory",
      splitComment(7, itemsOf(MESSAGE.replace("Tax line", "MALLORY-ITEM"))),
      "User",
    );
    await runWorker(h.inputs, config(), h.deps);
    const prompt = h.agent.requests[0]!.prompt;
    expect(prompt).toMatch(/## The earlier proposal[\s\S]*EARLIER-ITEM/);
    expect(prompt).not.toMatch(/MALLORY-ITEM/);
  });

  it("posts nothing and fails with the reason when the proposal is not usable", async () => {
    const bad = `<subissues>${JSON.stringify([{ title: "A", dependsOn: [2] }, { title: "B" }])}</subissues>`;
    const h = await harness([{ message: bad }], { inputs: { plan: "split" } });
    const run = await runWorker(h.inputs, config(), h.deps);
    expect(run.result.result).toBe("failed");
    expect(run.result.reason).toMatch(/no usable sub-issues: .*only on earlier items/);
    expect(run.result.plan).toBeUndefined();
    expect(h.github.comments.some((c) => c.body.includes("Autopilot's proposal"))).toBe(false);
  });
});
