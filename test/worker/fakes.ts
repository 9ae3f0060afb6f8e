/** In-memory stand-ins for the worker's dependencies: GitHub, git, the agent and the quality commands. */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type AutopilotConfig, DEFAULT_CONFIG } from "../../src/core/config/index.js";
import type { Permission } from "../../src/core/world.js";
import type { WorkerGitHub } from "../../src/github/worker-github.js";
import type {
  FailingCheck,
  ReviewFeedback,
  WorkerComment,
  WorkerIssue,
  WorkerPull,
} from "../../src/github/worker-github-data.js";
import type { AgentOutput } from "../../src/core/presets/preset-types.js";
import type { AgentRunRequest, AgentRunResult } from "../../src/worker/job/agent-iteration.js";
import type { BranchSetup } from "../../src/worker/checkout/private-git.js";
import type {
  QualityRunner,
  WorkerDeps,
  WorkerGit,
  WorkerInputs,
  WorkerLog,
} from "../../src/worker/worker-deps.js";
import type { QualityGateOptions } from "../../src/worker/worker-deps.js";
import type { QualityCommandResult } from "../../src/worker/processes/quality.js";

/** The account id of the fake's token (Autopilot's bot). */
const FAKE_APP_ID = 9_000_001;

export class FakeGitHub implements WorkerGitHub {
  requestCount = 0;
  issues = new Map<number, WorkerIssue>();
  comments: (WorkerComment & { issue: number })[] = [];
  permissions = new Map<string, Permission>();
  pulls: WorkerPull[] = [];
  labels = new Map<number, Set<string>>();
  trackingBody: string | null = null;
  failingChecks: FailingCheck[] = [];
  reviewFeedback: ReviewFeedback[] = [];
  calls: string[] = [];
  /** Reactions the worker added: comment id and content. */
  reactions: { commentId: number; content: string }[] = [];
  /** The last answer per `listCommentsSince` URL, as GitHub's ETag names it: the same answer again is a free 304. */
  private readonly sinceAnswers = new Map<string, string>();
  private nextId = 100;
  private time = Date.parse("2026-11-22T00:00:00Z");

  constructor() {
    this.issues.set(7, {
      number: 7,
      title: "Add a greeting",
      body: "Create hello.txt with a greeting.",
      state: "open",
      labels: ["autopilot:in-progress"],
      author: "alice",
    });
    this.labels.set(7, new Set(["autopilot:in-progress"]));
    this.permissions.set("alice", "write");
  }

  private tick(call: string): void {
    this.requestCount++;
    this.calls.push(call);
  }

  private stamp(): string {
    this.time += 1000;
    return new Date(this.time).toISOString();
  }

  addComment(issue: number, author: string, body: string, authorType = "User"): WorkerComment {
    const at = this.stamp();
    // Autopilot's bot has one account id; everyone else gets their own.
    const authorId = author === "autopilot[bot]" ? FAKE_APP_ID : 5000 + this.nextId;
    const comment = {
      id: this.nextId++,
      issue,
      author,
      authorType,
      authorId,
      body,
      createdAt: at,
      updatedAt: at,
    };
    this.comments.push(comment);
    return comment;
  }

