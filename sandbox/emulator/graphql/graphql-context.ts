/** What every GraphQL resolver of the sandbox sees. */
import type { GraphQLSchema } from "graphql";
import type { RateState } from "../server/accounting.js";
import type { Identity } from "../server/auth.js";
import type { Shapes } from "../shapes.js";
import type { SandboxStore } from "../store.js";

export interface GraphqlContext {
  store: SandboxStore;
  shapes: Shapes;
  identity: Identity;
  schema: GraphQLSchema;
  rate: RateState;
  /** Points this request was charged (graphql-cost.ts), answered in `rateLimit { cost }`. */
  cost: number;
  /** `Type.field` names the query asked for that the sandbox does not serve. */
  unimplemented: string[];
}
