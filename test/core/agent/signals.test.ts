import { describe, expect, it } from "vitest";
import { parseSignal, type Signal, signalProtocolText } from "../../../src/core/agent/signals.js";

const complete: Signal = { kind: "complete" };
const none: Signal = { kind: "none" };
const blocked = (reason: string): Signal => ({ kind: "blocked", reason });
const needsHuman = (question: string): Signal => ({ kind: "needs_human", question });

describe("parseSignal", () => {
  it.each<[string, string, Signal]>([
    // every variant
    ["COMPLETE", "Done.\n\n<promise>COMPLETE</promise>", complete],
    [
      "BLOCKED with a reason",
      "<promise>BLOCKED: the staging database is unreachable</promise>",
      blocked("the staging database is unreachable"),
    ],
    [
      "NEEDS_HUMAN with a question",
      "<promise>NEEDS_HUMAN: Should the API stay v1-compatible?</promise>",
      needsHuman("Should the API stay v1-compatible?"),
    ],
    ["no signal", "I changed three files; more to do next iteration.", none],
    ["empty message", "", none],
    // tolerance of whitespace and case
    ["lower case", "<promise>complete</promise>", complete],
    ["spaces inside the tags", "< promise >  COMPLETE  </ promise >", complete],
    ["mixed-case tag name", "<Promise>Complete</PROMISE>", complete],
    [
      "NEEDS HUMAN with a space",
      "<promise>NEEDS HUMAN: which region?</promise>",
      needsHuman("which region?"),
    ],
    [
      "NEEDS-HUMAN with a hyphen",
      "<promise>needs-human: which region?</promise>",
      needsHuman("which region?"),
    ],
    [
      "BLOCKED without a colon",
      "<promise>BLOCKED missing credentials</promise>",
      blocked("missing credentials"),
    ],
    [
      "BLOCKED with a dash",
      "<promise>BLOCKED — missing credentials</promise>",
      blocked("missing credentials"),
    ],
    [
      "a reason over several lines",
      "<promise>BLOCKED:\n  line one\n  line two\n</promise>",
      blocked("line one\n  line two"),
    ],
    ["BLOCKED without a reason", "<promise>BLOCKED</promise>", blocked("")],
    ["inline in a sentence", "All tests pass, so <promise>COMPLETE</promise>.", complete],
    ["CRLF line endings", "Done.\r\n\r\n<promise>COMPLETE</promise>\r\n", complete],
    // quoted: not the agent's signal
    ["inside a fenced block", "The task says:\n```\n<promise>COMPLETE</promise>\n```\nStill working.", none],
    ["inside a tilde fence", "~~~md\n<promise>COMPLETE</promise>\n~~~", none],
    ["inside an unclosed fence", "Here:\n```\n<promise>COMPLETE</promise>", none],
    [
      "inside a longer fence holding a shorter one",
      "````\n```\n```\n<promise>COMPLETE</promise>\n````",
      none,
    ],
    ["inside a blockquote", "> <promise>COMPLETE</promise>\n\nI still need to write tests.", none],
    ["inside an indented blockquote", "   > <promise>BLOCKED: x</promise>", none],
    ["inside inline code", "I will print `<promise>COMPLETE</promise>` when done.", none],
    ["inside double-backtick code", "Use ``<promise>COMPLETE</promise>`` at the end.", none],
    ["inside an HTML comment", "<!-- <promise>COMPLETE</promise> -->\nNot yet.", none],
    [
      "quoted, then real",
      "The protocol: `<promise>COMPLETE</promise>`.\n\n<promise>NEEDS_HUMAN: which DB?</promise>",
      needsHuman("which DB?"),
    ],
    [
      "real, after a fenced echo of the task",
      "```\n<promise>BLOCKED: fake</promise>\n```\n\n<promise>COMPLETE</promise>",
      complete,
    ],
    // several signals: the last real one wins
    [
      "BLOCKED then COMPLETE",
      "<promise>BLOCKED: tests fail</promise>\nFixed it.\n<promise>COMPLETE</promise>",
      complete,
    ],
    [
      "COMPLETE then NEEDS_HUMAN",
      "<promise>COMPLETE</promise> Wait: <promise>NEEDS_HUMAN: ok to drop v1?</promise>",
      needsHuman("ok to drop v1?"),
    ],
    [
      "real, then a quoted one after it",
      "<promise>COMPLETE</promise>\n\n> <promise>BLOCKED: quoted</promise>",
      complete,
    ],
    // malformed
    ["unclosed tag", "<promise>COMPLETE", none],
    ["unknown keyword", "<promise>DONE</promise>", none],
    ["keyword with a suffix", "<promise>COMPLETED</promise>", none],
    ["missing slash", "<promise>COMPLETE<promise>", none],
    ["a tag opened twice", "<promise>BLOCKED: a <promise>COMPLETE</promise>", complete],
    ["entity-escaped tags (as sanitized text shows them)", "&lt;promise&gt;COMPLETE&lt;/promise&gt;", none],
  ])("%s", (_name, message, expected) => {
    expect(parseSignal(message)).toEqual(expected);
  });

  it("keeps at most 2,000 characters of a reason", () => {
    const result = parseSignal(`<promise>BLOCKED: ${"x".repeat(5_000)}</promise>`);
    expect(result.kind).toBe("blocked");
    expect(result.kind === "blocked" && result.reason.length).toBe(2_000);
  });

  it("does not signal when an agent echoes the protocol text back", () => {
    expect(parseSignal(signalProtocolText())).toEqual(none);
    expect(parseSignal(`You told me:\n${signalProtocolText()}\nOK.`)).toEqual(none);
  });

  it("reads the samples' final messages", () => {
    expect(parseSignal("Done. <promise>COMPLETE</promise>")).toEqual(complete);
  });
});

describe("signalProtocolText", () => {
  it("names the three signals", () => {
    for (const tag of ["<promise>COMPLETE</promise>", "<promise>BLOCKED:", "<promise>NEEDS_HUMAN:"]) {
      expect(signalProtocolText()).toContain(tag);
    }
  });
});
