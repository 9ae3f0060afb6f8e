/**
 * The most agent iterations one task may be given: the file's `maxIterations`, a task's own limit
 * (`/autopilot retry #N --iterations M`), and a worker's `config` input are all held to it.
 */
export const MAX_ITERATIONS = 500;
