/** The agent's end-of-iteration signal (src/core/agent/signals.ts) as the worker writes it down and decides on it. */
import type { Signal } from "../../core/agent/signals.js";
import type { IterationSignal } from "../../core/agent/iteration.js";

/** The signal in one line (the iteration's note, commit message and `lastSignal`). */
export function describeSignal(signal: Signal): string {
  switch (signal.kind) {
    case "complete":
      return signal.objective === undefined ? "COMPLETE" : `OBJECTIVE_MET: ${signal.objective}`;
    case "blocked":
      return `BLOCKED: ${signal.reason}`;
    case "needs_human":
      return `NEEDS_HUMAN: ${signal.question}`;
    case "none":
      return "none";
  }
}

/** The signal as the pure iteration decisions (src/core/tasks/task.ts) take it. */
export function toIterationSignal(signal: Signal): IterationSignal {
  if (signal.kind === "blocked") return { kind: "blocked", text: signal.reason };
  if (signal.kind === "needs_human") return { kind: "needs_human", text: signal.question };
  return { kind: signal.kind };
}
