/** The session's statistics on the dashboard: the open tasks' records plus the history of retired ones. */
import { computeStatistics, type SessionStatistics, type TaskRecordLike } from "../session/stats.js";
import { type Reconciling, round4 } from "./context.js";
import { openTasks } from "./open-tasks.js";

export function viewStatistics(ctx: Reconciling): SessionStatistics {
  const tasks: TaskRecordLike[] = [];
  for (const { n, status, record: r } of openTasks(ctx)) {
    tasks.push({
      issue: n,
      status,
      iterations: r?.iterations ?? 0,
      attempts: r?.attempt ?? 0,
      startedAt: r?.startedAt ?? null,
      tokens: r ? { input: r.tokensIn, output: r.tokensOut } : null,
      costUsd: r?.costUsd ?? 0,
    });
  }
  const stats = computeStatistics(tasks, ctx.now, { sessionStartedAt: ctx.state.session.startedAt });
  const h = ctx.state.history;
  const completedIterations = stats.iterations.average * stats.tasks.completed + h.completedIterations;
  const completed = stats.tasks.completed + h.completed;
  stats.tasks.completed = completed;
  stats.tasks.skipped += h.skipped;
  stats.tasks.total += h.completed + h.skipped + h.closed;
  stats.iterations.total += h.iterations;
  stats.iterations.average = completed > 0 ? Math.round((completedIterations / completed) * 100) / 100 : 0;
  stats.iterations.fastest = pickExtreme(stats.iterations.fastest, h.fastest, (a, b) => a < b);
  stats.iterations.slowest = pickExtreme(stats.iterations.slowest, h.slowest, (a, b) => a > b);
  stats.merges.successful += h.merges;
  stats.tokens.input += h.tokensIn;
  stats.tokens.output += h.tokensOut;
  stats.tokens.total = stats.tokens.input + stats.tokens.output;
  stats.costUsd = round4(stats.costUsd + h.costUsd);
  return stats;
}

function pickExtreme(
  a: { issue: number; iterations: number } | null,
  b: { issue: number; iterations: number } | null,
  better: (x: number, y: number) => boolean,
): { issue: number; iterations: number } | null {
  if (!a) return b;
  if (!b) return a;
  return better(b.iterations, a.iterations) ? b : a;
}
