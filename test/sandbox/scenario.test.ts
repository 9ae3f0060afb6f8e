import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { killRunPlan } from "../../sandbox/scenario/controllers/kill-run-fault.js";
import {
  DEFAULT_SCENARIO,
  MissingPartsError,
  runScenario,
  type StartControllerServer,
} from "../../sandbox/scenario/run-scenario.js";
import { findMissingParts } from "../../sandbox/scenario/missing-parts.js";
import { scenarioConfigText } from "../../sandbox/scenario/scenario-config.js";
import { loadScenario, parseScenario, ScenarioError } from "../../sandbox/scenario/scenario-file.js";

const FIXTURE_ACTION = join(import.meta.dirname, "..", "fixtures", "echo-action");

function errorOf(text: string): string {
  try {
    parseScenario(text, "test.yml");
  } catch (error) {
    expect(error).toBeInstanceOf(ScenarioError);
    return (error as Error).message;
  }
  throw new Error("the scenario was accepted");
}

describe("scenario files", () => {
  it("the bundled demo is valid: six issues, a dependency chain, the tags and the people it needs", () => {
    const demo = loadScenario(DEFAULT_SCENARIO);
    expect(demo.issues.length).toBeGreaterThanOrEqual(6);
    expect(demo.issues.flatMap((i) => i.labels)).toEqual(expect.arrayContaining(["critical", "quick-win"]));
    expect(demo.issues[1]?.dependsOn).toEqual([1]);
    expect(demo.issues[2]?.blockedBy).toEqual([2]);
    const behaviors = demo.issues.flatMap((i) => i.agent?.behavior ?? []);
    expect(behaviors).toEqual(expect.arrayContaining(["blocked", "needs-human", "ci-fix", "gated"]));
    expect((demo.repo.config as { maxParallel: number }).maxParallel).toBe(2);
    expect(demo.repo.ci).toBe("node --test");
    expect(demo.users.find((u) => u.login === "bob")?.permission).toBe("write");
  });

  it("names an unknown key and where it is", () => {
    const message = errorOf("name: x\nissues:\n  - titel: One\n");
    expect(message).toContain("Invalid scenario test.yml:");
    expect(message).toContain('issues[0]: unknown key "titel"');
    expect(message).toContain("issues[0].title:");
  });

  it("rejects references to issues and users that do not exist", () => {
    const message = errorOf(`name: x
users: [{ login: alice, permission: admin }]
issues:
  - title: One
  - title: Two
    dependsOn: [9]
    author: carol
timeline:
  - when: { issue: 1, labeled: autopilot:needs-human }
    do: [{ as: dave, comment: hi }]
`);
    expect(message).toContain("issues[1].dependsOn[0]: there is no issue #9 (the scenario has 2)");
    expect(message).toContain('issues[1].author: unknown user "carol": add it under users');
    expect(message).toContain('timeline[0].do[0].as: unknown user "dave"');
  });

  it("refuses an action on an issue that names none, where the condition names none either (it could never act)", () => {
    const message = errorOf(`name: x
users: [{ login: alice, permission: admin }]
issues: [{ title: One }]
timeline:
  - when: { afterSeconds: 3 }
    do: [{ as: alice, editBody: "More words." }, { as: alice, comment: hi, on: 1 }]
`);
    expect(message).toContain("timeline[0].do[0].on: the condition names no issue: say which with `on: N`");
    expect(message).not.toContain("timeline[0].do[1]");
  });

  it("explains a condition or an action that is incomplete", () => {
    const message = errorOf(`name: x
issues: [{ title: One }]
timeline:
  - when: { labeled: autopilot:blocked }
    do: [{ as: alice, comment: hi, close: true }]
  - when: { pr: 1 }
    do: [{ as: alice, review: request-changes }]
`);
    expect(message).toContain("timeline[0].when.labeled: labeled needs `issue: N`");
    expect(message).toContain(
      "an action does exactly one of comment, label, unlabel, close, reopen, editBody, tick, corruptState, delete, review, resolveThreads, replyThreads, forkPr, push (found comment, close)",
    );
    expect(message).toContain("timeline[1].when.pr: `pr: N` needs one of opened, pushed, merged, checks");
  });

  it("lists the demo agent's behaviours when one is unknown", () => {
    const message = errorOf("name: x\nissues:\n  - title: One\n    agent: { behavior: dance }\n");
    expect(message).toMatch(
      /issues\[0\]\.agent\.behavior: unknown behavior "dance"; expected one of complete, objective, broken, fail-gate-once/,
    );
  });

  it("reports YAML syntax errors with their line", () => {
    expect(errorOf("name: x\nissues:\n  - title: [unclosed\n")).toMatch(
      /Invalid scenario test.yml: .*at line \d+, column \d+/s,
    );
  });

  it("checks that explicit issue numbers follow the order", () => {
    expect(errorOf("name: x\nissues:\n  - { number: 2, title: One }\n")).toContain(
      "issues[0].number: issues are numbered in order: this one is #1, not #2",
    );
  });

  it("validates faults with the sandbox's own schema", () => {
    expect(errorOf("name: x\nissues: [{ title: One }]\nfaults: { serverErrorRate: 2 }\n")).toContain(
      "faults.serverErrorRate:",
    );
  });

  it("reads the killRun fault the Actions stand-in owns, and rejects a bad one", () => {
    expect(killRunPlan(undefined)).toBeNull();
    expect(killRunPlan(true)).toEqual({ afterSeconds: 2, times: 1 });
    expect(killRunPlan({ issue: 3, afterSeconds: 1 })).toEqual({ issue: 3, afterSeconds: 1, times: 1 });
    expect(() => killRunPlan({ issue: "three" })).toThrow(
      /faults.killRun: issue: .*expected true or \{ issue, afterSeconds, times, whenAgentHangs \}/,
    );
    expect(killRunPlan({ issue: 1, whenAgentHangs: true, afterSeconds: 1 })).toEqual({
      issue: 1,
      afterSeconds: 1,
      times: 1,
      whenAgentHangs: true,
    });
    // Whose agent to watch must be said: any run's would be a guess.
    expect(() => killRunPlan({ whenAgentHangs: true })).toThrow(/whenAgentHangs: whenAgentHangs needs issue/);
  });

  it("writes .github/autopilot.yml with the demo agent, and rejects a bad config with the config's own error", () => {
    const scenario = parseScenario(
      "name: x\nissues: [{ title: One }]\nrepo: { config: { maxParallel: 3 } }\n",
    );
    const text = scenarioConfigText(scenario, "node agent.mjs {prompt_file}");
    expect(text).toContain("maxParallel: 3");
    expect(text).toContain("preset: custom");
    expect(text).toContain("command: node agent.mjs {prompt_file}");
    const bad = parseScenario("name: x\nissues: [{ title: One }]\nrepo: { config: { maxParallel: lots } }\n");
    expect(() => scenarioConfigText(bad, "node agent.mjs {prompt_file}")).toThrow(
      /repo.config is not a valid .github\/autopilot.yml[\s\S]*maxParallel/,
    );
  });
});

