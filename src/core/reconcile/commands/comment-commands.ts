/**
 * The phase that reads new comments, on the tracking issue, on tasks and on their pull requests — open, and
 * closed or merged ones and closed task issues too (a merged task's own issue takes `/autopilot rollback`), and
 * the line comments of an open task pull request's reviews:
 * `/autopilot` commands from people with write access are carried out (session commands, retry, skip, rollback,
 * cleanup, fix, follow-up, approve, split, help, status, report; `run` is judged in the pool phase); other comments on tasks are
 * kept as possible answers to needs-human questions (see answers.ts).
 */
import { commandHelp, commentAuthority, parseCommand, refusalText } from "../../tasks/commands.js";
import { quietLogin } from "../../text/markdown.js";
import { distrustOf } from "../../gates/pull-trust.js";
import type { SessionEvent } from "../../session/session.js";
import { modeOf, note, type Reconciling } from "../context.js";
import { react, reply } from "../messages.js";
import { abortSession } from "./abort.js";
import { cleanupTask } from "./branch-cleanup.js";
import { fixTask, followUpTask } from "./fix-follow-up.js";
import { approvePlan } from "./plan-approval.js";
import { retryTask, skipTask } from "./retry-skip.js";
import type { RunRequest } from "./run-command.js";
import { rollbackTask } from "./rollback.js";
import { splitIssue } from "./split-command.js";
import { sessionEvent } from "../session-events.js";
import { liftAgentsLimit } from "../task-alerts.js";
import { hasLabel } from "../task-labels.js";
import { liveCount } from "../runs/worker-runs.js";
import { pullsFor } from "../pulls/task-pulls.js";
import { commentProcessedRule, issueOfTaskBranch } from "../../contract.js";
import { giveOwedReactions } from "./owed-reactions.js";

/** A `/autopilot status` or `report` to answer once this reconcile's decisions are made. */
export interface StatusRequest {
  kind: "status" | "report";
  /** Who asked. */
  by: string;
  commentIssue: number;
  commentId: number;
  /** The command is a line comment of a pull-request review. */
  review?: boolean;
  /** The task asked about; null for the whole session. */
  issue: number | null;
  line: string;
}

interface CommentsRead {
  /** Comments by people with write access on tasks, new to this reconcile (possible answers). */
  freshComments: Set<number>;
  statusRequests: StatusRequest[];
  /** `/autopilot run #N` from people with write access, in comment order (run-command.ts judges them). */
  runRequests: RunRequest[];
}

