/**
 * The wire format of the native driver protocol (docs/native-protocol.md; its C side is
 * include/gpumv_driver.h). Frames are `u8 kind, 3 bytes zero, u32 payload length` then the
 * payload, little endian; the harness writes to the driver's fd 3 and reads its fd 4.
 */
import type { Command } from '../harness/system.js';

export const PROTOCOL_VERSION = 1;
/** "GPMV" read as a little-endian u32. */
export const PROTOCOL_MAGIC = 0x564d5047;

export const FRAME_HELLO = 0x48; // 'H'
export const FRAME_BATCH = 0x42; // 'B'
export const FRAME_ANSWERS = 0x41; // 'A'
export const FRAME_CALL = 0x43; // 'C' (reserved: a driver's call-back during a command)
export const FRAME_REPLY = 0x52; // 'R' (reserved: the harness's answer to a call-back)
export const FRAME_QUIT = 0x51; // 'Q'

/** Batch flag: the driver sends each command's answer as soon as it is known. */
export const FLAG_ANSWER_EACH = 1;

/** The op codes of the allocator batch: one 40-byte record per command, `u32 op, u32 0, u64 a, b, c, d`. */
export const ALLOC_OPS: Readonly<
  Record<string, { readonly code: number; readonly fields: readonly string[] }>
> = {
  alloc: { code: 1, fields: ['sizeBytes', 'alignBytes'] },
  free: { code: 2, fields: ['index'] },
  allocBurst: { code: 3, fields: ['count', 'sizeBytes', 'spreadBytes', 'alignBytes'] },
  freeBurst: { code: 4, fields: ['index', 'count', 'stride'] },
};

export const FRAME_HEADER_BYTES = 8;
export const BATCH_HEADER_BYTES = 16;
export const COMMAND_BYTES = 40;
/** A frame longer than this is garbage, not an answer (a batch's answers stay far below). */
export const MAX_FRAME_BYTES = 1 << 28;
/** The answer value of an alloc that found no room (u64 all ones). */
export const NO_ROOM_HI = 0xffffffff;

const TWO_32 = 2 ** 32;

/** Writes an integer as u64 (a negative one as its two's complement). */
function setU64(view: DataView, at: number, value: number): void {
  if (value >= 0 && value < 2 ** 53) {
    view.setUint32(at, value % TWO_32, true);
    view.setUint32(at + 4, Math.floor(value / TWO_32), true);
  } else {
    view.setBigUint64(at, BigInt.asUintN(64, BigInt(Math.trunc(value))), true);
  }
}

/** A batch frame of `count` records with its header written; the records start at FRAME_HEADER_BYTES + BATCH_HEADER_BYTES. */
function batchFrame(capacityBytes: number, count: number, flags: number) {
  const payload = BATCH_HEADER_BYTES + count * COMMAND_BYTES;
  const bytes = new Uint8Array(FRAME_HEADER_BYTES + payload);
  const view = new DataView(bytes.buffer);
  view.setUint8(0, FRAME_BATCH);
  view.setUint32(4, payload, true);
  view.setUint32(8, flags, true);
  view.setUint32(12, count, true);
  setU64(view, 16, capacityBytes);
  return { bytes, view };
}

/** One run as a batch frame: `u32 flags, u32 count, u64 capacity`, then the commands. */
export function encodeAllocBatch(
  capacityBytes: number,
  commands: readonly Command[],
  flags: number,
): Uint8Array {
  const { bytes, view } = batchFrame(capacityBytes, commands.length, flags);
  let at = FRAME_HEADER_BYTES + BATCH_HEADER_BYTES;
  for (const command of commands) {
    const op = ALLOC_OPS[command.op];
    if (op === undefined)
      throw new Error(
        `native allocator: op '${command.op}' has no code in protocol version ${PROTOCOL_VERSION}`,
      );
    view.setUint32(at, op.code, true);
    for (let i = 0; i < op.fields.length; i++)
      setU64(view, at + 8 + 8 * i, command[op.fields[i]!] as number);
    at += COMMAND_BYTES;
  }
  return bytes;
}

/**
 * The call records of the ring-upload and deferred-free systems: each is one call of the
 * allocator's API with its arguments resolved by the harness (docs/native-protocol.md).
 */
export const RING_OPS = { allocate: 16, submit: 17, cancel: 18, collect: 19 } as const;
export const DEFERRED_OPS = {
  /** Set-up records before the first call: the sub-allocator's kind, its config, each size class. */
  kind: 32,
  config: 33,
  sizeClass: 34,
  alloc: 40,
  release: 41,
  endFrame: 42,
  poolAcquire: 43,
  poolRelease: 44,
  poolTrim: 45,
} as const;
/** The sub-allocator kinds of a deferred-free kind record, by their number. */
export const DEFERRED_KIND_CODES = ['buddy', 'best-fit', 'first-fit'] as const;

