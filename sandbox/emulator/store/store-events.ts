/** Store events (one per webhook delivery GitHub would make) and workflow run requests. */
import type { CheckRun, CheckSuite, CommitStatus } from "./check-records.js";
import type { Comment, Issue } from "./issue-records.js";
import type { PushRecord } from "./push-records.js";
import type { Label, Repo } from "./repo-records.js";
import type { Review, ReviewComment } from "./pull-records.js";
import type { Workflow, WorkflowJob, WorkflowRun } from "./workflow-records.js";

interface EventBase {
  repo: Repo;
  /** Login of the actor (the webhook's `sender`). */
  sender: string;
}

export type StoreEvent =
  | (EventBase & {
      name: "issues";
      action:
        | "opened"
        | "edited"
        | "closed"
        | "reopened"
        | "labeled"
        | "unlabeled"
        | "locked"
        | "unlocked"
        | "pinned"
        | "unpinned"
        | "assigned"
        | "unassigned"
        | "deleted";
      issue: Issue;
      label?: Label;
      assignee?: string;
      changes?: { title?: { from: string }; body?: { from: string | null } };
    })
  | (EventBase & {
      name: "issue_comment";
      action: "created" | "edited" | "deleted";
      issue: Issue;
      comment: Comment;
      changes?: { body: { from: string } };
    })
  | (EventBase & {
      name: "pull_request";
      action:
        | "opened"
        | "edited"
        | "closed"
        | "reopened"
        | "synchronize"
        | "labeled"
        | "unlabeled"
        | "review_requested"
        | "review_request_removed"
        | "ready_for_review"
        | "converted_to_draft"
        | "auto_merge_enabled"
        | "auto_merge_disabled"
        | "enqueued"
        | "dequeued";
      pull: Issue;
      /** Why auto-merge was disabled or the pull request left the merge queue (`auto_merge_disabled`, `dequeued`). */
      reason?: string;
      label?: Label;
      requestedReviewer?: string;
      before?: string;
      after?: string;
      changes?: {
        title?: { from: string };
        body?: { from: string | null };
        base?: { ref: { from: string } };
      };
    })
  | (EventBase & {
      name: "pull_request_review";
      action: "submitted" | "edited" | "dismissed";
      pull: Issue;
      review: Review;
    })
  | (EventBase & {
      /**
       * A review conversation resolved or opened again:
       * https://docs.github.com/en/webhooks/webhook-events-and-payloads#pull_request_review_thread
       */
      name: "pull_request_review_thread";
      action: "resolved" | "unresolved";
      pull: Issue;
      comment: ReviewComment;
    })
  | (EventBase & {
      name: "check_run";
      action: "created" | "completed" | "rerequested" | "requested_action";
      checkRun: CheckRun;
    })
  | (EventBase & {
      name: "check_suite";
      action: "completed" | "requested" | "rerequested";
      checkSuite: CheckSuite;
    })
  | (EventBase & { name: "status"; status: CommitStatus })
  | (EventBase & {
      name: "workflow_run";
      action: "requested" | "in_progress" | "completed";
      run: WorkflowRun;
      workflow: Workflow;
    })
  | (EventBase & {
      name: "workflow_job";
      action: "queued" | "in_progress" | "completed" | "waiting";
      run: WorkflowRun;
      job: WorkflowJob;
    })
  | (EventBase & {
      name: "workflow_dispatch";
      workflow: Workflow;
      ref: string;
      inputs: Record<string, string>;
    })
  | (EventBase & { name: "push"; push: PushRecord })
  | (EventBase & {
      name: "merge_group";
      action: "checks_requested" | "destroyed";
      group: MergeGroupRecord;
      reason?: "merged" | "invalidated" | "dequeued";
    })
  | (EventBase & { name: "create" | "delete"; ref: string; refType: "branch" | "tag" })
  | (EventBase & {
      name: "sub_issues";
      action: "sub_issue_added" | "sub_issue_removed" | "parent_issue_added" | "parent_issue_removed";
      issue: Issue;
      other: Issue;
    });

/** A merge group as the `merge_group` webhook describes it. */
export interface MergeGroupRecord {
  headSha: string;
  /** `refs/heads/gh-readonly-queue/…`. */
  headRef: string;
  baseSha: string;
  /** `refs/heads/main`. */
  baseRef: string;
  message: string;
  timestamp: string;
  author: { name: string; email: string };
}

/** Handed to {@link SandboxStore.onWorkflowDispatch} listeners: a run the Actions stand-in should execute. */
export interface WorkflowRunRequest {
  repo: Repo;
  workflow: Workflow;
  run: WorkflowRun;
  /** Branch or tag the run is for. */
  ref: string;
  inputs: Record<string, string>;
  /** How it was triggered: a dispatch, a re-run, or another event recorded by the Actions stand-in. */
  reason: "dispatch" | "rerun" | "event";
  /** The event's webhook payload (`github.event`), for runs started by an event or a schedule. */
  payload?: Record<string, unknown>;
}
