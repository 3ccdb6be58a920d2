/**
 * The harness's side of a native residency driver's call-backs (docs/native-protocol.md,
 * "Call-backs"): each device call the manager makes through the D3D12 kit arrives in a 'C' frame
 * and is applied to a `SimGpu`, the same judge the TypeScript residency manager runs on; a call
 * that waits for an answer gets an 'R' frame with the GPU's state.
 *
 * `SimGpu` knows one fence per queue plus the paging fence, while a native manager creates fences
 * of its own. Fences get their role by use: the first queue that signals a fence makes it that
 * queue's fence; a fence given to EnqueueMakeResident, signalled from the CPU or waited for by a
 * queue is the paging fence. A use that fits neither role (a queue waiting for another queue's
 * fence, a second fence signalled by one queue) is a `fence-role` fault: the judge cannot model
 * it, and says so.
 */
import { SimGpu, type SimGpuConfig } from '../gpu/sim-gpu.js';
import type { DeviceCallKind } from '../gpu/sim-gpu-types.js';
import { FRAME_HEADER_BYTES } from './protocol.js';

export const FRAME_RESIDENCY_COMMAND = 0x42; // 'B'
export const FRAME_CALLS = 0x43; // 'C'
export const FRAME_REPLY_TO_CALL = 0x52; // 'R'

/** Command op codes (include/gpumv_d3d12/residency_driver.h). */
export const RESIDENCY_OPS = {
  begin: 1,
  end: 2,
  track: 3,
  untrack: 4,
  record: 5,
  execute: 6,
  quiesce: 7,
  fail: 8,
} as const;

/** Call codes (include/gpumv_d3d12/protocol_port.h). */
const enum Call {
  MakeResident = 1,
  EnqueueMakeResident = 2,
  Evict = 3,
  CreateFence = 4,
  DestroyFence = 5,
  Execute = 6,
  Signal = 7,
  Wait = 8,
  CpuSignal = 9,
  AdvanceUntil = 10,
  Query = 11,
  Fault = 12,
  Fatal = 13,
  Usage = 14,
}

/** The call codes of the device calls the `Fail` command names (the codes above). */
export const DEVICE_CALL_CODES: Readonly<Record<DeviceCallKind, number>> = {
  makeResident: Call.MakeResident,
  enqueueMakeResident: Call.EnqueueMakeResident,
  evict: Call.Evict,
};

/** The fewest words each call code takes (indexed by code); a shorter call is garbage. */
const MIN_WORDS: readonly number[] = [0, 0, 2, 0, 2, 1, 2, 3, 3, 2, 2, 0, 1, 1, 2];

const WANTS_REPLY = 1;
const UNBOUND = -2;
const PAGING = -1;
const TWO_32 = 2 ** 32;

interface Fence {
  /** UNBOUND, PAGING or the queue whose fence it is. */
  role: number;
  readonly initial: number;
}

/** A 'C' frame that makes no sense: the driver speaks another protocol. */
export class CallGarbage extends Error {}

export class ResidencyJudge {
  readonly gpu: SimGpu;
  private readonly fences = new Map<number, Fence>();
  private readonly queueFence: Int32Array;
  /** Faults the kit or the driver loop reported (unsupported calls, bad handles), and fence-role faults. */
  readonly faults: string[] = [];
  /** Objects the driver loop reported leaking. */
  readonly leaks: string[] = [];
  /** The run's fatal report (a deadlock), or null. */
  fatal: string | null = null;
  /**
   * Set by the system around a submission whose paging runs inline (policy any): the objects it
   * needs. Each make-resident call is then watched (see `watchBudget`).
   */
  budgetWatch: ReadonlySet<number> | null = null;
  /** The first watched make-resident call that took usage over budget when the manager could have made room. */
  budgetCandidate: string | null = null;
  private words = new Float64Array(64);

  /**
   * `objectState`: the driver said `callbacks=2`; every state block also carries each object's
   * residency reference count and segment, so the driver follows usage through its own calls
   * and never asks for it (docs/native-protocol.md, "Call-backs").
   */
  constructor(
    config: SimGpuConfig,
    readonly objectState = false,
  ) {
    this.gpu = new SimGpu(config);
    this.queueFence = new Int32Array(config.queueCount);
  }

