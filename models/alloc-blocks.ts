/**
 * The shared shape of the sub-allocator reference models: a plain array of byte intervals that
 * tiles [0, capacity), ascending by offset, each either free or holding one allocation. Every
 * question (which block fits, who the neighbours are, what is live) is a linear scan of this
 * array. Slow on purpose: the implementations in src/alloc/ must agree with it offset for offset.
 */
import {
  badFree,
  validateRequest,
  type BlockAllocator,
  type BlockInfo,
  type LiveAllocation,
} from '../src/alloc/allocator.js';

export interface ModelBlock {
  offsetBytes: number;
  sizeBytes: number;
  free: boolean;
  /** For an allocated block: the offset handed to the caller (aligned, inside the block). */
  userOffsetBytes: number;
  /** For an allocated block: the size the caller asked for. */
  userSizeBytes: number;
  /** Buddy only: the block's order. */
  order: number;
}

export function freeBlock(offsetBytes: number, sizeBytes: number, order = 0): ModelBlock {
  return { offsetBytes, sizeBytes, free: true, userOffsetBytes: -1, userSizeBytes: 0, order };
}

export abstract class IntervalModel implements BlockAllocator {
  /** Tiles [0, capacityBytes), ascending by offset. */
  protected list: ModelBlock[];
  /** What the policy did since the last drain (splits, merges, padding): coverage probes. */
  protected events: string[] = [];

  constructor(readonly capacityBytes: number) {
    this.list = [freeBlock(0, capacityBytes)];
  }

  alloc(sizeBytes: number, alignBytes: number): number | null {
    validateRequest(sizeBytes, alignBytes);
    return this.place(sizeBytes, alignBytes);
  }

  free(offsetBytes: number): void {
    let index = -1;
    for (let i = 0; i < this.list.length; i++) {
      if (!this.list[i]!.free && this.list[i]!.userOffsetBytes === offsetBytes) {
        index = i;
        break;
      }
    }
    if (index === -1) throw badFree(offsetBytes);
    const block = this.list[index]!;
    block.free = true;
    block.userOffsetBytes = -1;
    block.userSizeBytes = 0;
    const blocksBefore = this.list.length;
    this.coalesce(index);
    const merged = blocksBefore - this.list.length;
    if (merged >= 1) this.events.push('free-merged');
    if (merged >= 2) this.events.push('free-merged-twice');
  }

  drainEvents(): string[] {
    const events = this.events;
    if (events.length === 0) return events;
    this.events = [];
    return events;
  }

  /** Chooses and takes a block for a valid request; null when nothing fits. */
  protected abstract place(sizeBytes: number, alignBytes: number): number | null;
  /** Merges the just-freed block at `index` with whatever the policy merges it with. */
  protected abstract coalesce(index: number): void;

  /** Replaces the block at `index` by `parts` (which tile it). */
  protected splice(index: number, ...parts: ModelBlock[]): void {
    this.list.splice(index, 1, ...parts);
  }

  live(): LiveAllocation[] {
    const live: LiveAllocation[] = [];
    for (const block of this.list)
      if (!block.free)
        live.push({ offsetBytes: block.userOffsetBytes, sizeBytes: block.userSizeBytes });
    return live;
  }

  freeBytes(): number {
    let sum = 0;
    for (const block of this.list) if (block.free) sum += block.sizeBytes;
    return sum;
  }

  usedBytes(): number {
    let sum = 0;
    for (const block of this.list) if (!block.free) sum += block.userSizeBytes;
    return sum;
  }

  wasteBytes(): number {
    let sum = 0;
    for (const block of this.list) if (!block.free) sum += block.sizeBytes - block.userSizeBytes;
    return sum;
  }

  isPristine(): boolean {
    return (
      this.list.length === 1 && this.list[0]!.free && this.list[0]!.sizeBytes === this.capacityBytes
    );
  }

  blocks(): BlockInfo[] {
    return this.list.map((block) => ({
      offsetBytes: block.offsetBytes,
      sizeBytes: block.sizeBytes,
      free: block.free,
    }));
  }

  /** The block list itself (its entries carry offsetBytes, sizeBytes and free): no copy. */
  blocksView(): readonly BlockInfo[] {
    return this.list;
  }

  checkIndexes(): string | null {
    return null;
  }
}
