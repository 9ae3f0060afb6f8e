/**
 * Plays a scenario's timeline: each rule is armed (the top-level ones at the start, `then` rules when their
 * parent fires), its condition is looked at on every step, and when it holds (after the rule's delay, a
 * person's reaction time) its actions are performed. A rule fires once unless `repeat`, then again each time
 * its condition becomes true anew. Also says the session start (`start:`) once the tracking issue exists.
 */
import { workerRuns } from "../controllers/controller-mode.js";
import { PULL_VERBS, type ScenarioCondition, type ScenarioRule } from "./timeline-schema.js";
import type { ScenarioWorld } from "../scenario-world.js";
import type { TimelineActor } from "./timeline-actor.js";

/** How long the session start waits for the tracking issue before it is said on issue #1. */
const START_WAITS_FOR_TRACKING_MS = 8000;

interface ArmedRule {
  rule: ScenarioRule;
  armedAt: number;
  /** When the condition held and the rule waits out its delay: the time it acts. */
  dueAt: number | null;
  /** PR head when armed (for `pushed`), by task issue. */
  heads: Map<number, string | null>;
  fired: boolean;
  lastValue: boolean;
}

/** What rules not yet done still watch: the run has not settled while they could act. */
interface PendingRules {
  /** Issues (and PRs' task issues) a rule waiting to fire watches. */
  targets: Set<number>;
  /** A rule acts on time alone (a delay running, or only `afterSeconds`). */
  timed: boolean;
}

export class Timeline {
  private readonly armed: ArmedRule[] = [];
  /** Who says the session start (a person with write access by default). */
  private readonly starter: string | undefined;
  private startDone: boolean;
  private readonly startAt: number;

  constructor(
    private readonly world: ScenarioWorld,
    private readonly actor: TimelineActor,
  ) {
    const { scenario } = world;
    this.arm(scenario.timeline, Date.now());
    this.starter =
      (scenario.start &&
        (scenario.start.as ??
          scenario.users.find((u) => ["admin", "maintain", "write"].includes(u.permission))?.login)) ||
      undefined;
    this.startDone = !scenario.start || !this.starter;
    this.startAt = Date.now();
  }

  /** Whether the session start is still to be said. */
  get startPending(): boolean {
    return !this.startDone;
  }

  /** Says the session start when due, then fires every rule whose time or condition came. */
  async step(): Promise<void> {
    await this.sayStart();
    for (const entry of [...this.armed]) {
      if (entry.dueAt !== null) {
        if (Date.now() >= entry.dueAt) {
          entry.dueAt = null;
          await this.fire(entry);
        }
        continue;
      }
      if (entry.fired && !entry.rule.repeat) continue;
      const value = this.evaluate(entry);
      if (value && (!entry.fired || (entry.rule.repeat && !entry.lastValue))) {
        if (entry.rule.delaySeconds > 0) {
          entry.dueAt = Date.now() + entry.rule.delaySeconds * 1000;
          entry.fired = true;
        } else {
          await this.fire(entry);
        }
      }
      entry.lastValue = value;
    }
  }

  pending(): PendingRules {
    const targets = new Set<number>();
    let timed = false;
    for (const entry of this.armed) {
      if (entry.fired && entry.dueAt === null) continue;
      // A rule whose condition held and that waits out its delay acts soon, whatever it watched.
      if (entry.dueAt !== null) timed = true;
      const c = entry.rule.when;
      if (c.issue !== undefined) targets.add(c.issue);
      if (c.pr !== undefined) targets.add(c.pr);
      if (
        c.afterSeconds !== undefined &&
        c.issue === undefined &&
        c.pr === undefined &&
        c.running === undefined
      )
        timed = true;
    }
    return { targets, timed };
  }

  /** The session start: a person with write access says so, once the tracking issue exists. */
  private async sayStart(): Promise<void> {
    const { scenario, observer, progress, repo } = this.world;
    if (this.startDone || !scenario.start || !this.starter) return;
    const tracking = observer.tracking();
    const target = tracking?.number ?? (Date.now() - this.startAt > START_WAITS_FOR_TRACKING_MS ? 1 : null);
    if (target === null) return;
    this.startDone = true;
    try {
      await this.actor.asUser(this.starter).rest.issues.createComment({
        owner: repo.owner,
        repo: repo.name,
        issue_number: target,
        body: scenario.start.command,
      });
      progress("human", target, `@${this.starter} commented: ${scenario.start.command}`);
    } catch (error) {
      progress("warning", null, `could not start the session: ${(error as Error).message}`);
    }
  }

