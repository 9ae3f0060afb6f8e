/**
 * Performs the actions of a scenario's timeline: a person acts through the REST API with their own token
 * (comment, label, review, close, edit, open a PR from a fork, …), or the runner injects a fault (kill a worker
 * run or a controller, change the sandbox's faults, send a webhook with a bad signature).
 */
import { createOctokit } from "../../../src/github/transport/octokit.js";
import { forkBranchRef } from "../../emulator/store.js";
import { sendBadSignatureWebhook } from "../controllers/controller-fleet.js";
import { controllerMode } from "../controllers/controller-mode.js";
import type { ScenarioAction, ScenarioRule } from "./timeline-schema.js";
import type { FaultCheck } from "../scenario-report.js";
import type { ScenarioWorld } from "../scenario-world.js";
import type { RunningControllers } from "../controllers/start-controllers.js";

type TimelineAction = ScenarioRule["do"][number];

export class TimelineActor {
  private readonly octokits = new Map<string, ReturnType<typeof createOctokit>>();

  constructor(
    private readonly world: ScenarioWorld,
    private readonly controllers: RunningControllers,
    /** Where fault actions record their checks (they go into the report). */
    private readonly faultChecks: FaultCheck[],
  ) {}

  /** A REST client acting as one of the scenario's people. */
  asUser(login: string): ReturnType<typeof createOctokit> {
    let client = this.octokits.get(login);
    if (!client) {
      client = createOctokit({
        auth: this.world.sandbox.userToken(login),
        baseUrl: this.world.sandbox.url,
        retry: false,
        throttle: false,
      });
      this.octokits.set(login, client);
    }
    return client;
  }

  /** Performs one action; false when its target does not exist yet (the rule waits). */
  async perform(rule: ScenarioRule, action: TimelineAction): Promise<boolean> {
    return (await this.injectFault(action)) ?? (await this.personActs(rule, action as ScenarioAction));
  }

  /** A fault action's outcome; null when the action is not a fault. */
  private async injectFault(action: TimelineAction): Promise<boolean | null> {
    const { sandbox, store, actions, observer, progress, repo } = this.world;
    if (action.killController) {
      const k = action.killController;
      if (!this.controllers.armKill(k.instance, k.afterWrites, k.restartAfterSeconds)) return false;
      progress(
        "human",
        null,
        `fault: controller ${k.instance} will be killed after its next ${k.afterWrites} write(s)`,
      );
      return true;
    }
    if (action.badSignatureWebhook) {
      const urls = this.controllers.webhookUrls();
      if (urls.length === 0 && controllerMode(this.world.scenario) === "actions") {
        // The Actions-only controller has no webhook endpoint: GitHub starts its runs, nobody can post to it.
        progress("human", null, "fault: a bad-signature webhook has no endpoint to reach in Actions mode");
        return true;
      }
      for (const url of urls) {
        const status = await sendBadSignatureWebhook(url, {
          owner: repo.owner,
          repo: repo.name,
          installationId: store.installationFor(repo.full)?.id ?? store.installationId,
          issue: observer.tracking()?.number ?? 1,
          appId: sandbox.app.id,
        });
        this.faultChecks.push({
          name: "bad-signature webhook rejected",
          ok: status === 400,
          detail: `${url} answered ${status} (expected 400)`,
        });
        progress(
          "human",
          null,
          `fault: webhook with a bad signature sent; the controller answered ${status}`,
        );
      }
      return urls.length > 0;
    }
    if ("killRun" in action && action.killRun) {
      const run = actions
        .activeRuns()
        .find((r) => r.status === "in_progress" && Number(r.inputs.issue) === action.killRun!.issue);
      if (!run) return false;
      actions.killRun(run.id);
      progress("human", action.killRun.issue, `fault: worker run ${run.id} killed (lost runner)`);
      return true;
    }
    if ("faults" in action && action.faults) {
      sandbox.faults.set(action.faults);
      progress("human", null, "faults changed");
      return true;
    }
    return null;
  }

