/**
 * A native driver process spoken to synchronously, for systems whose drivers call back into the
 * harness during a command (docs/native-protocol.md, "Call-backs"): every call-back is a round
 * trip, so the calling thread reads and writes the protocol's pipes itself (blocking reads of a
 * FIFO), with no message hop through a helper thread.
 *
 * The pipes are named FIFOs opened so that each end has exactly one holder: the harness reads fd 4's
 * FIFO and writes fd 3's; once the driver is gone a read returns the end of input. A helper thread
 * owns the process (spawn, exit status) and is its watchdog: a driver that sends nothing for the
 * time limit while the harness waits for it is killed, which ends the blocked read. Its stdout
 * and stderr go to a file the harness reads back when a run faults.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { DriverStartError, stderrLines, type NativeFault } from './driver.js';
import { FRAME_HELLO, MAX_FRAME_BYTES, parseHello, type DriverHello } from './protocol.js';

/** Time the handshake may take (a sanitizer build starts slowly on a busy machine). */
const HELLO_TIMEOUT_MS = 20_000;

/** The helper thread: spawns the driver, records its exit, kills it when the watchdog fires. */
const HELPER_SOURCE = `
const { workerData, parentPort } = require('node:worker_threads');
const { spawn } = require('node:child_process');
const os = require('node:os');
const { cell } = workerData;
let child = null, lastBeat = -1, quietFor = 0;
parentPort.on('message', (m) => {
  if (m.kind === 'start') {
    let spawned;
    try {
      spawned = spawn(m.executable, [], { cwd: m.cwd, env: m.env, stdio: ['ignore', m.out, m.out, m.toDriver, m.fromDriver] });
    } catch (error) {
      Atomics.store(cell, 1, -2); Atomics.store(cell, 0, 2); Atomics.notify(cell, 0); return;
    }
    child = spawned;
    Atomics.store(cell, 6, spawned.pid || 0);
    spawned.on('error', (error) => { if (child === spawned) { child = null; Atomics.store(cell, 1, error.code === 'ENOENT' ? -2 : error.code === 'EACCES' ? -3 : -4); Atomics.store(cell, 0, 2); Atomics.notify(cell, 0); } });
    spawned.on('exit', (code, signal) => {
      if (child !== spawned) return;
      child = null;
      Atomics.store(cell, 1, code === null ? -1 : code);
      Atomics.store(cell, 2, signal === null ? 0 : (os.constants.signals[signal] || 1));
      Atomics.store(cell, 0, 2); Atomics.notify(cell, 0);
    });
    Atomics.store(cell, 0, 1); Atomics.notify(cell, 0);
  } else if (m.kind === 'kill') {
    if (child !== null) child.kill('SIGKILL');
  } else if (m.kind === 'stop') {
    clearInterval(timer); parentPort.close();
  }
});
// The watchdog: cell[3] is 1 while the harness waits for the driver, cell[4] counts frames
// received, cell[5] is the time limit in ms; cell[6] is the process id.
const timer = setInterval(() => {
  const waiting = Atomics.load(cell, 3) === 1;
  const beat = Atomics.load(cell, 4);
  if (!waiting || beat !== lastBeat) { lastBeat = beat; quietFor = 0; return; }
  quietFor += 25;
  if (quietFor >= Atomics.load(cell, 5) && child !== null) { child.kill('SIGKILL'); quietFor = 0; }
}, 25);
`;

/** The helper's codes for a process that could not be started (cell[1]). */
const SPAWN_ERRORS: Readonly<Record<number, string>> = {
  [-2]: 'no such file',
  [-3]: 'not executable (permission denied)',
  [-4]: 'it could not be started',
};

/** How a process ended, read after the end of its output. */
interface Ending {
  readonly code: number;
  readonly signal: number;
}

export interface SyncDriverOptions {
  /** A driver that sends nothing for this long while the harness waits is killed (default 1000 ms). */
  readonly timeoutMs?: number;
  readonly cwd?: string;
}

/** The end of a driver's output in the middle of a command: how it ended, as a fault. */
export class DriverGone extends Error {
  constructor(readonly fault: NativeFault) {
    super(fault.detail);
    this.name = 'DriverGone';
  }
}

export class SyncDriver {
  hello!: DriverHello;
  /** Bytes of the first hello: a restarted driver must say the same. */
  private firstHello: Buffer | null = null;
  private readonly cell = new Int32Array(new SharedArrayBuffer(28));
  private readonly worker: Worker;
  private readonly dir: string;
  private readonly outPath: string;
  private readonly timeoutMs: number;
  private toDriver = -1;
  private fromDriver = -1;
  private outFd = -1;
  private alive = false;
  private buffer = Buffer.alloc(1 << 16);
  private start = 0;
  private end = 0;
  /** Where the output file stood when the current run began. */
  private outMark = 0;

