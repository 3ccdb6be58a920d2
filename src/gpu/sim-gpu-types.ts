/**
 * The simulated GPU's vocabulary (src/gpu/sim-gpu.ts): the device call kinds a failure can be
 * armed for, the violations it reports, its call log records and its config.
 */
export type { MakeResidentReason } from '../residency/residency-device.js';

/** The device call kinds a manager makes; each can be armed to fail once. */
export type DeviceCallKind = 'makeResident' | 'enqueueMakeResident' | 'evict';
export const DEVICE_CALL_KINDS: readonly DeviceCallKind[] = [
  'makeResident',
  'enqueueMakeResident',
  'evict',
];

export type ViolationKind =
  | 'touch-not-resident'
  | 'touch-before-paging'
  | 'deadlock'
  | 'evict-in-flight'
  | 'refcount'
  | 'over-budget';

export interface Violation {
  readonly kind: ViolationKind;
  readonly object: number;
  readonly message: string;
}

/** One logged device call or CPU wait, as plain data (the observations compare these). */
export type DeviceCallRecord = (string | number | number[])[];

export interface SimGpuConfig {
  readonly objectSizesBytes: readonly number[];
  readonly queueCount: number;
  readonly ticksPerSecond: number;
  readonly localBudgetBytes: number;
  readonly nonLocalBudgetBytes: number;
  /**
   * Full checking (history, call log, in-flight scans, touches). The benchmark turns it off to
   * measure the manager rather than the judge; the property suites always keep it on.
   */
  readonly checked?: boolean;
}

export interface MemoryInfo {
  readonly budgetBytes: number;
  readonly usageBytes: number;
}
