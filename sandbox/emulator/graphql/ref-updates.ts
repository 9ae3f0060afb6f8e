/**
 * GraphQL `updateRefs`: several ref creations, moves and deletions that succeed or fail together
 * (https://docs.github.com/en/graphql/reference/mutations#updaterefs). Every update is checked against the refs
 * as they are before any is applied, so a rejected one leaves every ref as it was. The store applies them one
 * after another (the sandbox serves one request at a time, so no push lands between the check and the writes).
 * Moving an existing ref is refused as not modelled: whether a move is a fast-forward is known only to the git
 * backend, while a write is under way, which would break the all-or-nothing rule.
 */
import { type Repo, type SandboxStore, StoreError } from "../store.js";

const ZERO = "0".repeat(40);

interface RefUpdateInput {
  name: string;
  afterOid: string;
  beforeOid?: string | null;
  force?: boolean | null;
}

export async function updateRefsAtomically(
  store: SandboxStore,
  repo: Repo,
  updates: RefUpdateInput[],
  actor: string,
): Promise<void> {
  if (updates.length === 0) throw new StoreError(422, "refUpdates must not be empty");
  const current = new Map((await store.listRefs(repo.fullName)).map((r) => [r.ref, r.sha]));
  const seen = new Set<string>();
  for (const update of updates) {
    // The schema's description: "The fully qualified name of the ref to be update. For example refs/heads/branch-name".
    if (!/^refs\/[^/]+\/.+/.test(update.name))
      throw new StoreError(422, `${update.name} is not a fully qualified ref name`);
    if (seen.has(update.name)) throw new StoreError(422, `${update.name} is updated twice`);
    seen.add(update.name);
    if (!/^[0-9a-f]{40}$/.test(update.afterOid))
      throw new StoreError(422, `${update.afterOid} is not an object id`);
    const before = current.get(update.name) ?? null;
    if (update.beforeOid != null) {
      const expected = update.beforeOid === ZERO ? null : update.beforeOid;
      if (expected !== before)
        throw new StoreError(
          422,
          `${update.name} is at ${before ?? "nothing (it does not exist)"}, not ${update.beforeOid}`,
        );
    }
    if (update.afterOid === ZERO && before === null)
      throw new StoreError(422, `${update.name} cannot be deleted: it does not exist`);
    if (update.afterOid !== ZERO && before !== null)
      throw new StoreError(
        422,
        `${update.name}: moving a ref with updateRefs is not modelled by the sandbox`,
      );
  }
  for (const update of updates) {
    if (update.afterOid === ZERO) await store.deleteRef(repo.fullName, update.name, actor);
    else await store.createRef(repo.fullName, update.name, update.afterOid, actor);
  }
}
