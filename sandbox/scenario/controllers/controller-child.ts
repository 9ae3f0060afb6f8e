/**
 * A controller in its own process, for fault runs that kill it or run two at once (sandbox/scenario/controllers/controller-fleet.ts):
 * reads its options as JSON from AUTOPILOT_CONTROLLER_OPTIONS, starts `startControllerServer`, prints
 * `LISTENING <webhookUrl>` on stdout, and runs until killed.
 */
import { startControllerServer } from "../../../src/app/http-server.js";

const options = JSON.parse(process.env.AUTOPILOT_CONTROLLER_OPTIONS ?? "{}") as Parameters<
  typeof startControllerServer
>[0];
const server = await startControllerServer(options);
process.stdout.write(`LISTENING ${server.webhookUrl}\n`);
process.on("SIGTERM", () => {
  process.exit(0);
});
