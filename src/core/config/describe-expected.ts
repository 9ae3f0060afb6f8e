/** What a key expects, in words, from its JSON Schema node: `an integer from 1 to 20`, `one of "a", "b"`, … */
import { EXPECTED } from "./config-constants.js";
import { asNode, type JsonNode } from "./config-json-schema.js";

function bounds(noun: string, node: JsonNode): string {
  const min =
    typeof node.minimum === "number" && node.minimum > Number.MIN_SAFE_INTEGER ? node.minimum : undefined;
  const exclusiveMin = typeof node.exclusiveMinimum === "number" ? node.exclusiveMinimum : undefined;
  // zod writes ±MAX_SAFE_INTEGER as the bounds of an int without its own: not worth saying.
  const max =
    typeof node.maximum === "number" && node.maximum < Number.MAX_SAFE_INTEGER ? node.maximum : undefined;
  if (min !== undefined && max !== undefined) return `${noun} from ${min} to ${max}`;
  const parts: string[] = [];
  if (min !== undefined) parts.push(`≥ ${min}`);
  if (exclusiveMin !== undefined) parts.push(`> ${exclusiveMin}`);
  if (max !== undefined) parts.push(`≤ ${max}`);
  return parts.length ? `${noun} ${parts.join(" and ")}` : noun;
}

/** What a JSON Schema node accepts, in words: `an integer from 1 to 20`, `one of "a", "b"`, … */
export function describeSchemaNode(node: JsonNode): string {
  if (typeof node[EXPECTED] === "string") return node[EXPECTED];
  if (Array.isArray(node.anyOf)) {
    const alternatives = node.anyOf.map((alt) => describeSchemaNode(asNode(alt) ?? {}));
    return [...new Set(alternatives)].join(" or ");
  }
  if (Array.isArray(node.enum)) {
    const values = node.enum.map((value) => JSON.stringify(value));
    return values.length === 1 ? values[0]! : `one of ${values.join(", ")}`;
  }
  if ("const" in node) return JSON.stringify(node.const);
  switch (node.type) {
    case "null":
      return "null";
    case "boolean":
      return "true or false";
    case "integer":
      return bounds("an integer", node);
    case "number":
      return bounds("a number", node);
    case "string": {
      const max = typeof node.maxLength === "number" ? ` of at most ${node.maxLength} characters` : "";
      if (typeof node.pattern === "string") return `a string matching /${node.pattern}/${max}`;
      return typeof node.minLength === "number" && node.minLength > 0
        ? `a non-empty string${max}`
        : `a string${max}`;
    }
    case "array": {
      const size: string[] = [];
      if (typeof node.minItems === "number" && node.minItems > 0) size.push(`at least ${node.minItems}`);
      if (typeof node.maxItems === "number") size.push(`at most ${node.maxItems}`);
      const items = asNode(node.items);
      const each = items ? `; each ${describeSchemaNode(items)}` : "";
      return `a list${size.length ? ` (${size.join(", ")} items)` : ""}${each}`;
    }
    case "object": {
      const keys = Object.keys(asNode(node.properties) ?? {});
      return keys.length
        ? `a mapping with the ${keys.length === 1 ? "key" : "keys"} ${keys.join(", ")}`
        : "a mapping";
    }
    default:
      return "a valid value";
  }
}
