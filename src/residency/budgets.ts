/**
 * Budgets and the eviction grace period (docs/spec/residency-library.md#rl-8-4; Unreal's
 * LocalMemoryBudgetLimit from docs/spec/engine.md#rs-8). MAXUINT64 (never
 * trim) is represented by +Infinity.
 */
import type { ResidencyDevice } from './residency-device.js';
import {
  MAX_GRACE_SECONDS,
  MIN_GRACE_SECONDS,
  TRIM_THRESHOLD,
  type ResidencyManagerConfig,
} from './residency-manager-types.js';

export type BudgetConfig = Pick<
  ResidencyManagerConfig,
  'unrealBudgetCap' | 'debugBudgetBytes' | 'ticksPerSecond'
>;

export class ResidencyBudgets {
  /** Unreal: the window lost focus with EvictAllResidentResourcesInBackground on. */
  background = false;
  private readonly minGraceTicks: number;
  private readonly maxGraceTicks: number;

  constructor(
    protected readonly device: ResidencyDevice,
    protected readonly config: BudgetConfig,
  ) {
    const freq = Math.fround(config.ticksPerSecond);
    this.minGraceTicks = Math.trunc(Math.fround(freq * MIN_GRACE_SECONDS));
    this.maxGraceTicks = Math.trunc(Math.fround(freq * MAX_GRACE_SECONDS));
  }

  /** Unreal's LocalMemoryBudgetLimit, or -1 without the cap. */
  localLimitBytes(): number {
    if (!this.config.unrealBudgetCap) return -1;
    if (this.background) return 0;
    return this.config.debugBudgetBytes >= 0
      ? this.config.debugBudgetBytes
      : this.device.localBudgetBytes;
  }

  localBudgetBytes(): number {
    const limit = this.localLimitBytes();
    return limit < 0 ? this.device.localBudgetBytes : Math.min(this.device.localBudgetBytes, limit);
  }

  /** Local (capped) plus non-local budget: what the split and the batches measure against. */
  totalBudgetBytes(): number {
    return this.localBudgetBytes() + this.device.nonLocalBudgetBytes;
  }

  /** The eviction grace period in ticks from the local segment; +Infinity is MAXUINT64. */
  graceTicks(): number {
    if (this.localLimitBytes() === 0) return 0;
    return this.graceFor(this.device.localUsageBytes, this.localBudgetBytes());
  }

  graceFor(usageBytes: number, budgetBytes: number): number {
    const ratio = usageBytes / budgetBytes;
    const pressure = ratio < 1.0 ? ratio : 1.0;
    if (!(pressure > TRIM_THRESHOLD)) return Infinity;
    const normalized = (pressure - TRIM_THRESHOLD) / (1.0 - TRIM_THRESHOLD);
    return (
      Math.trunc((this.maxGraceTicks - this.minGraceTicks) * (1.0 - normalized)) +
      this.minGraceTicks
    );
  }
}
