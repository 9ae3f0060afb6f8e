/** GraphQL commits, their check runs, statuses and status rollup. */
import type { CheckRun, CommitStatus, Repo } from "../store.js";
import { type Obj, isoDate, upper } from "./graphql-values.js";
import { type PageArgs, connection } from "./relay-connection.js";
import { NodesBase } from "./nodes-base.js";

export abstract class CommitNodes extends NodesBase {
  commit(repo: Repo, sha: string): Obj {
    const store = this.store;
    const info = () => store.getCommit(repo.fullName, sha);
    return {
      __typename: "Commit",
      id: `C_${Buffer.from(`Commit:${sha}`).toString("base64url")}`,
      oid: sha,
      abbreviatedOid: sha.slice(0, 7),
      url: `${this.ctx.shapes.repoHtml(repo)}/commit/${sha}`,
      resourcePath: `/${repo.fullName}/commit/${sha}`,
      message: async () => (await info())?.message ?? "",
      messageHeadline: async () => ((await info())?.message ?? "").split("\n")[0] ?? "",
      committedDate: async () => {
        const c = await info();
        return c?.committerDate ?? c?.authorDate ?? isoDate(repo.createdAt);
      },
      authoredDate: async () => (await info())?.authorDate ?? isoDate(repo.createdAt),
      pushedDate: null,
      statusCheckRollup: () => this.rollup(repo, sha),
      status: () => {
        const combined = store.combinedStatus(repo.fullName, sha);
        if (combined.statuses.length === 0) return null;
        return {
          __typename: "Status",
          id: `ST_${sha}`,
          state: combined.state.toUpperCase(),
          contexts: combined.statuses.map((s) => this.statusContext(repo, s)),
        };
      },
      checkSuites: (args: PageArgs) =>
        connection("checkSuites", store.listCheckSuites(repo.fullName, sha), args, (s) => ({
          __typename: "CheckSuite",
          id: s.nodeId,
          databaseId: s.id,
          status: s.status.toUpperCase(),
          conclusion: upper(s.conclusion),
          app: this.app(s.appSlug),
          checkRuns: (a: PageArgs) =>
            connection("checkRuns", store.listCheckRuns(repo.fullName, sha, { suiteId: s.id }), a, (r) =>
              this.checkRun(repo, r),
            ),
        })),
      repository: () => this.repository(repo),
    };
  }

  checkRun(repo: Repo, run: CheckRun): Obj {
    const suite = this.store.getCheckSuite(repo.fullName, run.checkSuiteId);
    return {
      __typename: "CheckRun",
      id: run.nodeId,
      databaseId: run.id,
      name: run.name,
      status: run.status.toUpperCase(),
      conclusion: upper(run.conclusion),
      title: run.output.title,
      summary: run.output.summary,
      text: run.output.text,
      detailsUrl: run.detailsUrl,
      externalId: run.externalId,
      url: `${this.ctx.shapes.repoHtml(repo)}/runs/${run.id}`,
      permalink: `${this.ctx.shapes.repoHtml(repo)}/runs/${run.id}`,
      startedAt: isoDate(run.startedAt),
      completedAt: isoDate(run.completedAt),
      isRequired: () => false,
      checkSuite: {
        __typename: "CheckSuite",
        id: suite?.nodeId ?? "",
        databaseId: suite?.id ?? null,
        status: suite?.status.toUpperCase() ?? "QUEUED",
        conclusion: upper(suite?.conclusion ?? null),
        app: this.app(run.appSlug),
        workflowRun: null,
      },
    };
  }

  statusContext(repo: Repo, status: CommitStatus): Obj {
    return {
      __typename: "StatusContext",
      id: status.nodeId,
      context: status.context,
      state: status.state.toUpperCase(),
      description: status.description,
      targetUrl: status.targetUrl,
      createdAt: isoDate(status.createdAt),
      creator: this.actor(status.creator),
      avatarUrl: null,
      isRequired: () => false,
      commit: () => this.commit(repo, status.sha),
    };
  }

  rollup(repo: Repo, sha: string): Obj | null {
    const runs = this.store.listCheckRuns(repo.fullName, sha);
    const latest = new Map<string, CheckRun>();
    for (const r of runs) if (!latest.has(`${r.appSlug}|${r.name}`)) latest.set(`${r.appSlug}|${r.name}`, r);
    const checkRuns = [...latest.values()].reverse();
    const statuses = this.store.combinedStatus(repo.fullName, sha).statuses;
    if (checkRuns.length === 0 && statuses.length === 0) return null;
    const bad = ["failure", "cancelled", "timed_out", "action_required", "startup_failure", "stale"];
    let state = "SUCCESS";
    if (statuses.some((s) => s.state === "error")) state = "ERROR";
    else if (
      checkRuns.some((r) => r.status === "completed" && bad.includes(r.conclusion ?? "")) ||
      statuses.some((s) => s.state === "failure")
    )
      state = "FAILURE";
    else if (checkRuns.some((r) => r.status !== "completed") || statuses.some((s) => s.state === "pending"))
      state = "PENDING";
    type Ctx = { kind: "run"; run: CheckRun } | { kind: "status"; status: CommitStatus };
    const contexts: Ctx[] = [
      ...checkRuns.map((run) => ({ kind: "run" as const, run })),
      ...statuses.map((status) => ({ kind: "status" as const, status })),
    ];
    return {
      __typename: "StatusCheckRollup",
      id: `SCR_${sha}`,
      state,
      commit: () => this.commit(repo, sha),
      contexts: (args: PageArgs) => ({
        ...connection("contexts", contexts, args, (c) =>
          c.kind === "run" ? this.checkRun(repo, c.run) : this.statusContext(repo, c.status),
        ),
        checkRunCount: checkRuns.length,
        statusContextCount: statuses.length,
        checkRunCountsByState: [],
        statusContextCountsByState: [],
      }),
    };
  }
}
