/**
 * A controller in its own process, for fault runs that kill it or run two at once (sandbox/scenario/controllers/controller-fleet.ts):
 * reads its options as JSON from AUTOPILOT_CONTROLLER_OPTIONS, starts `startControllerServer`, prints
 * `LISTENING <webhookUrl>` on stdout, and runs until killed.
 */
import { startControllerServer } from "../../../src/app/hosted/http-server.js";
import { ReplicaWork } from "../../../src/app/hosted/replica-work.js";

const { redisUrl, redisPrefix, ...options } = JSON.parse(
  process.env.AUTOPILOT_CONTROLLER_OPTIONS ?? "{}",
) as Parameters<typeof startControllerServer>[0] & { redisUrl?: string; redisPrefix?: string };
// Replicas sharing their work (controller-fleet.ts `sharedWork`): a dead replica's reconcile is free again after
// five ticks of the scenario's clock, as the product's 30 s lock is after a few of its ticks.
const tick = options.tickMs ?? 1000;
const replicas = redisUrl
  ? new ReplicaWork({
      url: redisUrl,
      ...(redisPrefix ? { prefix: redisPrefix } : {}),
      tickMs: options.tickMs ?? 0,
      lockMs: 5 * tick,
      stalledCheckMs: 2 * tick,
      log: { debug: () => {}, info: () => {}, warn: (m) => console.error(m), error: (m) => console.error(m) },
    })
  : undefined;
const server = await startControllerServer({ ...options, ...(replicas ? { replicas } : {}) });
process.stdout.write(`LISTENING ${server.webhookUrl}\n`);
process.on("SIGTERM", () => {
  process.exit(0);
});
