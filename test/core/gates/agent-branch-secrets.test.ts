/* biome-ignore-all lint/suspicious/noTemplateCurlyInString: the workflows hold GitHub Actions expressions */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readWorkflows } from "../../../src/cli/workflow-reading.js";
import {
  type AgentBranchFindings,
  agentBranchGuard,
  agentBranchSecretFindings,
  filterPatternMatches,
  patternsAdmit,
} from "../../../src/core/gates/agent-branch-secrets.js";

const GUARD = "if: ${{ !startsWith(github.head_ref || github.ref_name, 'autopilot/') }}";

/** A workflow read by GitHub's parser and judged for `autopilot/` branches whose pull requests target main. */
async function judge(text: string, prefix = "autopilot/", base: string | null = "main") {
  const readings = await readWorkflows([{ path: ".github/workflows/ci.yml", text }], prefix, base);
  return agentBranchSecretFindings(readings, prefix, base);
}

function named(findings: AgentBranchFindings): string[] {
  return findings.exposed.map((e) => `${e.job}: ${e.secrets.join(",")} on ${e.triggers.join(" + ")}`);
}

/** One job with `lines` under it, after a checkout step, on `on`. */
function workflow(on: string, job: string[], steps: string[] = []): string {
  return [
    `on: ${on}`,
    "jobs:",
    "  deploy:",
    "    runs-on: ubuntu-latest",
    ...job.map((l) => `    ${l}`),
    "    steps:",
    "      - uses: actions/checkout@v4",
    ...steps.map((l) => `      ${l}`),
    "",
  ].join("\n");
}

const PUSH = "pushes to autopilot/**";
const PR = "pull requests from autopilot/**";

