/**
 * Scoring and ranking of ready tasks (weights configurable, `scoring` in the config):
 *
 * | priority | criterion                                   | points                       |
 * |----------|---------------------------------------------|------------------------------|
 * | 1        | unblocks other issues                       | +unblocks (10) per open one  |
 * | 2        | critical label                              | +critical (50)               |
 * | 3        | quick-win label                             | +quickWin (30)               |
 * | 4        | more than half of the parent's sub-issues done | +nearCompleteParent (20)  |
 * | 5        | earlier retries                             | −retryPenalty (15) per retry |
 *
 * The highest total wins; ties go to the oldest issue (createdAt, then the lower number).
 */
import { formatRef } from "./dependency-references.js";
import type { TaskNode } from "./graph.js";

interface ScoringWeights {
  unblocks: number;
  critical: number;
  quickWin: number;
  nearCompleteParent: number;
  retryPenalty: number;
}

export const DEFAULT_SCORING_WEIGHTS: Readonly<ScoringWeights> = Object.freeze({
  unblocks: 10,
  critical: 50,
  quickWin: 30,
  nearCompleteParent: 20,
  retryPenalty: 15,
});

interface ScoringLabels {
  critical: string;
  quickWin: string;
}

const DEFAULT_SCORING_LABELS: Readonly<ScoringLabels> = Object.freeze({
  critical: "critical",
  quickWin: "quick-win",
});

type ScoreCriterion = "unblocks" | "critical" | "quickWin" | "nearCompleteParent" | "retryPenalty";

export interface ScorePart {
  criterion: ScoreCriterion;
  /** For people, without the points: "unblocks #4, #6", "critical", "2 earlier retries". */
  reason: string;
  points: number;
}

export interface ScoredTask {
  issue: number;
  title: string;
  createdAt: string;
  total: number;
  /** Non-zero contributions in the table's priority order. */
  parts: ScorePart[];
}

interface ScoreOptions {
  weights?: Partial<ScoringWeights>;
  labels?: Partial<ScoringLabels>;
  /** Earlier retries per issue number (a missing entry is 0). */
  retries?: Readonly<Record<number, number>>;
}

/** Scores one task. Pure; uses only what the graph node carries. */
export function scoreTask(node: TaskNode, options: ScoreOptions = {}): ScoredTask {
  return scoreWith(node, scoringSettings(options), options.retries);
}

interface ScoringSettings {
  w: ScoringWeights;
  labels: ScoringLabels;
  critical: string;
  quickWin: string;
}

/** The weights and label names with their defaults, the names lowered: once per ranking, not per task. */
function scoringSettings(options: ScoreOptions): ScoringSettings {
  const w: ScoringWeights = { ...DEFAULT_SCORING_WEIGHTS, ...options.weights };
  const labels: ScoringLabels = { ...DEFAULT_SCORING_LABELS, ...options.labels };
  return { w, labels, critical: labels.critical.toLowerCase(), quickWin: labels.quickWin.toLowerCase() };
}

function scoreWith(
  node: TaskNode,
  { w, labels, critical, quickWin }: ScoringSettings,
  retriesOf: ScoreOptions["retries"],
): ScoredTask {
  let isCritical = false;
  let isQuickWin = false;
  for (const label of node.issue.labels) {
    const l = label.toLowerCase();
    if (l === critical) isCritical = true;
    if (l === quickWin) isQuickWin = true;
  }
  const parts: ScorePart[] = [];
  const add = (criterion: ScoreCriterion, reason: string, points: number) => {
    if (points !== 0 && Number.isFinite(points)) parts.push({ criterion, reason, points });
  };

  if (node.unblocks.length > 0) {
    add(
      "unblocks",
      `unblocks ${node.unblocks.map((n) => formatRef(n)).join(", ")}`,
      node.unblocks.length * w.unblocks,
    );
  }
  if (isCritical) add("critical", labels.critical, w.critical);
  if (isQuickWin) add("quickWin", labels.quickWin, w.quickWin);
  const p = node.parentProgress;
  if (p && p.total > 0 && p.done > p.total / 2) {
    add("nearCompleteParent", `parent #${p.parent} ${p.done}/${p.total} done`, w.nearCompleteParent);
  }
  const retries = Math.max(0, Math.floor(retriesOf?.[node.number] ?? 0));
  if (retries > 0) {
    add(
      "retryPenalty",
      `${retries} earlier ${retries === 1 ? "retry" : "retries"}`,
      -retries * w.retryPenalty,
    );
  }

  return {
    issue: node.number,
    title: node.issue.title,
    createdAt: node.issue.createdAt,
    total: parts.reduce((sum, part) => sum + part.points, 0),
    parts,
  };
}

/**
 * Every candidate (minus `excludeIds`), scored, best first: higher total, then older `createdAt`, then lower
 * number. The dispatcher takes from its head as slots allow; the dashboard shows it as the queue.
 */
export function rankTasks(
  candidates: readonly TaskNode[],
  options: ScoreOptions & { excludeIds?: Iterable<number> },
) {
  const excluded = new Set(options.excludeIds ?? []);
  const seen = new Set<number>();
  const scored: ScoredTask[] = [];
  const settings = scoringSettings(options);
  for (const node of candidates) {
    if (excluded.has(node.number) || seen.has(node.number)) continue;
    seen.add(node.number);
    scored.push(scoreWith(node, settings, options.retries));
  }
  // compareScored's order, with each createdAt parsed once rather than in every comparison.
  const created = new Map(scored.map((t) => [t, createdMs(t.createdAt)]));
  return scored.sort((a, b) => b.total - a.total || created.get(a)! - created.get(b)! || a.issue - b.issue);
}

/** Higher total first; ties to the older issue (createdAt; unparseable dates count as newest), then lower number. */
export function compareScored(a: ScoredTask, b: ScoredTask): number {
  if (a.total !== b.total) return b.total - a.total;
  const ta = createdMs(a.createdAt);
  const tb = createdMs(b.createdAt);
  if (ta !== tb) return ta - tb;
  return a.issue - b.issue;
}

/** "unblocks #4, #6 (+20), critical (+50), 1 earlier retry (−15)"; "no bonus" when empty. */
export function formatScoreParts(parts: readonly ScorePart[]): string {
  if (parts.length === 0) return "no bonus";
  return parts.map((p) => `${p.reason} (${p.points > 0 ? "+" : "−"}${Math.abs(p.points)})`).join(", ");
}

function createdMs(iso: string): number {
  const t = Date.parse(iso);
  return Number.isNaN(t) ? Number.POSITIVE_INFINITY : t;
}
