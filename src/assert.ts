/**
 * Assertions on this package's own invariants (docs/maintainers/assertions.md says when to use
 * them instead of `!`). A failed assertion is a bug in the package, never the user's mistake: user
 * input is checked where it enters (one `error:` line, exit code 2) and misuse of an API is a
 * ContractError (src/contract.ts).
 *
 * Both helpers take a constant message and build nothing unless they fail, so they cost a
 * comparison on a hot path.
 */

/** An assertion of this package failed. */
export class AssertionFailed extends Error {
  override readonly name = 'AssertionFailed';
}

/** Throws AssertionFailed with `message` (and `detail`, if given) unless `condition` holds. */
export function assert(condition: boolean, message: string, detail?: unknown): asserts condition {
  if (!condition) fail(message, detail);
}

/**
 * `value` when it is there; otherwise throws AssertionFailed with `message` (and `detail`, say
 * the key that was looked up). For the lookups whose key comes from data (a command, a file, a
 * message between threads) where a missing entry would be a bug elsewhere in the package.
 */
export function present<T>(value: T | undefined, message: string, detail?: unknown): T {
  if (value === undefined) fail(message, detail);
  return value;
}

function fail(message: string, detail: unknown): never {
  throw new AssertionFailed(detail === undefined ? message : `${message}: ${String(detail)}`);
}