describe("secret-using jobs on agent branches (workflows read by @actions/workflow-parser)", () => {
  it("a secret in the job's env, on push and pull_request", async () => {
    const f = await judge(workflow("[push, pull_request]", ["env:", "  KEY: ${{ secrets.DEPLOY_KEY }}"]));
    expect(named(f)).toEqual([`deploy: DEPLOY_KEY on ${PUSH} + ${PR}`]);
  });

  it("a push filter that admits only best-of candidates' branches", async () => {
    const on = "\n  push:\n    branches: ['autopilot/issue-*-candidate-*']";
    const f = await judge(workflow(on, ["env:", "  KEY: ${{ secrets.DEPLOY_KEY }}"]));
    expect(named(f)).toEqual([`deploy: DEPLOY_KEY on ${PUSH}`]);
  });

  it("a secret in a run script, in a step's with:, and in the workflow's own env", async () => {
    const f = await judge(
      [
        "on: push",
        "env:",
        "  WIDE: ${{ secrets.WIDE }}",
        "jobs:",
        "  deploy:",
        "    runs-on: ubuntu-latest",
        "    steps:",
        "      - uses: actions/checkout@v4",
        "        with: { token: \"${{ secrets['CHECKOUT_PAT'] }}\" }",
        "      - run: ./deploy --key ${{ secrets.DEPLOY_KEY }}",
        "",
      ].join("\n"),
    );
    expect(f.exposed[0]!.secrets.sort()).toEqual(["CHECKOUT_PAT", "DEPLOY_KEY", "WIDE"]);
  });

  it("secrets: inherit on a reusable workflow call", async () => {
    const f = await judge(
      [
        "on: pull_request",
        "jobs:",
        "  release:",
        "    uses: ./.github/workflows/release.yml",
        "    secrets: inherit",
        "",
      ].join("\n"),
    );
    expect(named(f)).toEqual([`release: secrets: inherit on ${PR}`]);
  });

  it("GITHUB_TOKEN is not counted: GitHub mints it per run, and the branch's code gets it anyway", async () => {
    const f = await judge(
      workflow(
        "push",
        [],
        ["- run: gh api user -H 'authorization: ${{ secrets.GITHUB_TOKEN }} ${{ github.token }}'"],
      ),
    );
    expect(f.exposed).toEqual([]);
  });

  it("a job that fetches no code from the branch is not named (the controller's shape)", async () => {
    const f = await judge(
      [
        "on: pull_request",
        "jobs:",
        "  notify:",
        "    runs-on: ubuntu-latest",
        "    steps:",
        "      - uses: actions/create-github-app-token@v2",
        "        with: { private-key: '${{ secrets.APP_KEY }}', app-id: '1' }",
        "",
      ].join("\n"),
    );
    expect(f.exposed).toEqual([]);
  });

  it("push filters: branches that leave out autopilot/**, branches-ignore, tags only, and a negation", async () => {
    const job = ["env: { K: '${{ secrets.K }}' }"];
    expect(named(await judge(workflow("{ push: { branches: [main, 'release/**'] } }", job)))).toEqual([]);
    expect(named(await judge(workflow("{ push: { branches-ignore: ['autopilot/**'] } }", job)))).toEqual([]);
    expect(named(await judge(workflow("{ push: { tags: ['v*'] } }", job)))).toEqual([]);
    expect(named(await judge(workflow("{ push: { branches: ['**', '!autopilot/**'] } }", job)))).toEqual([]);
    expect(named(await judge(workflow("{ push: { branches: ['**'] } }", job)))).toEqual([
      `deploy: K on ${PUSH}`,
    ]);
    expect(named(await judge(workflow("{ push: { branches: ['auto*/*'] } }", job)))).toEqual([
      `deploy: K on ${PUSH}`,
    ]);
    expect(named(await judge(workflow("{ push: { branches-ignore: [main] } }", job)))).toEqual([
      `deploy: K on ${PUSH}`,
    ]);
  });

  it("pull_request branch filters name the base branch, so a pull request from autopilot/x into main runs", async () => {
    const job = ["env: { K: '${{ secrets.K }}' }"];
    expect(named(await judge(workflow("{ pull_request: { branches: [main] } }", job)))).toEqual([
      `deploy: K on ${PR}`,
    ]);
    expect(named(await judge(workflow("{ pull_request: { branches: [release] } }", job)))).toEqual([]);
    // Without the default branch (a checkout with no origin/HEAD) a base filter is taken to admit it.
    expect(
      named(await judge(workflow("{ pull_request: { branches: [release] } }", job), "autopilot/", null)),
    ).toEqual([`deploy: K on ${PR}`]);
  });

  it("pull_request_target counts only when the job reads the pull request's head", async () => {
    const job = ["env: { K: '${{ secrets.K }}' }"];
    expect(named(await judge(workflow("pull_request_target", job)))).toEqual([]);
    const head = await judge(
      workflow("pull_request_target", job, [
        "- uses: actions/checkout@v4",
        "  with: { ref: '${{ github.event.pull_request.head.sha }}' }",
      ]),
    );
    expect(head.exposed.map((e) => e.triggers)).toEqual([
      ["pull_request_target runs that read the head of pull requests from autopilot/**"],
    ]);
  });

  it("the documented guard, its variants, and a fork check (which does not keep agent branches out)", async () => {
    const job = (condition: string) => [condition, "env: { K: '${{ secrets.K }}' }"];
    expect(named(await judge(workflow("[push, pull_request]", job(GUARD))))).toEqual([]);
    expect(
      named(
        await judge(
          workflow(
            "[push, pull_request]",
            job("if: \"!startsWith(github.head_ref || github.ref_name, 'autopilot/')\""),
          ),
        ),
      ),
    ).toEqual([]);
    expect(
      named(
        await judge(
          workflow(
            "[push, pull_request]",
            job("if: github.ref == 'refs/heads/main' || github.base_ref == 'release'"),
          ),
        ),
      ),
    ).toEqual([]);
    // Context and property names are case-insensitive, as are secret names.
    const upper = await judge(
      workflow("[push, pull_request]", [
        "if: \"!startsWith(GitHub.HEAD_REF || github.Ref_Name, 'autopilot/')\"",
        "env: { K: '${{ Secrets.Deploy_Key }}' }",
      ]),
    );
    expect(named(upper)).toEqual([]);
    expect(named(await judge(workflow("push", ["env: { K: '${{ Secrets.Deploy_Key }}' }"])))).toEqual([
      `deploy: DEPLOY_KEY on ${PUSH}`,
    ]);
    // Guards pushes only: pull requests from the branch still run it.
    expect(
      named(
        await judge(
          workflow("[push, pull_request]", job("if: \"!startsWith(github.ref_name, 'autopilot/')\"")),
        ),
      ),
    ).toEqual([`deploy: K on ${PR}`]);
    const fork = await judge(
      workflow("pull_request", job("if: github.event.pull_request.head.repo.full_name == github.repository")),
    );
    expect(fork.exposed).toMatchObject([{ job: "deploy", unjudgedCondition: true }]);
  });

  it("follows the configured branchPrefix", async () => {
    const guarded = workflow("push", [agentBranchGuard("bots/"), "env: { K: '${{ secrets.K }}' }"]);
    expect(named(await judge(guarded, "bots/"))).toEqual([]);
    expect(named(await judge(guarded, "autopilot/"))).toEqual([`deploy: K on ${PUSH}`]);
  });

  it("an environment is reported as relying on its protection rules, not as unguarded", async () => {
    const f = await judge(workflow("push", ["environment: preview", "env: { K: '${{ secrets.K }}' }"]));
    expect(f.exposed).toEqual([]);
    expect(f.environmentBound).toMatchObject([{ job: "deploy", environment: "preview" }]);
  });

  it("a workflow GitHub's parser rejects is reported with its message", async () => {
    const f = await judge("on: push\njobs:\n  a:\n    steps: 3\n");
    expect(f.rejected).toEqual([
      {
        workflow: ".github/workflows/ci.yml",
        error: expect.stringContaining("Unexpected value '3'"),
      },
    ]);
  });
});

