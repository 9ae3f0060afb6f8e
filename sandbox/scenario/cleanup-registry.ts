/**
 * What a scenario run started, and how to stop it. Every step is stopped once, whatever happens (an error, a
 * Ctrl-C), lowest `order` first, so the run can pick the order that quiets things fastest. Each step gets a
 * few seconds; one that hangs is reported and left behind rather than holding up the rest.
 */

/** How long one cleanup step (stopping the controller, the sandbox, …) may take before the next goes. */
const CLEANUP_STEP_MS = 5000;

interface CleanupStep {
  name: string;
  order: number;
  fn: () => Promise<unknown> | unknown;
}

export class CleanupRegistry {
  private readonly steps: CleanupStep[] = [];
  private readonly stopped = new Set<CleanupStep>();
  private everything: Promise<void> | null = null;

  /** `warn` is told of a step that failed or took too long. */
  constructor(private readonly warn: (message: string) => void) {}

  /** Registers a step; steps of the same order stop in the order they were added. */
  add(name: string, order: number, fn: () => Promise<unknown> | unknown): void {
    this.steps.push({ name, order, fn });
  }

  /** Stops the steps ordered before `order` that have not stopped yet (the rest stay up). */
  stopBefore(order: number): Promise<void> {
    return this.stop(order);
  }

  /** Stops everything not stopped yet; later calls wait for the first. */
  stopAll(): Promise<void> {
    this.everything ??= this.stop(Number.POSITIVE_INFINITY);
    return this.everything;
  }

  private async stop(before: number): Promise<void> {
    for (const step of [...this.steps].sort((a, b) => a.order - b.order)) {
      if (step.order >= before || this.stopped.has(step)) continue;
      this.stopped.add(step);
      let timer: NodeJS.Timeout | undefined;
      const limit = new Promise<"timeout">((r) => {
        timer = setTimeout(() => r("timeout"), CLEANUP_STEP_MS);
      });
      try {
        const outcome = await Promise.race([Promise.resolve().then(step.fn), limit]);
        if (outcome === "timeout")
          this.warn(`stopping ${step.name} took over ${CLEANUP_STEP_MS / 1000}s; moving on`);
      } catch (error) {
        this.warn(`stopping ${step.name} failed: ${(error as Error).message}`);
      } finally {
        clearTimeout(timer);
      }
    }
  }
}
