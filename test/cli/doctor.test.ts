import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONTROLLER_EVENTS } from "../../src/app/hosted/webhook-handlers.js";
import { main } from "../../src/cli/main.js";
import { PACKAGE_ROOT } from "../../src/cli/package-root.js";
import { TRACKING_MARKER } from "../../src/core/dashboard/index.js";
import type { DoctorCheck } from "../../src/core/doctor-facts.js";
import { repositoryCodeSteps } from "../../src/core/doctor-workflow-checks.js";
import { DEFAULT_CONFIG } from "../../src/core/config/index.js";
import { installLine, PRESETS } from "../../src/core/presets/index.js";
import { desiredFiles, labelSpecs, withoutEndReconcile } from "../../src/core/setup-files.js";
import { attachGit, type SandboxGit } from "../../sandbox/emulator/git/sandbox-git.js";
import { systemGit } from "../helpers/system-git.js";
import { type Sandbox, repoSettings, startSandbox } from "../../sandbox/emulator/index.js";

let sandbox: Sandbox;
let git: SandboxGit;
let root: string;
const owner = "acme";

/** The files `autopilot init --mode actions` writes, plus a required check the config names. */
function goodFiles(): Record<string, string> {
  const files = desiredFiles({
    mode: "actions",
    release: { source: "acme/autopilot", version: "0.1.0", commit: "c".repeat(40) },
    agent: "claude-code",
    qualityCommands: ["npm test"],
    workerTemplate: readFileSync("templates/workflows/autopilot-worker.yml", "utf8"),
    controllerTemplate: readFileSync("templates/workflows/autopilot-controller.yml", "utf8"),
    issueForm: readFileSync("templates/issue-forms/autopilot-task.yml", "utf8"),
  });
  const out = Object.fromEntries(files.map((f) => [f.path, f.content]));
  out[".github/autopilot.yml"] += "merge:\n  requiredChecks: [test]\n";
  return out;
}

interface Setup {
  files?: (files: Record<string, string>) => void;
  labels?: boolean;
  after?: (repo: string, head: string) => void | Promise<void>;
}

let counter = 0;
/** A repository set up the way init and the App leave it, then broken by `setup`. */
async function repository(setup: Setup = {}): Promise<string> {
  const name = `repo${++counter}`;
  const full = `${owner}/${name}`;
  sandbox.store.createRepo({ owner, name });
  const files = goodFiles();
  setup.files?.(files);
  const head = await git.seedRepo(owner, name, files);
  if (setup.labels !== false)
    for (const label of labelSpecs(DEFAULT_CONFIG.labels)) sandbox.store.createLabel(full, label);
  sandbox.store.createCheckRun(full, { name: "test", headSha: head, conclusion: "success" });
  await setup.after?.(full, head);
  return full;
}

let out: string[];
let err: string[];
async function doctor(
  repo: string,
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number; checks: DoctorCheck[]; text: string }> {
  out = [];
  err = [];
  const io = {
    out: (l: string) => out.push(l),
    err: (l: string) => err.push(l),
    env: {
      AUTOPILOT_NO_GH: "1",
      GITHUB_API_URL: sandbox.url,
      GITHUB_TOKEN: sandbox.userToken("maria"),
      APP_ID: String(sandbox.app.id),
      PRIVATE_KEY: sandbox.app.privateKey,
      ...env,
    },
  };
  const code = await main(["doctor", "--repo", repo, "--json"], io);
  const parsed = JSON.parse(out.join("\n") || "{}") as { checks?: DoctorCheck[] };
  return { code, checks: parsed.checks ?? [], text: err.join("\n") };
}

function failedIds(checks: DoctorCheck[]): string[] {
  return checks.filter((c) => c.status === "fail").map((c) => c.id);
}

beforeAll(async () => {
  sandbox = await startSandbox();
  root = mkdtempSync(join(tmpdir(), "doctor-git-"));
  git = await attachGit(sandbox, { root });
  sandbox.store.addUser("maria", { permission: "admin" });
  sandbox.store.addUser("rita", { permission: "read" });
}, 120_000);

afterAll(async () => {
  await git?.stop();
  await sandbox?.stop();
  rmSync(root, { recursive: true, force: true });
}, 120_000);

