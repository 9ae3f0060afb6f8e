import { resolve } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * This repository's root, three directories above this file (sandbox/emulator/): the default place of the
 * action (action.yml, dist/worker/index.js).
 */
export const PACKAGE_ROOT = resolve(fileURLToPath(new URL("../..", import.meta.url)));
