/**
 * What the maintainer is told about the agent's network: the hosts the egress proxy refused, in the worker's
 * result, its progress comment and the job summary's rows, and the network's state when it is not the enforced
 * firewall. The proxy itself is tested in egress-proxy.test.ts and, from a real sandbox, test/red-team/agent-egress.test.ts.
 */
import { describe, expect, it } from "vitest";
import { OPEN_NETWORK_ACCESS, parseWorkerResult } from "../../src/core/tasks/worker-result.js";
import { runWorker } from "../../src/worker/job/job.js";
import { summaryRows } from "../../src/worker/job/progress-comment.js";
import { config, harness } from "./fakes.js";

describe("refused hosts and the agent's network, reported", () => {
  it("the hosts the proxy refused reach the result, the progress comment and the job summary", async () => {
    const h = await harness([{ message: "Done.\n\n<promise>COMPLETE</promise>" }]);
    const refused = [
      { host: "exfil.example.com:443", count: 3 },
      { host: "registry.npmjs.org:443", count: 1 },
    ];
    const run = await runWorker(h.inputs, config(), {
      ...h.deps,
      network: { access: null, refused: () => refused },
    });
    expect(run.result.refusedHosts).toEqual(refused);
    const progress = h.github.comments.find((c) => c.body.includes("Autopilot"))?.body ?? "";
    expect(progress).toContain("| Refused hosts | exfil.example.com:443 (3), registry.npmjs.org:443 (1)");
    expect(progress).toContain("network.allow");
    expect(parseWorkerResult(progress)?.refusedHosts).toEqual(refused);
    const rows = summaryRows(run.result, run.elapsedMs, run.quality);
    expect(rows).toContainEqual([
      "Refused hosts",
      "exfil.example.com:443 (3), registry.npmjs.org:443 (1) — list a host in `network.allow` to let the agent reach it",
    ]);
    expect(run.result.networkAccess).toBeUndefined();
  });

  it("nothing refused: no row, no field", async () => {
    const h = await harness([{ message: "Done.\n\n<promise>COMPLETE</promise>" }]);
    const run = await runWorker(h.inputs, config(), {
      ...h.deps,
      network: { access: null, refused: () => [] },
    });
    expect(run.result.refusedHosts).toBeUndefined();
    expect(summaryRows(run.result, run.elapsedMs, run.quality).map((row) => row[0])).not.toContain(
      "Refused hosts",
    );
  });

  it("an open network is stated in the result and the job summary", async () => {
    const h = await harness([{ message: "Done.\n\n<promise>COMPLETE</promise>" }]);
    const run = await runWorker(h.inputs, config({ network: "open" }), {
      ...h.deps,
      network: { access: OPEN_NETWORK_ACCESS, refused: () => [] },
    });
    expect(run.result.networkAccess).toBe(OPEN_NETWORK_ACCESS);
    expect(summaryRows(run.result, run.elapsedMs, run.quality)).toContainEqual([
      "Network",
      OPEN_NETWORK_ACCESS,
    ]);
  });
});
