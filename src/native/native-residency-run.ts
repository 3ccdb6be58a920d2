/**
 * One run of a native residency driver (system `native-residency`): the judge's simulated GPU,
 * the harness's mirror of what the driver holds (tracked objects, each set's contents), and the
 * exchange of one command: its frame, the call-backs it makes (answered by the judge), its answer.
 *
 * A driver process serves one run at a time; a run the runner left half-way (a finding stops it)
 * is ended by the next run's start. A driver that dies is started again for the next run.
 */
import path from 'node:path';
import type { NativeFault } from './driver.js';
import { DriverGone, SyncDriver, type SyncDriverOptions } from './sync-driver.js';
import { CallGarbage, FRAME_CALLS, RESIDENCY_OPS, ResidencyJudge } from './residency-judge.js';
import { FRAME_ANSWERS } from './protocol.js';

/** Sets each run creates; set handles are taken modulo this (include/gpumv_d3d12/residency_driver.h). */
export const NATIVE_SETS = 4;

/** What a run needs of its config. */
export interface NativeRunConfig {
  readonly deviceVersion: number;
  readonly objectSizesBytes: readonly number[];
  readonly queueCount: number;
  readonly startEvicted: boolean;
  readonly maxLatency: number;
  readonly ticksPerSecond: number;
  readonly localBudgetBytes: number;
  readonly nonLocalBudgetBytes: number;
  /** Preemption seed of the kit's scheduler (0: threads switch only when one blocks). */
  readonly seed: number;
}

/** Preemption chance at each kit call of a seeded run, in permille. */
const PREEMPT_PERMILLE = 200;

/** A driver process and the run it serves. */
export class NativeResidencySession {
  open: NativeRun | null = null;
  constructor(readonly driver: SyncDriver) {}

  /** Ends the open run, if any (its findings are dropped: the runner has moved on). */
  closeOpenRun(): void {
    const run = this.open;
    this.open = null;
    if (run !== null && run.fault === null && this.driver.running)
      run.exchange(RESIDENCY_OPS.end, []);
  }
}

export class NativeRun {
  readonly judge: ResidencyJudge;
  fault: NativeFault | null = null;
  readonly tracked: Uint8Array;
  readonly setContents: number[][] = [];
  readonly setOpen: boolean[] = [];
  /** Commands applied so far. */
  step = 0;
  ended = false;

  constructor(
    readonly session: NativeResidencySession,
    readonly config: NativeRunConfig,
    readonly commands: number,
  ) {
    this.judge = new ResidencyJudge(
      {
        objectSizesBytes: config.objectSizesBytes,
        queueCount: config.queueCount,
        ticksPerSecond: config.ticksPerSecond,
        localBudgetBytes: config.localBudgetBytes,
        nonLocalBudgetBytes: config.nonLocalBudgetBytes,
      },
      session.driver.hello.fields.get('callbacks') === '2',
    );
    this.tracked = new Uint8Array(config.objectSizesBytes.length);
    for (let s = 0; s < NATIVE_SETS; s++) {
      this.setContents.push([]);
      this.setOpen.push(false);
    }
  }

  /** Starts the run: the driver (again, if it died) and the begin command; every object tracked. */
  begin(): void {
    this.session.closeOpenRun();
    const driver = this.session.driver;
    try {
      if (!driver.running) driver.spawn();
    } catch (error) {
      if (error instanceof DriverGone) {
        this.fault = error.fault;
        return;
      }
      this.fault = { kind: 'exit', detail: (error as Error).message, stderr: [] };
      return;
    }
    driver.markRun();
    this.session.open = this;
    const c = this.config;
    for (let object = 0; object < c.objectSizesBytes.length; object++) {
      this.judge.gpu.createObject(object, !c.startEvicted);
      this.tracked[object] = 1;
    }
    this.exchange(RESIDENCY_OPS.begin, [
      c.deviceVersion,
      c.queueCount,
      c.maxLatency,
      c.ticksPerSecond,
      c.startEvicted ? 1 : 0,
      c.seed,
      c.seed === 0 ? 0 : PREEMPT_PERMILLE,
      c.objectSizesBytes.length,
      ...c.objectSizesBytes,
    ]);
    this.judge.gpu.drainCalls();
  }

