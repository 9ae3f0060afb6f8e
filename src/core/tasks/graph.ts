/**
 * The task graph: which issue waits on which, from three sources —
 *
 * 1. lines in the issue body (dependency-references.ts reads them);
 * 2. GitHub's native "blocked by" relations (`IssueNode.blockedBy`);
 * 3. native sub-issues: a PARENT depends on each of its sub-issues (a parent with open sub-issues is not
 *    ready); a sub-issue never depends on its parent.
 *
 * A dependency that the snapshot does not know (neither open nor closed) is unresolved; so is a cross-repo
 * dependency unless the caller says it is closed (`crossRepoClosed`). Cycles are found with Tarjan's SCC
 * algorithm over the open issues (a closed dependency is satisfied, so it cannot hold anything up) and
 * reported with the issues in each; issues in a cycle are never ready (ready-tasks.ts says which are).
 */
import { LRUCache } from "lru-cache";
import type { IssueNode } from "../world.js";
import {
  type CrossRepoRef,
  crossRepoKey,
  type ParsedDependencies,
  parseDependencies,
  type RepoRef,
  referenceCapNote,
} from "./dependency-references.js";

type DependencySource = "body" | "blockedBy" | "subIssue";

export interface DependencyEdge {
  /** The issue that waits. */
  from: number;
  /** The issue it waits on. */
  to: number;
  source: DependencySource;
}

export interface ParentProgress {
  parent: number;
  /** Closed sub-issues of the parent (this task included when closed). */
  done: number;
  total: number;
}

export interface TaskNode {
  number: number;
  issue: IssueNode;
  /** Same-repository issues this one waits on (all sources), ascending. */
  dependsOn: number[];
  /** Other-repository issues this one waits on. */
  crossRepo: CrossRepoRef[];
  /** Issues in the snapshot that wait on this one (all sources, the parent included), ascending. */
  dependents: number[];
  /**
   * OPEN issues that wait on this one through an explicit dependency (a body line or a native blocked-by
   * relation), ascending. This is what "unblocks" means for scoring: a parent epic waiting on its sub-issues
   * is not counted here (the near-complete-parent bonus covers it).
   */
  unblocks: number[];
  /** Dependencies that are not closed: open, or unknown to the snapshot. Ascending. */
  unresolved: number[];
  /** Cross-repository dependencies not known to be closed. */
  unresolvedCrossRepo: CrossRepoRef[];
  /** Native sub-issue parent, when there is one. */
  parent: number | null;
  /** Native sub-issues, ascending. */
  subIssues: number[];
  /** Progress of the parent's sub-issues, or null without a parent. */
  parentProgress: ParentProgress | null;
  /**
   * Shortest dependency cycle through this issue, starting and ending with it (`[2, 4, 2]`), or null when it
   * is in no cycle. (In a component of more than 64 issues: one cycle of that component, shared by all.)
   */
  cycle: number[] | null;
  /** Set when the body names more issues than are used (see referenceCapNote), for the dashboard. */
  referenceNote: string | null;
}

/**
 * Read-only: a graph of the same shape as the previous one of its repository shares that one's edges, cycles
 * and node lists (see buildTaskGraph).
 */
export interface TaskGraph {
  repo: RepoRef;
  nodes: Map<number, TaskNode>;
  edges: DependencyEdge[];
  /** Each strongly connected component of open issues that forms a cycle (self-loops included), members ascending. */
  cycles: number[][];
}

interface TaskGraphOptions {
  /**
   * Cross-repository issues known to be closed, as keys `owner/name#N` (see `crossRepoKey`, case-insensitive).
   * Every other cross-repository dependency is unresolved.
   */
  crossRepoClosed?: Iterable<string>;
}

// ---------------------------------------------------------------------------------------------------------
// Memo between graphs

/**
 * What the last graph of a repository was built from, kept for the next one (a long-lived controller builds
 * one per reconcile, from a fresh snapshot that mostly says the same). Everything is compared by content: the
 * bodies by their text, the graph by its shape (see emitShape) value by value, so new objects and strings
 * with the same content match and nothing is found by the object identity of the input.
 */