  /**
   * A watched make-resident call, before (`before` true) and after it is applied. The starter
   * library's design (docs/spec/residency-library.md#rl-8-5-3) issues a call past the budget only as
   * its fallback: when no submitted work is pending (nothing to wait for) or when every resident
   * object is one the submission needs (nothing to trim). A call past the budget while work was
   * pending and a resident object the submission does not need was there to trim is a candidate;
   * the system reports it when what the submission needs fits the budget.
   */
  private pendingAtCall = false;
  private trimmable = -1;
  private watchBudget(before: boolean, objects: readonly number[]): void {
    const needs = this.budgetWatch;
    if (needs === null || this.budgetCandidate !== null) return;
    const gpu = this.gpu;
    if (before) {
      this.pendingAtCall = false;
      for (let q = 0; q < gpu.queueCount; q++) this.pendingAtCall ||= gpu.pendingItems(q) > 0;
      this.trimmable = -1;
      for (let object = 0; object < gpu.objectCount && this.trimmable < 0; object++)
        if (gpu.isResident(object) && !needs.has(object)) this.trimmable = object;
      return;
    }
    const budget = gpu.localBudgetBytes + gpu.nonLocalBudgetBytes;
    const usage = gpu.localUsageBytes + gpu.nonLocalUsageBytes;
    if (usage <= budget || !this.pendingAtCall || this.trimmable < 0) return;
    this.budgetCandidate = `a make-resident call of [${objects.join(',')}] took usage to ${usage} bytes (local ${gpu.localUsageBytes} + non-local ${gpu.nonLocalUsageBytes}), over the budget of ${budget}, while submitted work was pending and object ${this.trimmable}, resident and not needed by the submission, was there to trim`;
  }

  /** The state block every command and reply carries: clock, budgets, usage, fences. */
  encodeState(view: DataView, at: number): number {
    const gpu = this.gpu;
    setU64(view, at, gpu.ticks);
    setU64(view, at + 8, gpu.localBudgetBytes);
    setU64(view, at + 16, gpu.localUsageBytes);
    setU64(view, at + 24, gpu.nonLocalBudgetBytes);
    setU64(view, at + 32, gpu.nonLocalUsageBytes);
    view.setUint32(at + 40, this.fences.size, true);
    view.setUint32(at + 44, 0, true);
    let p = at + 48;
    for (const [id, fence] of this.fences) {
      setU64(view, p, id);
      setU64(view, p + 8, this.completed(fence));
      p += 16;
    }
    if (!this.objectState) return p;
    const objects = gpu.objectCount;
    view.setUint32(p, objects, true);
    view.setUint32(p + 4, 0, true);
    p += 8;
    for (let object = 0; object < objects; object++, p += 8) {
      view.setUint32(p, gpu.residencyRefCount(object), true);
      view.setUint32(p + 4, gpu.isNonLocal(object) ? 1 : 0, true);
    }
    return p;
  }

  stateBytes(): number {
    return 48 + 16 * this.fences.size + (this.objectState ? 8 + 8 * this.gpu.objectCount : 0);
  }

  /** A command frame: the state, then `u32 op, u32 words`, then the words. */
  encodeCommand(op: number, args: readonly number[]): Uint8Array {
    const payload = this.stateBytes() + 8 + 8 * args.length;
    const bytes = new Uint8Array(FRAME_HEADER_BYTES + payload);
    const view = new DataView(bytes.buffer);
    view.setUint8(0, FRAME_RESIDENCY_COMMAND);
    view.setUint32(4, payload, true);
    let at = this.encodeState(view, FRAME_HEADER_BYTES);
    view.setUint32(at, op, true);
    view.setUint32(at + 4, args.length, true);
    at += 8;
    for (const word of args) {
      setU64(view, at, word);
      at += 8;
    }
    return bytes;
  }

  /** A reply frame: `u64 value`, then the state. */
  encodeReply(value: number): Uint8Array {
    const payload = 8 + this.stateBytes();
    const bytes = new Uint8Array(FRAME_HEADER_BYTES + payload);
    const view = new DataView(bytes.buffer);
    view.setUint8(0, FRAME_REPLY_TO_CALL);
    view.setUint32(4, payload, true);
    setU64(view, FRAME_HEADER_BYTES, value);
    this.encodeState(view, FRAME_HEADER_BYTES + 8);
    return bytes;
  }

