/** The controller action's entry point (bundled to dist/controller/index.js): nothing but the runner. */
import { runController } from "./controller-action.js";

await runController();
