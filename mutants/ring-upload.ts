/**
 * Bug catalog for `ring-upload`: each mutant re-creates one pitfall of the ring upload
 * allocator (docs/spec/allocators.md, docs/spec/engine.md#life) by overriding one step of the
 * shipped implementation.
 */
import { mutantsOf } from './define.js';
import type { AnyMutant } from '../src/harness/system.js';
import { validateRequest } from '../src/alloc/allocator.js';
import {
  NO_SLOT,
  RANGE_RESERVED,
  RANGE_SUBMITTED,
  RingUploadAllocatorImpl,
} from '../src/alloc/ring-upload.js';
import { RingErrors, type RingRange } from '../src/alloc/ring-upload-types.js';
import { ContractError } from '../src/contract.js';
import { ringSide, ringUploadSystem } from '../src/systems/ring-upload.js';

type RingClass = new (capacityBytes: number) => RingUploadAllocatorImpl;

const mutant = mutantsOf(ringUploadSystem, (Ring: RingClass, config, env) =>
  ringSide(new Ring(config.capacityBytes), config, env),
);

export const RING_UPLOAD_MUTANTS: AnyMutant[] = [
  mutant(
    'ring-tracks-only-submitted',
    'no-overlap',
    "Only submitted ranges take part in conflict checks (the seed's race): with reservations outstanding and nothing submitted the ring looks idle, restarts at 0, and two recording threads get the same bytes",
    class extends RingUploadAllocatorImpl {
      protected override conflictHead(): number {
        for (let i = 0; i < this.order.count; i++) {
          const slot = this.order.at(i);
          if (this.stateOf[slot] === RANGE_SUBMITTED) return slot;
        }
        return NO_SLOT;
      }
    },
  ),
  mutant(
    'ring-wrap-ignores-submitted',
    'gpu-in-flight-untouched',
    "On wrap-around the landing bytes at offset 0 are checked only against ranges the CPU still holds (reserved), as if a submitted range the CPU let go of were free. The seed's 1024-byte example: [0,256) is handed out while [0,512) waits for fence value 7 (the named unit test); the generator first finds it on a completed range not yet collected",
    class extends RingUploadAllocatorImpl {
      protected override wrapBlocked(headOffsetBytes: number, sizeBytes: number): boolean {
        if (headOffsetBytes >= this.cursorBytes) return true;
        for (let i = 0; i < this.order.count; i++) {
          const slot = this.order.at(i);
          if (this.stateOf[slot] === RANGE_RESERVED) return this.offsetOf[slot]! < sizeBytes;
        }
        return false;
      }
    },
  ),
  mutant(
    'ring-wrap-crosses-tail',
    'gpu-in-flight-untouched',
    'On wrap-around only the landing bytes are checked against the oldest range, so the wrap jumps over a live range waiting in the skipped tail',
    class extends RingUploadAllocatorImpl {
      protected override wrapBlocked(headOffsetBytes: number, sizeBytes: number): boolean {
        return headOffsetBytes < sizeBytes;
      }
    },
  ),
  mutant(
    'ring-cancel-submitted',
    'gpu-in-flight-untouched',
    'Cancel releases any live range, including one already submitted: the GPU still reads bytes the ring calls free',
    class extends RingUploadAllocatorImpl {
      protected override mayCancel(): boolean {
        return true;
      }
    },
  ),
  mutant(
    'ring-collect-one-value-early',
    'gpu-in-flight-untouched',
    'Collect frees ranges whose value is the completed value plus one (an off-by-one on the completion test)',
    class extends RingUploadAllocatorImpl {
      protected override isComplete(fenceValue: number, completedValue: number): boolean {
        return fenceValue <= completedValue + 1;
      }
    },
  ),
  mutant(
    'ring-ignores-alignment',
    'within-capacity-aligned',
    'The range starts at the raw write cursor: the alignment is validated but never applied',
    class extends RingUploadAllocatorImpl {
      override allocate(sizeBytes: number, alignBytes: number): number | null {
        validateRequest(sizeBytes, alignBytes);
        return super.allocate(sizeBytes, 1);
      }
    },
  ),
  mutant(
    'ring-free-ignores-holes',
    'accounting',
    'freeBytes reports capacity minus live bytes, as for a heap, counting padding, skipped tails and holes as free',
    class extends RingUploadAllocatorImpl {
      override freeBytes(): number {
        return this.capacityBytes - this.usedBytes();
      }
    },
  ),
  mutant(
    'ring-waste-head-forgets-wrap',
    'accounting',
    'When the oldest range is freed and the head moves on, the bytes that leave the occupied arc are measured as new head minus old head, without going around the end of the ring: after a wrap the waste count goes wrong (negative, or holes that never leave)',
    class extends RingUploadAllocatorImpl {
      protected override forwardBytes(fromBytes: number, toBytes: number): number {
        return toBytes - fromBytes;
      }
    },
  ),
  mutant(
    'ring-fixed-record-table',
    'no-false-out-of-memory',
    'Range records live in a fixed table of four entries that never grows: the ring answers null with bytes to spare',
    class extends RingUploadAllocatorImpl {
      protected override takeSlot(): number {
        return this.order.count >= 4 ? NO_SLOT : super.takeSlot();
      }
    },
  ),
  mutant(
    'ring-accepts-decreasing-fence',
    'observation',
    'Submit does not check that fence values never decrease, so collect (which pops from the front) can hold back or free out of order',
    class extends RingUploadAllocatorImpl {
      protected override checkFenceOrder(): void {}
    },
  ),
  mutant(
    'ring-live-skips-newest-reservation',
    'answers-match-model',
    'live() walks the allocation order up to the cursor record exclusive, so the newest range is missing while it is still only reserved (the copy-free view the invariants read is right)',
    class extends RingUploadAllocatorImpl {
      override live(): RingRange[] {
        const ranges = super.live();
        if (this.order.count === 0) return ranges;
        const newest = this.order.at(this.order.count - 1);
        if (this.stateOf[newest] !== RANGE_RESERVED) return ranges;
        return ranges.filter((range) => range.offsetBytes !== this.offsetOf[newest]);
      }
    },
  ),
  mutant(
    'ring-range-at-forgets-fence',
    'answers-match-model',
    'rangeAt() describes a submitted range from its reservation record: state reserved and no fence value, so a caller asking whether it may reuse the bytes is told they were never submitted',
    class extends RingUploadAllocatorImpl {
      override rangeAt(offsetBytes: number): RingRange | null {
        const range = super.rangeAt(offsetBytes);
        return range === null ? null : { ...range, state: 'reserved', fenceValue: null };
      }
    },
  ),
  mutant(
    'ring-fence-order-checks-oldest',
    'observation',
    "Submit checks a new fence value against the oldest range still in flight (the in-flight queue's front, the one collect reads) instead of the newest submitted value: with two batches in flight a value between them is accepted, so the range is filed behind a later batch's range and the GPU's work on it is ordered below work already submitted",
    class extends RingUploadAllocatorImpl {
      protected override checkFenceOrder(fenceValue: number): void {
        if (this.inFlight.count === 0) {
          super.checkFenceOrder(fenceValue);
          return;
        }
        const oldest = this.fenceOf[this.inFlight.peekFront()]!;
        if (!Number.isSafeInteger(fenceValue) || fenceValue < oldest) {
          throw new ContractError(
            RingErrors.FENCE_ORDER,
            `fence value ${fenceValue} is below the oldest in flight ${oldest}`,
          );
        }
      }
    },
  ),
];