  /** Ends the run after its last command: the manager destroyed, leaks reported. */
  finish(): void {
    if (this.ended) return;
    this.ended = true;
    if (this.session.open === this) this.session.open = null;
    if (this.fault !== null || this.judge.fatal !== null) return;
    this.exchange(RESIDENCY_OPS.end, []);
    for (let object = 0; object < this.tracked.length; object++)
      if (this.tracked[object] === 1) this.judge.gpu.destroyObject(object);
  }

  /**
   * Sends one command and answers its call-backs; returns its answer values, or null when the
   * run has faulted (then `fault` or the judge's `fatal` says why).
   */
  exchange(op: number, args: readonly number[]): number[] | null {
    if (this.fault !== null || this.judge.fatal !== null) return null;
    const driver = this.session.driver;
    try {
      driver.write(this.judge.encodeCommand(op, args));
      for (;;) {
        const frame = driver.readFrame();
        if (frame.kind === FRAME_CALLS) {
          const value = this.judge.applyCalls(frame.payload);
          if (value !== null) driver.write(this.judge.encodeReply(value));
          continue;
        }
        if (frame.kind !== FRAME_ANSWERS)
          throw new CallGarbage(`an unexpected frame of kind 0x${frame.kind.toString(16)}`);
        return this.answer(frame.payload, op);
      }
    } catch (error) {
      if (error instanceof DriverGone) {
        // A fatal report (a deadlock) ends the driver on purpose: the finding is the judge's.
        if (this.judge.fatal === null) this.fault = error.fault;
        this.session.open = null;
        return null;
      }
      if (error instanceof CallGarbage) {
        driver.kill();
        this.fault = { kind: 'garbage', detail: error.message, stderr: [] };
        this.session.open = null;
        return null;
      }
      throw error;
    }
  }

  private answer(payload: Uint8Array, op: number): number[] {
    const view = new DataView(payload.buffer, payload.byteOffset, payload.byteLength);
    if (payload.length < 8) throw new CallGarbage('an answer frame shorter than its header');
    const status = view.getUint32(0, true);
    const n = view.getUint32(4, true);
    if (payload.length !== 8 + 8 * n)
      throw new CallGarbage('an answer whose length does not match its values');
    if (status !== 0)
      throw new CallGarbage(`the driver did not know command op ${op} (status ${status})`);
    const values: number[] = [];
    for (let i = 0; i < n; i++)
      values.push(view.getUint32(8 + 8 * i, true) + view.getUint32(12 + 8 * i, true) * 2 ** 32);
    return values;
  }
}

/** Driver sessions this thread started, by absolute path. */
const SESSIONS = new Map<string, NativeResidencySession>();

/** The session of an executable, its driver started once per thread. */
export function residencySessionFor(
  absolute: string,
  options: SyncDriverOptions = {},
): NativeResidencySession {
  let session = SESSIONS.get(absolute);
  if (session === undefined) {
    session = new NativeResidencySession(new SyncDriver(absolute, options));
    SESSIONS.set(absolute, session);
  }
  return session;
}

/** A session for a driver already started (the hello dispatch started it). */
export function adoptSession(driver: SyncDriver): NativeResidencySession {
  const absolute = path.resolve(driver.executable);
  const session = SESSIONS.get(absolute) ?? new NativeResidencySession(driver);
  SESSIONS.set(absolute, session);
  return session;
}

/** Ends every residency driver this thread started. */
export function closeResidencySessions(): void {
  for (const session of SESSIONS.values()) {
    session.closeOpenRun();
    session.driver.close();
  }
  SESSIONS.clear();
}
