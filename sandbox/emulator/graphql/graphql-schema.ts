/** GitHub's GraphQL schema, as published, plus the fields GitHub serves that the package does not describe yet. */
import { schema as publishedSchema } from "@octokit/graphql-schema";
import { type GraphQLSchema, buildSchema, extendSchema, parse } from "graphql";

/**
 * Fields GitHub serves that the published schema package (15.26.1) does not describe yet: issue
 * dependencies (`blockedBy`, `blocking`, `issueDependenciesSummary`), as documented for GitHub's live API.
 * Added only when absent, so a newer schema package takes over unchanged.
 */
const EXTENSIONS: Array<{ type: string; field: string; sdl: string }> = [
  {
    type: "Issue",
    field: "blockedBy",
    sdl: "extend type Issue { blockedBy(after: String, before: String, first: Int, last: Int): IssueConnection! }",
  },
  {
    type: "Issue",
    field: "blocking",
    sdl: "extend type Issue { blocking(after: String, before: String, first: Int, last: Int): IssueConnection! }",
  },
  {
    type: "Issue",
    field: "issueDependenciesSummary",
    sdl: `type IssueDependenciesSummary { blockedBy: Int! blocking: Int! totalBlockedBy: Int! totalBlocking: Int! }
extend type Issue { issueDependenciesSummary: IssueDependenciesSummary! }`,
  },
];

let cachedSchema: Promise<GraphQLSchema> | null = null;

/** GitHub's GraphQL schema, built once per process (the SDL has a few duplicate fields: assumed valid). */
export function loadGraphqlSchema(): Promise<GraphQLSchema> {
  cachedSchema ??= (async () => {
    let schema = buildSchema(publishedSchema.idl, { assumeValidSDL: true });
    for (const ext of EXTENSIONS) {
      const type = schema.getType(ext.type);
      if (type && "getFields" in type && !(ext.field in type.getFields())) {
        schema = extendSchema(schema, parse(ext.sdl), { assumeValidSDL: true });
      }
    }
    return schema;
  })();
  return cachedSchema;
}
