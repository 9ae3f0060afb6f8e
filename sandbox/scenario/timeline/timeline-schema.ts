/**
 * The `timeline` of a scenario file: rules, each a condition (`when`), the actions it takes (`do`) and the rules
 * it arms once it fired (`then`). Played by sandbox/scenario/timeline/timeline.ts.
 */
import { z } from "zod";
import { FaultsSchema } from "../../emulator/server/faults.js";
import { issueNumber, login, REPORT_STATES } from "../scenario-fields.js";

const ConditionSchema = z
  .strictObject({
    /** Seconds after the scenario started (or, under `then`, after the parent rule fired). */
    afterSeconds: z.number().nonnegative().optional(),
    /** An issue number, with labeled / unlabeled / closed / state / commented. */
    issue: issueNumber.optional(),
    labeled: z.string().min(1).optional(),
    unlabeled: z.string().min(1).optional(),
    closed: z.boolean().optional(),
    state: z.enum(REPORT_STATES).optional(),
    /** A comment by someone other than the scenario's users matching this regular expression. */
    commented: z.string().min(1).optional(),
    /** The pull request of this task issue, with opened / pushed / merged / checks. */
    pr: issueNumber.optional(),
    opened: z.boolean().optional(),
    /** The PR head moved since the rule was armed (under `then`: since the parent fired). */
    pushed: z.boolean().optional(),
    merged: z.boolean().optional(),
    checks: z.enum(["success", "failure", "pending"]).optional(),
    /** At least this many worker runs in progress. */
    running: z.number().int().positive().optional(),
    /** The tracking issue's body matches this regular expression. */
    dashboard: z.string().min(1).optional(),
  })
  .superRefine((c, ctx) => {
    const issueKeys = (["labeled", "unlabeled", "closed", "state", "commented"] as const).filter(
      (k) => c[k] !== undefined,
    );
    const prKeys = (["opened", "pushed", "merged", "checks"] as const).filter((k) => c[k] !== undefined);
    if (issueKeys.length && c.issue === undefined) {
      ctx.addIssue({
        code: "custom",
        message: `${issueKeys.join(", ")} needs \`issue: N\``,
        path: [issueKeys[0]!],
      });
    }
    if (prKeys.length && c.pr === undefined) {
      ctx.addIssue({
        code: "custom",
        message: `${prKeys.join(", ")} needs \`pr: N\` (the task issue's number)`,
        path: [prKeys[0]!],
      });
    }
    if (c.issue !== undefined && !issueKeys.length) {
      ctx.addIssue({
        code: "custom",
        message: "`issue: N` needs one of labeled, unlabeled, closed, state, commented",
        path: ["issue"],
      });
    }
    if (c.pr !== undefined && !prKeys.length) {
      ctx.addIssue({
        code: "custom",
        message: "`pr: N` needs one of opened, pushed, merged, checks",
        path: ["pr"],
      });
    }
    const kinds = [
      c.afterSeconds !== undefined,
      c.issue !== undefined,
      c.pr !== undefined,
      c.running !== undefined,
      c.dashboard !== undefined,
    ];
    if (!kinds.some(Boolean)) {
      ctx.addIssue({
        code: "custom",
        message: "a condition needs afterSeconds, issue, pr, running or dashboard",
      });
    }
  });
export type ScenarioCondition = z.infer<typeof ConditionSchema>;

/** An issue, the tracking issue, or `pull`: the open pull request of the task `pr:` (or the condition's) names. */
const TargetSchema = z.union([issueNumber, z.literal("tracking"), z.literal("pull")]);

/**
 * One thing that happens: a person acts (`as` + exactly one of PERSON_VERBS), or the runner injects a fault
 * (`killRun`, `faults`, `killController`, `badSignatureWebhook`).
 */
/** What a person does on the pull request of a task (`pr:`, else the condition's). */
export const PULL_VERBS = ["review", "resolveThreads", "replyThreads"] as const;
/** What a person does on an issue: on `on:`, else on the condition's issue. */
const ISSUE_VERBS = [
  "comment",
  "label",
  "unlabel",
  "close",
  "reopen",
  "editBody",
  "tick",
  "corruptState",
  "delete",
] as const;
/** What a person does in an action: exactly one of these. */
const PERSON_VERBS = [...ISSUE_VERBS, ...PULL_VERBS, "forkPr", "push"] as const;

