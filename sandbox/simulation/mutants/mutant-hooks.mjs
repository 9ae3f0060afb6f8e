// The load hook of mutant-loader.mjs (runs on Node's loader thread): one product file's source with the mutant's
// `find` replaced by its `replace`. A `find` that does not occur exactly once is an error, not a quiet no-op: the
// worlds would otherwise run the unmutated product and prove nothing.
let mutant = null;

export function initialize(data) {
  mutant = data?.mutant ?? null;
}

export async function load(url, context, nextLoad) {
  const result = await nextLoad(url, context);
  // A second controller imports reconcile-repo.js with a query (sandbox/simulation/sim-controllers.ts).
  if (!mutant || url.split("?")[0] !== mutant.url || result.source == null) return result;
  const source = String(result.source);
  const found = source.split(mutant.find).length - 1;
  if (found !== 1)
    throw new Error(
      `mutant ${mutant.name}: its text occurs ${found} times in ${mutant.url}, not once; update sandbox/simulation/mutants/mutants.ts`,
    );
  return { ...result, source: source.replace(mutant.find, () => mutant.replace) };
}
