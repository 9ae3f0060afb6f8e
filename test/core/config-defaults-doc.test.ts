/**
 * docs/CONFIGURATION.md "Where a default differs from the design documents" stays true of the code: each row
 * names the default the schema has, and the completion word is the one the signal parser recognises.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { DEFAULT_CONFIG } from "../../src/core/config/index.js";
import { parseSignal } from "../../src/core/agent/signals.js";

const doc = readFileSync(new URL("../../docs/CONFIGURATION.md", import.meta.url), "utf8");
const section = doc.slice(doc.indexOf("## Where a default differs"), doc.indexOf("## Overrides"));
const row = (start: string) => section.split("\n").find((line) => line.startsWith(`| ${start} |`)) ?? "";

describe("the defaults that differ from the design documents", () => {
  it("each row names the schema's default, and why", () => {
    expect(row("`retryBaseMs`")).toContain(`| ${DEFAULT_CONFIG.retryBaseMs} (`);
    expect(row("`iterationDelayMs`")).toContain(`| ${DEFAULT_CONFIG.iterationDelayMs} |`);
    expect(row("`quality.coverage.threshold`")).toContain(
      `| ${DEFAULT_CONFIG.quality.coverage.threshold} (off) |`,
    );
    expect(DEFAULT_CONFIG.agents.fallbacks).toEqual([]);
    expect(row("`agents.fallbacks`")).toContain("| none |");
    expect(row("a stuck task")).toContain(`at ${DEFAULT_CONFIG.stuckThreshold} (\`stuckThreshold\`)`);
    expect(row("a stuck task")).toContain(`at ${DEFAULT_CONFIG.stuckStopThreshold} (\`stuckStopThreshold\`)`);
    expect(parseSignal("Done.\n<promise>COMPLETE</promise>").kind).toBe("complete");
    expect(row("the completion claim")).toContain("<promise>COMPLETE</promise>");
    for (const line of section.split("\n").filter((l) => l.startsWith("| ") && !l.startsWith("| setting")))
      expect(line.split(" | ").at(-1)!.length, line.slice(0, 40)).toBeGreaterThan(80);
  });
});
