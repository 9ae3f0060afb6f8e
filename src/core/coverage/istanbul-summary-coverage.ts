/**
 * Line coverage from Istanbul's JSON summary (`coverage/coverage-summary.json`: the `json-summary` reporter of
 * nyc, Jest, Vitest and c8). The file maps `total` and each source file to `lines`, `statements`, `functions`
 * and `branches`, each `{ total, covered, skipped, pct }` (istanbul-reports, lib/json-summary). The gate reads
 * `total.lines`; `pct` is not trusted (it is "Unknown" for an empty total) but recomputed from the counts.
 */
import { z } from "zod";
import { type CoverageParse, coverageFrom } from "./coverage-summary.js";

const Counts = z.object({ total: z.number(), covered: z.number() });
const Summary = z.object({ total: z.object({ lines: Counts }) });

export function parseIstanbulSummary(text: string): CoverageParse {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    return { problem: `Istanbul JSON summary: not JSON (${(error as Error).message.slice(0, 120)})` };
  }
  const parsed = Summary.safeParse(data);
  if (!parsed.success) {
    return {
      problem:
        "Istanbul JSON summary: no `total.lines` with numeric `total` and `covered` (is it the `json-summary` " +
        "reporter's output, not `json`?)",
    };
  }
  const { covered, total } = parsed.data.total.lines;
  return coverageFrom("istanbul-summary", "lines", covered, total);
}