export function processComments(ctx: Reconciling): CommentsRead {
  const read: CommentsRead = { freshComments: new Set(), statusRequests: [], runRequests: [] };
  const state = ctx.state;
  const trackingNumber = ctx.tracking?.number ?? null;
  const wasProcessed = commentProcessedRule(state);
  giveOwedReactions(ctx);
  // Line comments of reviews are read from now on; those written before count as read (contract.ts).
  state.reviewComments ??= { since: ctx.now.toISOString(), processed: [] };
  const lineComments = state.reviewComments;
  const seen = new Set<string>();
  const comments = [...ctx.snapshot.comments].sort((a, b) => a.id - b.id);
  for (const c of comments) {
    const key = `${c.review ? "review-" : ""}${c.id}`;
    if (wasProcessed(c) || seen.has(key)) continue;
    seen.add(key);
    if (c.review) lineComments.processed.push(c.id);
    else {
      state.processed.push(c.id);
      if (!state.cursor || c.id > state.cursor.id) state.cursor = { id: c.id, at: c.createdAt };
    }

    const authority = commentAuthority(c, ctx.snapshot.botLogin, ctx.snapshot.permissions);
    if (authority.ignored) continue;
    const onTracking = trackingNumber !== null && c.issue === trackingNumber;
    const task = onTracking ? null : taskIssueFor(ctx, c.issue);
    if (!onTracking && task === null) continue;
    const parsed = parseCommand(c.body, {
      issue: onTracking ? c.issue : task!,
      trackingIssue: trackingNumber,
    });
    const login = c.author ?? "someone";

    if (!parsed) {
      // Answers to needs-human questions are looked for after the workers' results (answers.ts); a line
      // comment reaches a worker as review feedback instead (src/core/gates/gates.ts).
      if (task !== null && authority.authorized && !c.review) read.freshComments.add(c.id);
      continue;
    }
    if (!authority.authorized) {
      react(ctx, c, "confused");
      const key = login.toLowerCase().slice(0, 40);
      if (!state.refused.includes(key)) {
        state.refused.push(key);
        reply(ctx, c.issue, c, parsed.line, refusalText(login));
      }
      note(ctx, `comment ${c.id}: ${parsed.line} by ${login} refused (no write access)`);
      continue;
    }
    if (parsed.kind === "invalid") {
      react(ctx, c, "confused");
      reply(
        ctx,
        c.issue,
        c,
        parsed.line,
        `Sorry, ${parsed.problem}. Here is what Autopilot understands:\n\n${commandHelp()}`,
      );
      continue;
    }
    const command = parsed.command;
    note(ctx, `comment ${c.id}: ${parsed.line} by ${login}`);
    switch (command.name) {
      case "help":
        react(ctx, c, "+1");
        reply(ctx, c.issue, c, parsed.line, commandHelp());
        break;
      case "status":
      case "report":
        // Both answered last (tracking-write.ts), so the reply shows this reconcile's decisions.
        react(ctx, c, "+1");
        read.statusRequests.push({
          kind: command.name,
          by: login,
          commentIssue: c.issue,
          commentId: c.id,
          ...(c.review ? { review: true } : {}),
          issue: command.name === "status" ? command.issue : null,
          line: parsed.line,
        });
        break;
      case "start":
      case "pause":
      case "resume":
      case "stop": {
        const event: SessionEvent =
          command.name === "pause" || command.name === "stop"
            ? { type: command.name, actor: login, activeWorkers: liveCount(ctx) }
            : { type: command.name, actor: login };
        const lifted = (command.name === "resume" || command.name === "start") && liftAgentsLimit(ctx, login);
        const result = sessionEvent(ctx, event, true);
        if (result.refused && lifted) {
          react(ctx, c, "+1");
          reply(
            ctx,
            c.issue,
            c,
            parsed.line,
            "Dispatching goes on now: the pause for the agents' limits is lifted.",
          );
          break;
        }
        if (result.refused) {
          react(ctx, c, "confused");
          reply(ctx, c.issue, c, parsed.line, result.refused);
          break;
        }
        react(ctx, c, "+1");
        if (command.name === "start") state.overrides = null;
        const status = state.session.status;
        if ((status === "pausing" || status === "stopping") && result.message) {
          reply(
            ctx,
            c.issue,
            c,
            parsed.line,
            result.message.replace(/@(\S+)/g, (_m, l: string) => quietLogin(l)),
          );
        }
        break;
      }
      case "abort": {
        const outcome = abortSession(ctx, login);
        react(ctx, c, outcome.ok ? "+1" : "confused");
        if (outcome.message) reply(ctx, c.issue, c, parsed.line, outcome.message);
        break;
      }
      case "mode": {
        react(ctx, c, "+1");
        const was = modeOf(ctx);
        state.mode = command.mode === ctx.config.mode ? null : command.mode;
        const how =
          command.mode === "auto"
            ? "Autopilot starts ready tasks by score"
            : "a person starts each task with `/autopilot run #N`";
        reply(
          ctx,
          c.issue,
          c,
          parsed.line,
          `${was === command.mode ? "Already" : "Now"} \`${command.mode}\`: ${how}.${state.mode ? ` \`.github/autopilot.yml\` says \`${ctx.config.mode}\`; \`/autopilot mode ${ctx.config.mode}\` goes back to it.` : ""}`,
        );
        break;
      }
      case "run":
        read.runRequests.push({
          commentIssue: c.issue,
          commentId: c.id,
          ...(c.review ? { review: true } : {}),
          line: parsed.line,
          issue: command.issue,
          actor: login,
        });
        break;
      case "fix":
      case "follow-up": {
        if (c.review) {
          // The worker reads a fix's words from the issue comment its marker names (fix-follow-up.ts).
          react(ctx, c, "confused");
          reply(
            ctx,
            c.issue,
            c,
            parsed.line,
            `Nothing changed: \`/autopilot ${command.name}\` is read from the pull request's conversation, not from a line of the diff. Write it there; an unresolved conversation on the diff is review feedback by itself.`,
          );
          break;
        }
        const asked = {
          n: command.issue,
          actor: login,
          commentId: c.id,
          instructions: command.instructions,
        };
        const outcome = command.name === "fix" ? fixTask(ctx, asked) : followUpTask(ctx, asked);
        react(ctx, c, outcome.ok ? "+1" : "confused");
        if (outcome.message) reply(ctx, c.issue, c, parsed.line, outcome.message);
        break;
      }
      case "split": {
        const outcome = splitIssue(ctx, command.issue, login);
        react(ctx, c, outcome.ok ? "+1" : "confused");
        if (outcome.message) reply(ctx, c.issue, c, parsed.line, outcome.message);
        break;
      }
      case "retry":
      case "skip":
      case "rollback":
      case "cleanup":
      case "approve": {
        const outcome =
          command.name === "retry"
            ? retryTask(ctx, command.issue, login, command.iterations)
            : command.name === "skip"
              ? skipTask(ctx, command.issue, login)
              : command.name === "rollback"
                ? rollbackTask(ctx, command.issue, login)
                : command.name === "approve"
                  ? approvePlan(ctx, command.issue, login, c.createdAt)
                  : cleanupTask(ctx, command.issue, login);
        react(ctx, c, outcome.ok ? "+1" : "confused");
        if (outcome.message) reply(ctx, c.issue, c, parsed.line, outcome.message);
        break;
      }
    }
  }
  state.processed = state.processed.slice(-300);
  lineComments.processed = lineComments.processed.slice(-300);
  return read;
}

/** The task issue a comment on `n` speaks for: `n` itself when it is an Autopilot task, or the task of an Autopilot PR. */
export function taskIssueFor(ctx: Reconciling, n: number): number | null {
  const issue = ctx.issues.get(n);
  if (issue) {
    const L = ctx.config.labels;
    const ours =
      ctx.state.tasks[n] !== undefined ||
      [L.ready, L.inProgress, L.review, L.blocked, L.needsHuman, L.timeout, L.failed, L.exclude].some((l) =>
        hasLabel(issue.labels, l),
      ) ||
      // A task that ended leaves the state and its labels: its closed issue is still the task's when the session
      // remembers its outcome or Autopilot's PR of it is seen (a merged task's `rollback`, `follow-up`).
      (issue.state === "closed" &&
        (ctx.state.recent.some((r) => r.issue === n) || pullsFor(ctx, n).length > 0));
    return ours ? n : null;
  }
  const pr = ctx.snapshot.pulls.find((p) => p.number === n);
  if (!pr) return null;
  // A branch name proves nothing: only a PR the App opened on the task branch speaks for the task.
  const trust = { repo: ctx.snapshot.repo, branch: pr.headRef, botId: ctx.snapshot.botId };
  if (distrustOf(pr, trust) !== null) return null;
  return issueOfTaskBranch(ctx.config.branchPrefix, pr.headRef);
}
