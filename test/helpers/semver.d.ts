// npm's version ranges: semver ships no types of its own and the tests use this one function of it.
declare module "semver" {
  /** Whether every version `sub` admits is one `sup` admits too. */
  export function subset(sub: string, sup: string): boolean;
}
