/**
 * Starts the controller app a scenario run talks to: inside this process, or as separate processes
 * (src/sandbox/scenario/controller-fleet.ts) when the scenario kills the controller or runs several at once. The
 * sandbox's webhooks are pointed at it.
 */
import type { CleanupRegistry } from "./cleanup-registry.js";
import { ControllerFleet } from "./controller-fleet.js";
import type { StartControllerServer } from "./missing-parts.js";
import type { ScenarioAction, ScenarioRule } from "./timeline-schema.js";
import type { ScenarioWorld } from "./scenario-world.js";

export interface RunningControllers {
  /** The controller processes, when they run as such (null: one controller inside this process). */
  fleet: ControllerFleet | null;
  /** The webhook endpoints of the controllers alive now. */
  webhookUrls: () => string[];
}

/** Whether any rule (or follow-up rule) of a timeline has an action with this key. */
function timelineHas(rules: ScenarioRule[], key: keyof ScenarioAction): boolean {
  return rules.some((r) => r.do.some((a) => a[key] !== undefined) || timelineHas(r.then, key));
}

export async function startControllers(
  { scenario, sandbox, progress }: Pick<ScenarioWorld, "scenario" | "sandbox" | "progress">,
  startController: StartControllerServer,
  cleanups: CleanupRegistry,
  /** The order of the cleanup step that stops them. */
  cleanupOrder: number,
): Promise<RunningControllers> {
  progress("setup", null, "starting the controller app");
  const wantsFleet =
    timelineHas(scenario.timeline, "killController") ||
    (scenario.controllers !== undefined &&
      (scenario.controllers.process || scenario.controllers.instances > 1));
  const controllerOptions = {
    appId: sandbox.app.id,
    privateKey: sandbox.app.privateKey,
    webhookSecret: sandbox.app.webhookSecret,
    baseUrl: sandbox.url,
    port: 0,
    tickMs: scenario.limits.tickMs,
  };
  if (wantsFleet) {
    const processes = new ControllerFleet(controllerOptions, scenario.controllers?.instances ?? 1, (m) =>
      progress(m.startsWith("fault") ? "human" : "setup", null, m),
    );
    cleanups.add("the controller processes", cleanupOrder, () => processes.stop());
    await processes.start();
    sandbox.setWebhookTarget(processes.webhookUrl);
    progress(
      "setup",
      null,
      `${processes.instances.length} controller process(es) running; sandbox at ${sandbox.url}`,
    );
    return { fleet: processes, webhookUrls: () => processes.liveWebhookUrls() };
  }
  const controller = await startController(controllerOptions);
  cleanups.add("the controller", cleanupOrder, () => controller.stop());
  sandbox.setWebhookTarget(controller.webhookUrl ?? controller.url);
  progress("setup", null, `controller listening at ${controller.url}; sandbox at ${sandbox.url}`);
  return { fleet: null, webhookUrls: () => [controller.webhookUrl ?? controller.url] };
}
