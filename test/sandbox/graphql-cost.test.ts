import { parse } from "graphql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { graphqlCost } from "../../sandbox/emulator/graphql/graphql-cost.js";
import { type Sandbox, startSandbox } from "../../sandbox/emulator/index.js";

const cost = (query: string, variables: Record<string, unknown> = {}) =>
  graphqlCost(parse(query), variables, null);

// The example of GitHub's "Calculating a rate limit score for a query": 1 + 100 + 5,000 requests → 51 points.
const DOCS_EXAMPLE = `query {
  viewer {
    login
    repositories(first: 100) {
      edges { node { id issues(first: 50) { edges { node { id labels(first: 60) { edges { node { id name } } } } } } } }
    }
  }
}`;

describe("GraphQL rate limit score (GitHub's documented calculation)", () => {
  it("scores the documentation's example as 51 points", () => {
    expect(cost(DOCS_EXAMPLE)).toBe(51);
  });

  it("charges at least one point, and rounds to the nearest whole number", () => {
    expect(cost("query { viewer { login } }")).toBe(1);
    // 1 + 100 requests: 1.01 → 1; 1 + 2 × 100 = 201: 2.01 → 2; 1 + 100 × 3 / 2 … 1 + 150 = 151: 1.51 → 2.
    expect(
      cost(`query { viewer { repositories(first: 100) { nodes { issues(first: 5) { totalCount } } } } }`),
    ).toBe(1);
    expect(
      cost(
        `query { viewer { repositories(last: 100) { nodes { a: issues(first: 5) { totalCount } b: pullRequests(first: 5) { totalCount } } } } }`,
      ),
    ).toBe(2);
    expect(
      cost(
        `query { viewer { repositories(first: 50) { nodes { a: issues(first: 5) { totalCount } b: pullRequests(first: 5) { totalCount } c: labels(first: 1) { totalCount } } } } }`,
      ),
    ).toBe(2);
  });

  it("reads page sizes from variables, follows fragments, and leaves out skipped connections", () => {
    const query = `query Q($n: Int!, $with: Boolean!) {
      viewer { repositories(first: $n) { nodes { ...Repo } } }
    }
    fragment Repo on Repository {
      issues(first: 10) { nodes { labels(first: 10) @include(if: $with) { totalCount } } }
    }`;
    // 1 + 100 + 100 × 10 = 1,101 → 11; without the labels 101 → 1.
    expect(cost(query, { n: 100, with: true })).toBe(11);
    expect(cost(query, { n: 100, with: false })).toBe(1);
    expect(cost(query, { n: 50, with: true })).toBe(6);
  });
});

describe("GraphQL points on the sandbox", () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await startSandbox();
    sandbox.store.createRepo({ owner: "acme", name: "widgets" });
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  it("charges a query its score against the GraphQL budget and answers it in rateLimit", async () => {
    const token = sandbox.installationToken();
    const ask = async (query: string) => {
      const response = await fetch(sandbox.graphqlUrl, {
        method: "POST",
        headers: { authorization: `bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ query }),
      });
      return {
        headers: response.headers,
        body: (await response.json()) as { data: { rateLimit: { cost: number; remaining: number } } },
      };
    };
    const cheap = await ask(
      'query { repository(owner: "acme", name: "widgets") { name } rateLimit { cost remaining } }',
    );
    const costly = await ask(`query {
      repository(owner: "acme", name: "widgets") {
        issues(first: 100) { nodes { comments(first: 50) { nodes { reactions(first: 60) { totalCount } } } } }
      }
      rateLimit { cost remaining }
    }`);
    expect(cheap.body.data.rateLimit.cost).toBe(1);
    expect(costly.body.data.rateLimit.cost).toBe(51);
    expect(cheap.body.data.rateLimit.remaining - costly.body.data.rateLimit.remaining).toBe(51);
    expect(costly.headers.get("x-ratelimit-resource")).toBe("graphql");
    expect(costly.headers.get("x-ratelimit-used")).toBe("52");
    // REST requests are counted apart.
    const rest = await fetch(`${sandbox.url}/repos/acme/widgets`, {
      headers: { authorization: `token ${token}` },
    });
    expect(rest.headers.get("x-ratelimit-resource")).toBe("core");
    expect(rest.headers.get("x-ratelimit-used")).toBe("1");
    const record = sandbox.requests.records.find((r) => r.endpoint === "POST /graphql" && r.points === 51);
    expect(record).toBeDefined();
  });
});
