/**
 * REST handlers of a repository's Actions variables: list, get, create, update, delete.
 * https://docs.github.com/en/rest/actions/variables
 */
import type { ActionsVariable } from "../store/with-variables.js";
import { bodyObject, countedList, fail, type RestHandler, repoOf, str } from "./rest-helpers.js";

function shape(variable: ActionsVariable) {
  return {
    name: variable.name,
    value: variable.value,
    created_at: variable.createdAt.toISOString(),
    updated_at: variable.updatedAt.toISOString(),
  };
}

export const variableEndpoints: Record<string, RestHandler> = {
  // "per_page: The number of results per page (max 30). Default: 10".
  "actions/list-repo-variables": (req) => {
    const repo = repoOf(req);
    const perPage = Math.min(30, Number(req.query.per_page ?? 10) || 10);
    const paged = { ...req, query: { ...req.query, per_page: String(perPage) } };
    return countedList(paged, "variables", req.store.listVariables(repo.fullName), shape);
  },

  "actions/get-repo-variable": (req) => {
    const repo = repoOf(req);
    const variable = req.store.getVariable(repo.fullName, req.params.name ?? "");
    if (!variable) fail(404, "Not Found");
    return { status: 200, body: shape(variable) };
  },

  // Answers 201 with an empty object.
  "actions/create-repo-variable": (req) => {
    const repo = repoOf(req);
    const body = bodyObject(req);
    req.store.createVariable(repo.fullName, str(body, "name") ?? "", str(body, "value") ?? "");
    return { status: 201, body: {} };
  },

  // Answers 204; a body may rename the variable as well as change its value.
  "actions/update-repo-variable": (req) => {
    const repo = repoOf(req);
    const body = bodyObject(req);
    const name = str(body, "name");
    const value = str(body, "value");
    req.store.updateVariable(repo.fullName, req.params.name ?? "", {
      ...(name !== undefined ? { name } : {}),
      ...(value !== undefined ? { value } : {}),
    });
    return { status: 204 };
  },

  "actions/delete-repo-variable": (req) => {
    const repo = repoOf(req);
    req.store.deleteVariable(repo.fullName, req.params.name ?? "");
    return { status: 204 };
  },
};
