/**
 * GitHub's rate-limit headers as the hosted controller reads them per installation
 * (src/github/transport/rate-headers.ts): from every answer, a refusal's too, REST and GraphQL apart.
 */
import nock from "nock";
import { describe, expect, it } from "vitest";
import {
  type RateReading,
  readRateHeaders,
  watchRateHeaders,
} from "../../src/github/transport/rate-headers.js";
import { nockGitHub } from "../helpers/validating-fetch.js";

const github = nockGitHub();
const API = "https://api.github.com";
const RESET = 1_800_000_000;

function limits(resource: string, remaining: number) {
  return {
    "x-ratelimit-limit": "5000",
    "x-ratelimit-remaining": String(remaining),
    "x-ratelimit-used": String(5000 - remaining),
    "x-ratelimit-reset": String(RESET),
    "x-ratelimit-resource": resource,
  };
}

describe("watchRateHeaders", () => {
  it("notes the reading of each answer: REST, GraphQL, and a refusal for a spent limit", async () => {
    nock(API)
      .get("/repos/acme/app")
      .reply(200, { id: 1 }, limits("core", 4321))
      .post("/graphql")
      .reply(200, { data: { viewer: { login: "bot" } } }, limits("graphql", 4990))
      .get("/repos/acme/app")
      .reply(403, { message: "API rate limit exceeded for installation ID 42." }, limits("core", 0));
    const octokit = github.octokit();
    const seen: RateReading[] = [];
    watchRateHeaders(octokit, (reading) => seen.push(reading));
    watchRateHeaders(octokit, (reading) => seen.push(reading));
    await octokit.request("GET /repos/{owner}/{repo}", { owner: "acme", repo: "app" });
    await octokit.graphql("query { viewer { login } }");
    await expect(
      octokit.request("GET /repos/{owner}/{repo}", { owner: "acme", repo: "app" }),
    ).rejects.toThrow(/rate limit/);
    expect(seen).toEqual([
      { resource: "core", limit: 5000, remaining: 4321, resetAt: RESET * 1000 },
      { resource: "graphql", limit: 5000, remaining: 4990, resetAt: RESET * 1000 },
      { resource: "core", limit: 5000, remaining: 0, resetAt: RESET * 1000 },
    ]);
  });

  it("reads nothing from an answer without the headers", () => {
    expect(readRateHeaders({ etag: "x" })).toBeNull();
    expect(
      readRateHeaders({
        "x-ratelimit-limit": "60",
        "x-ratelimit-remaining": "abc",
        "x-ratelimit-reset": "1",
      }),
    ).toBeNull();
    expect(readRateHeaders(undefined)).toBeNull();
  });
});
