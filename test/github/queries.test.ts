import { parse, validate } from "graphql";
import { beforeAll, describe, expect, it } from "vitest";
import {
  COMMENTS_BY_ID_QUERY,
  DEQUEUE_PULL_REQUEST_MUTATION,
  DISABLE_AUTO_MERGE_MUTATION,
  ENABLE_AUTO_MERGE_MUTATION,
  ENQUEUE_PULL_REQUEST_MUTATION,
  ISSUE_NODE_ID_QUERY,
  issueStatesQuery,
  MOVE_LABELS_MUTATION,
  OLDER_COMMENTS_QUERY,
  PIN_ISSUE_MUTATION,
  SNAPSHOT_QUERY,
  SNAPSHOT_QUERY_WITHOUT_BLOCKED_BY,
  subIssueLinksQuery,
} from "../../src/github/queries.js";
import { loadGraphqlSchema } from "../../sandbox/emulator/graphql.js";

let check: (query: string) => string[];

beforeAll(async () => {
  const schema = await loadGraphqlSchema();
  check = (query) => validate(schema, parse(query)).map((e) => e.message);
});

describe("the GraphQL documents the gateway sends", () => {
  it("fit GitHub's schema", () => {
    expect(check(SNAPSHOT_QUERY)).toEqual([]);
    expect(check(SNAPSHOT_QUERY_WITHOUT_BLOCKED_BY)).toEqual([]);
    expect(check(issueStatesQuery([3, 12, 40]))).toEqual([]);
    expect(check(subIssueLinksQuery([1, 7]))).toEqual([]);
    expect(check(PIN_ISSUE_MUTATION)).toEqual([]);
    expect(check(MOVE_LABELS_MUTATION)).toEqual([]);
    expect(check(ISSUE_NODE_ID_QUERY)).toEqual([]);
    expect(check(OLDER_COMMENTS_QUERY)).toEqual([]);
    expect(check(COMMENTS_BY_ID_QUERY)).toEqual([]);
    expect(check(ENABLE_AUTO_MERGE_MUTATION)).toEqual([]);
    expect(check(DISABLE_AUTO_MERGE_MUTATION)).toEqual([]);
    expect(check(ENQUEUE_PULL_REQUEST_MUTATION)).toEqual([]);
    expect(check(DEQUEUE_PULL_REQUEST_MUTATION)).toEqual([]);
  });

  it("ask for blocked-by relations in one variant only", () => {
    expect(SNAPSHOT_QUERY).toContain("blockedBy(first: 20)");
    expect(SNAPSHOT_QUERY_WITHOUT_BLOCKED_BY).not.toContain("blockedBy");
  });
});
