/**
 * The runner as the Actions runner starts it: inputs from INPUT_*, the workspace and repository from GITHUB_*,
 * outputs to GITHUB_OUTPUT, the summary to GITHUB_STEP_SUMMARY; GitHub's API answered by nock (every request
 * checked against GitHub's OpenAPI description), git against a local bare remote, a real custom agent.
 */
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import nock from "nock";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { renderWorkerResultMarker } from "../../src/core/tasks/worker-result.js";
import { run } from "../../src/worker/worker-action.js";
import { createValidatingFetch, type ValidatingFetch } from "../helpers/validating-fetch.js";
import { git, remoteAndClone } from "./fixtures/real.js";

const API = "https://api.github.com";
const R = "/repos/acme/widgets";
const TOKEN = "ghs_runnerSecretToken123";

let validating: ValidatingFetch;
let root: string;
const saved = { ...process.env };

beforeAll(async () => {
  validating = await createValidatingFetch();
});
beforeEach(() => nock.disableNetConnect());
afterEach(async () => {
  nock.cleanAll();
  nock.enableNetConnect();
  process.exitCode = 0;
  for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
  Object.assign(process.env, saved);
  if (root) await rm(root, { recursive: true, force: true });
});

const user = (login: string, type = "User") => ({ login, id: 1, type });

/** A comment as GitHub's GraphQL answers it, by the worker's own account (GraphQL names a bot without `[bot]`). */
const ownComment = (id: number, body: string) => ({
  databaseId: id,
  body,
  createdAt: "2026-11-22T00:00:00Z",
  updatedAt: "2026-11-22T00:00:00Z",
  author: { __typename: "Bot", login: "autopilot", databaseId: 1 },
});

/** The claim's query: the viewer (the worker's own account, id 1) and the task's comments. */
const claimAnswer = (comments: unknown[]) => ({
  data: {
    viewer: { databaseId: 1, login: "autopilot[bot]" },
    repository: { issue: { comments: { pageInfo: { hasNextPage: false }, nodes: comments } } },
  },
});

/** The task's query after the claim: the issue, its comments and the state labels' node ids. */
const taskAnswer = (comments: unknown[]) => ({
  data: {
    repository: {
      issue: {
        id: "I_7",
        number: 7,
        title: "Add a greeting",
        body: "Write hello.txt",
        state: "OPEN",
        author: { login: "alice" },
        labels: { nodes: [{ id: "LA_progress", name: "autopilot:in-progress" }] },
        comments: { pageInfo: { hasNextPage: false }, nodes: comments },
      },
      label0: { id: "LA_review", name: "autopilot:review" },
      label1: { id: "LA_blocked", name: "autopilot:blocked" },
      label2: { id: "LA_needs", name: "autopilot:needs-human" },
      label3: { id: "LA_progress", name: "autopilot:in-progress" },
    },
  },
});

async function actionEnv(
  workspace: string,
  inputs: Record<string, string>,
): Promise<{ output: string; summary: string }> {
  const output = join(root, "github_output");
  const summary = join(root, "step_summary");
  const event = join(root, "event.json");
  await writeFile(output, "");
  await writeFile(summary, "");
  await writeFile(event, JSON.stringify({ repository: { default_branch: "main" }, inputs }));
  await mkdir(join(root, "runner_temp"), { recursive: true });
  Object.assign(process.env, {
    GITHUB_WORKSPACE: workspace,
    GITHUB_REPOSITORY: "acme/widgets",
    GITHUB_EVENT_PATH: event,
    GITHUB_OUTPUT: output,
    GITHUB_STEP_SUMMARY: summary,
    GITHUB_SERVER_URL: "https://github.com",
    GITHUB_RUN_ID: "4242",
    RUNNER_TEMP: join(root, "runner_temp"),
    GITHUB_TOKEN: "ghs_defaultTokenNeverForTheAgent",
  });
  for (const [name, value] of Object.entries(inputs)) process.env[`INPUT_${name.toUpperCase()}`] = value;
  return { output, summary };
}

