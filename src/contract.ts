/**
 * Typed contract errors.
 *
 * The C++ originals leave many misuse paths undefined (insert into a closed set indexes slot
 * 0xFFFFFFFF, a double free corrupts a free list). Here every such path throws a ContractError
 * with a stable code, and the model and the implementation must throw the same code for the
 * same command. The harness turns a ContractError into an observation `{ error: code }`; any
 * other exception is a finding in itself.
 */
export class ContractError {
  readonly name = 'ContractError';
  readonly message: string;
  readonly code: string;
  constructor(code: string, message: string) {
    this.code = code;
    this.message = `${code}: ${message}`;
  }
  /** No stack is captured: the error is an answer (see below); this is its one-line form. */
  get stack(): string {
    return `${this.name}: ${this.message}`;
  }
  /** Code that adds context to errors may assign a stack; it becomes this error's own. */
  set stack(value: string) {
    Object.defineProperty(this, 'stack', {
      value,
      writable: true,
      configurable: true,
      enumerable: false,
    });
  }
  toString(): string {
    return this.stack;
  }
}
// A contract error is an answer, not a crash, and the fuzzer provokes millions of them: it is an
// Error by its prototype (`instanceof Error` holds, printing shows its message) but is built
// without the Error constructor, which cost about 0.4 us a throw even with no stack captured
// (about 5 % of a side-by-side step on the allocator systems, measured with a CPU profile).
Object.setPrototypeOf(ContractError.prototype, Error.prototype);

/** Throws a ContractError unless `condition` holds. */
export function require(condition: boolean, code: string, message: string): asserts condition {
  if (!condition) throw new ContractError(code, message);
}

/**
 * The one way a contract error becomes an observation: `{ error: code }`. Returns undefined for
 * anything else (a crash, which the caller reports or rethrows). The runner uses it for every
 * command; a system may use it inside its own apply to answer without a second unwind.
 */
export function contractErrorObservation(error: unknown): { readonly error: string } | undefined {
  return error instanceof ContractError ? { error: error.code } : undefined;
}
