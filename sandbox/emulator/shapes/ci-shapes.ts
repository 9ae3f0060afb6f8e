/** Check suites, check runs, statuses, workflows, runs and jobs, as GitHub's JSON shows them. */
import type {
  CheckRun,
  CheckSuite,
  CommitStatus,
  Issue,
  Repo,
  Workflow,
  WorkflowArtifact,
  WorkflowJob,
  WorkflowRun,
} from "../store.js";
import { encodeNodeId } from "../store.js";
import { type JsonObject, iso, noreplyEmail } from "./json-shape.js";
import { PullShapes } from "./pull-shapes.js";

export class CiShapes extends PullShapes {
  private pullsForSha(repo: Repo, sha: string): JsonObject[] {
    return this.store
      .listPulls(repo.fullName)
      .filter((p) => p.pull.head.sha === sha && p.state === "open")
      .map((p) => ({
        url: `${this.repoApi(repo)}/pulls/${p.number}`,
        id: p.pull.id,
        number: p.number,
        head: {
          ref: p.pull.head.ref,
          sha: p.pull.head.sha,
          repo: { id: repo.id, url: this.repoApi(repo), name: repo.name },
        },
        base: {
          ref: p.pull.base.ref,
          sha: p.pull.base.sha,
          repo: { id: repo.id, url: this.repoApi(repo), name: repo.name },
        },
      }));
  }

  /** The fields a check suite shows both on its own and inside each of its check runs. */
  private checkSuiteCommon(repo: Repo, suite: CheckSuite): JsonObject {
    return {
      id: suite.id,
      node_id: suite.nodeId,
      head_branch: suite.headBranch,
      head_sha: suite.headSha,
      status: suite.status,
      conclusion: suite.conclusion,
      url: `${this.repoApi(repo)}/check-suites/${suite.id}`,
      before: null,
      after: suite.headSha,
      pull_requests: this.pullsForSha(repo, suite.headSha),
      app: this.appObject(suite.appSlug),
    };
  }

  checkSuite(repo: Repo, suite: CheckSuite): JsonObject {
    const runs = this.store.listCheckRuns(repo.fullName, suite.headSha, { suiteId: suite.id });
    return {
      ...this.checkSuiteCommon(repo, suite),
      repository: this.repository(repo),
      created_at: iso(suite.createdAt),
      updated_at: iso(suite.updatedAt),
      head_commit: {
        id: suite.headSha,
        tree_id: suite.headSha,
        message: "",
        timestamp: iso(suite.createdAt),
        author: { name: "sandbox", email: "sandbox@users.noreply.github.com" },
        committer: { name: "sandbox", email: "sandbox@users.noreply.github.com" },
      },
      latest_check_runs_count: runs.length,
      check_runs_url: `${this.repoApi(repo)}/check-suites/${suite.id}/check-runs`,
      rerequestable: true,
      runs_rerequestable: true,
    };
  }

  checkRun(repo: Repo, run: CheckRun): JsonObject {
    const suite = this.store.getCheckSuite(repo.fullName, run.checkSuiteId);
    return {
      id: run.id,
      head_sha: run.headSha,
      node_id: run.nodeId,
      external_id: run.externalId,
      url: `${this.repoApi(repo)}/check-runs/${run.id}`,
      html_url: `${this.repoHtml(repo)}/runs/${run.id}`,
      details_url: run.detailsUrl,
      status: run.status,
      conclusion: run.conclusion,
      started_at: iso(run.startedAt),
      completed_at: iso(run.completedAt),
      output: {
        title: run.output.title,
        summary: run.output.summary,
        text: run.output.text,
        annotations_count: 0,
        annotations_url: `${this.repoApi(repo)}/check-runs/${run.id}/annotations`,
      },
      name: run.name,
      check_suite: suite
        ? {
            ...this.checkSuiteCommon(repo, suite),
            created_at: iso(suite.createdAt),
            updated_at: iso(suite.updatedAt),
          }
        : null,
      app: this.appObject(run.appSlug),
      pull_requests: this.pullsForSha(repo, run.headSha),
    };
  }

  status(repo: Repo, status: CommitStatus): JsonObject {
    return {
      url: `${this.repoApi(repo)}/statuses/${status.sha}`,
      avatar_url: null,
      id: status.id,
      node_id: status.nodeId,
      state: status.state,
      description: status.description,
      target_url: status.targetUrl,
      context: status.context,
      created_at: iso(status.createdAt),
      updated_at: iso(status.updatedAt),
      creator: this.user(status.creator),
    };
  }

  workflow(repo: Repo, workflow: Workflow): JsonObject {
    return {
      id: workflow.id,
      node_id: workflow.nodeId,
      name: workflow.name,
      path: workflow.path,
      state: workflow.state,
      created_at: iso(workflow.createdAt),
      updated_at: iso(workflow.updatedAt),
      url: `${this.repoApi(repo)}/actions/workflows/${workflow.id}`,
      html_url: `${this.repoHtml(repo)}/blob/${repo.defaultBranch}/${workflow.path}`,
      badge_url: `${this.repoHtml(repo)}/workflows/${encodeURIComponent(workflow.name)}/badge.svg`,
    };
  }

