/** Unknown keys: the known key a typo most likely meant ("did you mean …?"). */
import { asNode, internalJsonSchema, type JsonNode, schemaAt } from "./config-json-schema.js";
import { formatPath } from "./key-paths.js";

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
    }
    previous = current;
  }
  return previous[b.length]!;
}

const normalizeKey = (key: string) => key.toLowerCase().replace(/[-_\s]/g, "");

function isClose(unknownKey: string, known: string): number | null {
  const a = normalizeKey(unknownKey);
  const b = normalizeKey(known);
  if (a === b) return 0;
  const limit = b.length <= 4 ? 1 : b.length <= 8 ? 2 : 3;
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
