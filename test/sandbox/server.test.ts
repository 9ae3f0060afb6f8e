import { createServer } from "node:http";
import { connect } from "node:net";
import type { AddressInfo } from "node:net";
import { networkInterfaces } from "node:os";
import { describe, expect, it } from "vitest";
import { assertNoValidationFailures, startSandbox } from "../../sandbox/emulator/index.js";

function countResources(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of process.getActiveResourcesInfo()) counts[r] = (counts[r] ?? 0) + 1;
  return counts;
}

function canConnect(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

describe("sandbox server", () => {
  it("listens on 127.0.0.1 only and stop() leaves no handles behind", async () => {
    const before = countResources();
    const sandbox = await startSandbox();
    expect(new URL(sandbox.url).hostname).toBe("127.0.0.1");
    expect(sandbox.graphqlUrl).toBe(`${sandbox.url}/graphql`);
    const external = Object.values(networkInterfaces())
      .flat()
      .find((i) => i && i.family === "IPv4" && !i.internal);
    if (external) expect(await canConnect(external.address, sandbox.port)).toBe(false);
    expect(await canConnect("127.0.0.1", sandbox.port)).toBe(true);

    // Keep-alive sockets and a webhook delivery that never gets an answer must not keep the process alive.
    const hanging = createServer(() => {
      /* never answers */
    });
    await new Promise<void>((resolve) => hanging.listen(0, "127.0.0.1", resolve));
    sandbox.setWebhookTarget(`http://127.0.0.1:${(hanging.address() as AddressInfo).port}/`);
    sandbox.store.createRepo({ owner: "acme", name: "widgets" });
    sandbox.store.createIssue("acme/widgets", { title: "x", author: "acme" });
    const response = await fetch(`${sandbox.url}/repos/acme/widgets/issues/1`, {
      headers: { authorization: `token ${sandbox.installationToken()}` },
    });
    expect(response.status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await Promise.all([sandbox.stop(), sandbox.stop()]);
    await sandbox.stop();
    hanging.closeAllConnections();
    await new Promise((resolve) => hanging.close(resolve));
    await new Promise((resolve) => setTimeout(resolve, 20));
    const after = countResources();
    for (const kind of ["TCPServerWrap", "TCPSocketWrap", "Timeout", "Immediate"]) {
      expect(after[kind] ?? 0, kind).toBeLessThanOrEqual(before[kind] ?? 0);
    }
    expect(await canConnect("127.0.0.1", sandbox.port)).toBe(false);
  });

  it("mounts handlers under a prefix without validating, counting or faulting them", async () => {
    const sandbox = await startSandbox();
    try {
      const seen: string[] = [];
      const unmount = sandbox.registerHandler("/git/", (req, res, url) => {
        seen.push(`${req.method} ${url.pathname}${url.search}`);
        res.writeHead(200, { "content-type": "text/plain" });
        res.end("git here");
      });
      sandbox.faults.set({ serverErrorRate: 1, tokenKinds: ["installation", "worker", "app"] });
      const response = await fetch(`${sandbox.url}/git/acme/widgets.git/info/refs?service=git-upload-pack`);
      expect(await response.text()).toBe("git here");
      expect(seen).toEqual(["GET /git/acme/widgets.git/info/refs?service=git-upload-pack"]);
      expect(sandbox.requests.summary().total).toBe(0);
      sandbox.faults.clear();
      unmount();
      const gone = await fetch(`${sandbox.url}/git/acme/widgets.git/info/refs`, {
        headers: { authorization: `token ${sandbox.installationToken()}` },
      });
      expect(gone.status).toBe(404);
      expect(() => assertNoValidationFailures(sandbox)).toThrow(/is not an endpoint of GitHub's REST API/);
      expect(sandbox.requests.summary()).toMatchObject({ total: 1, byTokenKind: { installation: 1 } });
      sandbox.requests.reset();
      expect(sandbox.requests.summary().total).toBe(0);
    } finally {
      await sandbox.stop();
    }
  });

  it("answers GitHub-style JSON errors for bad bodies and unauthenticated calls", async () => {
    const sandbox = await startSandbox();
    try {
      sandbox.store.createRepo({ owner: "acme", name: "widgets" });
      const bad = await fetch(`${sandbox.url}/repos/acme/widgets/issues`, {
        method: "POST",
        headers: {
          authorization: `token ${sandbox.installationToken()}`,
          "content-type": "application/json",
        },
        body: "{not json",
      });
      expect(bad.status).toBe(400);
      expect(await bad.json()).toMatchObject({ message: "Problems parsing JSON" });
      const anonymous = await fetch(`${sandbox.url}/repos/acme/widgets/issues`);
      expect(anonymous.status).toBe(401);
      expect(await anonymous.json()).toMatchObject({
        message: "Requires authentication",
        documentation_url: expect.any(String),
      });
      expect(sandbox.requests.summary().byTokenKind).toEqual({ none: 1 });
    } finally {
      await sandbox.stop();
    }
  });
});