  /**
   * Applies the calls of a 'C' frame's payload. Returns the reply's value when the last call
   * waits for one, else null. Throws CallGarbage for bytes that are no calls.
   */
  applyCalls(payload: Uint8Array): number | null {
    const view = new DataView(payload.buffer, payload.byteOffset, payload.byteLength);
    if (payload.length < 8) throw new CallGarbage('a call frame shorter than its header');
    const flags = view.getUint32(0, true);
    const count = view.getUint32(4, true);
    let at = 8;
    let value = 0;
    for (let i = 0; i < count; i++) {
      if (at + 8 > payload.length) throw new CallGarbage('a call runs past its frame');
      const call = view.getUint32(at, true);
      const n = view.getUint32(at + 4, true);
      at += 8;
      if (at + 8 * n > payload.length) throw new CallGarbage('a call runs past its frame');
      if (this.words.length < n) this.words = new Float64Array(2 * n);
      const w = this.words;
      for (let k = 0; k < n; k++, at += 8)
        w[k] = view.getUint32(at, true) + view.getUint32(at + 4, true) * TWO_32;
      value = this.apply(call, w, n, payload, at - 8 * n);
    }
    if (at !== payload.length) throw new CallGarbage('bytes after the last call of a frame');
    return (flags & WANTS_REPLY) !== 0 ? value : null;
  }

  // `w[k]!`: w holds at least n words, and n is at least MIN_WORDS[call] (checked first; a
  // shorter call is the driver's garbage, not an assertion: docs/maintainers/assertions.md).
  private apply(call: number, w: Float64Array, n: number, payload: Uint8Array, at: number): number {
    const gpu = this.gpu;
    const least = MIN_WORDS[call];
    if (least !== undefined && n < least)
      throw new CallGarbage(`call ${call} with ${n} words (it takes at least ${least})`);
    switch (call) {
      case Call.MakeResident: {
        // Tagged 'fallback': SimGpu judges over-budget only for tagged batches; the native
        // system watches the budget itself (a native manager cannot tag its calls).
        const objects = this.objects(w, 0, n);
        this.watchBudget(true, objects);
        gpu.makeResident(objects, 0, n, 'fallback');
        this.watchBudget(false, objects);
        return 0;
      }
      case Call.EnqueueMakeResident: {
        this.bindPaging(w[0]!, 'EnqueueMakeResident');
        const objects = this.objects(w, 2, n);
        this.watchBudget(true, objects);
        gpu.enqueueMakeResident(objects, 0, n - 2, w[1]!, 'fallback');
        this.watchBudget(false, objects);
        return 0;
      }
      case Call.Evict:
        gpu.evict(this.objects(w, 0, n), 0, n);
        return 0;
      case Call.CreateFence:
        this.fences.set(w[0]!, { role: UNBOUND, initial: w[1]! });
        return 0;
      case Call.DestroyFence:
        this.fences.delete(w[0]!);
        return 0;
      case Call.Execute: {
        const lists: number[][] = [];
        let p = 2;
        for (let l = 0; l < w[1]!; l++) {
          if (p + 2 > n) throw new CallGarbage('an Execute call whose lists do not fill it');
          const count = w[p + 1]!;
          if (p + 2 + count > n)
            throw new CallGarbage('an Execute call whose lists do not fill it');
          lists.push(this.objects(w, p + 2, p + 2 + count));
          p += 2 + count;
        }
        if (p !== n) throw new CallGarbage('an Execute call whose lists do not fill it');
        gpu.executeCommandLists(this.queue(w[0]!), lists);
        return 0;
      }
      case Call.Signal: {
        const queue = this.queue(w[0]!);
        if (this.bindQueue(w[1]!, queue)) gpu.queueSignal(queue, w[2]!);
        return 0;
      }
      case Call.Wait: {
        const queue = this.queue(w[0]!);
        if (this.bindPaging(w[1]!, 'ID3D12CommandQueue::Wait')) gpu.queueWaitPaging(queue, w[2]!);
        return 0;
      }
      case Call.CpuSignal:
        if (this.bindPaging(w[0]!, 'ID3D12Fence::Signal')) gpu.cpuSignalPaging(w[1]!);
        return 0;
      case Call.AdvanceUntil:
        return this.advance(w[0]!, w[1]!) ? 1 : 0;
      case Call.Query:
        return 0;
      case Call.Usage:
        // A callbacks=2 driver answered QueryVideoMemoryInfo from its own count: it must be ours.
        if (w[0] !== gpu.localUsageBytes || w[1] !== gpu.nonLocalUsageBytes)
          throw new CallGarbage(
            `the driver counts usage local ${w[0]!}, non-local ${w[1]!} where the simulated GPU has local ${gpu.localUsageBytes}, non-local ${gpu.nonLocalUsageBytes} (its count of residency differs from the harness's state)`,
          );
        return 0;
      case Call.Fault:
      case Call.Fatal: {
        const length = w[0]!;
        if (length > 8 * (n - 1)) throw new CallGarbage('a fault text longer than its call');
        const text = new TextDecoder().decode(payload.subarray(at + 8, at + 8 + length));
        if (call === Call.Fatal) this.fatal = text;
        else if (text.startsWith('leak:')) this.leaks.push(text);
        else this.faults.push(text);
        return 0;
      }
      default:
        throw new CallGarbage(`an unknown call ${call}`);
    }
  }

