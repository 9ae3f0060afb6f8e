/** The App's installations: which account each is on and which of its repositories it covers. */

/**
 * `repository_selection` of an installation: `all` covers every repository of its account, `selected` only
 * those the owner picked (https://docs.github.com/en/rest/apps/installations and
 * https://docs.github.com/en/apps/using-github-apps/installing-your-own-github-app).
 */
export type RepositorySelection = "all" | "selected";

export interface Installation {
  id: number;
  /** The login of the user or organization the App is installed on. */
  account: string;
  repositorySelection: RepositorySelection;
  /** `selected` only: the covered repositories (`owner/name`, lower-cased). */
  repositories: Set<string>;
  /**
   * The sandbox's default installation, there while no installation is declared: its `all` covers every
   * repository of the store whoever owns it, as single-repository scenarios and tests have always had it.
   */
  coversEveryOwner: boolean;
  createdAt: Date;
}
