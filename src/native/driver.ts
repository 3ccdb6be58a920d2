/**
 * One native driver process, driven synchronously (the runner's step loop is synchronous).
 *
 * A helper thread owns the process: it spawns it with the protocol on fds 3 (harness to driver)
 * and 4 (driver to harness), keeps the first lines of its stdout and stderr apart from the
 * protocol, collects frames, and sees it exit. The calling thread posts a request to the helper
 * and blocks in Atomics.wait (with a time limit) until the helper has posted the reply, which it
 * takes with receiveMessageOnPort: one round trip per run, whatever its length. A driver that
 * does not answer in time is killed (SIGKILL) and reported as a hang; a driver that died is
 * started again (and must say the same hello) at the next run.
 */
import {
  MessageChannel,
  receiveMessageOnPort,
  Worker,
  type MessagePort,
} from 'node:worker_threads';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { CPU_POLL_MS, CpuWatch, mayBeInHeavy } from './process-cpu.js';
import {
  FLAG_ANSWER_EACH,
  MAX_FRAME_BYTES,
  PROTOCOL_VERSION,
  parseHello,
  type DriverHello,
} from './protocol.js';

/** How a driver's run ended when it did not answer every command. */
export type NativeFaultKind = 'sanitizer' | 'crash' | 'exit' | 'garbage' | 'protocol' | 'hang';

/** The check (finding kind) of each fault. */
export const FAULT_CHECKS: Readonly<Record<NativeFaultKind, string>> = {
  sanitizer: 'driver-sanitizer',
  crash: 'driver-crash',
  exit: 'driver-exit',
  garbage: 'driver-garbage',
  protocol: 'driver-protocol',
  hang: 'driver-hang',
};

export interface NativeFault {
  readonly kind: NativeFaultKind;
  /** One line: what happened (signal, exit code, the bytes that made no sense). */
  readonly detail: string;
  /** The first lines the driver wrote to stderr (a sanitizer's report starts there). */
  readonly stderr: readonly string[];
}

export interface BatchResult {
  /** The payloads of the answer frames, in order. */
  readonly frames: Uint8Array[];
  /** Why the answers stop short, or null when every command was answered. */
  readonly fault: NativeFault | null;
}

/** A driver that cannot start (missing, not executable, no valid hello): one line naming it. */
export class DriverStartError extends Error {
  constructor(
    readonly executable: string,
    detail: string,
  ) {
    super(`${executable}: ${detail}`);
    this.name = 'DriverStartError';
  }
}

/** Default time a run may take before the driver counts as hung (ms). */
export const DEFAULT_DRIVER_TIMEOUT_MS = 5000;
/** Time the handshake may take (a sanitizer build starts slowly on a busy machine). */
const HELLO_TIMEOUT_MS = 20_000;
/** Lines of the driver's stderr kept for a report. */
const STDERR_LINES = 12;

/**
 * The helper thread's code (plain JavaScript, run with `eval`, so it needs no loader in either
 * the TypeScript sources or the built package).
 */
