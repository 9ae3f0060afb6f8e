// Loaded with `node --import`, before tsx, by `npm run simulate -- --mutant <name>` (sandbox/simulation/simulate.ts)
// in the child processes that run worlds: registers mutant-hooks.mjs with the one mutant SIM_MUTANT describes
// (sandbox/simulation/mutants/mutants.ts). Registered before tsx, its load hook sees a product file's TypeScript
// source as read from disk, before tsx compiles it.
import { register } from "node:module";

register(new URL("./mutant-hooks.mjs", import.meta.url), {
  data: { mutant: JSON.parse(process.env.SIM_MUTANT ?? "null") },
});
