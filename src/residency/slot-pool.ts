/**
 * The slot pool (the library's SyncManager): `slotCount` slots, lowest free slot first.
 *
 * A bitset of taken slots; acquiring scans words for the first one with a zero bit and takes
 * its lowest zero bit, so a 1024-slot pool costs at most 32 word reads instead of 1024 bools.
 */
export class SlotPool {
  private readonly takenWords: Uint32Array;
  private takenCount = 0;

  constructor(readonly slotCount: number) {
    if (!Number.isInteger(slotCount) || slotCount < 1)
      throw new RangeError(`slotCount must be >= 1, got ${slotCount}`);
    this.takenWords = new Uint32Array(Math.ceil(slotCount / 32));
    // Padding bits past slotCount are permanently taken so the scan never returns them.
    const tailBits = slotCount & 31;
    if (tailBits !== 0) this.takenWords[this.takenWords.length - 1] = ~((1 << tailBits) - 1) >>> 0;
  }

  /** Takes the lowest free slot; returns -1 if every slot is taken. */
  acquire(): number {
    const words = this.takenWords;
    for (let index = 0; index < words.length; index++) {
      const free = ~words[index]! >>> 0;
      if (free !== 0) {
        const lowest = free & -free;
        words[index] = words[index]! | lowest;
        this.takenCount++;
        return index * 32 + (31 - Math.clz32(lowest));
      }
    }
    return -1;
  }

  release(slot: number): void {
    const index = slot >>> 5;
    const bit = 1 << (slot & 31);
    if (
      !Number.isInteger(slot) ||
      slot < 0 ||
      slot >= this.slotCount ||
      (this.takenWords[index]! & bit) === 0
    ) {
      throw new Error(`slot pool: release of slot ${slot} that is not taken`);
    }
    this.takenWords[index] = this.takenWords[index]! & ~bit;
    this.takenCount--;
  }

  get taken(): number {
    return this.takenCount;
  }

  isTaken(slot: number): boolean {
    return (this.takenWords[slot >>> 5]! & (1 << (slot & 31))) !== 0;
  }

  /** Taken slots, ascending: the set bits of each word, without the padding bits past slotCount. */
  takenSlots(): number[] {
    const slots: number[] = [];
    const words = this.takenWords;
    const last = words.length - 1;
    const tailBits = this.slotCount & 31;
    for (let index = 0; index <= last; index++) {
      const word = words[index]!;
      appendSetBits(
        slots,
        index === last && tailBits !== 0 ? word & ((1 << tailBits) - 1) : word,
        index * 32,
      );
    }
    return slots;
  }
}

/** Appends `base + i` to `out` for each set bit i of the 32-bit `word`, lowest first. */
export function appendSetBits(out: number[], word: number, base: number): void {
  // Int32 throughout (bit 31 is the sign): an unsigned form of a word with bit 31 set is not a
  // small integer, and once one passes through, every later call runs in slower double arithmetic.
  let rest = word | 0;
  while (rest !== 0) {
    const lowest = rest & -rest;
    out.push(base + (31 - Math.clz32(lowest)));
    rest ^= lowest;
  }
}
