/**
 * Bug catalog for `residency-manager`: each mutant re-creates one pitfall of
 * docs/spec/residency-library.md#rl-8 (latent defects) and docs/spec/residency-library.md#rl-11
 * (bug classes) by overriding one step of the shipped implementation: a step of the manager itself,
 * or of one of its parts (LRU list, sync points, paging queue, budgets, pager), handed to the
 * manager by its part factory.
 */
import { mutantsOf } from './define.js';
import type { AnyMutant } from '../src/harness/system.js';
import { ResidencyManagerImpl, type ManagerOptions } from '../src/residency/residency-manager.js';
import { LruList, RESIDENT } from '../src/residency/lru-list.js';
import { Pager } from '../src/residency/paging.js';
import { PagingWorkQueue } from '../src/residency/paging-queue.js';
import { ResidencyBudgets } from '../src/residency/budgets.js';
import { SyncPointRing } from '../src/residency/sync-points.js';
import type { MakeResidentReason } from '../src/residency/residency-device.js';
import type { ResidencyManagerConfig } from '../src/residency/residency-manager-types.js';
import { implementationSide, residencyManagerSystem } from '../src/systems/residency-manager.js';

type ManagerClass = new (
  config: ResidencyManagerConfig,
  options?: ManagerOptions,
) => ResidencyManagerImpl;

/**
 * A manager whose pressure-trim wait waits for the value each queue will signal next (its counter)
 * instead of the sync point's recorded value: nobody has queued that Signal yet (also used under
 * the engine, mutants/engine-frame.ts).
 */
export class WaitsForNextFenceValue extends ResidencyManagerImpl {
  protected override createSyncPoints(): SyncPointRing {
    return new (class extends SyncPointRing {
      override cpuWaitFence(queue: number): void {
        this.device.cpuWait(queue, this.fenceValue[queue]!);
      }
    })(this.gpu, this.config.queueCount, this.events);
  }
}

/** A manager built with an LRU list whose class is `Lru` (one step of the LRU overridden). */
function withLru(Lru: typeof LruList): ManagerClass {
  return class extends ResidencyManagerImpl {
    protected override createLru(): LruList {
      return new Lru(this.config.objectSizesBytes);
    }
  };
}

/** A manager built with a pager whose class is `PagerClass` (one paging step overridden). */
function withPager(PagerClass: typeof Pager): ManagerClass {
  return class extends ResidencyManagerImpl {
    protected override createPager(): Pager {
      const { gpu: device, lru, syncPoints, budgets, events } = this;
      return new PagerClass({
        device,
        lru,
        syncPoints,
        budgets,
        events,
        inline: this.config.mode === 'inline',
      });
    }
  };
}

/** A manager built with budgets whose class is `Budgets` (the grace period overridden). */
function withBudgets(Budgets: typeof ResidencyBudgets): ManagerClass {
  return class extends ResidencyManagerImpl {
    protected override createBudgets(): ResidencyBudgets {
      return new Budgets(this.gpu, this.config);
    }
  };
}

/** The mark step that leaves an already-resident object in its LRU place (stamps only). */
function markWithoutMove(
  lru: LruList,
  object: number,
  generation: number,
  nowTicks: number,
): boolean {
  lru.lastSync[object] = generation;
  lru.lastUsedTicks[object] = nowTicks;
  return false;
}

/**
 * An LRU list whose eviction count runs on across trims until reset (the pager of
 * rm-evict-list-carries-over resets it once per paging work).
 */
class CarriedEvictList extends LruList {
  evictCount = 0;
  override trimAged(
    firstUncompletedGeneration: number,
    nowTicks: number,
    graceTicks: number,
  ): number {
    this.evictCount = super.trimAged(firstUncompletedGeneration, nowTicks, graceTicks);
    return this.evictCount;
  }
  override trimToSyncPointInclusive(
    usageBytes: number,
    budgetBytes: number,
    syncPoint: number,
  ): number {
    let usage = usageBytes;
    for (let head = this.headObject(); head >= 0; head = this.headObject()) {
      if (this.lastSync[head]! > syncPoint || usage < budgetBytes) break;
      this.evictList[this.evictCount++] = head;
      this.evict(head);
      usage -= this.sizesBytes[head]!;
    }
    return this.evictCount;
  }
}

// The shipped class's twin in a benchmarkTwin config is the same mutant class, unchecked.
const mutant = mutantsOf(residencyManagerSystem, (Manager: ManagerClass, config, env) =>
  implementationSide((options) => new Manager(config, options), config, env),
);