interface GraphMemo {
  /**
   * Each issue's body in the latest graph, parsed (only those: the memo never holds more than one snapshot's
   * bodies). By issue number, compared by text: comparing two strings is cheaper than hashing a fresh one.
   */
  bodies: Map<number, { body: string; parsed: ParsedDependencies }>;
  /** The latest graph, its shape, and for each node (in order) the index of its issue in the input. */
  graph: {
    shape: unknown[];
    nodes: Map<number, TaskNode>;
    issueIndex: number[];
    edges: DependencyEdge[];
    cycles: number[][];
  } | null;
}

/**
 * Repositories whose latest graph is kept unless configured otherwise (the controller of an App serves
 * several; one that drops out is built from scratch on its next reconcile, the same graph).
 */
export const DEFAULT_KEPT_GRAPHS = 100;

/** The memos, least recently used out first. */
let memos = new LRUCache<string, GraphMemo>({ max: DEFAULT_KEPT_GRAPHS });

/** The repository's memo (made the most recently used), or null. */
function memoOf(key: string): GraphMemo | null {
  return memos.get(key) ?? null;
}

function keepMemo(key: string, memo: GraphMemo): void {
  memos.set(key, memo);
}

let keeping = false;

/**
 * Keeps the latest graph of up to `repositories` repositories for the next build (off by default). For a
 * long-lived controller (`autopilot serve`), which builds one graph per reconcile; a controller started per
 * reconcile (Actions mode) would only pay for keeping what nobody reads again.
 */
export function keepGraphsBetweenBuilds(on: boolean, repositories = DEFAULT_KEPT_GRAPHS): void {
  keeping = on;
  if (!on) memos.clear();
  if (repositories !== memos.max) memos = new LRUCache<string, GraphMemo>({ max: repositories });
}

/** How many repositories' graphs are kept now. */
export function keptGraphs(): number {
  return memos.size;
}

/** Forgets every repository's memo (benchmarks of a cold start; tests). */
export function forgetGraphMemos(): void {
  memos.clear();
}

const NO_DEPENDENCIES: ParsedDependencies = Object.freeze({
  numbers: Object.freeze([]) as unknown as number[],
  crossRepo: Object.freeze([]) as unknown as CrossRepoRef[],
  omitted: 0,
});

/** The body's dependencies as the memo has them for this issue, or null when its text changed (or is new). */
function knownDependencies(issue: IssueNode, memo: GraphMemo): ParsedDependencies | null {
  if (!issue.body) return NO_DEPENDENCIES;
  const known = memo.bodies.get(issue.number);
  return known?.body === issue.body ? known.parsed : null;
}

/** parseDependencies through the memo; the parsed values are shared between graphs: callers must not change them. */
function parseMemoized(
  issue: IssueNode,
  repo: RepoRef,
  previous: GraphMemo | null,
  bodies: GraphMemo["bodies"],
): ParsedDependencies {
  const body = issue.body;
  if (!body) return NO_DEPENDENCIES;
  const known = previous?.bodies.get(issue.number);
  if (known?.body === body) {
    bodies.set(issue.number, known);
    return known.parsed;
  }
  const parsed = parseDependencies(body, repo);
  bodies.set(issue.number, { body, parsed });
  return parsed;
}

/**
 * The graph's shape, one issue's part: everything the graph is made of but the issue object itself (its
 * title and labels are read through node.issue). The same shape, issue after issue, gives the same graph.
 */
function emitShape(
  issue: IssueNode,
  parsed: ParsedDependencies | null,
  emit: (value: unknown) => void,
): void {
  emit(issue.number);
  emit(issue.state);
  emit(issue.isPullRequest === true);
  emit(parsed);
  emit(issue.parent ?? null);
  const subIssues = issue.subIssues;
  emit(subIssues?.length ?? -1);
  if (subIssues) for (const n of subIssues) emit(n);
  const blockedBy = issue.blockedBy;
  emit(blockedBy?.length ?? -1);
  if (blockedBy) for (const n of blockedBy) emit(n);
}

