import nock from "nock";
import { afterEach, describe, expect, it } from "vitest";
import { listInstallationIds, listInstallationRepos } from "../../src/github/setup/app-installations.js";
import { createOctokit } from "../../src/github/transport/octokit.js";

const API = "https://api.github.com";
const client = () => createOctokit({ auth: "t", throttle: false, retry: false });

afterEach(() => {
  nock.cleanAll();
});

describe("REST listings for the entry points", () => {
  it("pages the App's installations while pages are full", async () => {
    const full = Array.from({ length: 100 }, (_, i) => ({ id: i + 1 }));
    const scope = nock(API)
      .get("/app/installations")
      .query({ per_page: 100 })
      .reply(200, full, { link: `<${API}/app/installations?per_page=100&page=2>; rel="next"` })
      .get("/app/installations")
      .query({ per_page: 100, page: 2 })
      .reply(200, [{ id: 101 }], { link: `<${API}/app/installations?per_page=100&page=3>; rel="next"` });
    const ids = await listInstallationIds(client());
    expect(ids).toHaveLength(101);
    expect(ids.at(-1)).toBe(101);
    scope.done();
  });

  it("lists an installation's repositories without the archived ones", async () => {
    const scope = nock(API)
      .get("/installation/repositories")
      .query({ per_page: 100 })
      .reply(200, {
        total_count: 2,
        repositories: [
          { name: "one", owner: { login: "octo-org" } },
          { name: "old", owner: { login: "octo-org" }, archived: true },
        ],
      });
    expect(await listInstallationRepos(client())).toEqual([{ owner: "octo-org", name: "one" }]);
    scope.done();
  });
});