describe("the action runner", () => {
  it("reads its inputs and the repository's config, runs the task to a PR, and reports outputs and a summary", async () => {
    // The agent runs as another OS user with a private TMPDIR: it leaves its environment where the test can read it.
    const seen = await mkdtemp(join(tmpdir(), "autopilot-agent-env-"));
    await chmod(seen, 0o1777);
    const setup = await remoteAndClone({
      ".github/autopilot.yml": [
        "agents:",
        "  primary:",
        "    preset: custom",
        // It also tries a host the configuration does not allow, through the proxy it is given.
        `    command: "test -f {prompt_file} && echo hello > hello.txt && env > ${seen}/agent-env.txt && (curl -s -o /dev/null http://exfil.example.com/ || true) && echo '<promise>COMPLETE</promise>'"`,
        "qualityCommands: ['test -f hello.txt']",
        "maxIterations: 3",
      ].join("\n"),
    });
    root = setup.root;
    const files = await actionEnv(setup.workspace, {
      issue: "7",
      attempt: "1",
      "dispatch-id": "7-1-runner",
      "tracking-issue": "",
      "github-token": TOKEN,
      config: JSON.stringify({ maxParallel: 1 }),
      "git-user-name": "",
      "git-user-email": "",
    });

    let progress = "";
    const scope = nock(API)
      // The claim's read: the worker's own account (its claim believes only comments by it, and it is the
      // commit author) and the task's comments, in one query.
      .post("/graphql", (body: { query: string }) => body.query.includes("AutopilotWorkerClaim"))
      .reply(200, claimAnswer([]))
      .post(`${R}/issues/7/comments`)
      .reply(201, (_uri, body) => {
        progress = (body as { body: string }).body;
        return {
          id: 900,
          node_id: "IC_900",
          body: progress,
          user: user("autopilot[bot]", "Bot"),
          created_at: "2026-11-22T00:00:00Z",
          updated_at: "2026-11-22T00:00:00Z",
        };
      })
      // After the claim's write: the comments again (no rival came first), with the task issue and the node ids
      // of the state labels.
      .post("/graphql", (body: { query: string }) => body.query.includes("AutopilotWorkerTask"))
      .reply(200, () => taskAnswer([ownComment(900, progress)]))
      // Steering: the comments written since the job started, read at the iteration's boundary (none).
      .get(`${R}/issues/7/comments`)
      .query((q) => typeof q.since === "string" && !Number.isNaN(Date.parse(q.since)))
      .reply(200, [])
      .get(`${R}/pulls`)
      .query({ state: "open", head: "acme:autopilot/issue-7", per_page: "100" })
      .times(2)
      .reply(200, [])
      .post(`${R}/pulls`)
      .reply(201, {
        number: 12,
        title: "Add a greeting (#7)",
        body: "",
        state: "open",
        head: { ref: "autopilot/issue-7", sha: "abc" },
        base: { ref: "main" },
        labels: [],
        html_url: "https://github.com/acme/widgets/pull/12",
        node_id: "PR_12",
      })
      // The PR's review label and the task's move to review, in one mutation.
      .post(
        "/graphql",
        (body: { query: string; variables: Record<string, unknown> }) =>
          body.query.includes("AutopilotLabelForReview") &&
          JSON.stringify(body.variables) ===
            JSON.stringify({ pull: "PR_12", issue: "I_7", add: ["LA_review"], remove: ["LA_progress"] }),
      )
      .reply(200, { data: { pull: {}, added: {}, removed: {} } })
      .patch(`${R}/issues/comments/900`)
      .reply(200, (_uri, body) => {
        progress = (body as { body: string }).body;
        return {
          id: 900,
          body: progress,
          user: user("autopilot[bot]", "Bot"),
          created_at: "2026-11-22T00:00:00Z",
          updated_at: "2026-11-22T00:01:00Z",
        };
      });

    // Its sandbox shares that directory (agent-user.ts), as a runner machine's owner may.
    process.env.AUTOPILOT_AGENT_SHARED_DIRS = seen;
    const result = await run({ env: process.env, fetch: validating.fetch }).finally(() => {
      delete process.env.AUTOPILOT_AGENT_SHARED_DIRS;
    });

    expect(result?.result.result).toBe("complete");
    expect(scope.isDone()).toBe(true);
    expect(validating.problems).toEqual([]);
    const outputs = await readFile(files.output, "utf8");
    expect(outputs).toMatch(/result<<\S+\ncomplete\n/);
    expect(outputs).toMatch(/pr-number<<\S+\n12\n/);
    expect(outputs).toMatch(/iterations<<\S+\n1\n/);
    const summary = await readFile(files.summary, "utf8");
    expect(summary).toContain("Autopilot worker: #7, attempt 1");
    // The refused host, where the maintainer sees what to allow; in the namespace sandbox (the default) the
    // allow-list is enforced, so the summary does not call it unenforced.
    expect(summary).toContain("exfil.example.com:80 (1)");
    expect(progress).toContain("| Refused hosts | exfil.example.com:80 (1)");
    expect(summary).not.toContain("network allow-list not enforced");
    expect(summary).toContain("complete");
    // The progress comment ends with the machine-readable result.
    expect(progress).toContain(renderWorkerResultMarker(result!.result));
    expect(progress).toContain("https://github.com/acme/widgets/actions/runs/4242");
    // The branch was pushed, and neither the token nor the default token reached the agent.
    expect(git(setup.remote, "show", "autopilot/issue-7:hello.txt")).toBe("hello");
    // Every commit is the token's own account's, learnt by the claim's query (no query of its own).
    expect(git(setup.remote, "log", "--format=%an <%ae>", "main..autopilot/issue-7").split("\n")).toEqual(
      expect.arrayContaining(["autopilot[bot] <1+autopilot[bot]@users.noreply.github.com>"]),
    );
    expect(
      new Set(
        git(setup.remote, "log", "--format=%an <%ae>|%cn <%ce>", "main..autopilot/issue-7").split("\n"),
      ),
    ).toEqual(
      new Set([
        "autopilot[bot] <1+autopilot[bot]@users.noreply.github.com>|autopilot[bot] <1+autopilot[bot]@users.noreply.github.com>",
      ]),
    );
    const agentEnv = await readFile(join(seen, "agent-env.txt"), "utf8");
    await rm(seen, { recursive: true, force: true });
    expect(agentEnv).toContain("AUTOPILOT_ISSUE=7");
    expect(agentEnv).not.toContain(TOKEN);
    expect(agentEnv).not.toContain("ghs_defaultTokenNeverForTheAgent");
    for (const text of [outputs, summary, progress]) expect(text).not.toContain(TOKEN);
  });

  it("fails the job with every bad input named", async () => {
    root = (await remoteAndClone({ "README.md": "x" })).root;
    await actionEnv(join(root, "ws"), { issue: "seven", attempt: "0", "github-token": "" });
    const result = await run({ env: process.env, fetch: validating.fetch });
    expect(result).toBeNull();
    expect(process.exitCode).toBe(1);
  });

  it("ends with config_refused before any agent when the file is bad and the tracking issue keeps no last good configuration", async () => {
    const setup = await remoteAndClone({
      ".github/autopilot.yml":
        "maxIterations: lots\nagents: { primary: { preset: custom, command: 'touch ran {prompt_file}' } }\n",
    });
    root = setup.root;
    const files = await actionEnv(setup.workspace, {
      issue: "7",
      "dispatch-id": "7-1-runner",
      "tracking-issue": "1",
      "config-digest": "d".repeat(64),
      "github-token": TOKEN,
    });
    let progress = "";
    const comment = () => ({
      id: 900,
      body: progress,
      user: user("autopilot[bot]", "Bot"),
      created_at: "2026-11-22T00:00:00Z",
      updated_at: "2026-11-22T00:00:00Z",
    });
    const scope = nock(API)
      // The tracking issue: its state keeps no last good configuration.
      .get(`${R}/issues/1`)
      .reply(200, {
        number: 1,
        title: "Autopilot dashboard",
        body: "<!-- autopilot:tracking-issue -->",
        state: "open",
      })
      .post("/graphql", (body: { query: string }) => body.query.includes("AutopilotWorkerClaim"))
      .reply(200, claimAnswer([]))
      .post(`${R}/issues/7/comments`)
      .reply(201, (_uri, body) => {
        progress = (body as { body: string }).body;
        return comment();
      })
      .post("/graphql", (body: { query: string }) => body.query.includes("AutopilotWorkerTask"))
      .reply(200, () => taskAnswer([ownComment(900, progress)]))
      .patch(`${R}/issues/comments/900`)
      .reply(200, (_uri, body) => {
        progress = (body as { body: string }).body;
        return comment();
      });
    const result = await run({ env: process.env, fetch: validating.fetch });
    expect(scope.isDone()).toBe(true);
    expect(result?.result.result).toBe("config_refused");
    expect(result?.result.reason).toContain("dddddddddddd");
    // The result is written where the controller reads it, and no agent ran.
    expect(progress).toContain(renderWorkerResultMarker(result!.result));
    expect(await readFile(files.output, "utf8")).toMatch(/result<<\S+\nconfig_refused\n/);
    await expect(readFile(join(setup.workspace, "ran"))).rejects.toThrow();
  });
});
