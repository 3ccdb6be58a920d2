/**
 * A hierarchical bitset over [0, bitCount): set, clear, test and "first set bit at or after i"
 * in O(log32 bitCount) word operations. Level 0 holds the bits; bit j of level L+1 is set when
 * word j of level L is non-zero. The buddy allocator keeps one per order (lowest-offset free
 * block of an order); the best-fit pool keeps one over block sizes (smallest free size >= a
 * reservation).
 */
export class BitsetIndex {
  /** levels[0] holds the bits themselves; the last level is a single word. */
  private readonly levels: Uint32Array[] = [];
  private setCount = 0;

  constructor(readonly bitCount: number) {
    if (!Number.isSafeInteger(bitCount) || bitCount < 1 || bitCount > 2 ** 31) throw new Error(`BitsetIndex: bitCount ${bitCount} out of range`);
    let words = Math.ceil(bitCount / 32);
    for (;;) {
      this.levels.push(new Uint32Array(words));
      if (words === 1) break;
      words = Math.ceil(words / 32);
    }
  }

  get count(): number {
    return this.setCount;
  }

  test(index: number): boolean {
    return (this.levels[0]![index >>> 5]! & (1 << (index & 31))) !== 0;
  }

  set(index: number): void {
    const bits = this.levels[0]!;
    const word = index >>> 5;
    const mask = 1 << (index & 31);
    if ((bits[word]! & mask) !== 0) return;
    this.setCount++;
    let at = index;
    for (let level = 0; level < this.levels.length; level++) {
      const words = this.levels[level]!;
      const w = at >>> 5;
      const wasZero = words[w] === 0;
      words[w]! |= 1 << (at & 31);
      if (!wasZero) return;
      at = w;
    }
  }

  clear(index: number): void {
    const bits = this.levels[0]!;
    const word = index >>> 5;
    const mask = 1 << (index & 31);
    if ((bits[word]! & mask) === 0) return;
    this.setCount--;
    let at = index;
    for (let level = 0; level < this.levels.length; level++) {
      const words = this.levels[level]!;
      const w = at >>> 5;
      words[w]! &= ~(1 << (at & 31));
      if (words[w] !== 0) return;
      at = w;
    }
  }

  /** The lowest set bit >= `from`, or -1. */
  findNext(from: number): number {
    if (from >= this.bitCount) return -1;
    let at = from < 0 ? 0 : from;
    const levelCount = this.levels.length;
    let level = 0;
    // Climb until a word holds a set bit at or after `at`.
    for (;;) {
      const words = this.levels[level]!;
      const w = at >>> 5;
      if (w < words.length) {
        const masked = words[w]! & (~0 << (at & 31));
        if (masked !== 0) {
          at = (w << 5) + lowestBit(masked);
          break;
        }
      }
      level++;
      if (level === levelCount) return -1;
      at = w + 1;
      if (at >>> 5 >= this.levels[level]!.length) return -1;
    }
    // Descend: at each lower level take the lowest set bit of the word `at` names.
    while (level > 0) {
      level--;
      at = (at << 5) + lowestBit(this.levels[level]![at]!);
    }
    return at;
  }
}

/** Index of the lowest set bit of a non-zero 32-bit word. */
export function lowestBit(word: number): number {
  return 31 - Math.clz32(word & -word);
}
