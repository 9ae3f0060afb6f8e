import { describe, expect, it } from "vitest";
import { readinessGaps } from "../../../src/core/tasks/task-readiness.js";

const FORM = { minWords: 8, sections: ["Goal", "Acceptance criteria"] };

describe("the definition of ready", () => {
  it("asks nothing by default", () => {
    expect(readinessGaps("", { minWords: 0, sections: [] })).toEqual([]);
    expect(readinessGaps(null, { minWords: 0, sections: [] })).toEqual([]);
  });

  it("counts the words a reader sees: not headings, HTML comments or an issue form's `_No response_`", () => {
    const body = [
      "<!-- Describe the task here: what to change, and why, in as many words as it takes. -->",
      "### Goal",
      "",
      "Add a price formatter.",
      "",
      "### Out of scope",
      "",
      "_No response_",
    ].join("\n");
    expect(readinessGaps(body, { minWords: 5, sections: [] })).toEqual([
      "its body has 4 words, fewer than 5",
    ]);
    expect(readinessGaps(body, { minWords: 4, sections: [] })).toEqual([]);
    // Code is content: a snippet tells the agent as much as prose.
    expect(
      readinessGaps("```js\nformatPrice(1234) === '$12.34'\n```", { minWords: 3, sections: [] }),
    ).toEqual([]);
  });

  it("finds the form's sections at any heading level and case, and names a missing or empty one", () => {
    const ready =
      "## goal\nFormat prices as dollars on the cart page.\n### Acceptance Criteria ###\n- 1234 shows as $12.34";
    expect(readinessGaps(ready, FORM)).toEqual([]);
    const empty =
      "### Goal\nFormat prices as dollars on the cart page, everywhere.\n### Acceptance criteria\n_No response_\n";
    expect(readinessGaps(empty, FORM)).toEqual(['the "Acceptance criteria" section is empty']);
    expect(readinessGaps("Fix it.", FORM)).toEqual([
      "its body has 2 words, fewer than 8",
      'no "Goal" section',
      'no "Acceptance criteria" section',
    ]);
  });

  it("does not take a heading shown in code, a quoted comment or a #hashtag for a section", () => {
    const body = [
      "Format prices as dollars on the cart page, with two decimals.",
      "```md",
      "### Goal",
      "```",
      "<!--",
      "### Acceptance criteria",
      "-->",
      "#Goal",
    ].join("\n");
    expect(readinessGaps(body, FORM)).toEqual(['no "Goal" section', 'no "Acceptance criteria" section']);
  });

  it("reads a long hostile line of spaces and hashes as one heading, not as a pattern to backtrack over", () => {
    const hostile = `# ${" #".repeat(30_000)}x\n${"Format prices as dollars. ".repeat(3)}`;
    expect(readinessGaps(hostile, { minWords: 8, sections: [] })).toEqual([]);
  });
});
