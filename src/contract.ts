/**
 * Typed contract errors.
 *
 * The C++ originals leave many misuse paths undefined (insert into a closed set indexes slot
 * 0xFFFFFFFF, a double free corrupts a free list). Here every such path throws a ContractError
 * with a stable code, and the model and the implementation must throw the same code for the
 * same command. The harness turns a ContractError into an observation `{ error: code }`; any
 * other exception is a finding in itself.
 */
export class ContractError extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    // A contract error is an answer, not a crash: capturing a stack trace for it cost about a
    // quarter of a side-by-side step on the allocator systems, so none is captured.
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(`${code}: ${message}`);
    Error.stackTraceLimit = stackTraceLimit;
    this.name = 'ContractError';
    this.code = code;
  }
}

/** Throws a ContractError unless `condition` holds. */
export function require(condition: boolean, code: string, message: string): asserts condition {
  if (!condition) throw new ContractError(code, message);
}
