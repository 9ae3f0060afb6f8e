/** The agent's transcript as kept: every held secret masked in the forms a CLI may print it, the texts fenced. */
import { describe, expect, it } from "vitest";
import { maskSecrets } from "../../src/core/gates/secret-masking.js";
import { transcriptSection } from "../../src/core/text/transcript.js";

const KEY = "sk-ant-api03-Zq9vX2mT7wR1aB8c";

describe("the agent's transcript", () => {
  it("masks a held secret plain, base64 and URL-encoded, and leaves short values alone", () => {
    const b64 = Buffer.from(KEY).toString("base64");
    const text = `key=${KEY}\nauth: Basic ${b64}\nurl=?k=${encodeURIComponent(`${KEY}/x`)}\npin=1234`;
    const masked = maskSecrets(text, [KEY, `${KEY}/x`, "1234"]);
    expect(masked).not.toContain(KEY);
    expect(masked).not.toContain(b64);
    expect(masked).toContain("key=***");
    expect(masked).toContain("url=?k=***");
    expect(masked).toContain("pin=1234");
  });

  it("masks every form the push guard refuses: hex, and base64 inside a longer stream", () => {
    const hex = Buffer.from(KEY).toString("hex");
    const stream = Buffer.from(`user:${KEY}`).toString("base64");
    const masked = maskSecrets(`h=${hex}\nH=${hex.toUpperCase()}\nauth: Basic ${stream}`, [KEY]);
    expect(masked.startsWith("h=***\nH=***\n")).toBe(true);
    // What is left of the stream is only its first characters, which the user name fixes, and the padding.
    expect(masked.split("auth: Basic ")[1]).toMatch(/^dXNlcj.{0,2}\*\*\*.{0,3}$/);
  });

  it("fences the prompt and the output so nothing in them renders or closes the fence", () => {
    const section = transcriptSection({
      iteration: 2,
      agent: "claude-code",
      at: "2026-11-29T00:00:00.000Z",
      durationMs: 12_400,
      exit: "exit 0",
      prompt: "Do the task.\n```js\nx\n```",
      output: "done <promise>COMPLETE</promise>",
    });
    expect(section).toContain("## Iteration 2: claude-code");
    expect(section).toContain("2026-11-29T00:00:00.000Z · 12 s · exit 0");
    expect(section).toContain("````text\nDo the task.\n```js\nx\n```\n````");
    expect(section).toContain("```text\ndone <promise>COMPLETE</promise>\n```");
  });
});
