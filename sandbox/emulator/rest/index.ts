/**
 * Stateful REST handlers, keyed by the OpenAPI operationId. Requests reach them already authenticated,
 * rate-limited and validated against GitHub's description; they read and change the store and answer in
 * GitHub's shapes. Each file of this folder serves one section of the API.
 */
import { actionsEndpoints } from "./actions-endpoints.js";
import { appEndpoints } from "./app-endpoints.js";
import { checkEndpoints } from "./check-endpoints.js";
import { commentEndpoints } from "./comment-endpoints.js";
import { gitDataEndpoints } from "./git-data-endpoints.js";
import { gitDatabaseEndpoints } from "./git-database-endpoints.js";
import { issueEndpoints } from "./issue-endpoints.js";
import { pullEndpoints } from "./pull-endpoints.js";
import { repoEndpoints } from "./repo-endpoints.js";
import type { RestHandler } from "./rest-helpers.js";
import { variableEndpoints } from "./variable-endpoints.js";

export { authorizeRepoOperation } from "./repo-authorization.js";
export { fail, list, type RestReply, type RestRequest, repoOf } from "./rest-helpers.js";

/** Every implemented REST operation, by operationId. */
export const restHandlers: Record<string, RestHandler> = {
  ...appEndpoints,
  ...repoEndpoints,
  ...issueEndpoints,
  ...commentEndpoints,
  ...gitDataEndpoints,
  ...gitDatabaseEndpoints,
  ...pullEndpoints,
  ...checkEndpoints,
  ...actionsEndpoints,
  ...variableEndpoints,
};