export const RESIDENCY_MANAGER_MUTANTS: AnyMutant[] = [
  mutant(
    'rm-release-build-skips-lru-move',
    'benchmark-mode-agrees',
    'A shortcut taken only in the unchecked build (the one the benchmark measures and an engine ships): a referenced object that is already resident keeps its LRU place, so trims evict recently used objects; every checked run is right',
    class extends ResidencyManagerImpl {
      protected override createLru(): LruList {
        const unchecked = !this.checked;
        return new (class extends LruList {
          override mark(object: number, generation: number, nowTicks: number): boolean {
            if (!unchecked || this.statusOf[object] !== RESIDENT)
              return super.mark(object, generation, nowTicks);
            return markWithoutMove(this, object, generation, nowTicks);
          }
        })(this.config.objectSizesBytes);
      }
    },
  ),
  mutant(
    'rm-referenced-not-moved',
    'lru-sorted',
    'ObjectReferenced is skipped for objects already resident: they get a new sync point but keep their old place in the LRU',
    withLru(
      class extends LruList {
        override mark(object: number, generation: number, nowTicks: number): boolean {
          if (this.statusOf[object] !== RESIDENT) return super.mark(object, generation, nowTicks);
          return markWithoutMove(this, object, generation, nowTicks);
        }
      },
    ),
  ),
  mutant(
    'rm-referenced-to-head',
    'lru-sorted',
    "ObjectReferenced moves an already-resident object to the resident head (LRU.Insert's end) instead of the tail: the object just used becomes the first eviction candidate, ahead of objects with older sync points",
    withLru(
      class extends LruList {
        override mark(object: number, generation: number, nowTicks: number): boolean {
          if (this.statusOf[object] !== RESIDENT) return super.mark(object, generation, nowTicks);
          this.unlink(object);
          this.linkAfter(this.residentHead, object);
          return markWithoutMove(this, object, generation, nowTicks);
        }
      },
    ),
  ),
  mutant(
    'rm-new-objects-at-tail',
    'lru-matches-model',
    'BeginTracking inserts a new object (sync point 0) at the resident tail instead of the head, breaking the sort by last sync point',
    withLru(
      class extends LruList {
        override insertNewTracked(object: number): void {
          if (this.statusOf[object] === RESIDENT) {
            this.linkTail(this.residentHead, object);
            this.numResident++;
            this.residentSizeBytes += this.sizesBytes[object]!;
          } else {
            this.linkTail(this.evictedHead, object);
            this.numEvicted++;
          }
        }
      },
    ),
  ),
  mutant(
    'rm-aged-trim-le-first-uncompleted',
    'no-eviction-in-flight',
    'The aged trim evicts objects whose last sync point equals the first uncompleted one (<= instead of <): in-flight objects',
    withLru(
      class extends LruList {
        override agedTrimStops(
          object: number,
          firstUncompleted: number,
          nowTicks: number,
          graceTicks: number,
        ): boolean {
          if (firstUncompleted >= 0 && this.lastSync[object]! > firstUncompleted) return true;
          return nowTicks - this.lastUsedTicks[object]! <= graceTicks;
        }
      },
    ),
  ),
  mutant(
    'rm-split-ge',
    'answers-match-model',
    'ExecuteCommandLists splits when the total size equals the budget (>= instead of >)',
    class extends ResidencyManagerImpl {
      protected override shouldSplit(
        count: number,
        totalSizeBytes: number,
        budgetBytes: number,
      ): boolean {
        return count > 1 && totalSizeBytes >= budgetBytes;
      }
    },
  ),
  mutant(
    'rm-batch-skips-oversized',
    'observation',
    'Batching skips an object that does not fit and packs later, smaller ones (not a prefix)',
    withPager(
      class extends Pager {
        protected override fillBatch(start: number, total: number, availableBytes: number): number {
          const sizes = this.lru.sizesBytes;
          let end = start;
          let bytes = 0;
          for (let i = start; i < total; i++) {
            const object = this.toMake[i]!;
            if (bytes + sizes[object]! > availableBytes) continue;
            this.toMake[i] = this.toMake[end]!;
            this.toMake[end] = object;
            bytes += sizes[object]!;
            end++;
          }
          this.batchBytes = bytes;
          return end;
        }
      },
    ),
  ),
  mutant(
    'rm-g-minus-one-underflow',
    'residency-before-execution',
    'Latent defect (a): the fallback guard treats generation 0 as unset and G-1 wraps at G = 0, so the pressure trim runs to 2^64-1 and evicts the current work',
    withPager(
      class extends Pager {
        protected override takeFallback(
          head: number,
          generation: number,
          firstUncompleted: number,
        ): boolean {
          return (
            head < 0 ||
            firstUncompleted < 0 ||
            (generation > 0 && this.lru.lastSync[head]! >= generation)
          );
        }
        protected override pressureWaitGeneration(
          firstUncompleted: number,
          generation: number,
        ): number {
          if (firstUncompleted !== generation) return firstUncompleted;
          return generation === 0 ? Number.POSITIVE_INFINITY /* 2^64-1 */ : generation - 1;
        }
      },
    ),
  ),
  mutant(
    'rm-no-paging-fence-wait',
    'residency-before-execution',
    'The queue does not GPU-wait on the paging fence, so lists can run before their objects are paged in',
    class extends ResidencyManagerImpl {
      protected override queueWaitOnPaging(): void {}
    },
  ),
  mutant(
    'rm-double-count-resident-bytes',
    'bookkeeping-matches-device',
    'The mark step calls LRU.MakeResident on already-resident objects too, double-counting counters and ResidentSize',
    withLru(
      class extends LruList {
        override mark(object: number, generation: number, nowTicks: number): boolean {
          const wasResident = this.statusOf[object] === RESIDENT;
          const flipped = super.mark(object, generation, nowTicks);
          if (wasResident) {
            this.numEvicted--;
            this.numResident++;
            this.residentSizeBytes += this.sizesBytes[object]!;
          }
          return flipped;
        }
      },
    ),
  ),
  mutant(
    'rm-failed-batch-counted-as-made',
    'bookkeeping-matches-device',
    'Latent defect (b): a failed MakeResident batch still counts its objects as made, so they stay RESIDENT in the bookkeeping without a device call',
    withPager(
      class extends Pager {
        protected override afterFailedBatch(_batchStart: number, batchEnd: number): number {
          return batchEnd;
        }
      },
    ),
  ),
  mutant(
    'rm-batch-ignores-usage',
    'within-budget',
    'Batching measures the available bytes as the budget alone, ignoring the current usage',
    withPager(
      class extends Pager {
        protected override availableBytes(budgetBytes: number): number {
          return budgetBytes;
        }
      },
    ),
  ),
  mutant(
    'rm-paging-ring-overrun',
    'paging-latency',
    'EnqueueAsyncWork blocks only when more than MaxLatency works are queued (> instead of >=)',
    class extends ResidencyManagerImpl {
      protected override createPagingQueue(): PagingWorkQueue {
        return new (class extends PagingWorkQueue {
          override full(): boolean {
            return this.queued() > this.maxLatency;
          }
        })(this.config.maxLatency, this.config.objectSizesBytes.length);
      }
    },
  ),
  mutant(
    'rm-sync-point-without-generation',
    'generations-increasing',
    'GetCurrentGPUSyncPoint enqueues a sync point but does not consume a generation',
    class extends ResidencyManagerImpl {
      override signalFence(queue: number): number {
        return this.syncPoints.record(queue);
      }
    },
  ),
  mutant(
    'rm-queue-fence-starts-at-zero',
    'answers-match-model',
    'The queue fence counter starts at 0 like the D3D fence, so the first sync point on a queue records -1 and counts as complete at once',
    class extends ResidencyManagerImpl {
      protected override createSyncPoints(): SyncPointRing {
        return new (class extends SyncPointRing {
          override initialFenceValue(): number {
            return 0;
          }
        })(this.gpu, this.config.queueCount, this.events);
      }
    },
  ),
  mutant(
    'rm-sync-wait-does-not-block',
    'no-eviction-in-flight',
    'WaitForSyncPoint pops the sync point without the CPU actually blocking on its fences (an ignored wait result), so the pressure trim evicts objects still in flight',
    class extends ResidencyManagerImpl {
      protected override createSyncPoints(): SyncPointRing {
        return new (class extends SyncPointRing {
          override cpuWaitFence(): void {}
        })(this.gpu, this.config.queueCount, this.events);
      }
    },
  ),
  mutant(
    'rm-batch-includes-misfit',
    'observation',
    'Batching adds an object before testing whether it fits, so each batch ends with the first object that does not',
    withPager(
      class extends Pager {
        protected override fillBatch(start: number, total: number, availableBytes: number): number {
          let index = start;
          let bytes = 0;
          while (index < total && bytes <= availableBytes) {
            bytes += this.lru.sizesBytes[this.toMake[index]!]!;
            index++;
          }
          this.batchBytes = bytes;
          return index;
        }
      },
    ),
  ),
  mutant(
    'rm-grace-from-total-budget',
    'lru-matches-model',
    'The grace period is computed from local + non-local budget instead of the local segment alone',
    withBudgets(
      class extends ResidencyBudgets {
        override graceTicks(): number {
          if (this.localLimitBytes() === 0) return 0;
          return this.graceFor(
            this.device.localUsageBytes,
            this.localBudgetBytes() + this.device.nonLocalBudgetBytes,
          );
        }
      },
    ),
  ),
  mutant(
    'rm-usage-local-only',
    'within-budget',
    'The batch loop measures the usage from the local segment alone (what the implementation did before issue 11), while docs/spec/residency-library.md#rl-8-5-1 adds the non-local usage: with objects demoted to system memory the available bytes are over-estimated and a budgeted batch overcommits',
    withPager(
      class extends Pager {
        protected override usageBytes(): number {
          return this.device.localUsageBytes;
        }
      },
    ),
  ),
  mutant(
    'rm-grace-from-total-usage',
    'lru-matches-model',
    'The grace period reads the usage of both segments against the local budget (docs/spec/residency-library.md#rl-8-4 uses the local segment only): objects demoted to system memory raise the pressure and trim early',
    withBudgets(
      class extends ResidencyBudgets {
        override graceTicks(): number {
          if (this.localLimitBytes() === 0) return 0;
          return this.graceFor(
            this.device.localUsageBytes + this.device.nonLocalUsageBytes,
            this.localBudgetBytes(),
          );
        }
      },
    ),
  ),
  mutant(
    'rm-current-generation-ahead',
    'answers-match-model',
    'currentGeneration() reports the generation the next submission will use once a sync point is pending (CurrentSyncPointGeneration + 1): still increasing and above every in-flight point, but not the value a caller passes as its sync point',
    class extends ResidencyManagerImpl {
      override currentGeneration(): number {
        return super.currentGeneration() + (this.syncPointGenerationsCount() > 0 ? 1 : 0);
      }
      private syncPointGenerationsCount(): number {
        return super.syncPointGenerations().length;
      }
    },
  ),
  mutant(
    'rm-sync-points-drop-head',
    'answers-match-model',
    'syncPointGenerations() starts after the head of the in-flight list (an off-by-one in the ring walk): the list stays strictly increasing and below the current generation, but the oldest point a caller would wait for is missing',
    class extends ResidencyManagerImpl {
      override syncPointGenerations(): readonly number[] {
        return super.syncPointGenerations().slice(1);
      }
    },
  ),
  mutant(
    'rm-first-uncompleted-none',
    'answers-match-model',
    'firstUncompletedGeneration() tests the completion of the point after the one it reports and so reports -1 (none) for a single pending point: the eviction judge then sees nothing in flight',
    class extends ResidencyManagerImpl {
      override firstUncompletedGeneration(): number {
        return super.syncPointGenerations().length === 1 ? -1 : super.firstUncompletedGeneration();
      }
    },
  ),
  mutant(
    'rm-queued-works-skips-newest',
    'answers-match-model',
    'queuedWorks() counts the works between head and tail - 1, leaving out the one just enqueued: paging-latency then never sees a full queue',
    class extends ResidencyManagerImpl {
      override queuedWorks(): number {
        return Math.max(0, super.queuedWorks() - 1);
      }
    },
  ),
  mutant(
    'rm-fallback-resends-made',
    'bookkeeping-matches-device',
    'The forced-resident fallback after a partial paging round passes the make-resident list from its start, not from the first object still to make: objects earlier batches of the same submission made resident get a second MakeResident (device refcount 2, one status flip)',
    withPager(
      class extends Pager {
        protected override deviceMakeResident(
          objects: Int32Array,
          start: number,
          count: number,
          reason: MakeResidentReason,
        ): boolean {
          return reason === 'fallback'
            ? super.deviceMakeResident(objects, 0, start + count, reason)
            : super.deviceMakeResident(objects, start, count, reason);
        }
      },
    ),
  ),
  mutant(
    'rm-evict-list-carries-over',
    'bookkeeping-matches-device',
    "The evict list's count is reset once per paging work instead of after each Evict: the aged trim and every pressure-trim round append to it, so each Evict repeats the objects earlier Evicts of the same work already evicted (an Evict of objects that are no longer resident)",
    class extends ResidencyManagerImpl {
      protected override createLru(): LruList {
        return new CarriedEvictList(this.config.objectSizesBytes);
      }
      protected override createPager(): Pager {
        const { gpu: device, lru, syncPoints, budgets, events } = this;
        const carried = lru as CarriedEvictList;
        return new (class extends Pager {
          override process(
            objects: Int32Array,
            start: number,
            objectCount: number,
            generation: number,
          ): void {
            carried.evictCount = 0;
            super.process(objects, start, objectCount, generation);
          }
        })({ device, lru, syncPoints, budgets, events, inline: this.config.mode === 'inline' });
      }
    },
  ),
  mutant(
    'rm-wait-next-fence-value',
    'residency-before-execution',
    "The pressure trim's CPU wait waits for the value each queue's fence will signal next (the manager's counter) instead of the value the sync point recorded: that is the current generation's sync point, which no queued Signal carries yet, so a real device blocks the CPU forever (the simulated GPU runs the queue dry and reports the deadlock)",
    WaitsForNextFenceValue,
  ),
];
