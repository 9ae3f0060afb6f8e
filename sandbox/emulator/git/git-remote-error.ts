/** A failed git remote operation, with the HTTP status the API answers it with (422 unless said). */
export class GitRemoteError extends Error {
  constructor(
    message: string,
    readonly status = 422,
  ) {
    super(message);
  }
}