/**
 * The memo's graph again with this snapshot's issues, when the snapshot has the same shape; else null.
 * Compares as it goes: nothing is built for a snapshot that does not match.
 */
function reuseGraph(
  issues: readonly IssueNode[],
  repo: RepoRef,
  closedCross: readonly string[],
  memo: GraphMemo,
): TaskGraph | null {
  const known = memo.graph;
  if (!known) return null;
  const shape = known.shape;
  let at = 0;
  let same = true;
  const emit = (value: unknown) => {
    if (shape[at++] !== value) same = false;
  };
  for (const issue of issues) {
    let parsed: ParsedDependencies | null = null;
    if (issue.isPullRequest !== true) {
      parsed = knownDependencies(issue, memo);
      if (parsed === null) return null;
    }
    emitShape(issue, parsed, emit);
    if (!same) return null;
  }
  for (const key of closedCross) emit(key);
  if (!same || at !== shape.length) return null;
  const nodes = new Map<number, TaskNode>();
  let i = 0;
  for (const node of known.nodes.values()) {
    nodes.set(node.number, {
      number: node.number,
      issue: issues[known.issueIndex[i++]!]!,
      dependsOn: node.dependsOn,
      crossRepo: node.crossRepo,
      dependents: node.dependents,
      unblocks: node.unblocks,
      unresolved: node.unresolved,
      unresolvedCrossRepo: node.unresolvedCrossRepo,
      parent: node.parent,
      subIssues: node.subIssues,
      parentProgress: node.parentProgress,
      cycle: node.cycle,
      referenceNote: node.referenceNote,
    });
  }
  return { repo, nodes, edges: known.edges, cycles: known.cycles };
}

// ---------------------------------------------------------------------------------------------------------
// Graph

