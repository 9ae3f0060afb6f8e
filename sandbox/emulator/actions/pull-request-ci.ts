/**
 * CI on pull request heads: the repository's configured command run in a clone of every new head of an open
 * pull request, reported as a `ci` check run (queued at once, as GitHub queues it). Events caused by a run's
 * GITHUB_TOKEN start none, as on GitHub, unless the options say otherwise: "events triggered by the
 * GITHUB_TOKEN, with the exception of workflow_dispatch and repository_dispatch, will not create a new workflow
 * run". https://docs.github.com/en/actions/concepts/security/github_token
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { ActionsOptions, CiConfig } from "./actions-types.js";
import { fullRef } from "../git/git-ref-names.js";
import { gitEnv, run as runProcess } from "../proc.js";
import { killGroup, runnerBaseEnv } from "./step-process.js";
import type { Repo, SandboxStore, StoreEvent } from "../store.js";

export class PullRequestCi {
  private readonly seen = new Set<string>();
  private readonly processes = new Set<ChildProcess>();
  /** CI commands running now. */
  readonly runs = new Set<Promise<void>>();
  private readonly config: Record<string, CiConfig>;

  constructor(
    private readonly store: SandboxStore,
    private readonly options: ActionsOptions,
    private readonly workDir: string,
    private readonly isStopped: () => boolean,
  ) {
    this.config = { ...(options.ci ?? {}) };
  }

  /** Sets (or clears) the CI command of a repository. */
  setCi(repo: string, config: CiConfig | null): void {
    if (config) this.config[repo.toLowerCase()] = config;
    else delete this.config[repo.toLowerCase()];
  }

  private configFor(repo: string): CiConfig | undefined {
    return this.config[repo.toLowerCase()] ?? this.config[repo];
  }

  /** SIGKILLs every CI command's process group. */
  killAll(): void {
    for (const child of this.processes) killGroup(child, "SIGKILL");
  }

  /** Starts CI for the new heads of open pull requests a store event announces. */
  onStoreEvent(event: StoreEvent): void {
    const byGithubToken = event.sender === "github-actions[bot]" && !this.options.githubTokenTriggersCi;
    if (event.name === "pull_request" && ["opened", "synchronize", "reopened"].includes(event.action)) {
      const pull = event.pull;
      if (pull.state === "open" && pull.pull) {
        this.startCi(event.repo, pull.pull.head.sha, pull.pull.head.ref, pull.number, byGithubToken);
      }
    }
    // A merge queue's group: GitHub runs a workflow there only when it lists `merge_group` in `on:`
    // (https://docs.github.com/repositories/configuring-branches-and-merges-in-your-repository/configuring-pull-request-merges/managing-a-merge-queue#triggering-merge-group-checks-with-github-actions);
    // the configured command stands in for such a workflow only when its `mergeGroup` says it lists it.
    if (event.name === "merge_group" && event.action === "checks_requested") {
      if (this.configFor(event.repo.fullName)?.mergeGroup !== true) return;
      const branch = event.group.headRef.slice("refs/heads/".length);
      this.startCi(event.repo, event.group.headSha, branch, null, byGithubToken);
      return;
    }
    if (event.name === "push" && !event.push.deleted && event.push.ref.startsWith("refs/heads/")) {
      // Pushes to branches with open PRs: the synchronize above covers PRs whose head moved; this covers a
      // PR whose head the store already knew (e.g. a PR opened on a commit pushed earlier).
      const branch = event.push.ref.slice("refs/heads/".length);
      for (const pull of this.store.listPulls(event.repo.fullName)) {
        if (pull.state === "open" && pull.pull.head.ref === branch && !pull.pull.headRepo) {
          this.startCi(event.repo, event.push.after, branch, pull.number, byGithubToken);
        }
      }
    }
  }

  private startCi(repo: Repo, sha: string, branch: string, pr: number | null, byGithubToken: boolean): void {
    const config = this.configFor(repo.fullName);
    if (!config) return;
    const key = `${repo.fullName}@${sha}`;
    if (this.seen.has(key)) return;
    if (byGithubToken) {
      this.options.onEvent?.({
        type: "ci-skipped",
        repo: repo.fullName,
        sha,
        pr,
        reason:
          "the event was caused by a workflow's GITHUB_TOKEN, which starts no workflow runs (push with an App installation token)",
      });
      return;
    }
    this.seen.add(key);
    const name = config.name ?? "ci";
    // The check run exists before anyone can look at the new head (GitHub queues it at once too).
    const check = this.store.createCheckRun(repo.fullName, {
      name,
      headSha: sha,
      appSlug: "github-actions",
      status: "queued",
      actor: "github-actions[bot]",
    });
    const job = this.runCi(repo, sha, branch, pr, config, check.id).finally(() => this.runs.delete(job));
    this.runs.add(job);
  }

  private async runCi(
    repo: Repo,
    sha: string,
    branch: string,
    pr: number | null,
    config: CiConfig,
    checkId: number,
  ): Promise<void> {
    const emit = this.options.onEvent ?? (() => {});
    const dir = mkdtempSync(join(this.workDir, "ci-"));
    try {
      this.store.updateCheckRun(repo.fullName, checkId, { status: "in_progress", startedAt: new Date() });
      emit({ type: "ci-started", repo: repo.fullName, sha, pr });
      const source = this.options.git.remote.repoPath(repo.owner, repo.name);
      const clone = await runProcess("git", ["clone", "--quiet", "--no-checkout", source, dir], {
        env: gitEnv(),
      });
      if (clone.code !== 0) throw new Error(`clone failed: ${clone.stderr}`);
      const checkout = await runProcess("git", ["checkout", "--quiet", "--detach", sha], {
        cwd: dir,
        env: gitEnv(),
      });
      if (checkout.code !== 0) throw new Error(`checkout failed: ${checkout.stderr}`);
      const result = await this.spawnTracked(
        "bash",
        ["--noprofile", "--norc", "-eo", "pipefail", "-c", config.command],
        {
          cwd: dir,
          env: {
            ...runnerBaseEnv(join(dir, ".home")),
            CI: "true",
            GITHUB_ACTIONS: "true",
            GITHUB_SHA: sha,
            GITHUB_REF: fullRef(branch),
            GITHUB_REPOSITORY: repo.fullName,
          },
          timeoutMs: config.timeoutMs ?? 5 * 60_000,
        },
      );
      if (this.isStopped()) return;
      const passed = result.code === 0 && !result.timedOut;
      const tail = result.output.split("\n").slice(-60).join("\n").trim();
      const title = passed
        ? `${config.command} passed`
        : result.timedOut
          ? `${config.command} timed out`
          : `${config.command} failed (exit ${result.code ?? result.signal})`;
      this.store.updateCheckRun(repo.fullName, checkId, {
        conclusion: passed ? "success" : result.timedOut ? "timed_out" : "failure",
        output: {
          title,
          summary: `\`${config.command}\` ${passed ? "passed" : "failed"} on ${sha.slice(0, 7)}.\n\n\`\`\`\n${tail.slice(-6000)}\n\`\`\``,
          text: result.output.slice(-60_000),
        },
      });
      emit({
        type: "ci-completed",
        repo: repo.fullName,
        sha,
        pr,
        conclusion: passed ? "success" : "failure",
        tail,
      });
    } catch (error) {
      if (this.isStopped()) return;
      this.store.updateCheckRun(repo.fullName, checkId, {
        conclusion: "failure",
        output: { title: "CI could not run", summary: (error as Error).message },
      });
      emit({
        type: "ci-completed",
        repo: repo.fullName,
        sha,
        pr,
        conclusion: "failure",
        tail: (error as Error).message,
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  /** Spawns a process in its own group, collecting combined output; kills the group on timeout or stop. */
  private spawnTracked(
    command: string,
    args: string[],
    options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number },
  ): Promise<{ code: number | null; signal: NodeJS.Signals | null; output: string; timedOut: boolean }> {
    return new Promise((resolvePromise) => {
      const child = spawn(command, args, {
        cwd: options.cwd,
        env: options.env,
        detached: true,
        stdio: ["ignore", "pipe", "pipe"],
      });
      this.processes.add(child);
      let output = "";
      const append = (chunk: Buffer) => {
        output += chunk.toString("utf8");
        if (output.length > 200_000) output = output.slice(-100_000);
      };
      child.stdout?.on("data", append);
      child.stderr?.on("data", append);
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        killGroup(child, "SIGKILL");
      }, options.timeoutMs);
      child.on("error", (error) => {
        output += `\n${error.message}`;
      });
      child.on("close", (code, signal) => {
        clearTimeout(timer);
        this.processes.delete(child);
        resolvePromise({ code, signal, output, timedOut });
      });
    });
  }
}