  private objects(w: Float64Array, from: number, to: number): number[] {
    const out: number[] = [];
    for (let i = from; i < to; i++) {
      const object = w[i]!;
      if (object >= this.gpu.objectCount) throw new CallGarbage(`a call names object ${object}`);
      out.push(object);
    }
    return out;
  }

  private queue(queue: number): number {
    if (queue >= this.gpu.queueCount) throw new CallGarbage(`a call names queue ${queue}`);
    return queue;
  }

  private fence(id: number, call: string): Fence | null {
    const fence = this.fences.get(id);
    if (fence === undefined)
      this.faults.push(`fence-role: ${call} on fence ${id}, which was not created`);
    return fence ?? null;
  }

  private bindPaging(id: number, call: string): boolean {
    const fence = this.fence(id, call);
    if (fence === null) return false;
    if (fence.role === PAGING) return true;
    if (fence.role === UNBOUND && fence.initial === 0) {
      for (const other of this.fences.values())
        if (other.role === PAGING) {
          this.faults.push(
            `fence-role: ${call} makes fence ${id} a second paging fence (the simulated GPU has one)`,
          );
          return false;
        }
      fence.role = PAGING;
      return true;
    }
    this.faults.push(
      fence.role === UNBOUND
        ? `fence-role: ${call} on fence ${id} created at ${fence.initial} (the paging fence starts at 0)`
        : `fence-role: ${call} on fence ${id}, queue ${fence.role}'s fence (a queue waiting for another queue is not modelled)`,
    );
    return false;
  }

  private bindQueue(id: number, queue: number): boolean {
    const fence = this.fence(id, 'ID3D12CommandQueue::Signal');
    if (fence === null) return false;
    if (fence.role === queue) return true;
    if (fence.role === UNBOUND && fence.initial === 0 && this.queueFence[queue] === 0) {
      fence.role = queue;
      this.queueFence[queue] = id;
      return true;
    }
    this.faults.push(
      `fence-role: queue ${queue} signals fence ${id}${fence.role === PAGING ? ', the paging fence' : fence.role >= 0 ? `, queue ${fence.role}'s fence` : ''} (the simulated GPU gives each queue one fence, starting at 0)`,
    );
    return false;
  }

  private completed(fence: Fence): number {
    if (fence.role === PAGING) return this.gpu.pagingFenceCompleted;
    if (fence.role >= 0) return this.gpu.fenceCompleted(fence.role);
    return fence.initial;
  }

  private advance(id: number, value: number): boolean {
    const fence = this.fences.get(id);
    if (fence === undefined) return false;
    if (fence.role >= 0) return this.gpu.advanceTo(fence.role, value);
    if (fence.role === PAGING) {
      while (this.gpu.pagingFenceCompleted < value) if (this.gpu.pagingProgress(1) === 0) break;
      return this.gpu.pagingFenceCompleted >= value;
    }
    return fence.initial >= value;
  }
}

/** Writes a u64; a negative value is all ones (a command's "no set"). */
function setU64(view: DataView, at: number, value: number): void {
  if (value < 0) {
    view.setUint32(at, 0xffffffff, true);
    view.setUint32(at + 4, 0xffffffff, true);
    return;
  }
  view.setUint32(at, value % TWO_32, true);
  view.setUint32(at + 4, Math.floor(value / TWO_32), true);
}
