/**
 * The sandbox's organization of installations: each installation lists and mints tokens for its own
 * repositories only, a token does not reach another installation's repository, webhooks name the installation
 * covering the repository, and each installation's rate limit (REST requests and GraphQL points) is counted
 * apart (sandbox/emulator/store/with-installations.ts, sandbox/emulator/server/installation-limit.ts).
 */
import { createAppAuth } from "@octokit/auth-app";
import { Octokit } from "@octokit/rest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Sandbox, startSandbox } from "../../sandbox/emulator/index.js";
import { installationLimit } from "../../sandbox/emulator/server/installation-limit.js";

let sandbox: Sandbox;
let east: number;
let west: number;

beforeAll(async () => {
  sandbox = await startSandbox({ validateResponses: true });
  const store = sandbox.store;
  east = store.addInstallation({ account: "east", repositorySelection: "all" }).id;
  for (const name of ["api", "web", "docs"]) store.createRepo({ owner: "east", name, private: true });
  for (const name of ["tools", "site"]) store.createRepo({ owner: "west", name, private: true });
  west = store.addInstallation({
    account: "west",
    repositorySelection: "selected",
    repositories: ["west/tools"],
  }).id;
  store.createRepo({ owner: "nobody", name: "alone", private: true });
});

afterAll(async () => {
  await sandbox.stop();
});

function client(token: string): Octokit {
  return new Octokit({ auth: token, baseUrl: sandbox.url, retry: { enabled: false } });
}

async function asApp(): Promise<Octokit> {
  const { token } = await createAppAuth({ appId: sandbox.app.id, privateKey: sandbox.app.privateKey })({
    type: "app",
  });
  return client(token);
}

async function tokenOf(installation: number): Promise<string> {
  const app = await asApp();
  return (await app.apps.createInstallationAccessToken({ installation_id: installation })).data.token;
}

async function statusOf(promise: Promise<unknown>): Promise<number> {
  try {
    await promise;
    return 200;
  } catch (error) {
    return (error as { status: number }).status;
  }
}