  constructor(
    readonly executable: string,
    options: SyncDriverOptions = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? 1000;
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gpumv-driver-'));
    this.outPath = path.join(this.dir, 'output');
    this.worker = new Worker(HELPER_SOURCE, { eval: true, workerData: { cell: this.cell } });
    this.worker.unref();
    this.cwd = options.cwd ?? process.cwd();
    this.spawn();
  }

  private readonly cwd: string;

  /** The running process's id (0 when none): a benchmark reads its CPU time. */
  get pid(): number {
    return this.alive ? Atomics.load(this.cell, 6) : 0;
  }

  /** True while a process is running. */
  get running(): boolean {
    return this.alive;
  }

  /** Starts the process and reads its hello (a restart must say the first hello again). */
  spawn(): void {
    this.closeFds();
    for (const name of ['to', 'from']) {
      const fifo = path.join(this.dir, name);
      fs.rmSync(fifo, { force: true });
      execFileSync('mkfifo', [fifo]);
    }
    const { O_RDONLY, O_WRONLY, O_RDWR } = fs.constants;
    const open = (name: string): [number, number] => {
      const fifo = path.join(this.dir, name);
      const holder = fs.openSync(fifo, O_RDWR); // lets both blocking opens below return at once
      const reader = fs.openSync(fifo, O_RDONLY);
      const writer = fs.openSync(fifo, O_WRONLY);
      fs.closeSync(holder);
      fs.rmSync(fifo);
      return [reader, writer];
    };
    const [childIn, toDriver] = open('to');
    const [fromDriver, childOut] = open('from');
    this.outFd = fs.openSync(this.outPath, 'a');
    this.outMark = fs.fstatSync(this.outFd).size;
    const env = { ...process.env };
    if (env.ASAN_OPTIONS === undefined) env.ASAN_OPTIONS = 'detect_leaks=0:symbolize=0';
    if (env.UBSAN_OPTIONS === undefined)
      env.UBSAN_OPTIONS = 'halt_on_error=1:print_stacktrace=1:symbolize=0';
    Atomics.store(this.cell, 0, 0);
    this.worker.postMessage({
      kind: 'start',
      executable: path.resolve(this.executable),
      cwd: this.cwd,
      env,
      out: this.outFd,
      toDriver: childIn,
      fromDriver: childOut,
    });
    Atomics.wait(this.cell, 0, 0, HELLO_TIMEOUT_MS);
    fs.closeSync(childIn);
    fs.closeSync(childOut);
    this.toDriver = toDriver;
    this.fromDriver = fromDriver;
    this.start = this.end = 0;
    this.alive = true;
    let frame: { kind: number; payload: Buffer };
    try {
      frame = this.readFrame(HELLO_TIMEOUT_MS);
    } catch (error) {
      if (error instanceof DriverGone)
        throw new DriverStartError(
          this.executable,
          `cannot start: ${error.fault.detail}${error.fault.stderr[0] === undefined ? '' : `; stderr: ${error.fault.stderr[0]}`}`,
        );
      throw error;
    }
    if (frame.kind !== FRAME_HELLO)
      throw new DriverStartError(this.executable, 'its first frame is not a hello');
    const hello = parseHello(new Uint8Array(frame.payload));
    if (typeof hello === 'string')
      throw new DriverStartError(this.executable, `not a gpumv driver: ${hello}`);
    if (this.firstHello !== null && !this.firstHello.equals(frame.payload))
      throw new DriverGone({
        kind: 'protocol',
        detail: 'it was started again and its hello differs from the first',
        stderr: [],
      });
    this.firstHello ??= Buffer.from(frame.payload);
    this.hello = hello;
  }

  /** Marks the start of a run: its output is what a fault reports. */
  markRun(): void {
    if (this.outFd >= 0) this.outMark = fs.fstatSync(this.outFd).size;
  }

  /** Frames written to the driver (each a round trip: a command or a call-back's reply). */
  writes = 0;

  /** Writes bytes to the driver; a driver that is gone raises DriverGone. */
  write(bytes: Uint8Array): void {
    this.writes++;
    let at = 0;
    try {
      while (at < bytes.length) at += fs.writeSync(this.toDriver, bytes, at, bytes.length - at);
    } catch {
      throw new DriverGone(this.ending());
    }
  }

