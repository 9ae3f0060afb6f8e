import { defineConfig } from "vitest/config";
import { LongFilesFirst } from "./test/helpers/long-files-first.js";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Installs the pinned agent CLIs the worker's real-agent tests run (a no-op once they are there).
    globalSetup: ["test/helpers/global-setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // Two cores on CI: keep parallelism modest so process-heavy tests don't starve each other.
    maxWorkers: 2,
    // The few files that take longest start first, so none of them ends the run alone (see the sequencer).
    sequence: { sequencer: LongFilesFirst },
    server: { deps: { inline: ["@actions/workflow-parser"] } },
  },
});