const HELPER_SOURCE = `
const { workerData } = require('node:worker_threads');
const { spawn } = require('node:child_process');
const { port, cell, executable, cwd, maxFrame } = workerData;
const STDERR_KEEP = 16384;
let firstHello = null, quitting = false, child = null, inbox = [], inboxBytes = 0, stderrText = '', pending = null, hello = null, killedForHang = false, frames = [], answered = 0, expected = 0, dead = true;

function reply(message) {
  port.postMessage(message);
  Atomics.add(cell, 0, 1);
  Atomics.notify(cell, 0);
}

function sanitizerReport(text) {
  return /ERROR: (Address|Leak|Thread|Memory)Sanitizer|runtime error:|UndefinedBehaviorSanitizer/.test(text);
}

function fault(kind, detail) {
  const request = pending;
  pending = null;
  if (request === null) return;
  reply({ kind: 'fault', fault: { kind, detail, stderr: stderrText }, frames: request === 'batch' ? frames : [] });
}

function garbage(detail) {
  fault('garbage', detail);
  if (child !== null) child.kill('SIGKILL');
}

function onFrame(kind, payload) {
  if (kind === 0x48) {
    if (hello !== null) return garbage('a second hello frame');
    if (firstHello !== null && !firstHello.equals(payload)) {
      // A restarted driver that says another hello (another version, policy or name): the
      // executable changed under the campaign. It is stopped and not started again until the
      // next run asks for it.
      if (pending === 'batch-hello') fault('protocol', 'it was started again and its hello differs from the first: ' + JSON.stringify(Buffer.from(payload.subarray(8)).toString('utf8')) + ' (protocol version ' + new DataView(payload.buffer, payload.byteOffset).getUint32(4, true) + ')');
      const stopped = child;
      child = null; dead = true;
      if (stopped !== null) stopped.kill('SIGKILL');
      return;
    }
    hello = payload;
    Atomics.store(cell, 2, 0);
    if (firstHello === null) firstHello = Buffer.from(payload);
    if (pending === 'hello') { pending = null; reply({ kind: 'hello', payload }); }
    else if (pending === 'batch-hello') { pending = 'batch'; writeBatch(); }
    return;
  }
  if (kind === 0x41 && pending === 'batch') {
    if (payload.length < 8) return garbage('an answer frame shorter than its header');
    const view = new DataView(payload.buffer, payload.byteOffset, payload.byteLength);
    const count = view.getUint32(4, true);
    // An answer frame of no answers ends the batch (sent after the run's allocator is destroyed).
    if (count === 0) { pending = null; reply({ kind: 'answers', frames }); return; }
    frames.push(payload);
    answered += count;
    Atomics.store(cell, 4, answered);
    Atomics.add(cell, 1, 1); // progress: the waiting thread extends the run's time limit
    if (answered > expected) garbage('answers to more commands than the run has');
    return;
  }
  garbage('an unexpected frame of kind 0x' + kind.toString(16) + ' (' + payload.length + ' bytes)');
}

function onData(chunk) {
  inbox.push(chunk);
  inboxBytes += chunk.length;
  while (inboxBytes >= 8) {
    let buffer = inbox.length === 1 ? inbox[0] : Buffer.concat(inbox);
    inbox = [buffer];
    const kind = buffer[0];
    const length = buffer.readUInt32LE(4);
    if (buffer[1] !== 0 || buffer[2] !== 0 || buffer[3] !== 0 || length > maxFrame) {
      inbox = []; inboxBytes = 0;
      return garbage('bytes that are no frame header: ' + buffer.subarray(0, 8).toString('hex'));
    }
    if (inboxBytes < 8 + length) return;
    const payload = new Uint8Array(buffer.subarray(8, 8 + length));
    const rest = buffer.subarray(8 + length);
    inbox = rest.length > 0 ? [rest] : [];
    inboxBytes = rest.length;
    onFrame(kind, payload);
  }
}

function start() {
  Atomics.store(cell, 2, 1); // starting: its start does not count against a run's time limit
  hello = null; inbox = []; inboxBytes = 0; stderrText = ''; killedForHang = false; dead = false;
  const env = { ...process.env };
  // Unsymbolized reports: a sanitizer's own symbolizer costs a quarter second per report, paid
  // by every failing shrink candidate; the harness symbolizes the lines it keeps (addr2line).
  if (env.ASAN_OPTIONS === undefined) env.ASAN_OPTIONS = 'detect_leaks=0:symbolize=0';
  if (env.UBSAN_OPTIONS === undefined) env.UBSAN_OPTIONS = 'halt_on_error=1:print_stacktrace=1:symbolize=0';
  let spawned;
  try {
    spawned = spawn(executable, [], { cwd, env, stdio: ['ignore', 'pipe', 'pipe', 'pipe', 'pipe'] });
  } catch (error) {
    dead = true;
    return fault('start', error.message);
  }
  child = spawned;
  Atomics.store(cell, 3, spawned.pid === undefined ? 0 : spawned.pid);
  const keep = (data) => { if (stderrText.length < STDERR_KEEP) stderrText += data.toString('utf8'); };
  spawned.stdout.on('data', keep);
  spawned.stderr.on('data', keep);
  spawned.stdio[3].on('error', () => {});
  spawned.stdio[4].on('data', (data) => { if (child === spawned) onData(data); });
  spawned.on('error', (error) => { if (child === spawned) { dead = true; child = null; fault('start', error.code === 'ENOENT' ? 'no such file' : error.code === 'EACCES' ? 'not executable (permission denied)' : error.message); } });
  spawned.on('close', (code, signal) => {
    if (child !== spawned) return;
    child = null; dead = true;
    Atomics.store(cell, 2, 0);
    const working = hello !== null;
    report(code, signal);
    // A warm spare: a driver that had said hello is started again at once, so the next run
    // (a shrink's next candidate) does not wait for its start.
    if (working && !quitting) start();
  });
}

function report(code, signal) {
    if (pending === null) return;
    if (pending === 'hello' || pending === 'batch-hello') {
      return fault('start', 'exited before its hello (' + (signal ? 'signal ' + signal : 'exit code ' + code) + ')');
    }
    if (killedForHang) return fault('hang', 'it did not answer in time and was killed');
    if (sanitizerReport(stderrText)) return fault('sanitizer', 'a sanitizer stopped it (' + (signal ? 'signal ' + signal : 'exit code ' + code) + ')');
    if (signal) return fault('crash', 'it was killed by ' + signal);
    return fault('exit', 'it exited with code ' + code + ' in the middle of a run');
}

let batchBytes = null;
function writeBatch() {
  frames = []; answered = 0; Atomics.store(cell, 4, 0);
  child.stdio[3].write(batchBytes);
}

port.on('message', (message) => {
  if (message.kind === 'hello') {
    pending = 'hello';
    if (dead) start(); else if (hello !== null) { pending = null; reply({ kind: 'hello', payload: hello }); }
  } else if (message.kind === 'batch') {
    batchBytes = message.bytes; expected = message.count; frames = []; answered = 0;
    if (dead) { pending = 'batch-hello'; start(); }
    else if (hello === null) pending = 'batch-hello';
    else { pending = 'batch'; writeBatch(); }
  } else if (message.kind === 'kill') {
    if (child !== null) { killedForHang = true; child.kill('SIGKILL'); }
    else fault('hang', 'it did not answer in time');
  } else if (message.kind === 'quit') {
    quitting = true;
    if (child !== null) { child.stdio[3].end(message.bytes); }
    port.close();
  }
});
`;

