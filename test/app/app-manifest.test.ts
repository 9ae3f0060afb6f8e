import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { CONTROLLER_EVENTS } from "../../src/app/app.js";

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
});
