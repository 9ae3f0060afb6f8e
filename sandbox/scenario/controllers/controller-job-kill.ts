/**
 * `killController` in Actions mode: the controller's job is lost mid-reconcile (its runner dies, SIGKILL)
 * right after its Nth write, as the hosted fleet kills a process (controller-fleet.ts). Nothing restarts it:
 * the next event or the schedule starts a fresh run on the same GitHub state.
 *
 * A run's writes are the sandbox's successful non-GET REST requests made with an installation token since the
 * run started; a worker writing with its App token at the same moment counts too, so the kill can come a
 * write early — still mid-reconcile, which is what the fault is about.
 */
import type { ActionsRunner } from "../../emulator/actions/actions.js";
import type { Sandbox } from "../../emulator/index.js";
import { isControllerRun } from "./controller-mode.js";

/** How often an armed kill looks at the requests. */
const POLL_MS = 10;

export class ControllerJobKiller {
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly actions: ActionsRunner,
    private readonly sandbox: Sandbox,
    private readonly say: (message: string) => void,
  ) {}

  /** Kills the running (or next) controller run right after its next `afterWrites` writes. */
  arm(afterWrites: number): void {
    this.stop();
    let target: { id: number; from: number } | null = null;
    this.timer = setInterval(() => {
      const running = this.actions
        .activeRuns()
        .find((r) => isControllerRun(r) && r.status === "in_progress" && r.startedAt !== null);
      if (!running) return;
      if (target?.id !== running.id) target = { id: running.id, from: this.sandbox.requests.total };
      const writes = this.sandbox.requests.records
        .slice(target.from)
        .filter(
          (r) =>
            r.tokenKind === "installation" &&
            r.method !== "GET" &&
            r.endpoint !== "POST /graphql" &&
            r.status < 400,
        ).length;
      if (writes < afterWrites) return;
      this.stop();
      if (this.actions.killRun(running.id))
        this.say(
          `fault: controller run ${running.id} killed mid-reconcile after ${writes} write(s) (lost runner)`,
        );
    }, POLL_MS);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
