/** Architecture rules from DESIGN.md §1–2, enforced by `npm run lint`. */
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