describe("autopilot doctor on the sandbox", { timeout: 240_000 }, () => {
  it("passes a repository set up as init and the App leave it (exit 0), and prints ✓ lines", async () => {
    const repo = await repository();
    const result = await doctor(repo);
    expect(result.code, JSON.stringify(result.checks, null, 2) + result.text).toBe(0);
    expect(result.checks.every((c) => c.status === "pass")).toBe(true);
    expect(result.checks.map((c) => c.id)).toEqual([
      "app",
      "actions",
      "worker-workflow",
      "push-token",
      "repository-code",
      "end-reconcile",
      "config",
      "labels",
      "required-checks",
      "merge-queue",
      "reviews",
      "push",
      "tracking-issue",
      "agent-branch-secrets",
    ]);
    out = [];
    const io = {
      out: (l: string) => out.push(l),
      err: (l: string) => err.push(l),
      env: { AUTOPILOT_NO_GH: "1", GITHUB_API_URL: sandbox.url, GITHUB_TOKEN: sandbox.userToken("maria") },
    };
    expect(await main(["doctor", "--repo", repo], io)).toBe(0);
    expect(out.join("\n")).toContain("✓ GitHub Actions enabled");
    // Without the App's credentials the installation cannot be looked up: skipped, not failed.
    expect(out.join("\n")).toContain("– GitHub App installed");
    sandbox.assertNoValidationFailures();
  });

  const broken: { name: string; setup: Setup; env?: NodeJS.ProcessEnv; fails: string; fix: RegExp }[] = [
    {
      name: "no worker workflow on the default branch",
      setup: { files: (f) => delete f[".github/workflows/autopilot-worker.yml"] },
      fails: "worker-workflow",
      fix: /`node bin\/autopilot\.js init`/,
    },
    {
      name: "the worker workflow lacks inputs Autopilot sends",
      setup: {
        files: (f) => {
          f[".github/workflows/autopilot-worker.yml"] = f[".github/workflows/autopilot-worker.yml"]!.replace(
            / {6}tracking-issue:\n( {8}.*\n)+?(?= {6}task-digest:)/,
            "",
          );
        },
      },
      fails: "worker-workflow",
      fix: /Add the inputs "tracking-issue"/,
    },
    {
      name: "the worker pushes with the workflow's GITHUB_TOKEN",
      setup: {
        files: (f) => {
          f[".github/workflows/autopilot-worker.yml"] = f[".github/workflows/autopilot-worker.yml"]!.replace(
            // biome-ignore lint/suspicious/noTemplateCurlyInString: a GitHub Actions expression, not a template
            "github-token: ${{ steps.app-token.outputs.token }}",
            // biome-ignore lint/suspicious/noTemplateCurlyInString: a GitHub Actions expression, not a template
            "github-token: ${{ secrets.GITHUB_TOKEN }}",
          );
        },
      },
      fails: "push-token",
      fix: /create-github-app-token/,
    },
    {
      name: "an invalid .github/autopilot.yml",
      setup: { files: (f) => (f[".github/autopilot.yml"] += "maxParallel: lots\n") },
      fails: "config",
      fix: /Correct the keys/,
    },
    {
      name: "the labels were never created",
      setup: { labels: false },
      fails: "labels",
      fix: /`node bin\/autopilot\.js init`/,
    },
    {
      name: "branch protection requires a check merge.requiredChecks does not name",
      setup: {
        after: (repo) =>
          repoSettings.setBranchProtection(sandbox.store, repo, "main", {
            requiredChecks: ["test", "lint"],
            requiredApprovals: 0,
          }),
      },
      fails: "required-checks",
      fix: /add "lint" to merge.requiredChecks/i,
    },
    {
      name: "a required check that never runs",
      setup: {
        files: (f) =>
          (f[".github/autopilot.yml"] = f[".github/autopilot.yml"]!.replace("[test]", "[test, e2e]")),
      },
      fails: "required-checks",
      fix: /rename them to checks that run/i,
    },
    {
      name: "required reviews the human gate never asks for",
      setup: {
        after: (repo) =>
          repoSettings.setBranchProtection(sandbox.store, repo, "main", {
            requiredChecks: ["test"],
            requiredApprovals: 1,
          }),
      },
      fails: "reviews",
      fix: /paths: \["\*\*"\]/,
    },
    {
      name: "Actions disabled",
      setup: { after: (repo) => repoSettings.setActionsEnabled(sandbox.store, repo, false) },
      fails: "actions",
      fix: /Settings → Actions/,
    },
    {
      name: "a ruleset that keeps pushes off autopilot/ branches",
      setup: {
        after: (repo) =>
          repoSettings.addRuleset(sandbox.store, repo, {
            branches: ["autopilot/**"],
            rules: [{ type: "creation" }, { type: "update" }],
          }),
      },
      fails: "push",
      fix: /Exclude `autopilot\/\*\*`/,
    },
    {
      name: "a token without write access",
      setup: {},
      env: { GITHUB_TOKEN: "", APP_ID: "", PRIVATE_KEY: "" },
      fails: "push",
      fix: /contents: write/,
    },
    {
      name: "the tracking issue is not pinned",
      setup: {
        after: (repo) => {
          sandbox.store.createIssue(repo, {
            title: "Autopilot dashboard",
            body: `${TRACKING_MARKER}\nstate`,
            author: "autopilot[bot]",
          });
        },
      },
      fails: "tracking-issue",
      fix: /Pin it/,
    },
    {
      name: "a CI job that uses a secret runs on pushes to autopilot/ branches",
      setup: {
        files: (f) => {
          f[".github/workflows/ci.yml"] = [
            "on: [push, pull_request]",
            "jobs:",
            "  test:",
            "    runs-on: ubuntu-latest",
            "    steps: [{ run: npm test }]",
            "  coverage:",
            "    runs-on: ubuntu-latest",
            "    steps:",
            "      - uses: actions/checkout@v4",
            "      - run: npm run coverage",
            "        env:",
            // biome-ignore lint/suspicious/noTemplateCurlyInString: a GitHub Actions expression, not a template
            "          CODECOV_TOKEN: ${{ secrets.CODECOV_TOKEN }}",
            "",
          ].join("\n");
        },
      },
      fails: "agent-branch-secrets",
      fix: /startsWith\(github\.head_ref \|\| github\.ref_name, 'autopilot\/'\)/,
    },
    {
      name: "the App is not installed on the repository",
      setup: { after: (repo) => repoSettings.setInstalled(sandbox.store, repo, false) },
      fails: "app",
      fix: /Install the App/,
    },
  ];

  it("passes a merge queue on the default branch: Autopilot adds its approved pull requests to it", async () => {
    const repo = await repository({
      after: (r) =>
        repoSettings.addRuleset(sandbox.store, r, {
          branches: ["~DEFAULT_BRANCH"],
          rules: [{ type: "merge_queue" }],
        }),
    });
    const result = await doctor(repo);
    expect(result.checks.find((c) => c.id === "merge-queue")).toMatchObject({
      status: "pass",
      detail: expect.stringContaining("adds each pull request its gates approved to the queue"),
    });
  });

  for (const c of broken) {
    it(`fails and names the fix: ${c.name}`, async () => {
      const repo = await repository(c.setup);
      const env =
        c.name === "a token without write access"
          ? { GITHUB_TOKEN: sandbox.userToken("rita"), APP_ID: "" }
          : (c.env ?? {});
      const result = await doctor(repo, env);
      expect(result.code, result.text).toBe(1);
      expect(failedIds(result.checks)).toEqual([c.fails]);
      const check = result.checks.find((k) => k.id === c.fails)!;
      expect(check.fix).toMatch(c.fix);
      expect(check.detail.length).toBeGreaterThan(0);
    });
  }

  it("warns about a worker workflow that runs repository code outside the worker, naming the step and the fix", async () => {
    const repo = await repository({
      files: (f) => {
        f[".github/workflows/autopilot-worker.yml"] = f[".github/workflows/autopilot-worker.yml"]!.replace(
          "      - name: Autopilot worker\n",
          [
            "      - name: Install the project's dependencies",
            "        run: |",
            "          # the old template's step",
            "          if [ -f package-lock.json ]; then npm ci; fi",
            "      - uses: ./.github/actions/prepare",
            "      - name: Autopilot worker",
            "",
          ].join("\n"),
        );
      },
    });
    const result = await doctor(repo);
    // A warning, not a failure: the setup works, it is only unsafe.
    expect(result.code, result.text).toBe(0);
    const check = result.checks.find((c) => c.id === "repository-code")!;
    expect(check.status).toBe("warn");
    expect(check.detail).toContain(
      `step "Install the project's dependencies" (job work) runs \`if [ -f package-lock.json ]; then npm ci; fi\``,
    );
    expect(check.detail).toContain("a local action (./.github/actions/prepare)");
    expect(check.fix).toContain("`setup:` in .github/autopilot.yml");
  });

  it("warns when the controller workflow skips a successful worker's end that the worker workflow does not reconcile", async () => {
    const repo = await repository({
      files: (f) => {
        // An older worker workflow beside the new controller template: no last step with ending-run.
        f[".github/workflows/autopilot-worker.yml"] = withoutEndReconcile(
          f[".github/workflows/autopilot-worker.yml"]!,
        );
      },
    });
    const result = await doctor(repo);
    expect(result.code, result.text).toBe(0);
    const check = result.checks.find((c) => c.id === "end-reconcile")!;
    expect(check.status).toBe("warn");
    expect(check.detail).toContain(
      ".github/workflows/autopilot-controller.yml skips the end of a worker run that succeeded",
    );
    expect(check.fix).toContain("`ending-run`");
  });

  it("warns about the worker's end-reconcile step where no workflow runs the controller (the hosted app)", async () => {
    const repo = await repository({
      files: (f) => {
        delete f[".github/workflows/autopilot-controller.yml"];
      },
    });
    const check = (await doctor(repo)).checks.find((c) => c.id === "end-reconcile")!;
    expect(check.status).toBe("warn");
    expect(check.fix).toContain("autopilot init --mode app");
    // As init --mode app writes it: no such step, nothing to say.
    const hosted = await repository({
      files: (f) => {
        delete f[".github/workflows/autopilot-controller.yml"];
        f[".github/workflows/autopilot-worker.yml"] = withoutEndReconcile(
          f[".github/workflows/autopilot-worker.yml"]!,
        );
      },
    });
    expect((await doctor(hosted)).checks.find((c) => c.id === "end-reconcile")?.status).toBe("pass");
  });

  it("does not warn about toolchain installs or a global agent CLI install", () => {
    const text = readFileSync("templates/workflows/autopilot-worker.yml", "utf8");
    expect(repositoryCodeSteps(text)).toEqual([]);
    for (const run of [
      "make test",
      "./scripts/build.sh",
      "pip install -r requirements.txt",
      "go test ./...",
      "yarn",
      "npx tsc",
      "cargo build",
    ])
      expect(repositoryCodeSteps(`jobs:\n  work:\n    steps:\n      - run: ${run}\n`), run).toHaveLength(1);
    // Every preset's pinned install line (the one `init` writes) installs a CLI, not the checkout's code.
    for (const run of [
      ...PRESETS.flatMap((preset) => (preset.install ? [installLine(preset.install)] : [])),
      "sudo apt-get install -y bubblewrap",
    ])
      expect(repositoryCodeSteps(`jobs:\n  work:\n    steps:\n      - run: ${run}\n`), run).toEqual([]);
  });

  it("names the secret-using job on agent branches (workflow › job) with the guard, and passes once it has it", async () => {
    const ci = (guard: string) =>
      [
        "on:",
        "  push:",
        "    branches: ['**']",
        "jobs:",
        "  lint:",
        "    runs-on: ubuntu-latest",
        "    steps: [{ run: npm run lint }]",
        "  deploy-preview:",
        ...(guard ? [`    ${guard}`] : []),
        "    runs-on: ubuntu-latest",
        // biome-ignore lint/suspicious/noTemplateCurlyInString: a GitHub Actions expression, not a template
        "    steps: [{ uses: actions/checkout@v4 }, { run: './deploy.sh ${{ secrets.DEPLOY_KEY }}' }]",
        "",
      ].join("\n");
    const exposed = await doctor(
      await repository({ files: (f) => (f[".github/workflows/ci.yml"] = ci("")) }),
    );
    const check = exposed.checks.find((c) => c.id === "agent-branch-secrets")!;
    expect(check.status).toBe("fail");
    expect(check.detail).toContain(".github/workflows/ci.yml › deploy-preview reads DEPLOY_KEY");
    expect(check.detail).toContain("pushes to autopilot/**");
    expect(check.detail).not.toContain("› lint");
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a GitHub Actions expression, not a template
    const guard = "if: ${{ !startsWith(github.head_ref || github.ref_name, 'autopilot/') }}";
    expect(check.detail).toContain(guard);
    const guarded = await doctor(
      await repository({ files: (f) => (f[".github/workflows/ci.yml"] = ci(guard)) }),
    );
    expect(guarded.checks.find((c) => c.id === "agent-branch-secrets")?.status).toBe("pass");
    expect(guarded.code).toBe(0);
  });

  it("fails and names the fix: the installation lacks a permission and an event app.yml asks for", async () => {
    const repo = await repository();
    // What app.yml asks for, less `contents: write` and the workflow_run event.
    const granted = {
      issues: "write",
      pull_requests: "write",
      contents: "write",
      checks: "read",
      statuses: "read",
      actions: "write",
      metadata: "read",
    };
    repoSettings.setInstallationGrants(sandbox.store, {
      permissions: { ...granted, contents: "read" },
      events: CONTROLLER_EVENTS.filter((e) => e !== "workflow_run"),
    });
    try {
      const result = await doctor(repo);
      expect(result.code).toBe(1);
      expect(failedIds(result.checks)).toEqual(["app"]);
      const check = result.checks.find((k) => k.id === "app")!;
      expect(check.detail).toContain("contents: write");
      expect(check.detail).toContain("workflow_run");
      expect(check.fix).toContain("Permissions & events");
    } finally {
      repoSettings.setInstallationGrants(sandbox.store, {
        permissions: granted,
        events: [...CONTROLLER_EVENTS],
      });
    }
  });

  it("the tracking issue pinned passes", async () => {
    const repo = await repository({
      after: (r) => {
        const issue = sandbox.store.createIssue(r, {
          title: "Autopilot dashboard",
          body: `${TRACKING_MARKER}\n`,
          author: "autopilot[bot]",
        });
        sandbox.store.pinIssue(r, issue.number, "autopilot[bot]");
      },
    });
    const result = await doctor(repo);
    expect(result.checks.find((c) => c.id === "tracking-issue")).toMatchObject({ status: "pass" });
  });

  it("fix lines name the command the user runs: npm start -- in a clone runs node bin/autopilot.js", async () => {
    const repo = await repository({ labels: false });
    const result = await doctor(repo, {
      npm_lifecycle_event: "start",
      npm_package_json: join(PACKAGE_ROOT, "package.json"),
      INIT_CWD: PACKAGE_ROOT,
    });
    const labels = result.checks.find((c) => c.id === "labels")!;
    expect(labels.fix).toContain("Run `node bin/autopilot.js init`");
    expect(JSON.stringify(result.checks)).not.toContain("OWNER/");
  });

  it("without --repo, checks the repository the current directory's origin points at, line by line", async () => {
    const repo = await repository();
    const checkout = mkdtempSync(join(tmpdir(), "doctor-origin-"));
    execFileSync(systemGit(), ["init", "-q", checkout]);
    execFileSync(systemGit(), ["-C", checkout, "remote", "add", "origin", `https://github.com/${repo}.git`]);
    const lines: string[] = [];
    const env = {
      AUTOPILOT_NO_GH: "1",
      GITHUB_API_URL: sandbox.url,
      GITHUB_TOKEN: sandbox.userToken("maria"),
    };
    const before = process.cwd();
    process.chdir(checkout);
    try {
      const code = await main(["doctor"], { out: (l) => lines.push(l), err: (l) => lines.push(l), env });
      expect(code, lines.join("\n")).toBe(0);
    } finally {
      process.chdir(before);
      rmSync(checkout, { recursive: true, force: true });
    }
    expect(lines[0]).toBe(`Autopilot doctor: ${repo}`);
    expect(lines).toContain("✓ GitHub Actions enabled: Actions may run");
    expect(lines.at(-1)).toBe("All checks pass.");
  });

  it("an invalid configuration is listed problem by problem, with what stays in force until it is fixed", async () => {
    const repo = await repository({
      files: (f) => (f[".github/autopilot.yml"] += "maxParallel: lots\nbranchPrefix: 7\n"),
    });
    const lines: string[] = [];
    const env = {
      AUTOPILOT_NO_GH: "1",
      GITHUB_API_URL: sandbox.url,
      GITHUB_TOKEN: sandbox.userToken("maria"),
    };
    await main(["doctor", "--repo", repo], { out: (l) => lines.push(l), err: (l) => lines.push(l), env });
    const at = lines.findIndex((l) => l.startsWith("✗ .github/autopilot.yml valid"));
    expect(lines[at]).toBe("✗ .github/autopilot.yml valid: it is not a valid configuration:");
    expect(lines[at + 1]).toMatch(/^ {4}- .*maxParallel/);
    expect(lines[at + 2]).toMatch(/^ {4}- .*branchPrefix/);
    const fix = lines.slice(at + 3, at + 5).join("\n");
    expect(fix).toContain("fix: Correct the keys named above");
    expect(fix).toContain(
      "the last good configuration stays in force; with none, Autopilot starts and merges nothing",
    );
    expect(fix).not.toContain("uses the defaults");
  });

  it("an unknown repository is a clear error", async () => {
    const result = await doctor("acme/nope", { APP_ID: "" });
    expect(result.code).toBe(1);
    expect(result.text).toContain("acme/nope was not found");
  });
});