export const ActionSchema = z
  .strictObject({
    /** The scenario user who acts (their `ghp_<login>` token is used). */
    as: login.optional(),
    comment: z.string().min(1).optional(),
    /** With `comment`: the person posts it this many times in a row, numbered (a lively discussion). */
    times: z.number().int().min(1).max(200).optional(),
    review: z.enum(["approve", "request-changes", "comment"]).optional(),
    body: z.string().optional(),
    /** With `review`: inline comments on the diff, each a review conversation of its own. */
    comments: z
      .array(
        z.strictObject({
          path: z.string().min(1),
          line: z.number().int().positive().optional(),
          body: z.string().min(1),
        }),
      )
      .min(1)
      .optional(),
    /** The person resolves every open review conversation on the PR of `pr` (GraphQL `resolveReviewThread`). */
    resolveThreads: z.literal(true).optional(),
    /** The person replies with this text in every open review conversation on the PR of `pr` (REST replies). */
    replyThreads: z.string().min(1).optional(),
    label: z.string().min(1).optional(),
    unlabel: z.string().min(1).optional(),
    close: z.boolean().optional(),
    reopen: z.boolean().optional(),
    /**
     * Where: an issue number, `tracking`, or `pull` (the pull request of the task `pr:` names, else the condition's
     * `pr` or `issue`); default: the condition's issue (or PR's task issue).
     */
    on: TargetSchema.optional(),
    /**
     * In which repository, `owner/name`: one of the `installations`' (a maintainer labels a task across the
     * organization). Default: the scenario's. With it, the action is a comment, label, unlabel, close or reopen of
     * issue `on`.
     */
    repo: z
      .string()
      .regex(/^[A-Za-z0-9-]+\/[A-Za-z0-9._-]+$/, "owner/name")
      .optional(),
    /** For review: the task issue whose PR is reviewed; default: the condition's `pr`. */
    pr: issueNumber.optional(),
    /** Kill the running worker run of this task issue (a lost runner). */
    killRun: z.strictObject({ issue: issueNumber }).optional(),
    /** Replace the sandbox's faults. */
    faults: FaultsSchema.optional(),
    /** The person replaces the target issue's body with this text (REST `PATCH`, recorded in its edit history). */
    editBody: z.string().optional(),
    /**
     * The person ticks a box of the target's body (`on: tracking`: the dashboard), the one whose hidden marker is
     * `<!-- autopilot:<tick> -->` (`session-pause`, `retry #3`, …), as GitHub's web page does: an edit of the
     * body (REST `PATCH`) that GitHub records with its editor and sends as `issues` `edited`.
     */
    tick: z
      .string()
      .regex(/^[a-z-]+( #\d+)?$/)
      .optional(),
    /** A person edits the target's (`on: tracking`) hidden state block into unreadable JSON. */
    corruptState: z.literal(true).optional(),
    /** A person (admin) deletes the target issue for good (`on: tracking`: the dashboard). */
    delete: z.literal(true).optional(),
    /**
     * Fault: the controller process is SIGKILLed right after its next `afterWrites` successful writes to the API
     * (mid-reconcile, between two effects) and a new process starts on the same state `restartAfterSeconds`
     * later. Runs the controllers as processes (see `controllers`).
     */
    killController: z
      .strictObject({
        instance: z.number().int().positive().default(1),
        afterWrites: z.number().int().positive().default(1),
        restartAfterSeconds: z.number().nonnegative().default(2),
      })
      .optional(),
    /** Fault: a webhook signed with the wrong secret is sent to every controller; each must answer 400. */
    badSignatureWebhook: z.literal(true).optional(),
    /**
     * The acting user commits `files` on top of the default branch in their fork, on `branch` (e.g. a task
     * branch's name), and opens a pull request from it (`head: "<user>:<branch>"`). The sandbox's CI runs on
     * its head like a fork's own workflows would, so its checks can pass.
     */
    forkPr: z
      .strictObject({
        branch: z.string().min(1),
        title: z.string().min(1).default("Fix"),
        body: z.string().default(""),
        files: z.record(z.string(), z.string()).refine((f) => Object.keys(f).length > 0, "at least one file"),
      })
      .optional(),
    /**
     * The acting user (write access or more) pushes one commit with `files` to the default branch (or to
     * `branch`), as `git push` does: a change of `.github/autopilot.yml` mid-session, say.
     */
    push: z
      .strictObject({
        message: z.string().min(1).default("Update files"),
        /** Another branch than the default one (a task branch, say): the push is recorded as this person's. */
        branch: z.string().min(1).optional(),
        files: z.record(z.string(), z.string()).refine((f) => Object.keys(f).length > 0, "at least one file"),
      })
      .optional(),
  })
  .superRefine((a, ctx) => {
    const verbs = PERSON_VERBS.filter((k) => a[k] !== undefined);
    const system = (["killRun", "faults", "killController", "badSignatureWebhook"] as const).filter(
      (k) => a[k] !== undefined,
    );
    if (system.length) {
      if (system.length > 1 || verbs.length || a.as) {
        ctx.addIssue({
          code: "custom",
          message: `${system.join(" and ")} stands alone (no \`as\` and no other action)`,
        });
      }
      return;
    }
    if (!a.as) ctx.addIssue({ code: "custom", path: ["as"], message: "who acts? add `as: <user>`" });
    if (verbs.length !== 1) {
      ctx.addIssue({
        code: "custom",
        message: `an action does exactly one of ${PERSON_VERBS.join(", ")} (found ${verbs.length ? verbs.join(", ") : "none"})`,
      });
    }
    if (a.repo !== undefined) {
      const other = verbs.filter((v) => !["comment", "label", "unlabel", "close", "reopen"].includes(v));
      if (other.length || typeof a.on !== "number")
        ctx.addIssue({
          code: "custom",
          path: ["repo"],
          message:
            "in another repository (`repo:`) a person comments, labels, unlabels, closes or reopens issue `on: N`",
        });
    }
    if (a.times !== undefined && a.comment === undefined) {
      ctx.addIssue({ code: "custom", path: ["times"], message: "times: N repeats a `comment`; add one" });
    }
    if (a.comments !== undefined && a.review === undefined) {
      ctx.addIssue({ code: "custom", path: ["comments"], message: "inline `comments` go with a `review`" });
    }
    if (a.review === "request-changes" && !a.body?.trim()) {
      ctx.addIssue({ code: "custom", path: ["body"], message: "review: request-changes needs a body" });
    }
  });
export type ScenarioAction = z.infer<typeof ActionSchema>;

export interface ScenarioRule {
  when: ScenarioCondition;
  do: ScenarioAction[];
  then: ScenarioRule[];
  repeat: boolean;
  delaySeconds: number;
}

export const RuleSchema: z.ZodType<ScenarioRule, unknown> = z.lazy(() =>
  z
    .strictObject({
      when: ConditionSchema,
      do: z.array(ActionSchema).min(1),
      /** Rules armed once this one fired. */
      // biome-ignore lint/suspicious/noThenProperty: `then:` is the scenario format's word for follow-up rules
      then: z.array(RuleSchema).default([]),
      /** Fire every time the condition becomes true again (default: once). */
      repeat: z.boolean().default(false),
      /** A person's reaction time: act this long after the condition became true (default 0). */
      delaySeconds: z.number().nonnegative().default(0),
    })
    .superRefine((rule, ctx) => {
      // An action on an issue takes `on:` or the condition's issue (or PR): with neither it could never act, and
      // the rule would wait, silently, for the whole run.
      if (rule.when.issue !== undefined || rule.when.pr !== undefined) return;
      for (const [i, action] of rule.do.entries()) {
        const onIssue = ISSUE_VERBS.some((verb) => action[verb] !== undefined);
        if (onIssue && action.on === undefined)
          ctx.addIssue({
            code: "custom",
            path: ["do", i, "on"],
            message: "the condition names no issue: say which with `on: N` (or `on: tracking`)",
          });
      }
    }),
) as unknown as z.ZodType<ScenarioRule, unknown>;
