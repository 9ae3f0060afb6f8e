/** The controller action's entry point (bundled to dist/controller/index.js): nothing but the runner. */
import { runController } from "./action-runner.js";

await runController();