/** Builds the dependency graph of the snapshot's issues (pull requests are left out). */
export function buildTaskGraph(
  issues: readonly IssueNode[],
  repo: RepoRef,
  options: TaskGraphOptions = {},
): TaskGraph {
  const closedCross = new Set<string>();
  for (const key of options.crossRepoClosed ?? []) closedCross.add(key.toLowerCase());
  const closedKeys = [...closedCross].sort();

  const memoKey = `${repo.owner}/${repo.name}`.toLowerCase();
  const keep = keeping;
  const previous = keep ? memoOf(memoKey) : null;
  const reused = previous ? reuseGraph(issues, repo, closedKeys, previous) : null;
  if (reused) return reused;

  const bodies: GraphMemo["bodies"] = new Map();
  const byNumber = new Map<number, IssueNode>();
  const indexOf = new Map<number, number>();
  // State of every number the snapshot knows, pull requests included ("Depends on #12" may name a PR).
  const stateOf = new Map<number, "open" | "closed">();
  const parsedAt: (ParsedDependencies | null)[] = [];
  const shape: unknown[] = [];
  const emit = (value: unknown) => void shape.push(value);
  for (let i = 0; i < issues.length; i++) {
    const issue = issues[i]!;
    stateOf.set(issue.number, issue.state);
    let parsed: ParsedDependencies | null = null;
    if (issue.isPullRequest !== true) {
      byNumber.set(issue.number, issue);
      indexOf.set(issue.number, i);
      parsed = keep ? parseMemoized(issue, repo, previous, bodies) : parseDependencies(issue.body, repo);
    }
    parsedAt.push(parsed);
    if (keep) emitShape(issue, parsed, emit);
  }
  if (keep) for (const key of closedKeys) emit(key);

  // Sub-issue relations, from either side.
  const parentOf = new Map<number, number>();
  const childrenOf = new Map<number, Set<number>>();
  const link = (parent: number, child: number) => {
    if (parent === child) return;
    if (!parentOf.has(child)) parentOf.set(child, parent);
    if (!childrenOf.has(parent)) childrenOf.set(parent, new Set());
    childrenOf.get(parent)!.add(child);
  };
  for (const issue of byNumber.values()) {
    if (issue.parent != null) link(issue.parent, issue.number);
    for (const child of issue.subIssues ?? []) link(issue.number, child);
  }

  const edges: DependencyEdge[] = [];
  const edgeTargets = new Map<number, Set<number>>();
  const addEdge = (from: number, to: number, source: DependencySource) => {
    let targets = edgeTargets.get(from);
    if (!targets) {
      targets = new Set();
      edgeTargets.set(from, targets);
    }
    if (targets.has(to)) return;
    targets.add(to);
    edges.push({ from, to, source });
  };
  const crossOf = new Map<number, CrossRepoRef[]>();
  const capNotes = new Map<number, string>();
  for (const issue of byNumber.values()) {
    const parsed = parsedAt[indexOf.get(issue.number)!]!;
    const note = referenceCapNote(issue.number, parsed);
    if (note) capNotes.set(issue.number, note);
    for (const n of parsed.numbers) addEdge(issue.number, n, "body");
    for (const n of issue.blockedBy ?? []) addEdge(issue.number, n, "blockedBy");
    for (const child of childrenOf.get(issue.number) ?? []) addEdge(issue.number, child, "subIssue");
    // A copy: the memo's lists are shared by every graph built from the same body.
    if (parsed.crossRepo.length > 0)
      crossOf.set(
        issue.number,
        parsed.crossRepo.map((r) => ({ ...r })),
      );
  }

  const isOpen = (n: number) => byNumber.get(n)?.state === "open";
  const isClosed = (n: number) => stateOf.get(n) === "closed";

  const dependsOn = new Map<number, number[]>();
  const dependents = new Map<number, number[]>();
  const unblocks = new Map<number, number[]>();
  for (const e of edges) {
    push(dependsOn, e.from, e.to);
    if (byNumber.has(e.to)) push(dependents, e.to, e.from);
    if (e.source !== "subIssue" && isOpen(e.from)) push(unblocks, e.to, e.from);
  }

  // Cycles among open issues only: a closed dependency is already satisfied.
  const openAdjacency = new Map<number, number[]>();
  for (const e of edges) if (isOpen(e.from) && isOpen(e.to)) push(openAdjacency, e.from, e.to);
  const cycles = findCycles([...byNumber.keys()].filter(isOpen), openAdjacency);
  const cycleOf = cyclePaths(cycles, openAdjacency);

  // Each parent's progress once, not once per sub-issue (a parent of thousands would cost their square).
  const progressOf = new Map<number, ParentProgress>();
  const nodes = new Map<number, TaskNode>();
  for (const issue of [...byNumber.values()].sort((a, b) => a.number - b.number)) {
    const n = issue.number;
    const deps = sortedUnique(dependsOn.get(n) ?? []);
    const cross = crossOf.get(n) ?? [];
    const parent = parentOf.get(n) ?? null;
    let parentProgress: ParentProgress | null = null;
    if (parent !== null) {
      let progress = progressOf.get(parent);
      if (!progress) {
        const siblings = [...(childrenOf.get(parent) ?? [])];
        progress = { parent, done: siblings.filter(isClosed).length, total: siblings.length };
        progressOf.set(parent, progress);
      }
      parentProgress = { ...progress };
    }
    nodes.set(n, {
      number: n,
      issue,
      dependsOn: deps,
      crossRepo: cross,
      dependents: sortedUnique(dependents.get(n) ?? []),
      unblocks: sortedUnique(unblocks.get(n) ?? []),
      unresolved: deps.filter((d) => !isClosed(d)),
      unresolvedCrossRepo: cross.filter((r) => !closedCross.has(crossRepoKey(r))),
      parent,
      subIssues: sortedUnique([...(childrenOf.get(n) ?? [])]),
      parentProgress,
      cycle: cycleOf.get(n) ?? null,
      referenceNote: capNotes.get(n) ?? null,
    });
  }
  if (keep) {
    const issueIndex = [...nodes.keys()].map((n) => indexOf.get(n)!);
    keepMemo(memoKey, { bodies, graph: { shape, nodes, issueIndex, edges, cycles } });
  }
  return { repo, nodes, edges, cycles };
}

