/**
 * Watches the sandbox's store while a scenario plays: every event feeds the recorders the end-of-run checks
 * need (what the final state alone cannot tell), becomes a progress line, and marks the time of the last
 * change (a run settles only after a quiet spell).
 */
import type { SandboxStore, StoreEvent } from "../emulator/store.js";
import { isControllerRun } from "./controllers/controller-mode.js";
import { ExpectationRecorder } from "./checks/expectations.js";
import { InvariantRecorder } from "./checks/invariant-recorder.js";
import type { RunNarrator } from "./run-narrator.js";
import type { Scenario } from "./scenario-file.js";

export class StoreWatch {
  /** When the store last changed (epoch ms). */
  lastEventAt = Date.now();
  readonly invariants: InvariantRecorder;
  readonly expectations: ExpectationRecorder;

  constructor(
    private readonly store: SandboxStore,
    repoFull: string,
    scenario: Scenario,
    readyLabel: string,
    private readonly narrator: RunNarrator,
  ) {
    this.invariants = new InvariantRecorder(store, repoFull, readyLabel);
    this.expectations = new ExpectationRecorder(repoFull, scenario);
  }

  private isControllerRunEvent(event: StoreEvent): boolean {
    if (event.name !== "workflow_run" && event.name !== "workflow_job") return false;
    const path = this.store.getWorkflow(event.repo.fullName, event.run.workflowId)?.path;
    return path !== undefined && isControllerRun({ workflowPath: path });
  }

  /** Starts watching; returns the function that stops it. */
  start(): () => void {
    return this.store.onEvent((event: StoreEvent) => {
      // The controller workflow's own runs (Actions mode) come and go on its schedule: not a change.
      if (this.isControllerRunEvent(event)) return;
      this.lastEventAt = Date.now();
      this.expectations.onEvent(event);
      this.invariants.onEvent(event);
      this.narrator.storeEvent(event);
    });
  }
}