  /** https://docs.github.com/en/rest/actions/artifacts#get-an-artifact */
  artifact(repo: Repo, artifact: WorkflowArtifact): JsonObject {
    const run = this.store.getWorkflowRun(repo.fullName, artifact.runId);
    const api = `${this.repoApi(repo)}/actions/artifacts/${artifact.id}`;
    return {
      id: artifact.id,
      node_id: artifact.nodeId,
      name: artifact.name,
      size_in_bytes: artifact.sizeInBytes,
      url: api,
      archive_download_url: `${api}/zip`,
      expired: artifact.expiresAt.getTime() <= this.store.clock().getTime(),
      digest: artifact.digest,
      created_at: iso(artifact.createdAt),
      expires_at: iso(artifact.expiresAt),
      updated_at: iso(artifact.createdAt),
      workflow_run: {
        id: artifact.runId,
        repository_id: repo.id,
        head_repository_id: repo.id,
        head_branch: run?.headBranch ?? null,
        head_sha: run?.headSha ?? "",
      },
    };
  }

  workflowRun(repo: Repo, run: WorkflowRun): JsonObject {
    const api = `${this.repoApi(repo)}/actions/runs/${run.id}`;
    const workflow = this.store.listWorkflows(repo.fullName).find((w) => w.id === run.workflowId);
    const pulls = run.pullRequests
      .map((n) => this.store.getPull(repo.fullName, n))
      .filter((p): p is Issue => !!p?.pull)
      .map((p) => ({
        url: `${this.repoApi(repo)}/pulls/${p.number}`,
        id: p.pull!.id,
        number: p.number,
        head: {
          ref: p.pull!.head.ref,
          sha: p.pull!.head.sha,
          repo: { id: repo.id, url: this.repoApi(repo), name: repo.name },
        },
        base: {
          ref: p.pull!.base.ref,
          sha: p.pull!.base.sha,
          repo: { id: repo.id, url: this.repoApi(repo), name: repo.name },
        },
      }));
    return {
      id: run.id,
      name: run.name,
      node_id: run.nodeId,
      head_branch: run.headBranch,
      head_sha: run.headSha,
      path: workflow?.path ?? "",
      display_title: run.displayTitle,
      run_number: run.runNumber,
      event: run.event,
      status: run.status,
      conclusion: run.conclusion,
      workflow_id: run.workflowId,
      check_suite_id: run.id + 1,
      check_suite_node_id: encodeNodeId("CheckSuite", `run-${run.id}`),
      url: api,
      html_url: `${this.repoHtml(repo)}/actions/runs/${run.id}`,
      pull_requests: pulls,
      created_at: iso(run.createdAt),
      updated_at: iso(run.updatedAt),
      actor: this.user(run.actor),
      triggering_actor: this.user(run.triggeringActor),
      run_attempt: run.runAttempt,
      referenced_workflows: [],
      run_started_at: iso(run.runStartedAt ?? run.createdAt),
      jobs_url: `${api}/jobs`,
      logs_url: `${api}/logs`,
      check_suite_url: `${this.repoApi(repo)}/check-suites/${run.id + 1}`,
      artifacts_url: `${api}/artifacts`,
      cancel_url: `${api}/cancel`,
      rerun_url: `${api}/rerun`,
      previous_attempt_url: run.runAttempt > 1 ? `${api}/attempts/${run.runAttempt - 1}` : null,
      workflow_url: `${this.repoApi(repo)}/actions/workflows/${run.workflowId}`,
      head_commit: {
        id: run.headSha,
        tree_id: run.headSha,
        message: run.displayTitle,
        timestamp: iso(run.createdAt),
        author: { name: run.actor, email: noreplyEmail(run.actor) },
        committer: { name: "GitHub", email: "noreply@github.com" },
      },
      repository: this.repository(repo),
      head_repository: this.repository(repo),
    };
  }

  job(repo: Repo, run: WorkflowRun, job: WorkflowJob): JsonObject {
    return {
      id: job.id,
      run_id: run.id,
      run_url: `${this.repoApi(repo)}/actions/runs/${run.id}`,
      run_attempt: run.runAttempt,
      node_id: job.nodeId,
      head_sha: run.headSha,
      url: `${this.repoApi(repo)}/actions/jobs/${job.id}`,
      html_url: `${this.repoHtml(repo)}/actions/runs/${run.id}/job/${job.id}`,
      status: job.status === "requested" ? "queued" : job.status,
      conclusion: job.conclusion,
      created_at: iso(run.createdAt),
      started_at: iso(job.startedAt ?? run.createdAt),
      completed_at: iso(job.completedAt),
      name: job.name,
      steps: job.steps.map((s) => ({
        name: s.name,
        number: s.number,
        status: s.status,
        conclusion: s.conclusion,
        started_at: null,
        completed_at: null,
      })),
      check_run_url: `${this.repoApi(repo)}/check-runs/${job.id}`,
      labels: ["ubuntu-latest"],
      runner_id: 1,
      runner_name: "sandbox-runner",
      runner_group_id: 1,
      runner_group_name: "sandbox",
      workflow_name: run.name,
      head_branch: run.headBranch,
    };
  }
}
