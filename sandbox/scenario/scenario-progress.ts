/**
 * Progress lines of a scenario run, timed from its start, for the CLI's live output (src/cli/main.ts).
 */

export interface ProgressEvent {
  /** Milliseconds since the scenario started. */
  atMs: number;
  kind:
    | "setup"
    | "state"
    | "run"
    | "ci"
    | "pr"
    | "review"
    | "comment"
    | "human"
    | "dashboard"
    | "warning"
    | "done";
  issue: number | null;
  message: string;
}

/** Reports one progress line: its kind, the task issue it is about (null: the run as a whole), the text. */
export type Progress = (kind: ProgressEvent["kind"], issue: number | null, message: string) => void;

export class ProgressLog {
  /** The tracking issue, once Autopilot opened it: it is not a task, so its lines read "dashboard: …". */
  trackingNumber: number | null = null;

  constructor(
    private readonly started: number,
    private readonly onProgress?: (event: ProgressEvent) => void,
  ) {}

  readonly emit: Progress = (kind, issue, message) => {
    if (issue !== null && issue === this.trackingNumber) {
      this.onProgress?.({
        atMs: Date.now() - this.started,
        kind,
        issue: null,
        message: `dashboard: ${message}`,
      });
      return;
    }
    this.onProgress?.({ atMs: Date.now() - this.started, kind, issue, message });
  };
}