  private async personActs(rule: ScenarioRule, a: ScenarioAction): Promise<boolean> {
    const { store, observer: obs, progress } = this.world;
    const [owner, name] = a.repo
      ? (a.repo.split("/") as [string, string])
      : [this.world.repo.owner, this.world.repo.name];
    const repoFull = `${owner}/${name}`;
    if (!a.as) return true;
    const client = this.asUser(a.as);
    const pullTask = a.pr ?? rule.when.pr ?? rule.when.issue;
    const target =
      a.on === "tracking"
        ? (obs.tracking()?.number ?? null)
        : a.on === "pull"
          ? pullTask !== undefined
            ? (obs.pullFor(pullTask)?.number ?? null)
            : null
          : (a.on ?? rule.when.issue ?? rule.when.pr ?? null);
    if (a.forkPr) return this.openForkPr(a.as, a.forkPr);
    if (a.push) return this.pushToDefaultBranch(a.as, a.push);
    if (a.review) {
      const task = a.pr ?? rule.when.pr;
      const pull = task !== undefined ? obs.pullFor(task) : null;
      if (!pull) return false;
      const event =
        a.review === "approve" ? "APPROVE" : a.review === "request-changes" ? "REQUEST_CHANGES" : "COMMENT";
      await client.rest.pulls.createReview({
        owner,
        repo: name,
        pull_number: pull.number,
        event,
        ...(a.body ? { body: a.body } : {}),
        ...(a.comments ? { comments: a.comments } : {}),
      });
      return true;
    }
    if (a.resolveThreads || a.replyThreads) {
      const task = a.pr ?? rule.when.pr;
      const pull = task !== undefined ? obs.pullFor(task) : null;
      if (!pull) return false;
      const read = await client.graphql<{
        repository: {
          pullRequest: {
            reviewThreads: {
              nodes: { id: string; isResolved: boolean; comments: { nodes: { databaseId: number }[] } }[];
            };
          };
        };
      }>(
        `query($owner: String!, $name: String!, $number: Int!) {
          repository(owner: $owner, name: $name) {
            pullRequest(number: $number) {
              reviewThreads(first: 100) { nodes { id isResolved comments(first: 1) { nodes { databaseId } } } }
            }
          }
        }`,
        { owner, name, number: pull.number },
      );
      const open = read.repository.pullRequest.reviewThreads.nodes.filter((t) => !t.isResolved);
      for (const thread of open) {
        const first = thread.comments.nodes[0];
        if (a.replyThreads && first)
          await client.rest.pulls.createReplyForReviewComment({
            owner,
            repo: name,
            pull_number: pull.number,
            comment_id: first.databaseId,
            body: a.replyThreads,
          });
        else if (a.resolveThreads)
          await client.graphql(
            "mutation($id: ID!) { resolveReviewThread(input: { threadId: $id }) { thread { isResolved } } }",
            { id: thread.id },
          );
      }
      progress(
        "human",
        task ?? null,
        `@${a.as} ${a.replyThreads ? "replied in" : "resolved"} ${open.length} review conversation(s) on PR #${pull.number}`,
      );
      return true;
    }
    if (target === null) return false;
    // In another repository the narration names it (the progress line's issue number is the scenario's).
    const tell = (text: string) =>
      a.repo ? progress("human", null, `${a.repo}#${target}: ${text}`) : progress("human", target, text);
    if (a.comment !== undefined && a.times !== undefined) {
      for (let i = 1; i <= a.times; i++) {
        const body = `${a.comment} (${i}/${a.times})`;
        await client.rest.issues.createComment({ owner, repo: name, issue_number: target, body });
      }
      tell(`@${a.as} commented ${a.times} times: ${a.comment.split("\n")[0]!.slice(0, 100)}`);
    } else if (a.comment !== undefined) {
      await client.rest.issues.createComment({ owner, repo: name, issue_number: target, body: a.comment });
      tell(`@${a.as} commented: ${a.comment.split("\n")[0]!.slice(0, 100)}`);
    } else if (a.label !== undefined) {
      await client.rest.issues.addLabels({ owner, repo: name, issue_number: target, labels: [a.label] });
      tell(`@${a.as} added the label ${a.label}`);
    } else if (a.unlabel !== undefined) {
      await client.rest.issues.removeLabel({ owner, repo: name, issue_number: target, name: a.unlabel });
      tell(`@${a.as} removed the label ${a.unlabel}`);
    } else if (a.close) {
      await client.rest.issues.update({ owner, repo: name, issue_number: target, state: "closed" });
      tell(`@${a.as} closed the issue`);
    } else if (a.reopen) {
      await client.rest.issues.update({ owner, repo: name, issue_number: target, state: "open" });
      tell(`@${a.as} reopened the issue`);
    } else if (a.editBody !== undefined) {
      await client.rest.issues.update({ owner, repo: name, issue_number: target, body: a.editBody });
      progress(
        "human",
        target,
        `@${a.as} edited the issue's body: ${a.editBody.split("\n")[0]!.slice(0, 100)}`,
      );
    } else if (a.tick !== undefined) {
      const { data } = await client.rest.issues.get({ owner, repo: name, issue_number: target });
      const box = `- [ ] <!-- autopilot:${a.tick} -->`;
      const body = data.body ?? "";
      if (!body.includes(box)) throw new Error(`@${a.as} found no box "${a.tick}" to tick on #${target}`);
      await client.rest.issues.update({
        owner,
        repo: name,
        issue_number: target,
        body: body.replace(box, `- [x] <!-- autopilot:${a.tick} -->`),
      });
      progress("human", target, `@${a.as} ticked the box ${a.tick}`);
    } else if (a.corruptState) {
      const { data } = await client.rest.issues.get({ owner, repo: name, issue_number: target });
      const body = data.body ?? "";
      const garbled = body.replace(
        /(<!-- autopilot:state v\d+\s*)([\s\S]*?)(-->)/,
        (_m, head: string, json: string, tail: string) =>
          `${head}${json.slice(0, Math.floor(json.length / 2))} "edited by hand": [1, 2,\n${tail}`,
      );
      await client.rest.issues.update({ owner, repo: name, issue_number: target, body: garbled });
      progress("human", target, `@${a.as} edited the issue: the state block is now unreadable`);
    } else if (a.delete) {
      store.deleteIssue(repoFull, target, a.as);
      progress("human", target, `@${a.as} deleted the issue`);
    }
    return true;
  }