  async getIssue(issue: number) {
    this.tick(`getIssue ${issue}`);
    const found = this.issues.get(issue);
    if (!found) throw Object.assign(new Error("Not Found"), { status: 404 });
    return { ...found, labels: [...(this.labels.get(issue) ?? [])] };
  }
  async listIssueComments(issue: number) {
    this.tick(`listIssueComments ${issue}`);
    return this.comments.filter((c) => c.issue === issue).map((c) => ({ ...c }));
  }
  /** GitHub's `since` listing, sent conditionally: an unchanged answer is a 304, which is not charged. */
  async listCommentsSince(issue: number, since: string) {
    const found = this.comments
      .filter((c) => c.issue === issue && c.updatedAt >= since)
      .map((c) => ({ ...c }));
    const key = `${issue} ${since}`;
    const answer = JSON.stringify(found);
    if (this.sinceAnswers.get(key) === answer) this.calls.push(`listCommentsSince ${issue} (304)`);
    else this.tick(`listCommentsSince ${issue}`);
    this.sinceAnswers.set(key, answer);
    return found;
  }
  async reactToComment(commentId: number, content: "eyes") {
    this.tick(`reactToComment ${commentId} ${content}`);
    this.reactions.push({ commentId, content });
  }
  /** One request, as the client's GraphQL query: the comments (and the viewer). */
  async listIssueCommentsAndSelf(issue: number) {
    this.tick(`listIssueCommentsAndSelf ${issue}`);
    return this.comments.filter((c) => c.issue === issue).map((c) => ({ ...c }));
  }
  /** One request, as the client's GraphQL query: the comments and the issue as they are now. */
  async readIssueWithComments(
    issue: number,
    _labels: string[],
  ): Promise<{
    comments: WorkerComment[];
    issue: WorkerIssue | null;
  }> {
    this.tick(`readIssueWithComments ${issue}`);
    const found = this.issues.get(issue);
    if (!found) throw Object.assign(new Error("Not Found"), { status: 404 });
    return {
      comments: this.comments.filter((c) => c.issue === issue).map((c) => ({ ...c })),
      issue: { ...found, labels: [...(this.labels.get(issue) ?? [])] },
    };
  }
  /** One request, as the client's GraphQL query. */
  async readIssueAndLabels(issue: number, _labels: string[]) {
    this.tick(`readIssueAndLabels ${issue}`);
    const found = this.issues.get(issue);
    if (!found) throw Object.assign(new Error("Not Found"), { status: 404 });
    return { ...found, labels: [...(this.labels.get(issue) ?? [])] };
  }
  /** One request, as the client's GraphQL mutation. */
  async labelForReview(pr: number, issue: number, add: string, remove: string) {
    this.tick(`labelForReview ${pr} ${issue} ${add} ${remove}`);
    for (const [n, drop] of [
      [pr, null],
      [issue, remove],
    ] as const) {
      const set = this.labels.get(n) ?? new Set<string>();
      set.add(add);
      if (drop) set.delete(drop);
      this.labels.set(n, set);
    }
  }
  async getComment(id: number) {
    this.tick(`getComment ${id}`);
    const found = this.comments.find((c) => c.id === id);
    return found ? { ...found } : null;
  }
  async createComment(issue: number, body: string) {
    this.tick(`createComment ${issue}`);
    return this.addComment(issue, "autopilot[bot]", body, "Bot");
  }
  async updateComment(id: number, body: string) {
    this.tick(`updateComment ${id}`);
    const found = this.comments.find((c) => c.id === id);
    if (!found) throw Object.assign(new Error("Not Found"), { status: 404 });
    found.body = body;
    found.updatedAt = this.stamp();
  }
  async deleteComment(id: number) {
    this.tick(`deleteComment ${id}`);
    this.comments = this.comments.filter((c) => c.id !== id);
  }
  async getSelfId() {
    return FAKE_APP_ID;
  }
  async getSelf() {
    return { id: FAKE_APP_ID, login: "autopilot[bot]" };
  }
  async getPermission(login: string) {
    this.tick(`getPermission ${login}`);
    return this.permissions.get(login) ?? "none";
  }
  async getIssueBody(issue: number) {
    this.tick(`getIssueBody ${issue}`);
    return this.trackingBody;
  }
  async findOpenPull(branch: string) {
    this.tick(`findOpenPull ${branch}`);
    return this.pulls.find((p) => p.headRef === branch && p.state === "open") ?? null;
  }
  async createPull(input: { title: string; body: string; head: string; base: string }) {
    this.tick("createPull");
    const pull: WorkerPull = {
      number: this.nextId++,
      title: input.title,
      body: input.body,
      state: "open",
      headRef: input.head,
      headSha: "sha",
      baseRef: input.base,
      labels: [],
      url: "https://github.example/pull",
    };
    this.pulls.push(pull);
    return pull;
  }
  async updatePull(pr: number, input: { title?: string; body?: string }) {
    this.tick(`updatePull ${pr}`);
    const pull = this.pulls.find((p) => p.number === pr)!;
    Object.assign(pull, input);
  }
  /** Reviews posted (the reviewer's verdicts), in order. */
  reviews: {
    pr: number;
    commitId: string;
    body: string;
    comments: { path: string; line: number; body: string }[];
  }[] = [];
  async postReview(
    pr: number,
    review: { commitId: string; body: string; comments: { path: string; line: number; body: string }[] },
  ) {
    this.tick(`postReview ${pr}`);
    this.reviews.push({ pr, ...review });
  }
  async addLabels(issue: number, labels: string[]) {
    this.tick(`addLabels ${issue} ${labels.join(",")}`);
    const set = this.labels.get(issue) ?? new Set<string>();
    for (const label of labels) set.add(label);
    this.labels.set(issue, set);
  }
  async removeLabel(issue: number, label: string) {
    this.tick(`removeLabel ${issue} ${label}`);
    this.labels.get(issue)?.delete(label);
  }
  async moveLabel(issue: number, add: string, remove: string) {
    await this.addLabels(issue, [add]);
    await this.removeLabel(issue, remove);
  }
  async listFailingChecks(ref: string) {
    this.tick(`listFailingChecks ${ref}`);
    return this.failingChecks;
  }
  async listReviewFeedback(pr: number) {
    this.tick(`listReviewFeedback ${pr}`);
    return this.reviewFeedback;
  }
  async getDefaultBranch() {
    this.tick("getDefaultBranch");
    return "main";
  }

