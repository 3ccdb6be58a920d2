/**
 * A hierarchical bitset over [0, bitCount): set, clear, test and "first set bit at or after i"
 * in O(log32 bitCount) word operations. Level 0 holds the bits; bit j of level L+1 is set when
 * word j of level L is non-zero. All levels live in one Uint32Array (level L from
 * levelStart[L]), so a walk reads one array. The buddy allocator keeps one per order
 * (lowest-offset free block of an order: findFirst, a descent from the single top word); the
 * best-fit pool keeps one over block sizes (smallest free size >= a reservation: findNext).
 */
export class BitsetIndex {
  /** Every level's words, level 0 (the bits themselves) first; the last level is one word. */
  private readonly words: Uint32Array;
  /** levelStart[L]: where level L's words start in `words`; levelStart[levelCount] = words.length. */
  private readonly levelStart: Int32Array;
  private readonly levelCount: number;
  private setCount = 0;

  constructor(readonly bitCount: number) {
    if (!Number.isSafeInteger(bitCount) || bitCount < 1 || bitCount > 2 ** 31)
      throw new Error(`BitsetIndex: bitCount ${bitCount} out of range`);
    const starts: number[] = [0];
    let words = Math.ceil(bitCount / 32);
    let total = 0;
    for (;;) {
      total += words;
      starts.push(total);
      if (words === 1) break;
      words = Math.ceil(words / 32);
    }
    this.levelCount = starts.length - 1;
    this.levelStart = Int32Array.from(starts);
    this.words = new Uint32Array(total);
  }

  get count(): number {
    return this.setCount;
  }

  test(index: number): boolean {
    return (this.words[index >>> 5]! & (1 << (index & 31))) !== 0;
  }

  set(index: number): void {
    const words = this.words;
    const mask = 1 << (index & 31);
    if ((words[index >>> 5]! & mask) !== 0) return;
    this.setCount++;
    let at = index;
    for (let level = 0; level < this.levelCount; level++) {
      const w = this.levelStart[level]! + (at >>> 5);
      const wasZero = words[w] === 0;
      words[w]! |= 1 << (at & 31);
      if (!wasZero) return;
      at >>>= 5;
    }
  }

  clear(index: number): void {
    const words = this.words;
    const mask = 1 << (index & 31);
    if ((words[index >>> 5]! & mask) === 0) return;
    this.setCount--;
    let at = index;
    for (let level = 0; level < this.levelCount; level++) {
      const w = this.levelStart[level]! + (at >>> 5);
      words[w]! &= ~(1 << (at & 31));
      if (words[w] !== 0) return;
      at >>>= 5;
    }
  }

  /** The lowest set bit, or -1: one word per level, from the top down. */
  findFirst(): number {
    const words = this.words;
    let level = this.levelCount - 1;
    let top = words[this.levelStart[level]!]!;
    if (top === 0) return -1;
    let at = lowestBit(top);
    while (level > 0) {
      level--;
      top = words[this.levelStart[level]! + at]!;
      at = (at << 5) + lowestBit(top);
    }
    return at;
  }

  /** The lowest set bit >= `from`, or -1. */
  findNext(from: number): number {
    if (from >= this.bitCount) return -1;
    const words = this.words;
    let at = from < 0 ? 0 : from;
    // Level 0 starts at word 0, and `from`'s own word is where most searches end (a best-fit
    // pool's sizes cluster): that word first, outside the climb.
    let w = at >>> 5;
    const masked = words[w]! & (~0 << (at & 31));
    if (masked !== 0) return (w << 5) + lowestBit(masked);
    // Climb: from the word after the one just searched, one level up, until a word holds a set
    // bit at or after `at`.
    let level = 0;
    for (;;) {
      level++;
      if (level === this.levelCount) return -1;
      at = w + 1;
      w = at >>> 5;
      if (w >= this.levelStart[level + 1]! - this.levelStart[level]!) return -1;
      const found = words[this.levelStart[level]! + w]! & (~0 << (at & 31));
      if (found !== 0) {
        at = (w << 5) + lowestBit(found);
        break;
      }
    }
    // Descend: at each lower level take the lowest set bit of the word `at` names.
    while (level > 0) {
      level--;
      at = (at << 5) + lowestBit(words[this.levelStart[level]! + at]!);
    }
    return at;
  }
}

/** Index of the lowest set bit of a non-zero 32-bit word. */
export function lowestBit(word: number): number {
  return 31 - Math.clz32(word & -word);
}