/** A controller that does nothing but receive webhooks, for testing the runner's own mechanics. */
function passiveController(
  received: { event: string; action: string | null; signed: boolean }[],
): StartControllerServer {
  return async () => {
    const server = createServer((req: IncomingMessage, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const payload = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}") as { action?: string };
        received.push({
          event: String(req.headers["x-github-event"]),
          action: payload.action ?? null,
          signed: String(req.headers["x-hub-signature-256"] ?? "").startsWith("sha256="),
        });
        res.writeHead(200);
        res.end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return {
      url,
      tick: () => undefined,
      stop: () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    };
  };
}

describe("the scenario runner", () => {
  it("says exactly what is missing before starting anything", async () => {
    const empty = mkdtempSync(join(tmpdir(), "no-action-"));
    try {
      const scenario = parseScenario("name: x\nissues: [{ title: One }]\n");
      const error = await runScenario(scenario, { actionDir: empty, handleSignals: false }).catch(
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(MissingPartsError);
      expect((error as Error).message).toContain(
        `the worker action: ${join(empty, "action.yml")} does not exist`,
      );
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it("names bubblewrap, and how to install it, when the machine lacks it (every worker would refuse to start)", async () => {
    const { missing } = await findMissingParts(undefined, undefined, () => null);
    expect(missing.join("\n")).toContain("bubblewrap (bwrap)");
    expect(missing.join("\n")).toContain("apt-get install bubblewrap");
    // On this machine it is installed (CI installs it): nothing is said of it.
    const here = await findMissingParts();
    expect(here.missing.join("\n")).not.toContain("bubblewrap");
  });

  it("plays the timeline as the scenario's people, delivers signed webhooks, settles and stops everything", async () => {
    // A private temp folder for this run alone (os.tmpdir() follows TMPDIR), so other runs on the machine
    // cannot make it look as if this one left something behind.
    const privateTmp = mkdtempSync(join(tmpdir(), "scenario-cleanup-"));
    const savedTmp = process.env.TMPDIR;
    process.env.TMPDIR = privateTmp;
    const received: { event: string; action: string | null; signed: boolean }[] = [];
    const progress: string[] = [];
    const scenario = parseScenario(`name: mechanics
users:
  - { login: alice, permission: admin }
  - { login: bob, permission: write }
issues:
  - { title: One }
  - { title: Two, labels: [] }
start: false
timeline:
  - when: { afterSeconds: 0.2 }
    do: [{ as: alice, label: autopilot:blocked, on: 1 }]
  - when: { issue: 1, labeled: autopilot:blocked }
    do:
      - { as: bob, comment: "Blocked, so closing #2.", on: 2 }
      - { as: bob, close: true, on: 2 }
limits: { maxDurationSeconds: 60, settleSeconds: 0.5 }
expect: { 1: blocked, 2: done }
`);
    let report: Awaited<ReturnType<typeof runScenario>>;
    let leftBehind: string[];
    try {
      report = await runScenario(scenario, {
        actionDir: FIXTURE_ACTION,
        startController: passiveController(received),
        handleSignals: false,
        onProgress: (e) => progress.push(e.message),
      });
      leftBehind = readdirSync(privateTmp);
    } finally {
      if (savedTmp === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = savedTmp;
      rmSync(privateTmp, { recursive: true, force: true });
    }
    expect(report.outcome).toBe("settled");
    expect(report.expectations).toEqual({ ok: true, mismatches: [], unmet: [] });
    expect(report.issues.map((i) => [i.number, i.title, i.state, i.pr])).toEqual([
      [1, "One", "blocked", null],
      [2, "Two", "done", null],
    ]);
    expect(report.issues[0]?.labels).toEqual(["autopilot:ready", "autopilot:blocked"]);
    expect(report.requests.humans).toBe(3);
    expect(report.requests.total).toBe(0);
    expect(report.validationFailures).toEqual([]);
    expect(progress).toContain("@alice added the label autopilot:blocked");
    expect(progress).toContain("@bob closed the issue");
    const events = received.map((r) => `${r.event}.${r.action}`);
    expect(events).toEqual(
      expect.arrayContaining(["issues.labeled", "issue_comment.created", "issues.closed"]),
    );
    expect(received.every((r) => r.signed)).toBe(true);
    expect(leftBehind).toEqual([]);
  });

  it("ends at the time limit with the issues as they stand and the unmet expectations", async () => {
    const scenario = parseScenario(`name: stuck
issues: [{ title: Never picked }]
start: false
limits: { maxDurationSeconds: 1 }
expect: { 1: done }
`);
    const report = await runScenario(scenario, {
      actionDir: FIXTURE_ACTION,
      startController: passiveController([]),
      handleSignals: false,
    });
    expect(report.outcome).toBe("timeout");
    expect(report.issues[0]?.state).toBe("ready");
    expect(report.expectations.mismatches).toEqual([{ number: 1, expected: "done", actual: "ready" }]);
  });
});
