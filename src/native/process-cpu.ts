/** A process's CPU time, which tells a driver stuck in a loop from one a loaded machine keeps waiting. */
import { readFileSync } from 'node:fs';

/**
 * CPU time a driver may spend without sending an answer frame before it counts as hung (ms): a
 * driver sends the answers it has every 100 ms of its CPU time (GPUMV_PROGRESS_MS), so one that
 * burns this much without a frame is stuck inside one command (a loop that never ends). CPU time,
 * unlike the wall-clock limit, does not run while a loaded machine leaves the driver waiting.
 */
export const DRIVER_CPU_LIMIT_MS = 300;

/** How often a waiting run reads the driver's CPU time (ms). */
export const CPU_POLL_MS = 50;

/**
 * The CPU time (user + system) a process has used, in ms, from /proc/<pid>/stat; -1 where there
 * is no such file (another OS, a process gone): then only the wall-clock limit applies.
 */
export function cpuTimeMs(pid: number): number {
  if (pid <= 0) return -1;
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch {
    return -1;
  }
  // Fields after the command name (which may hold spaces) in parentheses: utime and stime are
  // the 12th and 13th of them (fields 14 and 15 of the line), in clock ticks of 10 ms.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  return Number.isFinite(ticks) ? ticks * 10 : -1;
}

/**
 * A driver process's CPU time since its last progress, read from /proc while a run waits: its
 * cell is the driver's shared cell ([2] 1 while a process starts, [3] its process id).
 */
export class CpuWatch {
  /** The CPU time at the last progress (-1: not read yet), and of which process. */
  private at = -1;
  private pid = 0;

  constructor(private readonly cell: Int32Array) {}

  /** True when the process spent DRIVER_CPU_LIMIT_MS of CPU time since the last progress. */
  stuck(progressed: boolean): boolean {
    const pid = Atomics.load(this.cell, 3);
    const starting = Atomics.load(this.cell, 2) === 1;
    const cpu = starting ? -1 : cpuTimeMs(pid);
    if (progressed || starting || this.at < 0 || this.pid !== pid) {
      this.at = cpu;
      this.pid = pid;
      return false;
    }
    return cpu >= 0 && cpu - this.at > DRIVER_CPU_LIMIT_MS;
  }
}

/**
 * Whether a driver that answered `answered` commands may be inside one of the `heavy` ones (long
 * on their own, ascending): answering each at once it is inside command `answered`; otherwise
 * anywhere after it.
 */
export function mayBeInHeavy(
  heavy: readonly number[],
  each: boolean,
): (answered: number) => boolean {
  return each
    ? (answered) => heavy.includes(answered)
    : (answered) => heavy.length > 0 && heavy[heavy.length - 1]! >= answered;
}