describe("an organization of installations", () => {
  it("lists each installation on its account, paginated, and finds the one covering a repository", async () => {
    const app = await asApp();
    const all = await app.apps.listInstallations();
    const accountOf = (i: { account: unknown }) => (i.account as { login: string } | null)?.login;
    expect(all.data.map((i) => [i.id, accountOf(i), i.repository_selection])).toEqual([
      [east, "east", "all"],
      [west, "west", "selected"],
    ]);
    const first = await app.apps.listInstallations({ per_page: 1 });
    expect(first.data.map((i) => i.id)).toEqual([east]);
    expect(first.headers.link).toContain('rel="next"');
    expect(accountOf((await app.apps.getInstallation({ installation_id: west })).data)).toBe("west");
    expect(await statusOf(app.apps.getInstallation({ installation_id: 999_999 }))).toBe(404);
    expect((await app.apps.getRepoInstallation({ owner: "east", repo: "web" })).data.id).toBe(east);
    expect((await app.apps.getOrgInstallation({ org: "west" })).data.id).toBe(west);
    // Not selected, or on an account without the App: not installed there.
    expect(await statusOf(app.apps.getRepoInstallation({ owner: "west", repo: "site" }))).toBe(404);
    expect(await statusOf(app.apps.getRepoInstallation({ owner: "nobody", repo: "alone" }))).toBe(404);
    expect((await app.apps.getAuthenticated()).data?.installations_count).toBe(2);
  });

  it("gives each installation's token its own repositories only, listed in pages", async () => {
    const eastToken = client(await tokenOf(east));
    const westToken = client(await tokenOf(west));
    const listed = await eastToken.apps.listReposAccessibleToInstallation();
    expect(listed.data.total_count).toBe(3);
    expect(listed.data.repository_selection).toBe("all");
    expect(listed.data.repositories.map((r) => r.full_name).sort()).toEqual([
      "east/api",
      "east/docs",
      "east/web",
    ]);
    const page = await eastToken.apps.listReposAccessibleToInstallation({ per_page: 2, page: 2 });
    expect(page.data.repositories).toHaveLength(1);
    expect(page.data.total_count).toBe(3);
    const westListed = await westToken.apps.listReposAccessibleToInstallation();
    expect(westListed.data.repositories.map((r) => r.full_name)).toEqual(["west/tools"]);
    expect(westListed.data.repository_selection).toBe("selected");

    expect(await statusOf(eastToken.repos.get({ owner: "east", repo: "api" }))).toBe(200);
    // Another installation's private repository, or one its installation did not select: Not Found.
    expect(await statusOf(eastToken.repos.get({ owner: "west", repo: "tools" }))).toBe(404);
    expect(await statusOf(eastToken.issues.create({ owner: "west", repo: "tools", title: "Not mine" }))).toBe(
      404,
    );
    expect(await statusOf(westToken.repos.get({ owner: "west", repo: "site" }))).toBe(404);
    expect(await statusOf(westToken.repos.get({ owner: "east", repo: "api" }))).toBe(404);
    const graphql = await statusOfGraphql(await tokenOf(east), "west", "tools");
    expect(graphql).toEqual({ type: "NOT_FOUND" });
    expect(await statusOfGraphql(await tokenOf(west), "west", "tools")).toEqual({ name: "tools" });
  });

  it("refuses to mint a token for a repository outside the installation", async () => {
    const app = await asApp();
    expect(
      await statusOf(
        app.apps.createInstallationAccessToken({ installation_id: east, repositories: ["tools"] }),
      ),
    ).toBe(422);
    expect(await statusOf(app.apps.createInstallationAccessToken({ installation_id: 999_999 }))).toBe(404);
    const scoped = await app.apps.createInstallationAccessToken({
      installation_id: east,
      repositories: ["web"],
    });
    expect(scoped.data.repository_selection).toBe("selected");
    expect(await statusOf(client(scoped.data.token).repos.get({ owner: "east", repo: "api" }))).toBe(404);
  });

  it("names the installation covering the repository in each webhook, and sends none for others", async () => {
    const before = sandbox.webhooks.deliveries.length;
    sandbox.store.createIssue("east/api", { title: "East", author: "east" });
    sandbox.store.createIssue("west/tools", { title: "West", author: "west" });
    sandbox.store.createIssue("west/site", { title: "Not installed", author: "west" });
    const sent = sandbox.webhooks.deliveries.slice(before);
    expect(
      sent.map((d) => [
        (d.payload.repository as { full_name: string }).full_name,
        (d.payload.installation as { id: number }).id,
      ]),
    ).toEqual([
      ["east/api", east],
      ["west/tools", west],
    ]);
  });

  it("counts each installation's requests and GraphQL points apart, shared by its tokens", async () => {
    const [eastOne, eastTwo, westOne] = await Promise.all([tokenOf(east), tokenOf(east), tokenOf(west)]);
    const headersOf = async (token: string, owner: string, repo: string) =>
      (await client(token).repos.get({ owner, repo })).headers;
    const a = await headersOf(eastOne, "east", "api");
    const b = await headersOf(eastTwo, "east", "web");
    const w = await headersOf(westOne, "west", "tools");
    expect(a["x-ratelimit-resource"]).toBe("core");
    expect(Number(b["x-ratelimit-used"])).toBe(Number(a["x-ratelimit-used"]) + 1);
    expect(Number(b["x-ratelimit-remaining"])).toBe(Number(a["x-ratelimit-remaining"]) - 1);
    expect(Number(w["x-ratelimit-used"])).toBeLessThan(Number(b["x-ratelimit-used"]));
    expect(b["x-ratelimit-limit"]).toBe("5000");

    const points = async (token: string) => {
      const response = await fetch(`${sandbox.url}/graphql`, {
        method: "POST",
        headers: { authorization: `bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ query: "{ viewer { login } }" }),
      });
      return {
        used: Number(response.headers.get("x-ratelimit-used")),
        resource: response.headers.get("x-ratelimit-resource"),
      };
    };
    const westFirst = await points(westOne);
    const eastFirst = await points(eastOne);
    const eastSecond = await points(eastTwo);
    const westSecond = await points(westOne);
    expect(eastFirst.resource).toBe("graphql");
    // Two tokens of one installation draw on one budget; the other installation's is untouched by them.
    expect(eastSecond.used).toBe(eastFirst.used + 1);
    expect(westSecond.used).toBe(westFirst.used + 1);
  });

  it("raises an installation's limit by 50 for each repository over 20, up to 12,500", async () => {
    expect(installationLimit(5000, 3)).toBe(5000);
    expect(installationLimit(5000, 25)).toBe(5250);
    expect(installationLimit(5000, 500)).toBe(12_500);
    const store = sandbox.store;
    const many = store.addInstallation({ account: "many" });
    for (let i = 0; i < 22; i += 1) store.createRepo({ owner: "many", name: `r${i}` });
    const token = client(await tokenOf(many.id));
    const { headers } = await token.repos.get({ owner: "many", repo: "r0" });
    expect(headers["x-ratelimit-limit"]).toBe("5100");
  });
});

describe("the installation endpoints' answers", () => {
  it("match GitHub's published description", () => {
    sandbox.assertNoValidationFailures();
  });
});

/** The `repository` query with a token: the repository's name, or the error's type. */
async function statusOfGraphql(token: string, owner: string, name: string): Promise<unknown> {
  const response = await fetch(`${sandbox.url}/graphql`, {
    method: "POST",
    headers: { authorization: `bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({
      query: "query($owner: String!, $name: String!) { repository(owner: $owner, name: $name) { name } }",
      variables: { owner, name },
    }),
  });
  const body = (await response.json()) as {
    data: { repository: { name: string } | null } | null;
    errors?: { type?: string }[];
  };
  if (body.errors?.length) return { type: body.errors[0]!.type };
  return body.data?.repository;
}
