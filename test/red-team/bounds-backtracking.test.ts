/**
 * Attack: text the agent writes (an added diff line, a command it runs) crafted so that a human-gate rule
 * backtracks catastrophically, stalling the worker's gate check (and the controller's) for hours.
 *
 * Every built-in rule is run against 100 KB inputs shaped for it; the assertion is that the match
 * completes with the right verdict. A rule that backtracks exponentially never completes, and the test
 * fails on the test runner's own time-out. No timing is measured or asserted here.
 */
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/core/config/index.js";
import {
  DEFAULT_HUMAN_GATE_PATTERNS,
  type HumanGateOptions,
  matchHumanGate,
  NEVER_AUTO_APPROVE,
} from "../../src/core/gates/human-gate.js";

const SIZE = 100_000;
const fill = (unit: string, tail = "") => unit.repeat(Math.ceil((SIZE - tail.length) / unit.length)) + tail;
const ON: HumanGateOptions = { enabled: true, patterns: [], paths: [] };

/** For each built-in rule: inputs that made (or would make) a backtracking matcher explode. */
const ATTACKS: Record<string, string[]> = {
  // `--a` after `git` parses as `-` `-a` or `--` `a`, and each as an option or the previous one's value:
  // exponentially many ways to fail (a backtracking matcher takes seconds at 20 options, forever at 100 KB).
  "push --force": [
    `git ${fill("--a ")}`,
    fill("git -a "),
    fill("git -c x "),
    fill("git push "),
    fill("git push a "),
  ],
  "rm -rf /": [fill("rm -r "), `rm ${fill("-x ")}`, fill('"'), `rm '${fill("a")}`],
  "rm -rf ~": [fill("rm -f ~"), fill("rm $HOME ")],
  "drop database": [fill("drop "), `drop${fill(" ")}`],
  "format c:": [fill("format "), fill("format.com ")],
  "production deploy": [fill("deploy "), fill("production "), fill("redeploying prod")],
  "npm publish": [fill("npm yarn "), fill("yarn npm ")],
  ".github/autopilot.{yml,yaml}": [],
  deploy: [fill("deployDeploy"), fill("re-deploy_")],
  migrate: [fill("migrateMigrat"), fill("migrating_")],
  publish: [`publish${fill(" ")}`, fill(".publish ")],
  "rm -rf": [fill("rm --recursive "), fill("rm -- ")],
  "drop table": [fill("drop\t")],
  "delete from": [`delete from ${fill("a")}`, fill("delete from a "), `delete${fill(" ")}`],
  "terraform apply": [`terraform ${fill("-a ")}`, fill("terraform -a=b ")],
  production: [fill("productionProduction")],
  "api.*key": [fill("api_"), fill("api-Api ")],
  secret: [fill("secretS")],
  password: [fill("passwordP")],
};

/** Deep paths for the path rules: the built-in never-auto-approve path and the default ones. */
const DEEP_PATHS = [fill("a/"), `.github/${fill("autopilot/")}`, fill("migrations/x"), fill(".env/")];

describe("no built-in human-gate rule backtracks on 100 KB of agent-written text", () => {
  it("has an attack for every built-in rule", () => {
    expect(Object.keys(ATTACKS).sort()).toEqual(
      [...new Set([...NEVER_AUTO_APPROVE, ...DEFAULT_HUMAN_GATE_PATTERNS])].sort(),
    );
  });

  for (const [rule, inputs] of Object.entries(ATTACKS)) {
    for (const [index, input] of inputs.entries()) {
      it(`${rule}: attack ${index + 1} completes as a command and as an added line`, () => {
        expect(input.length).toBeGreaterThanOrEqual(SIZE);
        const asCommand = matchHumanGate({ diff: "", paths: [], commands: [input] }, ON);
        const diff = `diff --git a/x.sh b/x.sh\n--- a/x.sh\n+++ b/x.sh\n@@ -0,0 +1 @@\n+${input}\n`;
        const asLine = matchHumanGate({ diff, paths: [], commands: [] }, ON);
        // None of the attacks is a forced push; the verdicts agree wherever the text was found.
        expect(asCommand.hits.some((hit) => hit.rule === "push --force")).toBe(false);
        expect(asLine.hits.filter((h) => h.where === "diff").map((h) => h.rule)).toEqual(
          asCommand.hits.map((h) => h.rule),
        );
      });
    }
  }

  it("the forced push is still found after 100 KB of options", () => {
    const command = `git ${fill("-c a=b ")} push -f origin main`;
    const result = matchHumanGate({ diff: "", paths: [], commands: [command] }, ON);
    expect(result.hits.map((hit) => hit.rule)).toContain("push --force");
  });

  it("path rules complete on 100 KB deep paths, and still match a deep autopilot.yml", () => {
    const result = matchHumanGate({ diff: "", paths: DEEP_PATHS, commands: [] }, ON);
    expect(result.hits.map((hit) => hit.rule).sort()).toEqual(["**/migrations/**", ".env*", ".github/**"]);
    const deep = matchHumanGate(
      { diff: "", paths: [`${fill("a/")}/.github/autopilot.yml`], commands: [] },
      ON,
    );
    expect(deep.fired).toBe(false);
    const config = matchHumanGate({ diff: "", paths: [".github/autopilot.yml/"], commands: [] }, ON);
    expect(config.hits.map((hit) => hit.rule).sort()).toEqual([".github/**", ".github/autopilot.{yml,yaml}"]);
  });
});

describe("a user's humanGate.patterns cannot backtrack", () => {
  // `(a+)+$` takes exponential time in a backtracking engine on "aaaa…b"; the linear-time engine does not care.
  const evil = "(a+)+$";
  const input = `${fill("a")}b`;

  it("a classic exponential pattern is accepted by the configuration and matched in linear time", () => {
    const parsed = parseConfig(`humanGate:\n  patterns: ["${evil}", "(x|x)*y"]\n`);
    expect(parsed.ok).toBe(true);
    const result = matchHumanGate(
      { diff: "", paths: [], commands: [input, fill("x")] },
      { ...ON, patterns: [evil, "(x|x)*y"] },
    );
    expect(result.hits.map((hit) => hit.rule)).toEqual([]);
    const hit = matchHumanGate({ diff: "", paths: [], commands: [fill("a")] }, { ...ON, patterns: [evil] });
    expect(hit.hits.map((h) => h.rule)).toEqual([evil]);
  });

  it.each([
    ["a lookbehind", "(?<=x)a+", "lookahead and lookbehind", "`\\b`"],
    ["a negative lookahead", "deploy(?!ment)", "lookahead and lookbehind", "neighbouring text"],
    ["a backreference", "(a+)\\1", "backreferences", "repeat the group"],
    ["a huge repeat count", "a{5000}", "repeat count above 1000", "at most 1000"],
  ])(
    "%s is refused with the key, the pattern, why and what to write instead",
    (_name, pattern, why, instead) => {
      const parsed = parseConfig(`humanGate:\n  patterns:\n    - ok\n    - '${pattern}'\n`);
      expect(parsed.ok).toBe(false);
      if (parsed.ok) return;
      const problem = parsed.error.problems.find((p) => p.path === "humanGate.patterns[1]");
      expect(problem?.message).toContain("`humanGate.patterns[1]` (line 4)");
      expect(problem?.message).toContain(JSON.stringify(pattern));
      expect(problem?.message).toContain(why);
      expect(problem?.message).toContain(instead);
    },
  );
});
