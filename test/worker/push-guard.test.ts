/**
 * No secret is ever pushed: the worker with real git against a local bare remote, a command agent that writes a
 * key into a file, and the push guard wired as run-job.ts wires it (held-secrets.ts, push-guard.ts).
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { heldSecrets } from "../../src/worker/checkout/held-secrets.js";
import type { TaskCheckout } from "../../src/worker/checkout/task-checkout.js";
import { createPushGuard, gitPushDiff } from "../../src/worker/checkout/push-guard.js";
import { runWorker } from "../../src/worker/job/job.js";
import type { WorkerInputs } from "../../src/worker/worker-deps.js";
import { config, FakeGitHub } from "./fakes.js";
import { git, realDeps, remoteAndClone } from "./fixtures/real.js";

const MODEL_KEY = "sk-proj-Rk3v9QpZ2mT7xW1aB8cD4eF6gH0jK5lN";
const TOKEN = "ghs_must_not_leak";

const roots: string[] = [];
afterEach(async () => {
  for (const root of roots.splice(0)) await rm(root, { recursive: true, force: true });
});

function inputs(workspace: string): WorkerInputs {
  return {
    repo: "acme/widgets",
    issue: 7,
    attempt: 1,
    dispatchId: "7-1-guard",
    trackingIssue: null,
    workspace,
    defaultBranch: "main",
  };
}

/** Runs the worker with `command` as its agent; the agent gets MODEL_API_KEY, as a configured `env` name. */
async function runAgent(command: string, cancelWhen?: (workTree: string) => Promise<void>) {
  const { root, remote, workspace } = await remoteAndClone({ "README.md": "# demo\n" });
  const cancel = new AbortController();
  roots.push(root);
  const github = new FakeGitHub();
  const env = { ...process.env, GITHUB_TOKEN: TOKEN, MODEL_API_KEY: MODEL_KEY };
  const deps = await realDeps(workspace, github, { env: { MODEL_API_KEY: MODEL_KEY } });
  if (cancelWhen) void cancelWhen(deps.workTree).then(() => cancel.abort());
  const warnings: string[] = [];
  const cfg = config({
    agents: { primary: { preset: "custom", command, env: ["MODEL_API_KEY"] } },
    qualityCommands: ["true"],
  });
  const run = await runWorker(inputs(workspace), cfg, {
    ...deps,
    ...(cancelWhen ? { signal: cancel.signal } : {}),
    pushGuard: createPushGuard({
      secrets: heldSecrets(env, TOKEN),
      // realDeps' git is the task's checkout (boundary.ts); its repository is the worker's own.
      diff: gitPushDiff((deps.git as TaskCheckout).repository),
      warn: (message) => warnings.push(message),
    }),
  });
  const branch = spawnSync("git", ["rev-parse", "--verify", "--quiet", "refs/heads/autopilot/issue-7"], {
    cwd: remote,
    encoding: "utf8",
  });
  return { run, github, remote, remoteBranch: branch.status === 0 ? branch.stdout.trim() : null };
}

