/**
 * The App's installations (an organization's several accounts, each with its repositories) and what an
 * installation token may reach. Until one is declared the store has the default installation, covering
 * every repository (store-core.ts `installationId`).
 */
import type { Installation, RepositorySelection } from "./installation-records.js";
import { type Repo, type RepoRef, fullNameOf } from "./repo-records.js";
import { StoreError } from "./store-error.js";
import type { TokenInfo } from "./user-records.js";
import { StoreWithRepos } from "./with-repos.js";

interface AddInstallationInput {
  /** Default: a fresh id (the first declared installation takes the store's `installationId`). */
  id?: number;
  account: string;
  repositorySelection?: RepositorySelection;
  /** `selected` only: `owner/name` of each covered repository. */
  repositories?: string[];
}

export class StoreWithInstallations extends StoreWithRepos {
  private readonly declared: Installation[] = [];
  private defaultInstallation: Installation | null = null;

  /**
   * Declares an installation on `account` (an organization, made one when unknown). The first one replaces
   * the default installation: from then on a repository no installation covers is one the App is not
   * installed on.
   */
  addInstallation(input: AddInstallationInput): Installation {
    const id = input.id ?? (this.declared.length === 0 ? this.installationId : this.id());
    if (this.declared.some((i) => i.id === id)) throw new StoreError(422, `Installation ${id} exists`);
    // An App is installed at most once on an account
    // (https://docs.github.com/en/apps/using-github-apps/installing-a-github-app-from-a-third-party).
    if (this.declared.some((i) => i.account.toLowerCase() === input.account.toLowerCase()))
      throw new StoreError(422, `The App is already installed on ${input.account}`);
    if (!this.getUser(input.account)) this.addUser(input.account, { type: "Organization" });
    const selection = input.repositorySelection ?? "all";
    const repositories = new Set((input.repositories ?? []).map((r) => fullNameOf(r)));
    for (const name of repositories) {
      // A selected repository is one of the account's own.
      if (!name.startsWith(`${input.account.toLowerCase()}/`))
        throw new StoreError(422, `${name} is not a repository of ${input.account}`);
    }
    const installation: Installation = {
      id,
      account: input.account,
      repositorySelection: selection,
      repositories: selection === "selected" ? repositories : new Set(),
      coversEveryOwner: false,
      createdAt: this.now(),
    };
    this.declared.push(installation);
    return installation;
  }

  /** Every installation of the App, in the order declared (the default one when none is). */
  listInstallations(): Installation[] {
    if (this.declared.length) return [...this.declared];
    this.defaultInstallation ??= {
      id: this.installationId,
      account: this.app.owner,
      repositorySelection: "all",
      repositories: new Set(),
      coversEveryOwner: true,
      createdAt: this.now(),
    };
    return [this.defaultInstallation];
  }

  getInstallation(id: number): Installation | undefined {
    return this.listInstallations().find((i) => i.id === id);
  }

  /** The installation on a user or organization account, by login. */
  installationOnAccount(login: string): Installation | undefined {
    return this.listInstallations().find(
      (i) => !i.coversEveryOwner && i.account.toLowerCase() === login.toLowerCase(),
    );
  }

  /** Whether an installation covers a repository. */
  covers(installation: Installation, repo: RepoRef): boolean {
    const key = fullNameOf(repo);
    if (!this.repos.has(key)) return false;
    if (installation.coversEveryOwner) return true;
    if (installation.repositorySelection === "selected") return installation.repositories.has(key);
    return key.startsWith(`${installation.account.toLowerCase()}/`);
  }

  /** The installation covering a repository, or null when the App is not installed on it. */
  installationFor(repo: RepoRef): Installation | null {
    return this.listInstallations().find((i) => this.covers(i, repo)) ?? null;
  }

  /** The repositories an installation covers. */
  installationRepos(id: number): Repo[] {
    const installation = this.getInstallation(id);
    if (!installation) return [];
    return this.listRepos().filter((r) => this.covers(installation, r.fullName));
  }

  /**
   * Whether a token reaches a repository: an installation token only its installation's repositories (and of
   * those only the ones it was minted for, when it names some), a workflow's `GITHUB_TOKEN` only its run's
   * (https://docs.github.com/en/apps/creating-github-apps/authenticating-with-a-github-app/authenticating-as-a-github-app-installation).
   * User tokens are judged by permissions instead.
   */
  tokenReaches(info: TokenInfo, repo: RepoRef): boolean {
    const key = fullNameOf(repo);
    if (info.repositories && !info.repositories.some((r) => r.toLowerCase() === key)) return false;
    if (info.kind !== "installation") return true;
    const installation = info.installationId === null ? undefined : this.getInstallation(info.installationId);
    return installation !== undefined && this.covers(installation, key);
  }
}
