/**
 * `review`: a second agent that reviews the task's change before its pull request counts as ready
 * (src/worker/job/review.ts; docs/WORKER.md, "The reviewer"), and whether its approval gates the merge
 * (src/core/gates/reviewer-gate.ts).
 */
import { z } from "zod";
import { AgentObjectSchema } from "./config-section-schemas.js";

/** Most rounds of "request changes" a task takes from the reviewer before a person decides. */
const MAX_REVIEW_ROUNDS = 10;

export const ReviewSchema = z
  .strictObject({
    agent: AgentObjectSchema.nullable()
      .default(null)
      .describe(
        "The reviewing agent, same keys as `agents.primary` (another preset, or another model): after the quality " +
          "gate passes it reads the change in the worker's sandbox, read-only, and its verdict is posted on the " +
          "pull request as a review with line comments. null (the default): no reviewer.",
      ),
    required: z
      .boolean()
      .default(false)
      .describe(
        "The controller merges only a head the reviewer approved (Autopilot's own review on the pull request at " +
          "that commit), or one a person with write access approved; every other gate still holds. false: the " +
          "review is advice, and a reviewer that gives no verdict does not hold the task.",
      ),
    maxRounds: z
      .int()
      .min(1)
      .max(MAX_REVIEW_ROUNDS)
      .default(2)
      .describe(
        "Most reviews of the change in one job: a review that asks for changes before this many sends the work " +
          "back to the agent with the review; the one that reaches it hands the task to a person (needs-human, " +
          "with the reviewer's words).",
      ),
  })
  .prefault({})
  .describe('A reviewer that is not the author (docs/WORKER.md, "The reviewer").');
