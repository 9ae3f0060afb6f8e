/**
 * The test order's list of long files (test/helpers/long-files-first.ts) names files that exist: a renamed or
 * removed file would silently drop out of the list and could end `npm test` alone again.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { LONG_FILES } from "./helpers/long-files-first.js";

describe("the long-files-first test order", () => {
  it("lists only test files that exist, each once", () => {
    const root = join(import.meta.dirname, "..");
    expect(LONG_FILES.filter((file) => !existsSync(join(root, file)) || !file.endsWith(".test.ts"))).toEqual(
      [],
    );
    expect(new Set(LONG_FILES).size).toBe(LONG_FILES.length);
  });
});