/** Tarjan's strongly connected components; returns the components that are cycles, members ascending. */
function findCycles(vertices: number[], adjacency: Map<number, number[]>): number[][] {
  let index = 0;
  const indexOf = new Map<number, number>();
  const low = new Map<number, number>();
  const onStack = new Set<number>();
  const stack: number[] = [];
  const cycles: number[][] = [];

  // Iterative to survive long dependency chains without blowing the call stack.
  for (const root of [...vertices].sort((a, b) => a - b)) {
    // A vertex that waits on no open issue is a component of its own and no cycle; should another vertex
    // reach it, it is visited from there.
    if (indexOf.has(root) || !adjacency.has(root)) continue;
    const work: { v: number; next: number }[] = [{ v: root, next: 0 }];
    indexOf.set(root, index);
    low.set(root, index);
    index++;
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const succ = adjacency.get(frame.v) ?? [];
      if (frame.next < succ.length) {
        const w = succ[frame.next++]!;
        if (!indexOf.has(w)) {
          indexOf.set(w, index);
          low.set(w, index);
          index++;
          stack.push(w);
          onStack.add(w);
          work.push({ v: w, next: 0 });
        } else if (onStack.has(w)) {
          low.set(frame.v, Math.min(low.get(frame.v)!, indexOf.get(w)!));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.v, Math.min(low.get(parent.v)!, low.get(frame.v)!));
      if (low.get(frame.v) === indexOf.get(frame.v)) {
        const component: number[] = [];
        let w: number;
        do {
          w = stack.pop()!;
          onStack.delete(w);
          component.push(w);
        } while (w !== frame.v);
        const selfLoop = component.length === 1 && succ.includes(frame.v);
        if (component.length > 1 || selfLoop) cycles.push(component.sort((a, b) => a - b));
      }
    }
  }
  return cycles.sort((a, b) => a[0]! - b[0]!);
}

/** Components up to this size get each member's own shortest cycle; larger ones share one representative. */
const EXACT_CYCLE_LIMIT = 64;

/**
 * A cycle for every member of every cyclic component. Searches stay inside the component (every cycle
 * through a vertex lies in its strongly connected component). Components of up to 64 members: each member's
 * shortest cycle, starting and ending with it (BFS, ties to lower numbers). Larger ones (a pathological
 * dependency ring): every member shares the shortest cycle through the component's smallest member, which
 * keeps time and memory linear.
 */
function cyclePaths(components: number[][], adjacency: Map<number, number[]>): Map<number, number[]> {
  const out = new Map<number, number[]>();
  for (const component of components) {
    const members = new Set(component);
    const forward = new Map<number, number[]>();
    for (const v of component) {
      forward.set(
        v,
        sortedUnique(adjacency.get(v) ?? []).filter((w) => members.has(w)),
      );
    }
    if (component.length <= EXACT_CYCLE_LIMIT) {
      for (const v of component) out.set(v, shortestCycleThrough(v, forward));
      continue;
    }
    const shared = shortestCycleThrough(component[0]!, forward);
    for (const v of component) out.set(v, shared);
  }
  return out;
}

/** Breadth-first search for the shortest path start → … → start over sorted adjacency lists. */
function shortestCycleThrough(start: number, adjacency: Map<number, number[]>): number[] {
  const previous = new Map<number, number>();
  const queue: number[] = [start];
  const seen = new Set<number>([start]);
  for (let i = 0; i < queue.length; i++) {
    const v = queue[i]!;
    for (const w of adjacency.get(v) ?? []) {
      if (w === start) {
        const path = [start];
        for (let x = v; x !== start; x = previous.get(x)!) path.splice(1, 0, x);
        path.push(start);
        return path;
      }
      if (seen.has(w)) continue;
      seen.add(w);
      previous.set(w, v);
      queue.push(w);
    }
  }
  return [start, start]; // unreachable for a member of a cyclic component
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

function sortedUnique(values: number[]): number[] {
  if (values.length < 2) return [...values]; // most issues have no or one dependency
  return [...new Set(values)].sort((a, b) => a - b);
}
