import { describe, expect, it } from "vitest";
import { qualityScopes, workspaceOfTask } from "../../../src/core/gates/workspace-scope.js";

const api = {
  name: "api",
  paths: ["packages/api/"],
  directory: "packages/api",
  qualityCommands: ["npm test"],
  label: "area:api",
};
const web = {
  name: "web",
  paths: ["packages/web/**", "shared/web-*.css"],
  directory: "packages/web",
  qualityCommands: ["npm run lint", "npm test"],
  label: null,
};
const ROOT = ["npm run check"];

describe("which quality commands a change runs, workspace by workspace", () => {
  it("runs only the workspaces a change touches, each in its directory", () => {
    expect(qualityScopes(["packages/api/src/a.ts", "packages/api/test/a.test.ts"], [api, web], ROOT)).toEqual(
      [{ workspace: "api", directory: "packages/api", commands: ["npm test"] }],
    );
    expect(
      qualityScopes(["packages/api/a.ts", "shared/web-theme.css"], [api, web], ROOT).map((s) => s.workspace),
    ).toEqual(["api", "web"]);
  });

  it("adds the top-level commands, at the root, when a change touches files of no workspace", () => {
    expect(qualityScopes(["README.md", "packages/api/a.ts"], [api, web], ROOT)).toEqual([
      { workspace: null, directory: null, commands: ROOT },
      { workspace: "api", directory: "packages/api", commands: ["npm test"] },
    ]);
  });

  it("runs the top-level commands without workspaces, or when it cannot see what changed", () => {
    expect(qualityScopes(["packages/api/a.ts"], [], ROOT)).toEqual([
      { workspace: null, directory: null, commands: ROOT },
    ]);
    expect(qualityScopes([], [api, web], ROOT)).toEqual([
      { workspace: null, directory: null, commands: ROOT },
    ]);
  });

  it("does not take a sibling with a shared prefix for the workspace (`packages/api-client`)", () => {
    expect(qualityScopes(["packages/api-client/x.ts"], [api, web], ROOT).map((s) => s.workspace)).toEqual([
      null,
    ]);
  });
});

describe("a task routed to a workspace by its label", () => {
  it("is the first workspace whose label the task carries, case ignored", () => {
    expect(workspaceOfTask(["autopilot:ready", "Area:API"], [api, web])?.name).toBe("api");
    expect(workspaceOfTask(["autopilot:ready"], [api, web])).toBeNull();
  });
});
