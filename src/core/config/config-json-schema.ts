/** The configuration as JSON Schema: the published one for editors, and walking it to a key's node. */
import { z } from "zod";
import { EXPECTED } from "./config-constants.js";
import { ConfigSchema } from "./config-schema.js";
import { isPlainObject } from "./key-paths.js";

export type JsonNode = { [key: string]: unknown };

export function asNode(value: unknown): JsonNode | undefined {
  return isPlainObject(value) ? value : undefined;
}

let internalSchemaCache: JsonNode | undefined;

/** JSON Schema including the internal `x-expected` phrases (for error messages and the reference). */
export function internalJsonSchema(): JsonNode {
  internalSchemaCache ??= z.toJSONSchema(ConfigSchema, { io: "input", target: "draft-7" }) as JsonNode;
  return internalSchemaCache;
}

/** The JSON Schema published for editors (draft-07; what a user may write). */
export function configJsonSchema(): JsonNode {
  return z.toJSONSchema(ConfigSchema, {
    io: "input",
    target: "draft-7",
    override: (ctx) => {
      delete (ctx.jsonSchema as JsonNode)[EXPECTED];
    },
  }) as JsonNode;
}

/** The node of the key at `path` (list indexes step into the items), or undefined when there is none. */
export function schemaAt(root: JsonNode, path: readonly PropertyKey[]): JsonNode | undefined {
  let node: JsonNode | undefined = root;
  for (const segment of path) {
    node = node ? stepInto(node, segment) : undefined;
  }
  return node;
}

function stepInto(node: JsonNode, segment: PropertyKey): JsonNode | undefined {
  if (Array.isArray(node.anyOf)) {
    for (const alternative of node.anyOf) {
      const alt = asNode(alternative);
      const inner = alt ? stepInto(alt, segment) : undefined;
      if (inner) return inner;
    }
    return undefined;
  }
  if (typeof segment === "number") return asNode(node.items);
  const properties = asNode(node.properties);
  return properties && Object.hasOwn(properties, String(segment))
    ? asNode(properties[String(segment)])
    : undefined;
}