  /**
   * The person pushes one commit to the default branch. A push needs write access
   * (https://docs.github.com/en/organizations/managing-user-access-to-your-organizations-repositories/managing-repository-roles/repository-roles-for-an-organization):
   * anyone less is refused, and the scenario is wrong to ask for it.
   */
  private async pushToDefaultBranch(
    login: string,
    push: NonNullable<ScenarioAction["push"]>,
  ): Promise<boolean> {
    const { scenario, git, progress, store } = this.world;
    const { owner, name, full } = this.world.repo;
    const permission = store.getPermission(full, login) ?? "none";
    if (!["write", "maintain", "admin"].includes(permission))
      throw new Error(`@${login} (${permission}) cannot push to ${full}: a push needs write access`);
    const files = Object.fromEntries(
      Object.entries(push.files).map(([path, text]) => [
        path,
        text.replaceAll("{demo_agent}", this.world.agentCommand),
      ]),
    );
    const branch = push.branch ?? scenario.repo.defaultBranch;
    const before = await git.remote.resolveRef(owner, name, `refs/heads/${branch}`);
    await git.remote.seedRepo(owner, name, files, {
      branch,
      message: push.message,
      author: { name: login, email: `${login}@users.noreply.example` },
    });
    if (push.branch) {
      // GitHub records who pushed (the token's account): the record the stale-branch sweep reads.
      const after = await git.remote.resolveRef(owner, name, `refs/heads/${branch}`);
      await store.recordPush({
        repo: full,
        ref: `refs/heads/${branch}`,
        before: before ?? "0".repeat(40),
        after: after ?? "0".repeat(40),
        pusher: login,
      });
    }
    progress("human", null, `@${login} pushed "${push.message}" to ${branch}`);
    return true;
  }

  /** The person commits files on a branch of their fork and opens a pull request from it. */
  private async openForkPr(login: string, forkPr: NonNullable<ScenarioAction["forkPr"]>): Promise<boolean> {
    const { scenario, git, progress } = this.world;
    const { owner, name } = this.world.repo;
    const forkRef = forkBranchRef(login, forkPr.branch);
    const base = scenario.repo.defaultBranch;
    const baseSha = await git.remote.resolveRef(owner, name, `refs/heads/${base}`);
    if (!baseSha) return false;
    if (!(await git.remote.resolveRef(owner, name, forkRef)))
      await git.remote.createRef(owner, name, forkRef, baseSha);
    await git.remote.seedRepo(owner, name, forkPr.files, {
      branch: forkRef,
      message: forkPr.title,
      author: { name: login, email: `${login}@users.noreply.example` },
    });
    const { data } = await this.asUser(login).rest.pulls.create({
      owner,
      repo: name,
      head: `${login}:${forkPr.branch}`,
      base,
      title: forkPr.title,
      body: forkPr.body,
    });
    progress("human", null, `@${login} opened PR #${data.number} from a fork, branch ${forkPr.branch}`);
    return true;
  }
}
