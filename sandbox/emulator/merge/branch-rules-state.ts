/**
 * The branch rules a repository owner sets in Settings — classic branch protection per branch and rulesets
 * with their branch patterns — kept beside the store (a scenario or test sets them through `repoSettings` in
 * sandbox/emulator/server/app-setup.ts). The read endpoints answer them; sandbox/emulator/merge/merge-requirements.ts
 * enforces their merge rules.
 */
import type { JsonObject } from "../shapes.js";
import type { Repo, SandboxStore } from "../store.js";

export interface BranchProtection {
  requiredChecks: string[];
  requiredApprovals: number;
  /** "Dismiss stale pull request approvals when new commits are pushed". */
  dismissStaleReviews?: boolean;
  /** "Require branches to be up to date before merging" (the strict status-check policy). */
  strict?: boolean;
  /** "Require merge queue". */
  mergeQueue?: boolean;
  /** "Require signed commits" (sandbox/emulator/git/signed-commits-hook.ts). */
  requiredSignatures?: boolean;
}

/** One rule of a ruleset, in the shape of `GET /repos/{o}/{r}/rules/branches/{branch}`. */
export interface BranchRule {
  type: string;
  parameters?: JsonObject;
}

export interface Ruleset {
  /** Branch patterns (`main`, `autopilot/**`, `~DEFAULT_BRANCH`, `~ALL`). */
  branches: string[];
  rules: BranchRule[];
}

interface BranchRulesState {
  /** `owner/repo#branch` (lower-case repository) → protection. */
  protection: Map<string, BranchProtection>;
  /** `owner/repo` (lower case) → rulesets, in creation order (ids are positions + 1). */
  rulesets: Map<string, Ruleset[]>;
}

const states = new WeakMap<SandboxStore, BranchRulesState>();

export function branchRulesOf(store: SandboxStore): BranchRulesState {
  let state = states.get(store);
  if (!state) {
    state = { protection: new Map(), rulesets: new Map() };
    states.set(store, state);
  }
  return state;
}

export function repoKey(repo: string): string {
  return repo.toLowerCase();
}

function globToRegExp(pattern: string): RegExp {
  const escaped = pattern
    .split("**")
    .map((part) =>
      part
        .split("*")
        .map((s) => s.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
        .join("[^/]*"),
    )
    .join(".*");
  return new RegExp(`^${escaped}$`);
}

/** Whether a ruleset targets the branch (`~ALL`, `~DEFAULT_BRANCH`, or a glob). */
export function appliesTo(ruleset: Ruleset, branch: string, defaultBranch: string): boolean {
  return ruleset.branches.some((pattern) =>
    pattern === "~ALL"
      ? true
      : pattern === "~DEFAULT_BRANCH"
        ? branch === defaultBranch
        : globToRegExp(pattern).test(branch),
  );
}

/** The classic protection and the rules of every ruleset that apply to a branch. */
export function protectionOf(
  store: SandboxStore,
  repo: Repo,
  branch: string,
): { protection: BranchProtection | null; rules: BranchRule[] } {
  const state = branchRulesOf(store);
  return {
    protection: state.protection.get(`${repoKey(repo.fullName)}#${branch}`) ?? null,
    rules: (state.rulesets.get(repoKey(repo.fullName)) ?? [])
      .filter((ruleset) => appliesTo(ruleset, branch, repo.defaultBranch))
      .flatMap((ruleset) => ruleset.rules),
  };
}

/**
 * The branch names that require signed commits (a protection rule's `requiredSignatures`, a ruleset's
 * `required_signatures` rule), as one extended regular expression for the push hook; null when none does.
 */
export function signedBranchPattern(store: SandboxStore, repo: Repo): string | null {
  const state = branchRulesOf(store);
  const patterns: string[] = [];
  const prefix = `${repoKey(repo.fullName)}#`;
  const literal = (name: string) => name.replace(/[.+?^${}()|[\]\\*]/g, "\\$&");
  for (const [key, protection] of state.protection)
    if (key.startsWith(prefix) && protection.requiredSignatures)
      patterns.push(literal(key.slice(prefix.length)));
  for (const ruleset of state.rulesets.get(repoKey(repo.fullName)) ?? []) {
    if (!ruleset.rules.some((rule) => rule.type === "required_signatures")) continue;
    for (const pattern of ruleset.branches)
      patterns.push(
        pattern === "~ALL"
          ? ".*"
          : pattern === "~DEFAULT_BRANCH"
            ? literal(repo.defaultBranch)
            : globToRegExp(pattern).source.slice(1, -1),
      );
  }
  return patterns.length ? `(${patterns.join("|")})` : null;
}
