/**
 * Native systems whose commands resolve their handles against state the harness keeps (the ring
 * upload allocator, the fence-delayed free list): the harness runs the model over the whole run
 * first and records every call it makes of the allocator's API with its arguments resolved
 * (offsets, fence values); the driver answers those calls in one batch. The implementation side
 * then applies the same commands and takes the driver's answers call by call, checking that each
 * call is the one recorded. Up to the first step where the implementation answers otherwise
 * than the model (a finding at that step: the observations differ) its calls are the model's,
 * so nothing the driver is asked depends on its own answers.
 *
 * A call the C API cannot express (a negative size, alignment or fence value) is not sent: it is
 * answered with the model's contract error, which every such call gets.
 */
import { ContractError } from '../contract.js';
import type { Invariant } from '../harness/system.js';
import {
  CALL_ERRORS,
  decodeAnswers,
  encodeCallBatch,
  STATUS_REFUSED,
  type DecodedAnswers,
  type WireCall,
} from './protocol.js';
import {
  FAULT_CHECKS,
  type NativeDriver,
  type NativeFault,
  type NativeFaultKind,
} from './driver.js';

/** One call the model made, in order. */
export interface CallRecord extends WireCall {
  /** Not sent: an argument the C API cannot express (answered with `error`). */
  readonly local: boolean;
  /** The model's contract error for this call, if it refused it. */
  error: string | null;
}

/** Records the model's calls while the harness runs it over a whole run. */
export class CallRecorder {
  readonly calls: CallRecord[] = [];

  /** Records a call and runs it on the model (a contract error is recorded and thrown on). */
  call<T>(code: number, args: readonly number[], run: () => T): T {
    const record: CallRecord = {
      code,
      args,
      local: args.some((arg) => !Number.isSafeInteger(arg) || arg < 0),
      error: null,
    };
    this.calls.push(record);
    try {
      return run();
    } catch (error) {
      if (error instanceof ContractError) record.error = error.code;
      throw error;
    }
  }
}

/** What a call got from the driver: its values (the answer's u64s; null for "no room"). */
export type CallAnswer = readonly (number | null)[];

/**
 * The driver's answers to one run, handed out call by call to the implementation side's
 * allocator. `fault` is set at the first call the driver did not answer (or answered with
 * nonsense); from then on every call gets `undefined` and the fault invariants end the run.
 */
export class NativeCalls {
  fault: NativeFault | null = null;
  private next = 0;
  private wire = 0;
  private command = -1;

  constructor(
    private readonly records: readonly CallRecord[],
    private readonly answers: DecodedAnswers,
    private readonly batchFault: NativeFault | null,
    private readonly commands: number,
  ) {}

  /** Runs the recorded calls on a driver and collects its answers. */
  static run(
    driver: NativeDriver,
    capacityBytes: number,
    setup: readonly WireCall[],
    records: readonly CallRecord[],
    commands: number,
  ): NativeCalls {
    const wire = [...setup, ...records.filter((record) => !record.local)];
    const result = driver.runBatch(
      (flags) => encodeCallBatch(capacityBytes, wire, flags),
      wire.length,
    );
    let answers = decodeAnswers(result.frames, wire.length);
    let fault = result.fault;
    if (typeof answers === 'string') {
      fault = { kind: 'garbage', detail: answers, stderr: [] };
      answers = { statuses: new Int32Array(0), starts: new Int32Array(1), values: [], count: 0 };
    } else if (fault === null) {
      for (let i = 0; i < setup.length; i++) {
        if (answers.statuses[i] !== 0 || answers.starts[i + 1] !== answers.starts[i])
          fault = { kind: 'garbage', detail: `it answered set-up record ${i}`, stderr: [] };
      }
    }
    const calls = new NativeCalls(records, answers, fault, commands);
    calls.wire = setup.length;
    return calls;
  }

  private garbage(detail: string): undefined {
    this.fault ??= { kind: 'garbage', detail, stderr: [] };
    return undefined;
  }

  /** Called before each command. */
  beginCommand(): void {
    this.command++;
  }

  /** Called after each command: a fault after the driver's last answer (say, in destroy) ends the run at its last command. */
  endCommand(): void {
    if (this.fault === null && this.command === this.commands - 1 && this.batchFault !== null)
      this.fault = this.batchFault;
  }

  /**
   * The driver's answer to the implementation's call `code(args)`: its values, a thrown
   * ContractError when the driver refused it, or undefined after a fault.
   */
  take(code: number, args: readonly number[], what: string): CallAnswer | undefined {
    if (this.fault !== null) return undefined;
    const record = this.records[this.next++];
    if (record === undefined || record.code !== code || !sameArgs(record.args, args))
      return this.garbage(
        `the implementation side called ${what}, which the model's run did not (command ${this.command})`,
      );
    if (record.local) {
      if (record.error === null) return this.garbage(`${what} cannot be sent to the driver`);
      throw new ContractError(
        record.error,
        `${what}: refused by the harness (not expressible in u64)`,
      );
    }
    const at = this.wire++;
    const answers = this.answers;
    if (at >= answers.count) {
      this.fault = this.batchFault ?? {
        kind: 'garbage',
        detail: `it answered ${answers.count} calls and then ended the run`,
        stderr: [],
      };
      return undefined;
    }
    const values = answers.values.slice(answers.starts[at], answers.starts[at + 1]);
    const status = answers.statuses[at];
    if (status === STATUS_REFUSED) {
      const name = values.length === 1 ? CALL_ERRORS[(values[0] ?? 0) - 1] : undefined;
      if (name === undefined)
        return this.garbage(`it refused ${what} with no known error number (${values.join(', ')})`);
      throw new ContractError(name, `${what}: refused by the driver`);
    }
    if (status !== 0) return this.garbage(`it answered ${what} with status ${status}`);
    return values;
  }

  /** Flags an answer of the wrong shape; always undefined. */
  wrongShape(what: string, values: CallAnswer): undefined {
    return this.garbage(`it answered ${what} with ${values.length} values`);
  }
}

function sameArgs(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

const FAULT_DESCRIPTIONS: Readonly<Record<NativeFaultKind, string>> = {
  sanitizer: 'the driver answers every command without a sanitizer (ASan, UBSan, ...) stopping it',
  crash: 'the driver answers every command without being killed by a signal',
  exit: 'the driver answers every command without exiting',
  garbage:
    'every byte the driver sends is a well-formed answer, one per command, used exactly as sent',
  protocol: 'the driver keeps speaking the protocol version of its hello',
  hang: 'the driver answers every run within the time limit',
};

/**
 * The fault checks of a native system, in the order the runner checks them (before every other
 * invariant): `faultOf` reads a side's fault (null on the model side), `step` its command number.
 */
export function faultInvariants<S>(
  executable: string,
  faultOf: (side: S) => NativeFault | null,
  step: (side: S) => number,
): Invariant<S, unknown>[] {
  return (Object.keys(FAULT_CHECKS) as NativeFaultKind[]).map((kind) => ({
    name: FAULT_CHECKS[kind],
    description: FAULT_DESCRIPTIONS[kind],
    check: (_model: S, impl: S) => {
      const fault = faultOf(impl);
      if (fault === null || fault.kind !== kind) return null;
      const stderr = fault.stderr.map((line) => `\n  driver stderr: ${line}`).join('');
      return `${executable}: ${fault.detail} (command ${step(impl)})${stderr}`;
    },
  }));
}
