/**
 * `autopilot serve`: src/app/hosted/serve.ts reads the environment (the variables docs/CONTROLLER.md lists, with its
 * defaults) and starts the controller; this registers the App first when there are no credentials, waits for
 * Ctrl-C and stops it.
 */
import { type CliIo, EXIT, untilInterrupted } from "./cli-io.js";
import { hasAppCredentials } from "./setup-context.js";

export async function serveCommand(io: CliIo): Promise<number> {
  if (!hasAppCredentials(io.env)) {
    const { registerForServe } = await import("./serve-setup.js");
    const registered = await registerForServe(io);
    if (registered !== EXIT.ok) return registered;
  }
  const { serve: startServe } = await import("../app/hosted/serve.js");
  let server: Awaited<ReturnType<typeof startServe>>;
  try {
    server = await startServe({
      env: io.env,
      log: { debug: () => {}, info: io.out, warn: io.err, error: io.err },
      handleSignals: false,
    });
  } catch (error) {
    io.err((error as Error).message);
    return EXIT.usage;
  }
  io.out("Ctrl-C stops the controller.");
  await untilInterrupted();
  await server.stop();
  return EXIT.ok;
}
