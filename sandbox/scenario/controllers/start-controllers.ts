/**
 * Starts the controller app a scenario run talks to: inside this process, or as separate processes
 * (sandbox/scenario/controllers/controller-fleet.ts) when the scenario kills the controller or runs several at once. The
 * sandbox's webhooks are pointed at it.
 *
 * In Actions mode the controller is the workflow the Actions stand-in runs (controller-mode.ts): no app is
 * started, except `instances − 1` hosted processes beside it when the scenario asks for several controllers
 * (someone running both modes at once); `killController` of instance 1 kills the controller's running job.
 */
import type { CleanupRegistry } from "../cleanup-registry.js";
import { ControllerFleet } from "./controller-fleet.js";
import { ControllerJobKiller } from "./controller-job-kill.js";
import { controllerMode } from "./controller-mode.js";
import type { StartControllerServer } from "../missing-parts.js";
import type { ScenarioAction, ScenarioRule } from "../timeline/timeline-schema.js";
import type { ScenarioWorld } from "../scenario-world.js";

export interface RunningControllers {
  /** The controller processes, when they run as such (null: one controller inside this process). */
  fleet: ControllerFleet | null;
  /** The webhook endpoints of the controllers alive now. */
  webhookUrls: () => string[];
  /** Arms `killController`: false when there is no such controller. */
  armKill: (instance: number, afterWrites: number, restartAfterSeconds: number) => boolean;
  /**
   * Resolves when the in-process hosted controller has no reconcile running or waiting (at once for the other
   * modes, whose controllers the run's settle check sees as runs or cannot reach).
   */
  idle: () => Promise<void>;
}

/** Whether any rule (or follow-up rule) of a timeline has an action with this key. */
function timelineHas(rules: ScenarioRule[], key: keyof ScenarioAction): boolean {
  return rules.some((r) => r.do.some((a) => a[key] !== undefined) || timelineHas(r.then, key));
}

export async function startControllers(
  {
    scenario,
    sandbox,
    actions,
    progress,
    alertReceiver,
  }: Pick<ScenarioWorld, "scenario" | "sandbox" | "actions" | "progress" | "alertReceiver">,
  startController: StartControllerServer,
  cleanups: CleanupRegistry,
  /** The order of the cleanup step that stops them. */
  cleanupOrder: number,
): Promise<RunningControllers> {
  if (controllerMode(scenario) === "actions")
    return startBesideActions(scenario, sandbox, actions, progress, cleanups, cleanupOrder);
  progress("setup", null, "starting the controller app");
  const wantsFleet =
    timelineHas(scenario.timeline, "killController") ||
    (scenario.controllers !== undefined &&
      (scenario.controllers.process ||
        scenario.controllers.instances > 1 ||
        scenario.controllers.sharedWork));
  const controllerOptions = {
    appId: sandbox.app.id,
    privateKey: sandbox.app.privateKey,
    webhookSecret: sandbox.app.webhookSecret,
    baseUrl: sandbox.url,
    port: 0,
    tickMs: scenario.limits.tickMs,
    // `alerts.webhook`'s default variable names, pointed at the scenario's receiver.
    ...(alertReceiver
      ? {
          alertEnv: {
            AUTOPILOT_ALERT_WEBHOOK_URL: alertReceiver.url,
            AUTOPILOT_ALERT_WEBHOOK_SECRET: alertReceiver.secret,
          },
        }
      : {}),
  };
  if (wantsFleet) {
    const processes = new ControllerFleet(
      controllerOptions,
      scenario.controllers?.instances ?? 1,
      (m) => progress(m.startsWith("fault") ? "human" : "setup", null, m),
      scenario.controllers?.sharedWork === true,
    );
    cleanups.add("the controller processes", cleanupOrder, () => processes.stop());
    await processes.start();
    sandbox.setWebhookTarget(processes.webhookUrl);
    progress(
      "setup",
      null,
      `${processes.instances.length} controller process(es) running; sandbox at ${sandbox.url}`,
    );
    return {
      fleet: processes,
      webhookUrls: () => processes.liveWebhookUrls(),
      armKill: (instance, afterWrites, restart) => processes.armKill(instance, afterWrites, restart),
      idle: async () => {},
    };
  }
  const controller = await startController(controllerOptions);
  cleanups.add("the controller", cleanupOrder, () => controller.stop());
  sandbox.setWebhookTarget(controller.webhookUrl ?? controller.url);
  progress("setup", null, `controller listening at ${controller.url}; sandbox at ${sandbox.url}`);
  return {
    fleet: null,
    webhookUrls: () => [controller.webhookUrl ?? controller.url],
    armKill: () => false,
    idle: async () => controller.idle?.(),
  };
}

/** Actions mode: the controller workflow, plus `instances − 1` hosted controller processes. */
async function startBesideActions(
  scenario: ScenarioWorld["scenario"],
  sandbox: ScenarioWorld["sandbox"],
  actions: ScenarioWorld["actions"],
  progress: ScenarioWorld["progress"],
  cleanups: CleanupRegistry,
  cleanupOrder: number,
): Promise<RunningControllers> {
  const say = (m: string) => progress(m.startsWith("fault") ? "human" : "setup", null, m);
  const killer = new ControllerJobKiller(actions, sandbox, say);
  cleanups.add("a pending controller kill", cleanupOrder, () => killer.stop());
  const hosted = (scenario.controllers?.instances ?? 1) - 1;
  let fleet: ControllerFleet | null = null;
  if (hosted > 0) {
    fleet = new ControllerFleet(
      {
        appId: sandbox.app.id,
        privateKey: sandbox.app.privateKey,
        webhookSecret: sandbox.app.webhookSecret,
        baseUrl: sandbox.url,
        tickMs: scenario.limits.tickMs,
      },
      hosted,
      say,
      scenario.controllers?.sharedWork === true,
    );
    cleanups.add("the controller processes", cleanupOrder, () => fleet?.stop());
    await fleet.start();
    sandbox.setWebhookTarget(fleet.webhookUrl);
  }
  progress(
    "setup",
    null,
    `controller: the Actions workflow${hosted > 0 ? ` and ${hosted} hosted controller process(es)` : ""}; sandbox at ${sandbox.url}`,
  );
  return {
    fleet,
    webhookUrls: () => fleet?.liveWebhookUrls() ?? [],
    // Instance 1 is the Actions controller; 2… are the hosted processes beside it.
    armKill: (instance, afterWrites, restart) => {
      if (instance === 1) {
        killer.arm(afterWrites);
        return true;
      }
      return fleet?.armKill(instance - 1, afterWrites, restart) ?? false;
    },
    idle: async () => {},
  };
}
