/** Relay connections (`nodes`, `edges`, `pageInfo`) paginated as GitHub paginates them. */
import { GraphQLError } from "graphql";
import type { Obj } from "./graphql-values.js";

export function cursorOf(index: number): string {
  return Buffer.from(`cursor:v2:${index}`).toString("base64");
}

function indexOfCursor(cursor: string | undefined | null): number | null {
  if (!cursor) return null;
  const m = /^cursor:v2:(\d+)$/.exec(Buffer.from(cursor, "base64").toString("utf8"));
  if (!m) throw new GraphQLError(`\`${cursor}\` does not appear to be a valid cursor.`);
  return Number(m[1]);
}

export interface PageArgs {
  first?: number | null;
  last?: number | null;
  after?: string | null;
  before?: string | null;
}

/** A relay connection with GitHub's pagination rules (first or last required, at most 100). */
export function connection<T>(
  name: string,
  items: T[],
  args: PageArgs,
  render: (item: T) => unknown,
  required = true,
): Obj {
  const { first, last } = args;
  if (required && (first === undefined || first === null) && (last === undefined || last === null)) {
    throw new GraphQLError(
      `You must provide a \`first\` or \`last\` value to properly paginate the \`${name}\` connection.`,
      {
        extensions: { type: "MISSING_PAGINATION_BOUNDARIES" },
      },
    );
  }
  for (const [key, value] of [
    ["first", first],
    ["last", last],
  ] as const) {
    if (value !== undefined && value !== null && (value < 0 || value > 100)) {
      throw new GraphQLError(
        `Requesting ${value} records on the \`${name}\` connection exceeds the \`${key}\` limit of 100 records.`,
        { extensions: { type: "EXCESSIVE_PAGINATION" } },
      );
    }
  }
  let start = 0;
  let end = items.length;
  const after = indexOfCursor(args.after);
  const before = indexOfCursor(args.before);
  if (after !== null) start = Math.max(start, after + 1);
  if (before !== null) end = Math.min(end, before);
  if (first !== undefined && first !== null) end = Math.min(end, start + first);
  if (last !== undefined && last !== null) start = Math.max(start, end - last);
  const slice = items
    .slice(start, end)
    .map((item, i) => ({ cursor: cursorOf(start + i), node: render(item) }));
  return {
    totalCount: items.length,
    nodes: slice.map((e) => e.node),
    edges: slice,
    pageInfo: {
      hasNextPage: end < items.length,
      hasPreviousPage: start > 0,
      startCursor: slice[0]?.cursor ?? null,
      endCursor: slice[slice.length - 1]?.cursor ?? null,
    },
  };
}