  /** Reads one frame; the end of the driver's output raises DriverGone with how it ended. */
  readFrame(timeoutMs = this.timeoutMs): { kind: number; payload: Buffer } {
    this.fill(8, timeoutMs);
    const b = this.buffer;
    const kind = b[this.start]!;
    const length = b.readUInt32LE(this.start + 4);
    if (b[this.start + 1] !== 0 || b[this.start + 2] !== 0 || b[this.start + 3] !== 0)
      throw this.garbage(
        `bytes that are no frame header: ${b.subarray(this.start, this.start + 8).toString('hex')}`,
      );
    if (length > MAX_FRAME_BYTES) throw this.garbage(`a frame of ${length} bytes`);
    this.fill(8 + length, timeoutMs);
    const payload = b.subarray(this.start + 8, this.start + 8 + length);
    this.start += 8 + length;
    return { kind, payload };
  }

  /** Kills the process (garbage on the wire: its state is unknown) and waits for its end. */
  kill(): void {
    if (!this.alive) return;
    this.worker.postMessage({ kind: 'kill' });
    this.waitExit();
  }

  private garbage(detail: string): DriverGone {
    this.kill();
    return new DriverGone({ kind: 'garbage', detail, stderr: [] });
  }

  /** Ensures `count` bytes from `start` are buffered, reading as much as the pipe holds. */
  private fill(count: number, timeoutMs: number): void {
    if (this.end - this.start >= count) return;
    if (this.start > 0) {
      this.buffer.copy(this.buffer, 0, this.start, this.end);
      this.end -= this.start;
      this.start = 0;
    }
    if (this.buffer.length < count) {
      const grown = Buffer.alloc(Math.max(count, this.buffer.length * 2));
      this.buffer.copy(grown, 0, 0, this.end);
      this.buffer = grown;
    }
    Atomics.store(this.cell, 5, timeoutMs);
    Atomics.store(this.cell, 3, 1);
    try {
      while (this.end < count) {
        let n = 0;
        try {
          n = fs.readSync(
            this.fromDriver,
            this.buffer,
            this.end,
            this.buffer.length - this.end,
            null,
          );
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === 'EAGAIN') continue;
          throw error;
        }
        if (n === 0) throw new DriverGone(this.ending());
        this.end += n;
        Atomics.add(this.cell, 4, 1);
      }
    } finally {
      Atomics.store(this.cell, 3, 0);
    }
  }

  private waitExit(): void {
    for (let i = 0; i < 400 && Atomics.load(this.cell, 0) !== 2; i++)
      Atomics.wait(this.cell, 0, Atomics.load(this.cell, 0), 50);
    this.alive = false;
    this.closeFds();
  }

  /** The driver's output ended: how the process ended, as a fault. */
  private ending(): NativeFault {
    const wasKilledForTime = Atomics.load(this.cell, 3) === 1;
    this.waitExit();
    const ending: Ending = { code: Atomics.load(this.cell, 1), signal: Atomics.load(this.cell, 2) };
    if (ending.code <= -2)
      return {
        kind: 'exit',
        detail: SPAWN_ERRORS[ending.code] ?? 'it could not be started',
        stderr: [],
      };
    const text = this.output();
    const stderr = stderrLines(text);
    const signalName =
      Object.entries(os.constants.signals).find(([, n]) => n === ending.signal)?.[0] ??
      `signal ${ending.signal}`;
    if (
      /ERROR: (Address|Leak|Thread|Memory)Sanitizer|runtime error:|UndefinedBehaviorSanitizer/.test(
        text,
      )
    )
      return { kind: 'sanitizer', detail: 'a sanitizer stopped it', stderr };
    if (ending.signal === os.constants.signals.SIGKILL && wasKilledForTime)
      return {
        kind: 'hang',
        detail: `it sent nothing for ${this.timeoutMs} ms and was killed`,
        stderr,
      };
    if (ending.signal !== 0)
      return { kind: 'crash', detail: `it was killed by ${signalName}`, stderr };
    return {
      kind: 'exit',
      detail: `it exited with code ${ending.code} in the middle of a run`,
      stderr,
    };
  }

  /** What the driver wrote to stdout and stderr since the current run began. */
  private output(): string {
    try {
      const all = fs.readFileSync(this.outPath);
      return all.subarray(this.outMark, this.outMark + 16384).toString('utf8');
    } catch {
      return '';
    }
  }

  private closeFds(): void {
    for (const fd of [this.toDriver, this.fromDriver, this.outFd]) if (fd >= 0) fs.closeSync(fd);
    this.toDriver = this.fromDriver = this.outFd = -1;
  }

  /** Ends the process (quit frame) and the helper. */
  close(): void {
    if (this.alive) {
      try {
        const quit = Buffer.alloc(8);
        quit[0] = 0x51;
        fs.writeSync(this.toDriver, quit);
      } catch {
        // already gone
      }
    }
    this.alive = false;
    this.closeFds();
    this.worker.postMessage({ kind: 'stop' });
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