/**
 * The first lines of a driver's stderr, made the same from run to run: process ids (`==1234==`),
 * addresses and the working directory's prefix change between runs of the same finding, which
 * must replay to the same report byte for byte.
 */
export function stderrLines(text: string, cwd = process.cwd()): string[] {
  const prefix = cwd.endsWith(path.sep) ? cwd : cwd + path.sep;
  const lines = text
    .split('\n')
    .filter((line) => line.trim().length > 0)
    .slice(0, STDERR_LINES);
  return symbolize(lines).map((line) =>
    line
      .trimEnd()
      .split(prefix)
      .join('')
      .replace(/==\d+==/g, '==PID==')
      .replace(/\b0x[0-9a-f]{5,}\b/gi, '0x?'),
  );
}

/** A sanitizer's unsymbolized stack frame: `#3 0x55d1c2a4 (/path/to/binary+0x1a2b)`. */
const FRAME = /^(\s*#\d+) 0x[0-9a-f]+\s+\((.+)\+(0x[0-9a-f]+)\)$/;
/** addr2line's answers, by binary and offset (a shrink meets the same frames again and again). */
const SYMBOLS = new Map<string, string>();

/** Replaces unsymbolized frames by `#3 in function file:line` where addr2line knows them. */
function symbolize(lines: readonly string[]): string[] {
  const wanted = new Map<string, Set<string>>();
  for (const line of lines) {
    const match = FRAME.exec(line);
    if (match !== null && !SYMBOLS.has(`${match[2]}+${match[3]}`)) {
      const offsets = wanted.get(match[2]!) ?? new Set<string>();
      offsets.add(match[3]!);
      wanted.set(match[2]!, offsets);
    }
  }
  for (const [binary, offsets] of wanted) {
    const list = [...offsets];
    let answer: string[] = [];
    try {
      answer = execFileSync('addr2line', ['-f', '-C', '-e', binary, ...list], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
        timeout: 10_000,
      }).split('\n');
    } catch {
      // no addr2line, or a binary it cannot read: the frames stay as they are
    }
    list.forEach((offset, i) => {
      const fn = answer[2 * i];
      const where = answer[2 * i + 1];
      SYMBOLS.set(
        `${binary}+${offset}`,
        fn === undefined || where === undefined || fn === '??'
          ? ''
          : `in ${fn} ${where.replace(/ \(discriminator \d+\)$/, '')}`,
      );
    });
  }
  return lines.map((line) => {
    const match = FRAME.exec(line);
    const symbol = match === null ? '' : (SYMBOLS.get(`${match[2]}+${match[3]}`) ?? '');
    return match === null || symbol === '' ? line : `${match[1]} ${symbol}`;
  });
}

