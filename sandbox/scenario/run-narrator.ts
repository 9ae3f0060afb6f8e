/**
 * Progress lines told from what happens during a scenario run: the Actions stand-in's events (worker runs and
 * their output, CI) and the store's (pull requests, reviews, Autopilot's comments, the tracking issue).
 */
import { parseWorkerResult } from "../../src/core/tasks/worker-result.js";
import { isControllerRun } from "./controllers/controller-mode.js";
import type { ActionsEvent } from "../emulator/actions/actions.js";
import type { SandboxStore, StoreEvent } from "../emulator/store.js";
import { isTrackingIssue, type ScenarioObserver, stripMarkers } from "./scenario-observer.js";
import type { ProgressLog } from "./scenario-progress.js";

/** The task issue a worker run works on, from its inputs. */
export function issueOfRun(inputs: Record<string, string>): number | null {
  const n = Number(inputs.issue);
  return Number.isInteger(n) && n > 0 ? n : null;
}

export class RunNarrator {
  constructor(
    private readonly log: ProgressLog,
    private readonly observer: ScenarioObserver,
    private readonly store: SandboxStore,
    private readonly repo: string,
    /** The scenario's people (lowercase logins): what they say is not narrated. */
    private readonly humans: Set<string>,
  ) {}

  /** Actions mode: one line per controller run that did something other than succeed or be skipped. */
  private controllerRunEvent(event: ActionsEvent): void {
    if (event.type === "annotation" && event.level === "error")
      this.log.emit("warning", null, `controller error: ${event.message.split("\n")[0]}`);
    if (event.type === "log") this.log.emit("run", null, `  controller ${event.run.id} | ${event.line}`);
    if (event.type !== "run-completed") return;
    const { run } = event;
    if (run.conclusion === "success" || run.conclusion === "skipped") return;
    if (run.conclusion === "cancelled" && run.startedAt === null) return; // replaced while pending: routine
    this.log.emit(
      "run",
      null,
      `controller run ${run.id} (${run.event}) ${run.conclusion}${run.reason ? ` (${run.reason})` : ""}`,
    );
  }

  actionsEvent(event: ActionsEvent): void {
    const progress = this.log.emit;
    if ("run" in event && isControllerRun(event.run)) {
      this.controllerRunEvent(event);
      return;
    }
    switch (event.type) {
      case "run-started":
        progress(
          "run",
          issueOfRun(event.run.inputs),
          `worker run ${event.run.id} started${event.run.inputs.attempt ? ` (attempt ${event.run.inputs.attempt})` : ""}`,
        );
        break;
      case "run-completed": {
        const issue = issueOfRun(event.run.inputs);
        const result = event.run.outputs.result;
        const why =
          event.run.outputs.reason || (event.run.conclusion !== "success" ? event.run.reason : null);
        progress(
          "run",
          issue,
          `worker run ${event.run.id} ${event.run.conclusion}${result ? `: ${result}` : ""}${why ? ` (${why})` : ""}`,
        );
        break;
      }
      case "annotation":
        if (event.level === "error")
          progress("warning", issueOfRun(event.run.inputs), `worker error: ${event.message.split("\n")[0]}`);
        break;
      case "log":
        progress("run", issueOfRun(event.run.inputs), `  | ${event.line}`);
        break;
      case "ci-completed": {
        const pull = event.pr ? this.store.getIssue(this.repo, event.pr) : undefined;
        const issue = pull ? this.observer.issueOfPull(pull) : null;
        const line = event.tail
          .split("\n")
          .filter((l) => /not ok|fail|error/i.test(l))
          .at(0);
        progress(
          "ci",
          issue,
          `CI ${event.conclusion === "success" ? "passed" : "failed"} on ${event.sha.slice(0, 7)}${event.conclusion === "failure" && line ? ` — ${line.trim().slice(0, 100)}` : ""}`,
        );
        break;
      }
      case "ci-skipped":
        progress("warning", null, `CI not started for ${event.sha.slice(0, 7)}: ${event.reason}`);
        break;
      default:
        break;
    }
  }

  storeEvent(event: StoreEvent): void {
    const progress = this.log.emit;
    const obs = this.observer;
    if (event.name === "pull_request" && (event.action === "opened" || event.action === "closed")) {
      const issue = obs.issueOfPull(event.pull);
      if (event.action === "opened")
        progress("pr", issue, `PR #${event.pull.number} opened: ${event.pull.title}`);
      else if (event.pull.pull?.merged) progress("pr", issue, `PR #${event.pull.number} merged`);
      else progress("pr", issue, `PR #${event.pull.number} closed without merging`);
    } else if (event.name === "pull_request_review" && event.action === "submitted") {
      const issue = obs.issueOfPull(event.pull);
      const verb =
        event.review.state === "APPROVED"
          ? "approved"
          : event.review.state === "CHANGES_REQUESTED"
            ? "requested changes on"
            : "reviewed";
      progress("review", issue, `@${event.review.user} ${verb} PR #${event.pull.number}`);
    } else if (event.name === "issue_comment" && event.action === "created") {
      const body = event.comment.body;
      if (this.humans.has(event.comment.user.toLowerCase()) || parseWorkerResult(body)) return;
      const line =
        stripMarkers(body)
          .split("\n")
          .find((l) => l.trim()) ?? "";
      if (!line) return;
      progress(
        "comment",
        event.issue.pull ? obs.issueOfPull(event.issue) : event.issue.number,
        `@${event.comment.user}: ${line.trim().slice(0, 110)}`,
      );
    } else if (
      event.name === "issues" &&
      event.action === "opened" &&
      isTrackingIssue(event.issue) &&
      this.log.trackingNumber === null
    ) {
      this.log.trackingNumber = event.issue.number;
      progress("dashboard", null, `tracking issue #${event.issue.number} created (${event.issue.title})`);
    }
  }
}
