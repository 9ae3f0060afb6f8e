/**
 * Shared by the benchmarks: timing statistics, table printing, the machine's line, and whether a bench runs as
 * a script. The synthetic world they reconcile is synthetic-world.ts. Benchmarks print; they assert nothing.
 */
import { cpus, totalmem } from "node:os";
import { markdownTable } from "markdown-table";

// ---------------------------------------------------------------------------------------------------------
// Output

/** One line describing the machine, printed above every run. */
export function machineLine(): string {
  const cpu = cpus();
  const model = cpu[0]?.model.replace(/\s+/g, " ").trim() ?? "unknown CPU";
  const gib = (totalmem() / 1024 ** 3).toFixed(1);
  return `Machine: ${cpu.length} cores (${model}), ${gib} GiB RAM, Node ${process.version}, ${process.platform}/${process.arch}`;
}

/** A markdown table with a title line above it and optional footnotes below. */
export function printTable(title: string, rows: string[][], notes: string[] = []): void {
  console.log(`\n### ${title}\n`);
  // Numbers right, text left.
  const numeric = (cell: string) => /^[\s\d,.%*—-]*$/.test(cell);
  const align = (rows[0] ?? []).map((_, i) => (rows.slice(1).every((r) => numeric(r[i] ?? "")) ? "r" : "l"));
  console.log(markdownTable(rows, { align }));
  if (notes.length > 0) console.log(`\n${notes.map((n) => `- ${n}`).join("\n")}`);
}

export function formatInt(n: number): string {
  return Math.round(n).toLocaleString("en-US");
}

export function formatMs(ms: number): string {
  if (ms < 0.1) return ms.toFixed(3);
  if (ms < 10) return ms.toFixed(2);
  return ms.toFixed(1);
}

// ---------------------------------------------------------------------------------------------------------
// Timing

export interface Timing {
  runs: number;
  median: number;
  p90: number;
  min: number;
  max: number;
}

export function summarize(samples: readonly number[]): Timing {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * (sorted.length - 1)))] ?? 0;
  return {
    runs: sorted.length,
    median: at(0.5),
    p90: at(0.9),
    min: sorted[0] ?? 0,
    max: sorted.at(-1) ?? 0,
  };
}

/**
 * Runs `fn` once to warm up, then as often as fits in `budgetMs` (at least `minRuns`, at most `maxRuns`),
 * and returns the per-run times in milliseconds.
 */
export function measure(
  fn: () => unknown,
  options: { budgetMs: number; minRuns?: number; maxRuns?: number },
): Timing {
  const minRuns = options.minRuns ?? 5;
  const maxRuns = options.maxRuns ?? 500;
  let t = performance.now();
  fn();
  const first = performance.now() - t;
  const runs = Math.max(minRuns, Math.min(maxRuns, Math.floor(options.budgetMs / Math.max(first, 0.001))));
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    t = performance.now();
    fn();
    samples.push(performance.now() - t);
  }
  return summarize(samples);
}
/** Whether this module is the script node was started with (each bench runs alone too). */
export function isMain(url: string): boolean {
  const entry = process.argv[1];
  if (!entry) return false;
  const path = new URL(url).pathname;
  return path === entry || path.replace(/\.ts$/, "") === entry.replace(/\.ts$/, "");
}
