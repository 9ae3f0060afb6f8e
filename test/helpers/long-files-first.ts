/**
 * Vitest's file order with the longest files first on a fresh clone too. Vitest orders by each file's last
 * duration from its cache, and with no cache (CI's fresh clone) by file size: a short file that runs whole
 * scenarios (test/worker/checkout-location.test.ts) then starts last and ends the run alone on one worker while the
 * other idles. The files below took 15 s or more each in `npm test` on a 2-core machine (vitest's own per-file
 * times); they start first, longest first, and everything else follows in vitest's order. Only the order
 * changes: every file still runs, each in its own process.
 */
import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

export const LONG_FILES: readonly string[] = [
  "test/sandbox/simulation-seeds.test.ts",
  "test/cli/unprivileged-demo.test.ts",
  "test/cli/start-web-view.test.ts",
  "test/worker/real-agents-gemini-opencode.test.ts",
  "test/worker/checkout-location.test.ts",
  "test/cli/doctor.test.ts",
  "test/sandbox/merge-automation.test.ts",
  "test/worker/real-agents.test.ts",
  "test/worker/integration.test.ts",
  "test/cli/packed-install.test.ts",
  "test/cli/init.test.ts",
];

export class LongFilesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (spec: TestSpecification): number => {
      const index = LONG_FILES.indexOf(relative(this.ctx.config.root, spec.moduleId).split("\\").join("/"));
      return index === -1 ? LONG_FILES.length : index;
    };
    // Array.prototype.sort is stable: files off the list keep vitest's order.
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}
