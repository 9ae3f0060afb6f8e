import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { CONTROLLER_EVENTS } from "../../src/app/hosted/webhook-handlers.js";

describe("app.yml, the manifest a maintainer registers the App from", () => {
  const manifest = parse(readFileSync(new URL("../../app.yml", import.meta.url), "utf8")) as {
    default_events: string[];
    default_permissions: Record<string, string>;
  };

  it("subscribes to exactly the events the controller handles (a missing one is a reconcile never started)", () => {
    expect([...manifest.default_events].sort()).toEqual([...CONTROLLER_EVENTS].sort());
  });

  it("never asks for the Workflows permission, so an agent's push cannot change the repository's workflows", () => {
    expect(manifest.default_permissions).not.toHaveProperty("workflows");
  });

  it("docs/WORKER.md's setup asks for every permission the manifest has, at the same level", () => {
    // The worker's App is the controller's App: a permission missing from the setup list (Actions, which
    // dispatches the worker) breaks the controller of anyone who set the App up from that page.
    const worker = readFileSync(new URL("../../docs/WORKER.md", import.meta.url), "utf8");
    const setup = worker.slice(worker.indexOf("## Setup"), worker.indexOf("### Why an App token"));
    const words: Record<string, string> = {
      actions: "Actions",
      checks: "Checks",
      contents: "Contents",
      issues: "Issues",
      metadata: "Metadata",
      pull_requests: "Pull requests",
      statuses: "Commit statuses",
    };
    for (const [name, level] of Object.entries(manifest.default_permissions)) {
      const wanted = `*${words[name] ?? name}: ${level === "write" ? "read & write" : "read"}*`;
      expect(setup.replace(/\s+/g, " "), name).toContain(wanted);
    }
  });
});
