/** `autopilot status --repo OWNER/NAME`: the repository's dashboard as a person reads it, on the sandbox. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { EXIT, main } from "../../src/cli/main.js";
import { TRACKING_MARKER } from "../../src/core/dashboard/index.js";
import { type Sandbox, startSandbox } from "../../sandbox/emulator/index.js";

let sandbox: Sandbox;
let out: string[];
let err: string[];
const io = (env: NodeJS.ProcessEnv) => ({
  out: (l: string) => out.push(l),
  err: (l: string) => err.push(l),
  env: { AUTOPILOT_NO_GH: "1", GITHUB_API_URL: sandbox.url, ...env },
});

beforeAll(async () => {
  sandbox = await startSandbox();
  sandbox.store.addUser("maria", { permission: "admin" });
  sandbox.store.createRepo({ owner: "acme", name: "shop" });
  sandbox.store.createRepo({ owner: "acme", name: "empty" });
  sandbox.store.createRepo({ owner: "acme", name: "busy" });
  sandbox.store.createIssue("acme/busy", {
    title: "Autopilot dashboard",
    body: `${TRACKING_MARKER}\n## Autopilot\n<!-- autopilot:state v1\n${JSON.stringify({
      version: 1,
      revision: 7,
      session: {
        status: "running",
        since: "2026-11-22T10:00:00.000Z",
        reason: "user_start",
        actor: "maria",
        startedAt: "2026-11-22T10:00:00.000Z",
      },
      mode: "semi-auto",
    })}\n-->`,
    author: "maria",
  });
  sandbox.store.createIssue("acme/shop", { title: "Fix the cart", author: "maria" });
  sandbox.store.createIssue("acme/shop", {
    title: "Autopilot dashboard",
    body: `${TRACKING_MARKER}\n## Autopilot\n\n2 tasks ready\n<!-- autopilot:state v1\n{"revision":3}\n-->`,
    author: "maria",
  });
}, 120_000);
afterAll(async () => {
  await sandbox?.stop();
});
beforeEach(() => {
  out = [];
  err = [];
});

describe("autopilot status --repo", { timeout: 60_000 }, () => {
  it("prints the tracking issue without its hidden markers and state", async () => {
    expect(
      await main(["status", "--repo", "acme/shop"], io({ GITHUB_TOKEN: sandbox.userToken("maria") })),
    ).toBe(EXIT.ok);
    const text = out.join("\n");
    expect(text).toContain("Autopilot dashboard — ");
    expect(text).toContain("2 tasks ready");
    expect(text).not.toContain("autopilot:state");
    expect(text).not.toContain("<!--");
  });

  it("--json: one JSON document with the dashboard's number and the state the controller keeps", async () => {
    expect(
      await main(
        ["status", "--repo", "acme/shop", "--json"],
        io({ GITHUB_TOKEN: sandbox.userToken("maria") }),
      ),
    ).toBe(EXIT.ok);
    // Its state block is not one the controller wrote: unreadable, so null.
    expect(JSON.parse(out.join("\n"))).toMatchObject({
      repository: "acme/shop",
      dashboard: { number: 2, title: "Autopilot dashboard" },
      state: null,
    });
    out = [];
    expect(
      await main(
        ["status", "--repo", "acme/busy", "--json"],
        io({ GITHUB_TOKEN: sandbox.userToken("maria") }),
      ),
    ).toBe(EXIT.ok);
    expect(JSON.parse(out.join("\n"))).toMatchObject({
      dashboard: { number: 1 },
      state: { revision: 7, session: { status: "running", actor: "maria" }, mode: "semi-auto", tasks: {} },
    });
    out = [];
    expect(
      await main(
        ["status", "--repo", "acme/empty", "--json"],
        io({ GITHUB_TOKEN: sandbox.userToken("maria") }),
      ),
    ).toBe(EXIT.ok);
    expect(JSON.parse(out.join("\n"))).toEqual({ repository: "acme/empty", dashboard: null, state: null });
  });

  it("says so when no session has run yet", async () => {
    expect(await main(["status", "--repo", "acme/empty"], io({ GH_TOKEN: sandbox.userToken("maria") }))).toBe(
      EXIT.ok,
    );
    expect(out.join("\n")).toContain("no open Autopilot dashboard");
  });

  it("without a token (and no gh login) names where to get one, exit 2", async () => {
    expect(await main(["status", "--repo", "acme/shop"], io({}))).toBe(EXIT.usage);
    expect(err.join("\n")).toContain("gh auth login");
  });
});
