/**
 * A scenario's organization: `installations:`, the App's installations, each on an account with the
 * repositories it covers and, for each repository, its files, configuration, people and issues as the
 * scenario's own repository declares them. The scenario's repository (`repo`, `issues`, `timeline`,
 * `expect`) is the one the run watches and judges; it belongs to the installation on its owner. The others
 * are seeded and left to the controller: webhooks and ticks from all of them.
 *
 * ```yaml
 * installations:
 *   - account: demo                  # the scenario repository's owner: demo/shop is covered here
 *     repositories:
 *       - name: billing
 *         config: { maxParallel: 1 }
 *         issues: [{ title: Idle, labels: [] }]
 *   - account: tools
 *     repositorySelection: selected  # only the repositories listed (default all: every one of the account)
 *     repositories: [{ name: cli }]
 * ```
 */
import { z } from "zod";
import { login } from "./scenario-fields.js";
import { checkIssues, ScenarioIssueSchema, ScenarioUserSchema } from "./scenario-issues.js";

const ScenarioOrgRepoSchema = z.strictObject({
  name: z.string().regex(/^[A-Za-z0-9_.-]+$/, "a repository name"),
  defaultBranch: z.string().min(1).default("main"),
  /** Repository files (path → content) of the initial commit, besides `.github/autopilot.yml`. */
  files: z.record(z.string(), z.string()).default({}),
  /** `.github/autopilot.yml`: a mapping merged over the demo agent defaults, or the file's text. */
  config: z.union([z.string(), z.record(z.string(), z.unknown())]).default({}),
  /** People with a permission on this repository (the scenario's `users` have theirs on every one). */
  users: z.array(ScenarioUserSchema).default([]),
  /** Created in order (#1 first); labels default to the ready label, as the scenario's own issues. */
  issues: z.array(ScenarioIssueSchema).default([]),
  /** The command of a CI workflow run on pushes and pull requests (check `ci`), as the scenario's `repo.ci`. */
  ci: z.string().min(1).optional(),
});

const InstallationSchema = z.strictObject({
  /** The installation's id; default: the sandbox's (store-core.ts `installationId`) for the first, then fresh. */
  id: z.number().int().positive().optional(),
  /** The organization (or user) the App is installed on. */
  account: login,
  /** `all` covers every repository of the account, `selected` only those listed (and the scenario's own). */
  repositorySelection: z.enum(["all", "selected"]).default("all"),
  repositories: z.array(ScenarioOrgRepoSchema).default([]),
});

type ScenarioInstallation = z.infer<typeof InstallationSchema>;

export const InstallationsSchema = z.array(InstallationSchema).min(1);

type Path = (string | number)[];

/**
 * Checks `installations:` against the rest of the scenario: one installation per account, one of them on the
 * scenario repository's owner, each repository once and not the scenario's own, each issue list sound.
 */
export function checkInstallations(
  installations: ScenarioInstallation[],
  scenario: { repo: { owner: string; name: string }; users: { login: string }[] },
  ctx: z.RefinementCtx,
): void {
  const accounts = new Set<string>();
  const ids = new Set<number>();
  installations.forEach((installation, i) => {
    const here: Path = ["installations", i];
    const account = installation.account.toLowerCase();
    if (accounts.has(account))
      ctx.addIssue({
        code: "custom",
        path: [...here, "account"],
        message: `the App is installed once per account: ${installation.account} has an installation already`,
      });
    accounts.add(account);
    if (installation.id !== undefined) {
      if (ids.has(installation.id))
        ctx.addIssue({
          code: "custom",
          path: [...here, "id"],
          message: `installation ${installation.id} twice`,
        });
      ids.add(installation.id);
    }
    const names = new Set<string>();
    installation.repositories.forEach((repo, j) => {
      const at: Path = [...here, "repositories", j];
      const full = `${account}/${repo.name.toLowerCase()}`;
      if (full === `${scenario.repo.owner}/${scenario.repo.name}`.toLowerCase())
        ctx.addIssue({
          code: "custom",
          path: [...at, "name"],
          message: "this is the scenario's repository: declare it under repo and issues",
        });
      if (names.has(full))
        ctx.addIssue({ code: "custom", path: [...at, "name"], message: `${full} is listed twice` });
      names.add(full);
      const logins = new Set(
        [...scenario.users, ...repo.users].map((u) => u.login.toLowerCase()).concat(account),
      );
      checkIssues(
        repo.issues,
        [...at, "issues"],
        (name, path) => {
          if (!logins.has(name.toLowerCase()))
            ctx.addIssue({ code: "custom", path, message: `unknown user "${name}": add it under users` });
        },
        ctx,
      );
    });
  });
  if (!accounts.has(scenario.repo.owner.toLowerCase()))
    ctx.addIssue({
      code: "custom",
      path: ["installations"],
      message: `no installation is on ${scenario.repo.owner}, the owner of the scenario's repository`,
    });
}
