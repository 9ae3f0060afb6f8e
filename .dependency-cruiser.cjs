/**
 * The layering of docs/ARCHITECTURE.md ("Layout": what each part of src/ may import), enforced by `npm run lint`.
 * test/architecture.test.ts checks that every "may import" row of that table has its rule here.
 */
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
          "re2js, the mdast/micromark Markdown parser).",
      from: { path: "^src/core/" },
      to: {
        pathNot: [
          "^src/core/",
          "node_modules/(zod|yaml|markdown-table|re2js|mdast-util-from-markdown|mdast-util-gfm|micromark-extension-gfm|@types/mdast)/",
        ],
      },
    },
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
        "src/github may import src/core and itself, the Octokit libraries, cockatiel (the circuit breaker), zod " +
          "and Node's built-in modules.",
      from: { path: "^src/github/" },
      to: {
        pathNot: ["^src/(core|github)/", "node_modules/(@octokit/[^/]+|cockatiel|zod)/"],
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
      name: "app-imports-only-core-and-github",
      severity: "error",
      comment: "src/app may import src/core, src/github and itself (and libraries).",
      from: { path: "^src/app/" },
      to: { path: "^src/", pathNot: "^src/(core|github|app)/" },
    },
    {
      name: "only-cli-imports-sandbox",
      severity: "error",
      comment: "The offline GitHub stand-in is started by the autopilot binary only; nothing that runs against GitHub uses it.",
      from: { path: "^src/", pathNot: "^src/(sandbox|cli)/" },
      to: { path: "^src/sandbox/" },
    },
    {
      name: "only-github-calls-github",
      severity: "error",
      comment: "src/github is the only code that talks to GitHub (entry points may wire Probot).",
      from: { path: "^src/", pathNot: ["^src/github/", "^src/app/", "^src/sandbox/", "^src/cli/"] },
      to: { path: "node_modules/(@octokit/(rest|core|graphql|plugin-[a-z-]+|request)|probot)/" },
    },
    {
      name: "only-worker-and-sandbox-spawn",
      severity: "error",
      comment: "Only src/worker (and the sandbox stand-in) spawns processes and runs git.",
      from: { path: "^src/", pathNot: ["^src/worker/", "^src/sandbox/", "^src/cli/"] },
      to: { path: "^(node:)?child_process$", dependencyTypes: ["core"] },
    },
    {
      name: "src-not-from-tests",
      severity: "error",
      from: { path: "^src/" },
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