  progressComments(issue = 7) {
    return this.comments.filter((c) => c.issue === issue && c.body.includes("autopilot:worker-result"));
  }
}

/** Git as a counter: the agent "changes files" by calling `touch()`. */
class FakeGit implements WorkerGit {
  head = 0;
  dirty = false;
  pushes: number[] = [];
  commits: string[] = [];
  resumed = false;
  calls: string[] = [];
  configTampered = false;
  diff = "";
  paths: string[] = [];
  pushError: Error | null = null;

  touch(): void {
    this.dirty = true;
  }
  /** The agent committed by itself. */
  agentCommit(message = "agent commit"): void {
    this.head++;
    this.commits.push(message);
  }
  async prepare() {
    this.calls.push("prepare");
    return [];
  }
  async addExcludes() {}
  async setupBranch(_branch: string, _default: string): Promise<BranchSetup> {
    this.calls.push("setupBranch");
    return { resumed: this.resumed, base: "base", head: `sha${this.head}` };
  }
  async restoreConfig() {
    const was = this.configTampered;
    this.configTampered = false;
    return was;
  }
  async recoverBranch() {
    return [];
  }
  async headSha() {
    return this.adoptedHead ?? `sha${this.head}`;
  }
  /** Set to make the next hand-back refused (what the tree check says of it). */
  refused: string[] = [];
  async workState() {
    return { head: `sha${this.head}`, changed: this.dirty, refused: this.refused };
  }
  async commitAll(message: string) {
    this.calls.push("commit");
    // Notes always change; a commit happens every iteration. "dirty" marks the agent's own work.
    this.head++;
    this.adoptedHead = null;
    this.commits.push(message);
    this.dirty = false;
    return `sha${this.head}`;
  }
  async push(_branch: string, head?: string) {
    this.calls.push("push");
    // The loop keeps HEAD in mind instead of asking: what it pushes must be HEAD as git has it.
    if (head !== undefined && head !== `sha${this.head}`)
      throw new Error(`pushed ${head}, but HEAD is sha${this.head}`);
    if (this.pushError) throw this.pushError;
    this.pushes.push(this.head);
    return `sha${this.head}`;
  }
  async resetWorkTree() {
    this.calls.push("resetWorkTree");
  }
  async discardWork() {
    this.calls.push("discardWork");
    this.dirty = false;
  }
  async publishPlan(_branch: string, head: string) {
    this.calls.push("publishPlan");
    return {
      remoteHead: null,
      commits: [{ sha: head, message: "m", parents: ["base"], tree: "t", baseTree: "b", entries: [] }],
    };
  }
  async adoptPublished(_branch: string, published: string) {
    this.calls.push("adoptPublished");
    this.adopted.push(published);
    this.adoptedHead = published;
  }
  /** GitHub's commits the branch was moved onto (`commits: signed`); the last is HEAD until the next commit. */
  adopted: string[] = [];
  private adoptedHead: string | null = null;
  async countCommits() {
    return this.commits.length;
  }
  conflicts: string[] = [];
  notesRemoved = 0;
  async mergeDefault() {
    this.calls.push("mergeDefault");
    return { merged: false, conflicts: this.conflicts, base: "base" };
  }
  async removeFile() {
    this.notesRemoved++;
    this.head++;
    this.commits.push("notes aside");
    return `sha${this.head}`;
  }
  async restoreDeletedFile() {
    return false;
  }
  async diffFrom() {
    return this.diff;
  }
  async changedPaths() {
    return this.paths;
  }
  async gateHits() {
    return [];
  }
}

export interface ScriptedRun {
  /** The agent's final message. */
  message?: string;
  exitCode?: number | null;
  /** The signal that ended the process (exitCode is then null). */
  signal?: NodeJS.Signals;
  isError?: boolean;
  errorText?: string;
  /** What the CLI printed (for the classifier); defaults to the message. */
  raw?: string;
  usage?: { input: number; output: number };
  costUsd?: number;
  commands?: string[];
  timedOut?: boolean;
  spawnError?: string;
  /** Changes files. */
  work?: boolean;
  /** Side effects (advance the clock, tamper with things). */
  effect?: (request: AgentRunRequest) => void;
}

class FakeAgent {
  requests: AgentRunRequest[] = [];
  constructor(
    private readonly script: ScriptedRun[],
    private readonly git: FakeGit,
  ) {}

