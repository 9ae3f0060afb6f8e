/**
 * The primary rate-limit score of one GraphQL request, computed the way GitHub documents it
 * (https://docs.github.com/graphql/overview/rate-limits-and-query-limits-for-the-graphql-api, "Calculating a
 * rate limit score for a query"):
 *
 * 1. add up the requests needed to fulfil each unique connection in the call, assuming every request reaches
 *    its `first` or `last` limit — a connection costs one request per node its parent connections can return
 *    (the docs' example: `repositories(first: 100)` is 1 request, `issues(first: 50)` under it 100, and
 *    `labels(first: 60)` under those 100 × 50 = 5,000);
 * 2. divide by 100 and round to the nearest whole number: that is the score, and a call costs at least 1
 *    point.
 *
 * A connection is a field with a `first` or `last` argument (the docs define the score by those arguments;
 * GitHub requires one of them on every connection). Fields a `@skip`/`@include` directive leaves out are not
 * part of the call. Selections that merge into one response field (the same alias twice, fragments) are one
 * connection.
 */
import {
  type DocumentNode,
  type FieldNode,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValueNode,
  valueFromASTUntyped,
} from "graphql";

/** GitHub's limit on `first`/`last`, used when a value cannot be read (a missing variable). */
const MAX_PAGE = 100;

export function graphqlCost(
  document: DocumentNode,
  variables: Record<string, unknown>,
  operationName: string | null,
): number {
  const operations = document.definitions.filter(
    (d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION,
  );
  const operation =
    operationName === null ? operations[0] : operations.find((o) => o.name?.value === operationName);
  if (!operation) return 1;
  const fragments = new Map<string, SelectionSetNode>();
  for (const d of document.definitions)
    if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d.selectionSet);

  const included = (node: {
    directives?: readonly {
      name: { value: string };
      arguments?: readonly { name: { value: string }; value: ValueNode }[];
    }[];
  }) => {
    for (const directive of node.directives ?? []) {
      const condition = directive.arguments?.find((a) => a.name.value === "if");
      if (!condition) continue;
      const value = valueFromASTUntyped(condition.value, variables) === true;
      if (directive.name.value === "include" && !value) return false;
      if (directive.name.value === "skip" && value) return false;
    }
    return true;
  };
  // The fields of selection sets by response key, through fragments (as GraphQL merges them).
  const collect = (
    sets: readonly SelectionSetNode[],
    out = new Map<string, FieldNode[]>(),
    seen = new Set<string>(),
  ) => {
    for (const set of sets) {
      for (const selection of set.selections) {
        if (!included(selection)) continue;
        if (selection.kind === Kind.FIELD) {
          const key = selection.alias?.value ?? selection.name.value;
          const list = out.get(key);
          if (list) list.push(selection);
          else out.set(key, [selection]);
        } else if (selection.kind === Kind.INLINE_FRAGMENT) {
          collect([selection.selectionSet], out, seen);
        } else {
          const fragment = fragments.get(selection.name.value);
          if (fragment && !seen.has(selection.name.value)) {
            seen.add(selection.name.value);
            collect([fragment], out, seen);
            seen.delete(selection.name.value);
          }
        }
      }
    }
    return out;
  };
  const pageSize = (field: FieldNode): number | null => {
    const arg = field.arguments?.find((a) => a.name.value === "first" || a.name.value === "last");
    if (!arg) return null;
    const value = valueFromASTUntyped(arg.value, variables);
    return typeof value === "number" && Number.isFinite(value) ? value : MAX_PAGE;
  };
  // Requests of every connection under these selections, each parent connection multiplying by its page.
  const requests = (sets: readonly SelectionSetNode[], parents: number): number => {
    let total = 0;
    for (const fields of collect(sets).values()) {
      const size = pageSize(fields[0]!);
      if (size !== null) total += parents;
      const children = fields.flatMap((f) => (f.selectionSet ? [f.selectionSet] : []));
      if (children.length > 0) total += requests(children, size === null ? parents : parents * size);
    }
    return total;
  };
  return Math.max(1, Math.round(requests([operation.selectionSet], 1) / 100));
}
