/** The error store methods throw for requests GitHub answers with a 4xx. */
/** Thrown by store methods for conditions GitHub answers with a 4xx; REST maps `status` and `message`. */
export class StoreError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly errors: ReadonlyArray<Record<string, string>> = [],
  ) {
    super(message);
    this.name = "StoreError";
  }
}