  run = async (request: AgentRunRequest): Promise<AgentRunResult> => {
    this.requests.push(request);
    const step = this.script[Math.min(this.requests.length - 1, this.script.length - 1)] ?? {};
    if (step.work !== false) this.git.touch();
    step.effect?.(request);
    const output: AgentOutput = {
      finalMessage: step.message ?? "",
      isError: step.isError ?? (step.exitCode ?? 0) !== 0,
      errorText: step.errorText ?? "",
      usage: step.usage ?? { input: 100, output: 10 },
      costUsd: step.costUsd ?? 0.01,
      commands: step.commands ?? [],
    };
    return {
      preset: request.agent.preset,
      output,
      exitCode: step.exitCode === undefined ? 0 : step.exitCode,
      signal: step.signal ?? null,
      timedOut: step.timedOut ?? false,
      durationMs: 10,
      refusedEnv: [],
      rawOutput: step.raw ?? step.message ?? "",
      ...(step.spawnError ? { spawnError: step.spawnError } : {}),
    };
  };
}

class FakeQuality implements QualityRunner {
  runs = 0;
  /** The test gate's options each run was given (undefined for the project's setup commands). */
  gates: (QualityGateOptions | undefined)[] = [];
  /** The directory each run's commands ran in (null: the root), with the commands. */
  ran: { directory: string | null; commands: string[] }[] = [];
  /** What a failing command prints ({command} is replaced). */
  failureOutput = "FAIL {command}: expected 2 to be 3";
  constructor(
    /** One entry per gate run (the last repeats): true = every command passes. */
    private readonly outcomes: boolean[],
    private readonly commands = ["npm test"],
  ) {}
  async detect() {
    return this.commands;
  }
  async run(
    commands: string[],
    _timeoutMs: number,
    gate?: QualityGateOptions,
    directory?: string | null,
  ): Promise<QualityCommandResult[]> {
    const pass = this.outcomes[Math.min(this.runs, this.outcomes.length - 1)] ?? true;
    this.runs++;
    this.gates.push(gate);
    this.ran.push({ directory: directory ?? null, commands });
    return commands.map((command) => ({
      command,
      passed: pass,
      exitCode: pass ? 0 : 1,
      timedOut: false,
      durationMs: 5,
      output: pass ? "ok" : this.failureOutput.replace("{command}", command),
    }));
  }
}

const silentLog: WorkerLog & { lines: string[] } = {
  lines: [],
  debug() {},
  info(message) {
    silentLog.lines.push(message);
  },
  warning(message) {
    silentLog.lines.push(`warning: ${message}`);
  },
  error(message) {
    silentLog.lines.push(`error: ${message}`);
  },
  group(title) {
    silentLog.lines.push(title);
  },
  endGroup() {},
};

export function config(overrides: Record<string, unknown> = {}): AutopilotConfig {
  const base = structuredClone(DEFAULT_CONFIG) as AutopilotConfig;
  return deepAssign(base, overrides) as AutopilotConfig;
}

function deepAssign(
  target: Record<string, unknown>,
  source: Record<string, unknown>,
): Record<string, unknown> {
  for (const [key, value] of Object.entries(source)) {
    const current = target[key];
    if (
      value &&
      typeof value === "object" &&
      !Array.isArray(value) &&
      current &&
      typeof current === "object"
    ) {
      deepAssign(current as Record<string, unknown>, value as Record<string, unknown>);
    } else {
      target[key] = value;
    }
  }
  return target;
}

interface Harness {
  github: FakeGitHub;
  git: FakeGit;
  agent: FakeAgent;
  quality: FakeQuality;
  deps: WorkerDeps;
  inputs: WorkerInputs;
  sleeps: number[];
  clock: { now: number };
}

export async function harness(
  script: ScriptedRun[],
  options: { quality?: boolean[]; qualityCommands?: string[]; inputs?: Partial<WorkerInputs> } = {},
): Promise<Harness> {
  const github = new FakeGitHub();
  const git = new FakeGit();
  const agent = new FakeAgent(script, git);
  const quality = new FakeQuality(options.quality ?? [true], options.qualityCommands);
  const clock = { now: Date.parse("2026-11-22T01:00:00Z") };
  const sleeps: number[] = [];
  const workspace = await mkdtemp(join(tmpdir(), "autopilot-main-"));
  const inputs: WorkerInputs = {
    repo: "acme/widgets",
    issue: 7,
    attempt: 1,
    dispatchId: "7-1-abc",
    trackingIssue: 1,
    workspace,
    defaultBranch: "main",
    runUrl: "https://github.example/acme/widgets/actions/runs/1",
    ...options.inputs,
  };
  const deps: WorkerDeps = {
    git,
    agent: agent.run,
    quality,
    github,
    clock: () => clock.now,
    sleep: async (ms) => {
      sleeps.push(ms);
      clock.now += ms;
    },
    log: silentLog,
  };
  return { github, git, agent, quality, deps, inputs, sleeps, clock };
}
