/**
 * A scenario repository's people and issues, as the scenario file declares them (its one repository and each
 * repository of `installations:`), and the checks an issue list must pass: authors are known, relations name
 * issues of the same list.
 */
import { z } from "zod";
import { DemoAgentEntrySchema } from "./agent/demo-agent.js";
import { issueNumber, login } from "./scenario-fields.js";

const PERMISSIONS = ["admin", "maintain", "write", "triage", "read", "none"] as const;

export const ScenarioUserSchema = z.strictObject({
  login,
  permission: z.enum(PERMISSIONS).default("write"),
  name: z.string().optional(),
});

const ScenarioCommentSchema = z.strictObject({
  author: login,
  body: z.string().min(1),
});

export const ScenarioIssueSchema = z.strictObject({
  /** Optional check: the issue's position (issues are created in order, #1 first). */
  number: issueNumber.optional(),
  title: z.string().min(1),
  body: z.string().default(""),
  /** Labels at creation; default: the ready label. */
  labels: z.array(z.string().min(1)).default(["autopilot:ready"]),
  /** Author login (a scenario user); default: the first user. */
  author: login.optional(),
  comments: z.array(ScenarioCommentSchema).default([]),
  /** Written into the body as `Depends on #N` lines. */
  dependsOn: z.array(issueNumber).default([]),
  /** GitHub's native "blocked by" relations. */
  blockedBy: z.array(issueNumber).default([]),
  /** Native sub-issue parent. */
  parent: issueNumber.optional(),
  /** What the demo agent does for this issue. */
  agent: DemoAgentEntrySchema.optional(),
});

type ScenarioIssue = z.infer<typeof ScenarioIssueSchema>;
type Path = (string | number)[];

/**
 * Checks an issue list (issues are numbered in order, #1 first): each number given is its position, authors and
 * commenters pass `knownUser`, and every relation names an issue of the list other than itself.
 */
export function checkIssues(
  issues: ScenarioIssue[],
  at: Path,
  knownUser: (name: string, path: Path) => void,
  ctx: z.RefinementCtx,
): void {
  const count = issues.length;
  const knownIssue = (n: number, path: Path) => {
    if (n > count)
      ctx.addIssue({ code: "custom", path, message: `there is no issue #${n} (the scenario has ${count})` });
  };
  issues.forEach((issue, i) => {
    const path = [...at, i];
    if (issue.number !== undefined && issue.number !== i + 1) {
      ctx.addIssue({
        code: "custom",
        path: [...path, "number"],
        message: `issues are numbered in order: this one is #${i + 1}, not #${issue.number}`,
      });
    }
    if (issue.author) knownUser(issue.author, [...path, "author"]);
    issue.comments.forEach((c, j) => {
      knownUser(c.author, [...path, "comments", j, "author"]);
    });
    for (const key of ["dependsOn", "blockedBy"] as const) {
      issue[key].forEach((n, j) => {
        knownIssue(n, [...path, key, j]);
        if (n === i + 1)
          ctx.addIssue({
            code: "custom",
            path: [...path, key, j],
            message: "an issue cannot depend on itself",
          });
      });
    }
    if (issue.parent !== undefined) knownIssue(issue.parent, [...path, "parent"]);
  });
}
