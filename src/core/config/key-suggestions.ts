/** Unknown keys: the known key a typo most likely meant ("did you mean …?"). */
import { asNode, internalJsonSchema, type JsonNode, schemaAt } from "./config-json-schema.js";
import { editDistance, typoLimit } from "../text/nearest-word.js";
import { formatPath } from "./key-paths.js";

const normalizeKey = (key: string) => key.toLowerCase().replace(/[-_\s]/g, "");

function isClose(unknownKey: string, known: string): number | null {
  const a = normalizeKey(unknownKey);
  const b = normalizeKey(known);
  if (a === b) return 0;
  const limit = typoLimit(b);
  const distance = editDistance(a, b);
  if (distance <= limit) return distance;
  if (a.length >= 4 && b.startsWith(a)) return limit + 1; // `timeout` → `timeoutMinutes`
  return null;
}

/** Every key path in the schema (not inside lists), e.g. ["merge", "method"]. */
function allKeyPaths(node: JsonNode, prefix: string[] = []): string[][] {
  const properties = asNode(node.properties);
  if (!properties) return [];
  return Object.entries(properties).flatMap(([key, child]) => [
    [...prefix, key],
    ...allKeyPaths(asNode(child) ?? {}, [...prefix, key]),
  ]);
}

/** The known key a typo most likely meant: a sibling first, else the same name elsewhere in the file. */
export function suggestKey(parentPath: readonly PropertyKey[], unknownKey: string): string | null {
  const root = internalJsonSchema();
  const siblings = Object.keys(asNode(schemaAt(root, parentPath)?.properties) ?? {});
  let best: { key: string; distance: number } | null = null;
  for (const key of siblings) {
    const distance = isClose(unknownKey, key);
    if (distance !== null && (best === null || distance < best.distance)) best = { key, distance };
  }
  if (best) return formatPath([...parentPath, best.key]);
  if (parentPath.some((segment) => typeof segment === "number")) return null;
  const parent = parentPath.map(String).join(".");
  for (const path of allKeyPaths(root)) {
    if (path.slice(0, -1).join(".") === parent) continue;
    if (isClose(unknownKey, path[path.length - 1]!) === 0) return formatPath(path);
  }
  return null;
}