/** Runs after a fault sent with each answer at once (about a shrink's failing candidates). */
const ANSWER_EACH_RUNS = 256;

interface HelperFault {
  readonly kind: NativeFaultKind | 'start';
  readonly detail: string;
  readonly stderr: string;
}

type HelperReply =
  | { readonly kind: 'hello'; readonly payload: Uint8Array }
  | { readonly kind: 'answers'; readonly frames: Uint8Array[] }
  | { readonly kind: 'fault'; readonly fault: HelperFault; readonly frames: Uint8Array[] };

export interface NativeDriverOptions {
  /** A run that takes longer is a hang: the driver is killed (default DEFAULT_DRIVER_TIMEOUT_MS). */
  readonly timeoutMs?: number;
  /** Working directory of the process (default: the current one). */
  readonly cwd?: string;
}

/** One long-lived driver process (per thread: each campaign worker starts its own). */
export class NativeDriver {
  readonly hello: DriverHello;
  private readonly port: MessagePort;
  /** [0] replies posted by the helper, [1] answer frames received (progress), [2] 1 while a process starts, [3] the process id, [4] commands answered. */
  private readonly cell = new Int32Array(new SharedArrayBuffer(20));
  private readonly worker: Worker;
  private readonly timeoutMs: number;
  private closed = false;
  /** Runs still to send with each answer at once (set by a fault: its shrink's candidates follow). */
  private eachAfterFault = 0;

  /** Starts the process and reads its hello; throws DriverStartError when it cannot. */
  constructor(
    readonly executable: string,
    options: NativeDriverOptions = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_DRIVER_TIMEOUT_MS;
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    this.worker = new Worker(HELPER_SOURCE, {
      eval: true,
      workerData: {
        port: port2,
        cell: this.cell,
        executable: path.resolve(executable),
        cwd: options.cwd ?? process.cwd(),
        maxFrame: MAX_FRAME_BYTES,
      },
      transferList: [port2],
    });
    this.worker.unref();
    const reply = this.request({ kind: 'hello' }, HELLO_TIMEOUT_MS);
    if (reply === null) {
      this.close();
      throw new DriverStartError(executable, `sent no hello within ${HELLO_TIMEOUT_MS} ms`);
    }
    if (reply.kind === 'fault') {
      this.close();
      const first = stderrLines(reply.fault.stderr)[0];
      throw new DriverStartError(
        executable,
        `cannot start: ${reply.fault.detail}${first === undefined ? '' : `; stderr: ${first}`}`,
      );
    }
    if (reply.kind !== 'hello') throw new DriverStartError(executable, 'answered before its hello');
    const hello = parseHello(reply.payload);
    if (typeof hello === 'string') {
      this.close();
      throw new DriverStartError(executable, `not a gpumv driver: ${hello}`);
    }
    if (hello.version !== PROTOCOL_VERSION) {
      this.close();
      throw new DriverStartError(
        executable,
        `speaks protocol version ${hello.version}; this harness speaks version ${PROTOCOL_VERSION} (rebuild it against this package's include/gpumv_driver.h)`,
      );
    }
    this.hello = hello;
  }

