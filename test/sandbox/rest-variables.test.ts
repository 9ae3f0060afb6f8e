/**
 * The Actions variables API of the sandbox (https://docs.github.com/en/rest/actions/variables), and what a
 * workflow run's `vars` context sees of it.
 */
import { describe, expect, it } from "vitest";
import { client, octokit, owner, rejection, repo, sandbox, useRestSandbox } from "./rest-fixture.js";

useRestSandbox();

describe("REST: repository variables", () => {
  it("creates, reads, updates, lists and deletes a variable, its name in upper case", async () => {
    const created = await octokit.request("POST /repos/{owner}/{repo}/actions/variables", {
      owner,
      repo,
      name: "autopilot_wake",
      value: "idle",
    });
    expect(created.status).toBe(201);
    const got = await octokit.request("GET /repos/{owner}/{repo}/actions/variables/{name}", {
      owner,
      repo,
      name: "AUTOPILOT_WAKE",
    });
    expect(got.data).toMatchObject({ name: "AUTOPILOT_WAKE", value: "idle" });
    const updated = await octokit.request("PATCH /repos/{owner}/{repo}/actions/variables/{name}", {
      owner,
      repo,
      name: "AUTOPILOT_WAKE",
      value: "soon",
    });
    expect(updated.status).toBe(204);
    expect(sandbox.store.variableValues(`${owner}/${repo}`)).toEqual({ AUTOPILOT_WAKE: "soon" });
    const listed = await octokit.request("GET /repos/{owner}/{repo}/actions/variables", { owner, repo });
    expect(listed.data).toMatchObject({
      total_count: 1,
      variables: [{ name: "AUTOPILOT_WAKE", value: "soon" }],
    });
    await octokit.request("DELETE /repos/{owner}/{repo}/actions/variables/{name}", {
      owner,
      repo,
      name: "AUTOPILOT_WAKE",
    });
    const gone = await rejection(
      octokit.request("GET /repos/{owner}/{repo}/actions/variables/{name}", {
        owner,
        repo,
        name: "AUTOPILOT_WAKE",
      }),
    );
    expect(gone.status).toBe(404);
  });

  it("refuses a second variable of the same name, a GITHUB_ name, and a reader's write", async () => {
    await octokit.request("POST /repos/{owner}/{repo}/actions/variables", {
      owner,
      repo,
      name: "ONE",
      value: "1",
    });
    const twice = await rejection(
      octokit.request("POST /repos/{owner}/{repo}/actions/variables", {
        owner,
        repo,
        name: "one",
        value: "2",
      }),
    );
    expect(twice.status).toBe(409);
    const reserved = await rejection(
      octokit.request("POST /repos/{owner}/{repo}/actions/variables", {
        owner,
        repo,
        name: "GITHUB_SHA",
        value: "x",
      }),
    );
    expect(reserved.status).toBe(422);
    const reader = client(sandbox.userToken("mallory"));
    const refused = await rejection(
      reader.request("PATCH /repos/{owner}/{repo}/actions/variables/{name}", {
        owner,
        repo,
        name: "ONE",
        value: "3",
      }),
    );
    expect(refused.status).toBe(403);
    expect(sandbox.store.getVariable(`${owner}/${repo}`, "ONE")?.value).toBe("1");
  });
});