describe("the shipped workflows, judged as doctor judges them", () => {
  it("the guard example exposes nothing and lists its environment job; the controller and worker are not named; docs/SECURITY.md shows the guard doctor suggests", async () => {
    const files = ["guard-example.yml", "autopilot-controller.yml", "autopilot-worker.yml"].map((name) => ({
      path: name,
      text: readFileSync(join("templates/workflows", name), "utf8"),
    }));
    const findings = agentBranchSecretFindings(
      await readWorkflows(files, "autopilot/", "main"),
      "autopilot/",
      "main",
    );
    expect(findings.rejected).toEqual([]);
    expect(findings.exposed).toEqual([]);
    expect(findings.environmentBound.map((e) => `${e.workflow} › ${e.job}`)).toEqual([
      "guard-example.yml › integration",
    ]);
    expect(readFileSync("docs/SECURITY.md", "utf8")).toContain(
      agentBranchGuard("autopilot/").slice("if: ".length),
    );
  });
});

describe("GitHub's filter patterns", () => {
  it("reads *, **, ?, +, [] and \\ as the workflow syntax documents", () => {
    expect(filterPatternMatches("autopilot/*", "autopilot/issue-1")).toBe(true);
    expect(filterPatternMatches("*", "autopilot/issue-1")).toBe(false);
    expect(filterPatternMatches("**", "autopilot/issue-1")).toBe(true);
    expect(filterPatternMatches("feature/**", "feature/a/b")).toBe(true);
    expect(filterPatternMatches("colou?r", "color")).toBe(true);
    expect(filterPatternMatches("colou?r", "colour")).toBe(true);
    expect(filterPatternMatches("v2+", "v222")).toBe(true);
    expect(filterPatternMatches("v2+", "v")).toBe(false);
    expect(filterPatternMatches("[CB]at", "Cat")).toBe(true);
    expect(filterPatternMatches("v[0-9].x", "v7.x")).toBe(true);
    expect(filterPatternMatches("v[0-9].x", "v7ax")).toBe(false);
    expect(filterPatternMatches("a\\*b", "a*b")).toBe(true);
    expect(filterPatternMatches("a\\*b", "axb")).toBe(false);
  });

  it("applies ! patterns in order", () => {
    expect(patternsAdmit(["**", "!autopilot/**"], "autopilot/issue-1")).toBe(false);
    expect(patternsAdmit(["**", "!autopilot/**", "autopilot/issue-1"], "autopilot/issue-1")).toBe(true);
    expect(patternsAdmit(["!autopilot/**", "**"], "autopilot/issue-1")).toBe(true);
  });
});
