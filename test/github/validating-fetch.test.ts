import nock from "nock";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { createOctokit } from "../../src/github/transport/octokit.js";
import { createValidatingFetch, type ValidatingFetch } from "../helpers/validating-fetch.js";

let validating: ValidatingFetch;
beforeAll(async () => {
  validating = await createValidatingFetch();
  nock.disableNetConnect();
});
afterEach(() => nock.cleanAll());

const client = () => createOctokit({ auth: "t", fetch: validating.fetch, throttle: false, retry: false });

describe("the validating fetch used by the gateway tests", () => {
  it("passes a valid REST request on to nock", async () => {
    const scope = nock("https://api.github.com").post("/repos/o/r/issues/1/labels").reply(200, []);
    await client().request("POST /repos/{owner}/{repo}/issues/{issue_number}/labels", {
      owner: "o",
      repo: "r",
      issue_number: 1,
      labels: ["a"],
    });
    expect(scope.isDone()).toBe(true);
    expect(validating.seen).toContain("POST /repos/{owner}/{repo}/issues/{issue_number}/labels");
  });

  it("rejects an endpoint GitHub does not have, a wrong method and an unknown query parameter", async () => {
    await expect(
      client().request("GET /repos/{owner}/{repo}/nonsense", { owner: "o", repo: "r" }),
    ).rejects.toThrow(/no such endpoint/);
    await expect(
      client().request("PUT /repos/{owner}/{repo}/issues", { owner: "o", repo: "r" }),
    ).rejects.toThrow(/wrong method/);
    await expect(
      client().request("GET /repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs", {
        owner: "o",
        repo: "r",
        workflow_id: "w.yml",
        stauts: "queued",
      }),
    ).rejects.toThrow(/stauts/);
  });

  it("rejects a GraphQL document that does not fit GitHub's schema", async () => {
    await expect(
      client().graphql('query Bad { repository(owner: "o", name: "r") { nope } }'),
    ).rejects.toThrow(/Cannot query field "nope"/);
  });
});
