/**
 * Red team: the agent (or a quality command it wrote) prints workflow commands, hoping the runner runs them from
 * the job log: a mask, an output, a group, a warning or error, in both of the runner's forms (`::` at the start
 * of a line, `##[` anywhere in one), hidden behind U+0085 (white space to .NET, not to JavaScript's `\s`) or
 * behind a carriage return (a line break to the runner). The log is read back with a parser that reads it as the
 * runner does (test/helpers/runner-commands.ts): the only commands it runs are the worker's own — the stop and
 * resume markers around the agent's output, the worker's own warnings, and the group around each iteration.
 */
import { describe, expect, it } from "vitest";
import { createJobLog, type LogSink } from "../../src/worker/job-log.js";
import { safeLogText } from "../../src/worker/log-text.js";
import { commandsRun } from "../helpers/runner-commands.js";

const HOSTILE = [
  "::set-output name=result::complete",
  "::add-mask::ghs_x",
  "progress ##[group]a group mid-line",
  "##[error]the old form",
  "\u0085::warning::behind NEXT LINE",
  "\u00a0\u2028 ::error::behind other white space",
  "a\r::error::behind a carriage return",
  "b\r\n::notice::behind CR LF",
  "::stop-commands::mine",
  "a%0A::warning::an encoded newline stays text",
];

/** A log that records what the worker writes, the worker's own commands as @actions/core writes them. */
function recorder(): { sink: LogSink; text: () => string } {
  let written = "";
  const command = (name: string) => (message: string) => {
    const data = message.replaceAll("%", "%25").replaceAll("\r", "%0D").replaceAll("\n", "%0A");
    written += `::${name}::${data}\n`;
  };
  return {
    sink: {
      write: (text) => {
        written += text;
      },
      debug: command("debug"),
      warning: command("warning"),
      error: command("error"),
      startGroup: command("group"),
      endGroup: () => command("endgroup")(""),
    },
    text: () => written,
  };
}

/** The stop-commands tokens a log uses, checked: each block is closed by its own token before anything else runs. */
function blockTokens(log: string): string[] {
  const run = commandsRun(log);
  const tokens: string[] = [];
  for (let i = 0; i < run.length; i++) {
    if (run[i]!.name !== "stop-commands") continue;
    const token = run[i]!.data;
    expect(run[i + 1]?.name).toBe(token);
    tokens.push(token);
  }
  return tokens;
}

describe("what the agent prints, on its way to the job log", () => {
  it("would run commands if written raw (the parser sees both forms)", () => {
    const names = commandsRun(HOSTILE.join("\n")).map((c) => c.name);
    expect(names).toEqual(
      expect.arrayContaining([
        "set-output",
        "add-mask",
        "group",
        "error",
        "warning",
        "notice",
        "stop-commands",
      ]),
    );
  });

  it("runs no command once escaped, whatever line it hides it on", () => {
    const escaped = safeLogText(HOSTILE.join("\n"));
    expect(commandsRun(escaped)).toEqual([]);
    // Still readable: the text is there, marked.
    expect(escaped).toContain("› ::add-mask::ghs_x");
    expect(escaped).toContain("progress ##›[group]a group mid-line");
  });

  it("reaches the log inside stop-commands blocks, and only the worker's own commands run", () => {
    const log = recorder();
    const jobLog = createJobLog(log.sink);
    for (const line of HOSTILE) jobLog.output(line);
    jobLog.info(`setup output:\n${HOSTILE.join("\n")}`);
    jobLog.info(HOSTILE[4]!);
    jobLog.warning("the worker's own warning");
    jobLog.output("a last line");
    jobLog.flush();

    const text = log.text();
    const tokens = blockTokens(text);
    expect(tokens.length).toBe(3);
    expect(new Set(tokens).size).toBe(1);
    const [token] = tokens as [string];
    expect(token).toMatch(/^[0-9a-f]{32}$/);
    // The token is on the marker lines only, and what runs is the markers and the worker's warning.
    expect(text.split("\n").filter((line) => line.includes(token))).toEqual(
      tokens.flatMap((t) => [`::stop-commands::${t}`, `::${t}::`]),
    );
    expect(commandsRun(text).map((c) => c.name)).toEqual([
      "stop-commands",
      token,
      "stop-commands",
      token,
      "warning",
      "stop-commands",
      token,
    ]);
    // The agent's lines are in the log, in order, before the worker's next message.
    expect(text.indexOf("› ::add-mask::ghs_x")).toBeLessThan(text.indexOf("setup output:"));
    expect(text).toContain("a last line");
  });

  it("cannot end its block early, even with the token in hand", () => {
    const log = recorder();
    const jobLog = createJobLog(log.sink);
    jobLog.output("first");
    jobLog.flush();
    const [token] = blockTokens(log.text()) as [string];
    for (const line of [
      `::${token}::`,
      ` \u0085::${token.toUpperCase()}::`,
      `x ##[${token}]`,
      `y\r::${token}::`,
      "::set-output name=result::complete",
    ])
      jobLog.output(line);
    jobLog.flush();
    expect(commandsRun(log.text()).map((c) => c.name)).toEqual([
      "stop-commands",
      token,
      "stop-commands",
      token,
    ]);
  });

  it("folds each iteration in a group whose markers run outside every block, and the agent cannot end it", () => {
    const log = recorder();
    const jobLog = createJobLog(log.sink);
    jobLog.group("iteration 1/50: running claude-code");
    for (const line of ["::endgroup::", " \u0085::endgroup::", "##[endgroup]", "::group::the agent's own"])
      jobLog.output(line);
    // Still held (no flush, no pause) when the next iteration starts: written, closed, before its group.
    jobLog.output("the last line of iteration 1");
    jobLog.group("iteration 2/50: running claude-code\n::error::a title cannot add a command");
    jobLog.output("iteration 2's line");
    jobLog.endGroup();
    jobLog.info("result: complete");
    jobLog.endGroup();

    const text = log.text();
    const [token] = blockTokens(text) as [string];
    expect(commandsRun(text).map((c) => c.name)).toEqual([
      "group",
      "stop-commands",
      token,
      "endgroup",
      "group",
      "stop-commands",
      token,
      "endgroup",
    ]);
    expect(
      commandsRun(text)
        .filter((c) => c.name === "group")
        .map((c) => c.data),
    ).toEqual([
      "iteration 1/50: running claude-code",
      "iteration 2/50: running claude-code ::error::a title cannot add a command",
    ]);
    expect(text.indexOf("the last line of iteration 1")).toBeLessThan(text.indexOf("::group::iteration 2"));
    // The worker's own line after the last iteration is outside every group.
    expect(text.lastIndexOf("::endgroup::")).toBeLessThan(text.indexOf("result: complete"));
  });

  it("is fenced with a new token in every job", () => {
    const tokenOf = () => {
      const log = recorder();
      const jobLog = createJobLog(log.sink);
      jobLog.output("line");
      jobLog.flush();
      return blockTokens(log.text())[0];
    };
    expect(tokenOf()).not.toBe(tokenOf());
  });
});
