/**
 * A repository's Actions configuration variables (`vars.NAME` in a workflow), as the REST API keeps them.
 * https://docs.github.com/en/rest/actions/variables
 * https://docs.github.com/en/actions/reference/workflows-and-actions/variables
 */
import { fullNameOf, type RepoRef } from "./repo-records.js";
import { StoreError } from "./store-error.js";
import { StoreWithWorkflows } from "./with-workflows.js";

export interface ActionsVariable {
  name: string;
  value: string;
  createdAt: Date;
  updatedAt: Date;
}

/**
 * GitHub's naming rules: letters, digits and underscores, not starting with a digit nor with `GITHUB_`; names
 * are stored in upper case and compared without regard to case.
 * https://docs.github.com/en/actions/reference/workflows-and-actions/variables#naming-conventions-for-configuration-variables
 */
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** "Individual variables are limited to 48 KB in size." (the same page, "Limits for configuration variables") */
const MAX_VALUE_BYTES = 48 * 1024;

export class StoreWithVariables extends StoreWithWorkflows {
  /** By repository (full name, lower case), then by variable name in upper case. */
  private readonly variables = new Map<string, Map<string, ActionsVariable>>();

  private variablesOf(repo: RepoRef): Map<string, ActionsVariable> {
    const key = fullNameOf(this.state(repo).repo).toLowerCase();
    let found = this.variables.get(key);
    if (!found) {
      found = new Map();
      this.variables.set(key, found);
    }
    return found;
  }

  listVariables(repo: RepoRef): ActionsVariable[] {
    return [...this.variablesOf(repo).values()].sort((a, b) => a.name.localeCompare(b.name));
  }

  getVariable(repo: RepoRef, name: string): ActionsVariable | undefined {
    return this.variablesOf(repo).get(name.toUpperCase());
  }

  /** `vars` as a run of this repository sees it (every name in upper case). */
  variableValues(repo: RepoRef): Record<string, string> {
    return Object.fromEntries(this.listVariables(repo).map((v) => [v.name, v.value]));
  }

  createVariable(repo: RepoRef, name: string, value: string): ActionsVariable {
    checkVariable(name, value);
    const variables = this.variablesOf(repo);
    if (variables.has(name.toUpperCase()))
      throw new StoreError(409, "Already exists - Variable already exists");
    const now = this.clock();
    const variable = { name: name.toUpperCase(), value, createdAt: now, updatedAt: now };
    variables.set(variable.name, variable);
    return variable;
  }

  updateVariable(repo: RepoRef, name: string, change: { name?: string; value?: string }): void {
    const variables = this.variablesOf(repo);
    const variable = variables.get(name.toUpperCase());
    if (!variable) throw new StoreError(404, "Not Found");
    const newName = (change.name ?? variable.name).toUpperCase();
    const value = change.value ?? variable.value;
    checkVariable(newName, value);
    if (newName !== variable.name && variables.has(newName))
      throw new StoreError(409, "Already exists - Variable already exists");
    variables.delete(variable.name);
    variables.set(newName, { ...variable, name: newName, value, updatedAt: this.clock() });
  }

  deleteVariable(repo: RepoRef, name: string): void {
    if (!this.variablesOf(repo).delete(name.toUpperCase())) throw new StoreError(404, "Not Found");
  }
}

function checkVariable(name: string, value: string): void {
  if (!NAME.test(name) || /^GITHUB_/i.test(name))
    throw new StoreError(
      422,
      "Invalid name: a variable's name is letters, digits and underscores, not starting with a digit or GITHUB_",
    );
  if (Buffer.byteLength(value, "utf8") > MAX_VALUE_BYTES)
    throw new StoreError(422, "Variable value is too large: at most 48 KB");
}
