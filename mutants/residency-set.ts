/**
 * Bug catalog for `residency-set`: each mutant re-creates one pitfall of
 * docs/spec/residency-library.md#rl-11 (or the seed's warnings) by overriding one step of the
 * shipped implementation.
 */
import { mutantsOf } from './define.js';
import type { AnyMutant } from '../src/harness/system.js';
import { ResidencySetPoolImpl, type ResidencySet } from '../src/residency/residency-set.js';
import { SlotPool } from '../src/residency/slot-pool.js';
import {
  nextCapacity,
  type HResult,
  type ResidencySetConfig,
} from '../src/residency/residency-set-types.js';
import { residencySetSide, residencySetSystem } from '../src/systems/residency-set.js';

type PoolClass = new (config: ResidencySetConfig) => ResidencySetPoolImpl;

const mutant = mutantsOf(residencySetSystem, (Pool: PoolClass, config, env) =>
  residencySetSide(new Pool(config), config, env),
);

export const RESIDENCY_SET_MUTANTS: AnyMutant[] = [
  mutant(
    'set-insert-after-close-slot-0',
    'flags-match-open-sets',
    'Insert on a closed set indexes slot 0 instead of failing (the Invalid index wrapped to a valid slot)',
    class extends ResidencySetPoolImpl {
      override insert(id: number, object: number): boolean {
        const set = this.set(id);
        return this.insertAtSlot(set, set.isOpen ? set.slot : 0, object);
      }
    },
  ),
  mutant(
    'set-close-keeps-flags',
    'flags-match-open-sets',
    'Close returns the slot without clearing the per-slot flags, so the next set on that slot sees stale duplicates',
    class extends ResidencySetPoolImpl {
      protected override clearFlags(): void {}
    },
  ),
  mutant(
    'set-close-keeps-slot',
    'slot-accounting',
    'Close clears the flags but forgets to return the slot to the pool',
    class extends ResidencySetPoolImpl {
      protected override releaseSlot(set: ResidencySet): void {
        set.slot = -1;
        set.isOpen = false;
      }
    },
  ),
  mutant(
    'set-open-keeps-size',
    'contents-match-model',
    'Open does not reset the size, so stale objects from the last recording are submitted again',
    class extends ResidencySetPoolImpl {
      protected override resetOnOpen(): void {}
    },
  ),
  mutant(
    'set-close-clears-contents',
    'contents-match-model',
    'Close empties the set, which breaks resubmitting a closed set (contents must survive Close)',
    class extends ResidencySetPoolImpl {
      protected override releaseSlot(set: ResidencySet): void {
        super.releaseSlot(set);
        set.size = 0;
      }
    },
  ),
  mutant(
    'set-master-without-slot',
    'answers-match-model',
    'The master set merges without taking a slot, so Execute succeeds when every slot is held by open sets (its private flag slot past the pool shows first, under the fixed seed, as flag memory one word larger than the pool needs; the stored regression shows the Execute itself)',
    class extends ResidencySetPoolImpl {
      /** A private flag slot past the pool: the master dedupes there without taking a pool slot. */
      private readonly privateSlot: number;
      constructor(config: ResidencySetConfig) {
        super({ ...config, slotCount: config.slotCount + 1 });
        this.privateSlot = config.slotCount;
        (this as unknown as { slots: SlotPool }).slots = new SlotPool(config.slotCount);
      }
      protected override acquireMasterSlot(): number {
        return this.privateSlot;
      }
      protected override releaseMasterSlot(): void {}
    },
  ),
  mutant(
    'set-dedupe-across-slots',
    'flags-match-open-sets',
    "Dedupe tests whether the object is flagged on any slot instead of this set's slot, so an object cannot be in two open sets",
    class extends ResidencySetPoolImpl {
      protected override isDuplicate(word: number, bit: number, object: number): boolean {
        return (word & bit) !== 0 || this.flaggedSlots(object).length > 0;
      }
    },
  ),
  mutant(
    'set-insert-skips-dedupe',
    'no-duplicates',
    'Insert appends without consulting the flag, so an object bound twice is stored twice',
    class extends ResidencySetPoolImpl {
      protected override isDuplicate(): boolean {
        return false;
      }
    },
  ),
  mutant(
    'set-growth-off-by-one',
    'capacity-growth',
    'Storage grows only when size exceeds capacity (> instead of >=), writing one entry past the end',
    class extends ResidencySetPoolImpl {
      protected override needsGrowth(set: ResidencySet): boolean {
        return set.storage === null || set.size > set.capacity;
      }
    },
  ),
  mutant(
    'set-double-close-accepted',
    'open-close-protocol',
    'Close of a closed set returns S_OK instead of E_INVALIDARG, hiding a second Close on the same Open',
    class extends ResidencySetPoolImpl {
      protected override closeWhenClosed(): HResult {
        return 'S_OK';
      }
    },
  ),
  mutant(
    'set-execute-accepts-open-set',
    'open-close-protocol',
    'Execute skips the "every set is closed" validation and submits a set that is still recording',
    class extends ResidencySetPoolImpl {
      protected override validateClosed(): boolean {
        return true;
      }
    },
  ),
  mutant(
    'set-oom-not-reported',
    'answers-match-model',
    'isOutOfMemory() reads a flag that a failed growth never sets (the stuck state lives only in the storage being null): a caller polling it never learns that the set is stuck and keeps recording into it',
    class extends ResidencySetPoolImpl {
      override isOutOfMemory(_id: number): boolean {
        return false;
      }
    },
  ),
  mutant(
    'set-capacity-one-step-ahead',
    'answers-match-model',
    "capacity() reports the capacity the next growth would give once the set is at least half full (a pre-grown size meant for the realloc, returned as the current one): still on the spec's growth sequence, never below the size, but not what the set holds",
    class extends ResidencySetPoolImpl {
      override capacity(id: number): number {
        const capacity = super.capacity(id);
        return capacity > 0 && 2 * this.size(id) >= capacity
          ? nextCapacity(capacity, this.config.initialCapacity)
          : capacity;
      }
    },
  ),
  mutant(
    'slot-pool-count-not-released',
    'answers-match-model',
    "The slot pool's release clears the slot's bit but not its count: which slot is free stays right (the bitset decides), so nothing else notices, but the taken count a caller reads for pool pressure only ever grows",
    class extends ResidencySetPoolImpl {
      constructor(config: ResidencySetConfig) {
        super(config);
        (this as unknown as { slots: SlotPool }).slots = new (class extends SlotPool {
          private released = 0;
          override release(slot: number): void {
            super.release(slot);
            this.released++;
          }
          override get taken(): number {
            return super.taken + this.released;
          }
        })(config.slotCount);
      }
    },
  ),
];
