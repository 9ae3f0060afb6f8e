/** Key paths into plain objects: reading a value at a path, and writing a path the way people read it. */

/** A mapping as YAML or JSON produce it (not an array, class instance or null). */
export function isPlainObject(value: unknown): value is { [key: string]: unknown } {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** True when `value` has something (even `undefined`) at `path`. */
export function hasPath(value: unknown, path: readonly PropertyKey[]): boolean {
  let current = value;
  for (const segment of path) {
    if (Array.isArray(current) && typeof segment === "number") {
      if (segment >= current.length) return false;
      current = current[segment];
    } else if (isPlainObject(current) && Object.hasOwn(current, String(segment))) {
      current = current[String(segment)];
    } else return false;
  }
  return true;
}

export function getAt(value: unknown, path: readonly PropertyKey[]): unknown {
  let current = value;
  for (const segment of path) {
    if (Array.isArray(current) && typeof segment === "number") current = current[segment];
    else if (isPlainObject(current) && Object.hasOwn(current, String(segment)))
      current = current[String(segment)];
    else return undefined;
  }
  return current;
}

/** `merge.method`, `agents.fallbacks[0].preset`, `labels["odd key"]`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const segment of path) {
    if (typeof segment === "number") out += `[${segment}]`;
    else {
      const key = String(segment);
      out += /^[A-Za-z_$][\w$-]*$/.test(key) ? (out ? `.${key}` : key) : `[${JSON.stringify(key)}]`;
    }
  }
  return out;
}