/** Answer status of a call the allocator refused with a contract error: its one value numbers the error (CALL_ERRORS). */
export const STATUS_REFUSED = 3;
/** The contract errors a call may be refused with, numbered from 1 in this order. */
export const CALL_ERRORS = [
  'BAD_SIZE',
  'BAD_ALIGN',
  'BAD_FREE',
  'RING_UNKNOWN_RANGE',
  'RING_ALREADY_SUBMITTED',
  'RING_FENCE_ORDER',
  'DEFERRED_NOT_POOLED',
  'DEFERRED_BAD_SIZE_CLASS',
] as const;

/** One call record: its op code and up to four u64 arguments. */
export interface WireCall {
  readonly code: number;
  readonly args: readonly number[];
}

/** One run of calls as a batch frame (the same framing as an allocator batch). */
export function encodeCallBatch(
  capacityBytes: number,
  calls: readonly WireCall[],
  flags: number,
): Uint8Array {
  const { bytes, view } = batchFrame(capacityBytes, calls.length, flags);
  let at = FRAME_HEADER_BYTES + BATCH_HEADER_BYTES;
  for (const call of calls) {
    view.setUint32(at, call.code, true);
    for (let i = 0; i < call.args.length; i++) setU64(view, at + 8 + 8 * i, call.args[i]!);
    at += COMMAND_BYTES;
  }
  return bytes;
}

/** The quit frame. */
export function encodeQuit(): Uint8Array {
  const bytes = new Uint8Array(FRAME_HEADER_BYTES);
  bytes[0] = FRAME_QUIT;
  return bytes;
}

/** What a driver declares in its hello frame. */
export interface DriverHello {
  readonly version: number;
  /** The hello's key=value lines, in order (what a later harness version may read more of). */
  readonly fields: ReadonlyMap<string, string>;
}

/** Parses a hello payload (`u32 magic, u32 version`, then `key=value\n` lines); a string names the problem. */
export function parseHello(payload: Uint8Array): DriverHello | string {
  if (payload.length < 8)
    return `its hello frame has ${payload.length} bytes, fewer than the magic and version`;
  const view = new DataView(payload.buffer, payload.byteOffset, payload.byteLength);
  if (view.getUint32(0, true) !== PROTOCOL_MAGIC)
    return 'its hello frame does not start with the magic "GPMV"';
  const version = view.getUint32(4, true);
  const fields = new Map<string, string>();
  const text = new TextDecoder().decode(payload.subarray(8));
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const eq = line.indexOf('=');
    if (eq <= 0) return `its hello line ${JSON.stringify(line)} is not key=value`;
    fields.set(line.slice(0, eq), line.slice(eq + 1));
  }
  return { version, fields };
}

/**
 * The answers of a batch, decoded: per command its status (0 ok, 1 the callback rejected the
 * command's last value, 2 unknown op) and its values (u64; null for "no room").
 */
export interface DecodedAnswers {
  readonly statuses: Int32Array;
  /** Command i's values are values[starts[i] .. starts[i + 1]). */
  readonly starts: Int32Array;
  readonly values: (number | null)[];
  /** Commands answered. */
  readonly count: number;
}

/**
 * Decodes the concatenated payloads of a batch's answer frames (`u32 first, u32 count`, then
 * per command `u32 status, u32 n, n x u64`). A string names the first inconsistency.
 */
export function decodeAnswers(
  frames: readonly Uint8Array[],
  commands: number,
): DecodedAnswers | string {
  const statuses = new Int32Array(commands);
  const starts = new Int32Array(commands + 1);
  const values: (number | null)[] = [];
  let answered = 0;
  for (const frame of frames) {
    const view = new DataView(frame.buffer, frame.byteOffset, frame.byteLength);
    if (frame.length < 8) return 'an answer frame shorter than its header';
    const first = view.getUint32(0, true);
    const count = view.getUint32(4, true);
    if (first !== answered)
      return `an answer frame starts at command ${first}, expected ${answered}`;
    if (answered + count > commands)
      return `answers to ${answered + count} commands for a batch of ${commands}`;
    let at = 8;
    for (let k = 0; k < count; k++) {
      if (at + 8 > frame.length) return `the answer to command ${answered} runs past its frame`;
      statuses[answered] = view.getUint32(at, true);
      const n = view.getUint32(at + 4, true);
      at += 8;
      if (at + 8 * n > frame.length) return `the answer to command ${answered} runs past its frame`;
      starts[answered] = values.length;
      for (let i = 0; i < n; i++, at += 8) {
        const lo = view.getUint32(at, true);
        const hi = view.getUint32(at + 4, true);
        values.push(hi === NO_ROOM_HI && lo === 0xffffffff ? null : hi * TWO_32 + lo);
      }
      answered++;
      starts[answered] = values.length;
    }
    if (at !== frame.length)
      return `an answer frame has ${frame.length - at} bytes after its last answer`;
  }
  return { statuses, starts, values, count: answered };
}