  /**
   * Posts a request and waits for the helper's reply; null when none came within `timeoutMs`
   * of the request or of the driver's last answer frame (a long run that keeps answering is
   * not hung).
   */
  private request(
    message: object,
    timeoutMs: number,
    mayBeLong: (answered: number) => boolean = () => false,
  ): HelperReply | null {
    const seen = Atomics.load(this.cell, 0);
    this.port.postMessage(message);
    let progress = Atomics.load(this.cell, 1);
    const started = performance.now();
    let deadline = started + timeoutMs;
    const watch = new CpuWatch(this.cell);
    for (;;) {
      const received = receiveMessageOnPort(this.port);
      if (received !== undefined) return received.message as HelperReply;
      const now = performance.now();
      const moved = Atomics.load(this.cell, 1);
      // Busy without answering, not inside a long command: stuck (a quick run never reads /proc).
      const polled = now - started >= CPU_POLL_MS;
      if (polled && watch.stuck(moved !== progress) && !mayBeLong(Atomics.load(this.cell, 4)))
        return null;
      if (
        moved !== progress ||
        (Atomics.load(this.cell, 2) === 1 && now < started + HELLO_TIMEOUT_MS)
      ) {
        // An answer frame came, or a (re)started process has not said hello yet.
        progress = moved;
        deadline = now + timeoutMs;
      }
      const left = deadline - now;
      if (left <= 0) return null;
      Atomics.wait(this.cell, 0, seen, Math.min(left, timeoutMs / 4, CPU_POLL_MS));
    }
  }

  /**
   * Sends one run and collects its answers. On a fault the run is sent once more with each answer
   * sent as soon as it is known, so the fault lands on the command that caused it (a driver's
   * answers are otherwise written once per run). `heavy`: the commands that may take long on
   * their own (bursts), ascending: the CPU-time rule waits while the driver may be inside one.
   */
  runBatch(
    encode: (flags: number) => Uint8Array,
    commands: number,
    heavy: readonly number[] = [],
  ): BatchResult {
    const each = mayBeInHeavy(heavy, true);
    const buffered = mayBeInHeavy(heavy, false);
    if (this.eachAfterFault > 0) {
      // A fault's shrink follows: a failing candidate costs one send (a hang one limit), not two.
      this.eachAfterFault--;
      const result = this.send(encode(FLAG_ANSWER_EACH), commands, each);
      if (result.fault !== null) this.eachAfterFault = ANSWER_EACH_RUNS;
      return result;
    }
    const first = this.send(encode(0), commands, buffered);
    if (first.fault === null) return first;
    this.eachAfterFault = ANSWER_EACH_RUNS;
    const again = this.send(encode(FLAG_ANSWER_EACH), commands, each);
    return again.fault !== null && again.fault.kind === first.fault.kind ? again : first;
  }

  private send(
    bytes: Uint8Array,
    count: number,
    mayBeLong: (answered: number) => boolean,
  ): BatchResult {
    if (this.closed) throw new Error(`${this.executable}: the driver was closed`);
    let reply = this.request({ kind: 'batch', bytes, count }, this.timeoutMs, mayBeLong);
    if (reply === null) {
      // Not answered in time: kill it; the helper reports the hang once the process is gone.
      reply = this.request({ kind: 'kill' }, HELLO_TIMEOUT_MS);
      if (reply === null)
        return {
          frames: [],
          fault: {
            kind: 'hang',
            detail: 'it did not answer in time and could not be killed',
            stderr: [],
          },
        };
    }
    if (reply.kind === 'answers') return { frames: reply.frames, fault: null };
    if (reply.kind === 'hello')
      return {
        frames: [],
        fault: { kind: 'protocol', detail: 'it sent a second hello', stderr: [] },
      };
    const fault = reply.fault;
    const kind: NativeFaultKind = fault.kind === 'start' ? 'exit' : fault.kind;
    return {
      frames: reply.frames,
      fault: {
        kind,
        detail:
          fault.kind === 'start' ? `it could not be started again: ${fault.detail}` : fault.detail,
        stderr: stderrLines(fault.stderr),
      },
    };
  }

  /** Ends the process (quit frame, end of its input) and the helper thread. */
  close(quit?: Uint8Array): void {
    if (this.closed) return;
    this.closed = true;
    this.port.postMessage({ kind: 'quit', bytes: quit ?? new Uint8Array(0) });
    this.port.close();
  }
}
