/**
 * A scenario's `installations:` (sandbox/scenario/scenario-installations.ts, seed-installations.ts): checked
 * against the rest of the file, and seeded as installations, each with its repositories, their configuration,
 * people and issues, which the App's installation tokens then list.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { attachGit } from "../../sandbox/emulator/git/sandbox-git.js";
import { startSandbox } from "../../sandbox/emulator/index.js";
import { parseScenario, ScenarioError } from "../../sandbox/scenario/scenario-file.js";
import { declareInstallations, seedOrgRepos } from "../../sandbox/scenario/seed-installations.js";
import { seedScenario } from "../../sandbox/scenario/seed-scenario.js";

const TWO_INSTALLATIONS = `name: org
repo: { owner: east, name: shop }
users: [{ login: alice, permission: admin }]
issues: [{ title: The task }]
installations:
  - account: east
    id: 500
    repositories:
      - name: billing
        config: { maxParallel: 1 }
        issues:
          - { title: Idle one, labels: [] }
          - { title: Idle two, labels: [], dependsOn: [1] }
  - account: west
    repositorySelection: selected
    repositories:
      - name: tools
        users: [{ login: wanda, permission: write }]
        issues: [{ title: Later, labels: [], author: wanda }]
`;

function problems(text: string): string {
  try {
    parseScenario(text, "org.yml");
  } catch (error) {
    if (error instanceof ScenarioError) return error.message;
    throw error;
  }
  return "";
}

describe("a scenario's installations", () => {
  it("must cover the scenario's repository, once per account, with sound issues", () => {
    expect(problems(TWO_INSTALLATIONS)).toBe("");
    expect(problems(TWO_INSTALLATIONS.replace("account: east", "account: north"))).toContain(
      "no installation is on east",
    );
    expect(problems(TWO_INSTALLATIONS.replace("account: west", "account: east"))).toContain(
      "installations[1].account: the App is installed once per account",
    );
    expect(problems(TWO_INSTALLATIONS.replace("name: billing", "name: shop"))).toContain(
      "installations[0].repositories[0].name: this is the scenario's repository",
    );
    expect(problems(TWO_INSTALLATIONS.replace("dependsOn: [1]", "dependsOn: [3]"))).toContain(
      "installations[0].repositories[0].issues[1].dependsOn[0]: there is no issue #3",
    );
    expect(problems(TWO_INSTALLATIONS.replace("author: wanda", "author: nobody"))).toContain(
      'unknown user "nobody"',
    );
    expect(
      problems(TWO_INSTALLATIONS.replace("repositorySelection: selected", "repositorySelection: some")),
    ).toContain("installations[1].repositorySelection");
  });

  it("lets a person act in one of the installations' repositories, on an issue it has", () => {
    const acting = (action: string) =>
      problems(`${TWO_INSTALLATIONS}timeline:\n  - when: { afterSeconds: 1 }\n    do: [${action}]\n`);
    expect(acting("{ as: alice, label: autopilot:ready, repo: west/tools, on: 1 }")).toBe("");
    expect(acting("{ as: alice, comment: Hello, repo: east/billing, on: 2 }")).toBe("");
    expect(acting("{ as: alice, label: autopilot:ready, repo: west/docs, on: 1 }")).toContain(
      "timeline[0].do[0].repo: no repository west/docs under installations",
    );
    expect(acting("{ as: alice, label: autopilot:ready, repo: west/tools, on: 2 }")).toContain(
      "west/tools has 1 issue(s); #2 is not one of them",
    );
    expect(acting("{ as: alice, label: autopilot:ready, repo: west/tools }")).toContain(
      "in another repository (`repo:`) a person comments, labels, unlabels, closes or reopens issue `on: N`",
    );
    expect(acting("{ as: alice, editBody: New, repo: west/tools, on: 1 }")).toContain(
      "in another repository (`repo:`)",
    );
  });

  it("seeds both installations with their repositories, configurations and issues", async () => {
    const scenario = parseScenario(TWO_INSTALLATIONS, "org.yml");
    const sandbox = await startSandbox();
    const tempDir = mkdtempSync(join(tmpdir(), "scenario-installations-"));
    const git = await attachGit(sandbox, { root: join(tempDir, "git") });
    try {
      const store = sandbox.store;
      const repo = { owner: "east", name: "shop", full: "east/shop" };
      declareInstallations(scenario, repo, store);
      await seedScenario(scenario, repo, { store, git }, tempDir, () => {});
      await seedOrgRepos(scenario, { store, git }, join(tempDir, "agent"), () => {});

      const installations = store.listInstallations();
      expect(installations.map((i) => [i.id, i.account, i.repositorySelection])).toEqual([
        [500, "east", "all"],
        [expect.any(Number), "west", "selected"],
      ]);
      const west = installations[1]!.id;
      expect(store.installationRepos(500).map((r) => r.fullName)).toEqual(["east/shop", "east/billing"]);
      expect(store.installationRepos(west).map((r) => r.fullName)).toEqual(["west/tools"]);
      expect(store.listIssues("east/billing").map((i) => [i.number, i.title, i.labels.length])).toEqual([
        [1, "Idle one", 0],
        [2, "Idle two", 0],
      ]);
      expect(store.listIssues("east/billing")[1]!.body).toContain("Depends on #1");
      expect(store.listIssues("west/tools").map((i) => i.user)).toEqual(["wanda"]);
      expect(store.getPermission("west/tools", "wanda")).toBe("write");
      expect(store.getPermission("west/tools", "alice")).toBe("admin");
      const config = await store.readFile("east/billing", ".github/autopilot.yml");
      expect(config?.toString("utf8")).toMatch(/maxParallel: 1/);
      expect(config?.toString("utf8")).toContain("east-billing");

      const listed = async (installationId: number) => {
        const response = await fetch(`${sandbox.url}/installation/repositories`, {
          headers: { authorization: `token ${sandbox.installationToken(installationId)}` },
        });
        const body = (await response.json()) as { repositories: { full_name: string }[] };
        return body.repositories.map((r) => r.full_name);
      };
      expect(await listed(500)).toEqual(["east/shop", "east/billing"]);
      expect(await listed(west)).toEqual(["west/tools"]);
    } finally {
      await git.stop();
      await sandbox.stop();
      rmSync(tempDir, { recursive: true, force: true });
    }
  });
});