// Real processes, git and a second OS user on a loaded two-core machine: generous limits, no timing asserted.
describe("the push guard", { timeout: 180_000 }, () => {
  it("refuses to push an agent's work that holds its own model key, and says where on the issue, never the key", async () => {
    const { run, github, remoteBranch } = await runAgent(
      `mkdir -p config && printf 'api_key = "%s"\\n' "$MODEL_API_KEY" > config/settings.toml && echo '<promise>COMPLETE</promise>'`,
    );

    expect(run.result.result).toBe("needs_human");
    expect(run.result.reason).toContain("config/settings.toml");
    expect(run.result.reason).toContain("MODEL_API_KEY");
    // Nothing reached the remote: not the branch, not a PR.
    expect(remoteBranch).toBeNull();
    expect(github.pulls).toHaveLength(0);
    const refusal = github.comments.find((c) => c.body.includes("Push refused"));
    expect(refusal?.body).toContain("`config/settings.toml` line 1: the value of MODEL_API_KEY");
    expect(github.labels.get(7)).toContain("autopilot:needs-human");
    // The key appears nowhere Autopilot writes: comments, result, warnings.
    const written = JSON.stringify({ comments: github.comments, run });
    expect(written).not.toContain(MODEL_KEY);
  });

  it("a job cancelled with the key in its work pushes nothing and says so, not that its work was pushed", async () => {
    const { run, remoteBranch } = await runAgent(
      `printf 'key = "%s"\\n' "$MODEL_API_KEY" > settings.toml && touch wrote && sleep 120`,
      async (workTree) => {
        while (!existsSync(join(workTree, "wrote"))) await delay(100);
      },
    );
    expect(run.result.result, run.result.reason).toBe("paused");
    expect(run.result.reason).toMatch(/^the job was cancelled; nothing was pushed: .*settings\.toml/);
    expect(remoteBranch).toBeNull();
  });

  it("refuses it when the key comes in an iteration the loop goes on from (its push runs beside the next turn)", async () => {
    const { run, github, remoteBranch } = await runAgent(
      `if [ -e step ]; then echo '<promise>COMPLETE</promise>'; else touch step; printf 'k=%s\\n' "$MODEL_API_KEY" > leak.env; echo 'more to do'; fi`,
    );
    expect(run.result.result, run.result.reason).toBe("needs_human");
    expect(run.result.reason).toContain("leak.env");
    expect(remoteBranch).toBeNull();
    expect(github.pulls).toHaveLength(0);
    expect(JSON.stringify({ comments: github.comments, run })).not.toContain(MODEL_KEY);
  });

  it("refuses the key base64-encoded too", async () => {
    const { run, remoteBranch } = await runAgent(
      `printf 'auth:%s' "$MODEL_API_KEY" | base64 > blob.txt && echo '<promise>COMPLETE</promise>'`,
    );
    expect(run.result.result).toBe("needs_human");
    expect(run.result.reason).toContain("blob.txt");
    expect(run.result.reason).toContain("(base64)");
    expect(remoteBranch).toBeNull();
  });

  it("lets a credential the worker does not hold through to a PR that waits for a person (the human gate's secret-pattern rule)", async () => {
    const aws = "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYzRAXKQZt9q";
    const gh = "token = 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";
    const { run, github, remote, remoteBranch } = await runAgent(
      `printf '%s\\n%s\\n' '${aws}' '${gh}' > creds.ini && echo '<promise>COMPLETE</promise>'`,
    );

    expect(run.result.result).toBe("complete");
    expect(remoteBranch).toBe(run.result.headSha);
    expect(git(remote, "show", "autopilot/issue-7:creds.ini")).toContain("ghp_");
    expect(github.pulls).toHaveLength(1);
    expect(run.result.humanGate.fired).toBe(true);
    const hits = run.result.humanGate.rules.filter((r) => r.rule === "secret-pattern");
    expect(hits.map((h) => h.match)).toEqual([
      "creds.ini:1: aws AWSSecretAccessKey",
      "creds.ini:2: github GITHUB_TOKEN",
    ]);
    expect(hits.every((h) => h.neverAutoApprove)).toBe(true);
    // The hits name the rule and the line, never the matched text.
    expect(JSON.stringify(run.result.humanGate)).not.toMatch(/wJalrXUtnFEMI|ghp_wWPw/);
  });
});

describe("the secrets the worker holds", () => {
  it("are the token, every model key and every secret-looking variable; not settings, addresses or paths", () => {
    const held = heldSecrets(
      {
        ANTHROPIC_API_KEY: "sk-ant-1",
        NPM_TOKEN: "npm_2",
        WEBHOOK_SECRET: "hook-3",
        ACTIONS_RUNTIME_TOKEN: "jwt-4",
        "INPUT_GITHUB-TOKEN": TOKEN,
        INPUT_CONFIG: '{"plan":"propose"}',
        ACTIONS_ID_TOKEN_REQUEST_URL: "https://token.actions.example/",
        SSH_AUTH_SOCK: "/tmp/ssh-abc/agent.1",
        PATH: "/usr/bin",
        NODE_OPTIONS: "--max-old-space-size=4096",
      },
      TOKEN,
    );
    expect(held.map((s) => s.name)).toEqual([
      "the GitHub token (`github-token`)",
      "ANTHROPIC_API_KEY",
      "NPM_TOKEN",
      "WEBHOOK_SECRET",
      "ACTIONS_RUNTIME_TOKEN",
      "INPUT_GITHUB-TOKEN",
    ]);
  });
});
