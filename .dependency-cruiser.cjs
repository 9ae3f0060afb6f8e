/**
 * The layering of docs/ARCHITECTURE.md ("Layout": what each part of src/ and sandbox/ may import), enforced by
 * `npm run lint`.
 * test/architecture.test.ts checks that every "may import" row of that table has its rule here.
 */

/**
 * src/core's topic folders, lowest first: each may import the ones before it and none after it, so no two topic
 * folders import each other (docs/ARCHITECTURE.md "Layout"). A new topic folder takes its place here;
 * test/architecture.test.ts fails while one is missing. The files at src/core's root (the world, the effects,
 * the contract, the setup commands' judgement) are outside the order.
 */
const CORE_TOPICS_LOWEST_FIRST = [
  "text",
  "time",
  "coverage",
  "presets",
  "tasks",
  "agent",
  "gates",
  "config",
  "session",
  "dashboard",
  "reconcile",
  "scheduling",
];

/** The phases of the worker's job, in the order src/worker/job/job.ts runs them (docs/ARCHITECTURE.md). */
const JOB_PHASES = ["claim", "prepare", "plan", "steer", "agent-turn", "quality-gate", "review", "outcome"];

const coreTopicRules = CORE_TOPICS_LOWEST_FIRST.slice(0, -1).map((topic, index) => ({
  name: `core-topic-${topic}`,
  severity: "error",
  comment: `src/core/${topic}/ may not import the topic folders above it: ${CORE_TOPICS_LOWEST_FIRST.slice(index + 1).join(", ")}.`,
  from: { path: `^src/core/${topic}/` },
  to: { path: `^src/core/(${CORE_TOPICS_LOWEST_FIRST.slice(index + 1).join("|")})/` },
}));
module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment: "Import cycles make the layers impossible to reason about.",
      from: {},
      to: { circular: true },
    },
    {
      name: "core-is-pure",
      severity: "error",
      comment:
        "src/core holds decisions only: no I/O. It may import itself and pure libraries (zod, yaml, markdown-table, " +
          "re2js, the mdast/micromark Markdown parser, fast-xml-parser for coverage reports, lru-cache for the kept task graphs, " +
          "json5 and smol-toml for the manifests the supply-chain gate reads).",
      from: { path: "^src/core/" },
      to: {
        pathNot: [
          "^src/core/",
          "node_modules/(zod|yaml|markdown-table|re2js|mdast-util-from-markdown|mdast-util-gfm|micromark-extension-gfm|@types/mdast|fast-xml-parser|lru-cache|json5|smol-toml)/",
        ],
      },
    },
    ...coreTopicRules,
    {
      name: "core-no-node-builtins",
      severity: "error",
      comment: "No fs, net, child_process, timers or clock-reading modules in src/core.",
      from: { path: "^src/core/" },
      to: { dependencyTypes: ["core"] },
    },
    {
      name: "github-imports-only-core",
      severity: "error",
      comment:
        "src/github may import src/core and itself, the Octokit libraries, cockatiel (the circuit breaker), zod, " +
          "lru-cache (the bounded caches) and Node's built-in modules.",
      from: { path: "^src/github/" },
      to: {
        pathNot: ["^src/(core|github)/", "node_modules/(@octokit/[^/]+|cockatiel|zod|lru-cache)/"],
        dependencyTypesNot: ["core"],
      },
    },
    {
      name: "worker-imports-only-core-and-github",
      severity: "error",
      comment: "src/worker may import src/core, src/github and itself (and libraries).",
      from: { path: "^src/worker/" },
      to: { path: "^src/", pathNot: "^src/(core|github|worker)/" },
    },
    {
      name: "only-the-sequence-imports-a-phase",
      severity: "error",
      comment:
        "The worker's job is a sequence of phases (src/worker/job/job.ts): a phase returns what it learned to the " +
          "sequence and never calls another phase; services (commit, spend, ending, feedback, report, ...) never " +
          "call a phase either. Only job.ts imports a phase.",
      from: { path: "^src/", pathNot: "^src/worker/job/job\\.ts$" },
      to: { path: `^src/worker/job/(${JOB_PHASES.join("|")})\\.ts$` },
    },
    {
      name: "app-imports-only-core-and-github",
      severity: "error",
      comment: "src/app may import src/core, src/github and itself (and libraries).",
      from: { path: "^src/app/" },
      to: { path: "^src/", pathNot: "^src/(core|github|app)/" },
    },
    {
      name: "src-reaches-sandbox-through-one-door",
      severity: "error",
      comment:
        "src/ is what runs against GitHub; the offline sandbox (sandbox/) is equipment. Only src/cli/load-sandbox.ts " +
          "reaches it, by one dynamic import, so `autopilot serve` and a production install load none of it.",
      from: { path: "^src/", pathNot: "^src/cli/load-sandbox\\.ts$" },
      to: { path: "^sandbox/" },
    },
    {
      name: "the-door-is-dynamic",
      severity: "error",
      comment: "src/cli/load-sandbox.ts imports sandbox/ only with import() (and types), never statically.",
      from: { path: "^src/cli/load-sandbox\\.ts$" },
      to: { path: "^sandbox/", dependencyTypesNot: ["dynamic-import", "type-only", "type-import"] },
    },
    {
      name: "emulator-imports-nothing-of-autopilot",
      severity: "error",
      comment:
        "sandbox/emulator is a GitHub stand-in that knows nothing of Autopilot: it imports only itself, libraries " +
          "and Node's modules; what is Autopilot's (its action, its names) the harness passes in as options.",
      from: { path: "^sandbox/emulator/" },
      to: { path: "^(src|sandbox/scenario|test|bench|scripts)/" },
    },
    {
      name: "only-github-calls-github",
      severity: "error",
      comment: "src/github is the only code that talks to GitHub (entry points may wire Probot).",
      from: { path: "^src/", pathNot: ["^src/github/", "^src/app/", "^sandbox/", "^src/cli/"] },
      to: { path: "node_modules/(@octokit/(rest|core|graphql|plugin-[a-z-]+|request)|probot)/" },
    },
    {
      name: "only-worker-and-sandbox-spawn",
      severity: "error",
      comment: "Only src/worker (and the sandbox stand-in) spawns processes and runs git.",
      from: { path: "^src/", pathNot: ["^src/worker/", "^sandbox/", "^src/cli/"] },
      to: { path: "^(node:)?child_process$", dependencyTypes: ["core"] },
    },
    {
      name: "src-not-from-tests",
      severity: "error",
      from: { path: "^(src|sandbox)/" },
      to: { path: "^(test|bench)/" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { exportsFields: ["exports"], conditionNames: ["import", "require", "node", "default"] },
    combinedDependencies: true,
  },
};