  private arm(rules: ScenarioRule[], at: number): void {
    for (const rule of rules) {
      const heads = new Map<number, string | null>();
      if (rule.when.pr !== undefined)
        heads.set(rule.when.pr, this.world.observer.pullFor(rule.when.pr)?.pull.head.sha ?? null);
      this.armed.push({ rule, armedAt: at, dueAt: null, heads, fired: false, lastValue: false });
    }
  }

  private evaluate(entry: ArmedRule): boolean {
    const { observer: obs, store, repo, humans, actions } = this.world;
    const c: ScenarioCondition = entry.rule.when;
    const now = Date.now();
    if (c.afterSeconds !== undefined && now - entry.armedAt < c.afterSeconds * 1000) return false;
    if (c.issue !== undefined) {
      const issue = obs.issue(c.issue);
      if (!issue) return false;
      const has = (l: string) => issue.labels.some((x) => x.toLowerCase() === l.toLowerCase());
      if (c.labeled !== undefined && !has(c.labeled)) return false;
      if (c.unlabeled !== undefined && has(c.unlabeled)) return false;
      if (c.closed !== undefined && (issue.state === "closed") !== c.closed) return false;
      if (c.state !== undefined && obs.state(c.issue) !== c.state) return false;
      if (c.commented !== undefined) {
        const pattern = new RegExp(c.commented, "i");
        const found = store
          .listComments(repo.full, c.issue)
          .some(
            (m) =>
              !humans.has(m.user.toLowerCase()) &&
              m.createdAt.getTime() >= entry.armedAt - 1 &&
              pattern.test(m.body),
          );
        if (!found) return false;
      }
    }
    if (c.pr !== undefined) {
      const pull = obs.pullFor(c.pr);
      if (c.opened !== undefined && (pull !== null && pull.state === "open") !== c.opened) return false;
      if (c.merged !== undefined && (pull?.pull.merged ?? false) !== c.merged) return false;
      if (c.checks !== undefined && (!pull || obs.checksOf(pull.pull.head.sha) !== c.checks)) return false;
      if (c.pushed !== undefined) {
        if (!pull) return false;
        const base = entry.heads.get(c.pr) ?? null;
        if (base === null) {
          entry.heads.set(c.pr, pull.pull.head.sha);
          return false;
        }
        if ((pull.pull.head.sha !== base) !== c.pushed) return false;
      }
    }
    if (
      c.running !== undefined &&
      workerRuns(actions.activeRuns()).filter((r) => r.status === "in_progress").length < c.running
    ) {
      return false;
    }
    if (c.dashboard !== undefined) {
      const tracking = obs.tracking();
      if (!tracking || !new RegExp(c.dashboard, "i").test(tracking.body ?? "")) return false;
    }
    return true;
  }

  private async fire(entry: ArmedRule): Promise<void> {
    const { observer: obs, progress } = this.world;
    // Targets must exist before anything is done, so a rule never half-fires.
    for (const action of entry.rule.do) {
      const missing =
        (action.on === "tracking" && !obs.tracking()) ||
        (PULL_VERBS.some((verb) => action[verb] !== undefined) &&
          !obs.pullFor((action.pr ?? entry.rule.when.pr)!));
      if (missing) {
        entry.fired = false;
        return;
      }
    }
    entry.fired = true;
    // The rules it arms count from now, not from when its actions returned: a reaction to the first action (a
    // comment Autopilot posts while a later action, or a slow request, is still under way) is theirs to see.
    const firedAt = Date.now();
    for (const action of entry.rule.do) {
      try {
        await this.actor.perform(entry.rule, action);
      } catch (error) {
        progress("warning", null, `timeline action failed: ${(error as Error).message.split("\n")[0]}`);
      }
    }
    this.arm(entry.rule.then, firedAt);
  }
}
