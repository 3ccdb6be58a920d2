/**
 * A growable circular queue of numbers in one Float64Array: the building block of the ring upload
 * allocator's allocation-order and submission-order queues (src/alloc/ring-upload.ts) and of the
 * fence-stamped FIFOs of the deferred-free layer (src/alloc/deferred-free.ts).
 *
 * Push at the back, read and pop at the front, read any entry by its distance from the front. The
 * capacity is a power of two so an index wraps with a mask; a full queue doubles, unrolling its
 * contents to the start of the new array. Every operation is O(1) (amortized for push).
 */
export class NumberDeque {
  private items: Float64Array;
  private front = 0;
  private size = 0;

  constructor(initialCapacity = 16) {
    // At most 2^30: the mask of `&` covers 32 bits (2^32 + 2 would pass a 32-bit power test), and
    // no queue of the allocators starts near that size.
    if (
      !Number.isSafeInteger(initialCapacity) ||
      initialCapacity < 1 ||
      initialCapacity > 2 ** 30 ||
      (initialCapacity & (initialCapacity - 1)) !== 0
    ) {
      throw new Error(
        `deque: initial capacity must be a power of two from 1 to 2^30, got ${initialCapacity}`,
      );
    }
    this.items = new Float64Array(initialCapacity);
  }

  /** Number of entries. */
  get count(): number {
    return this.size;
  }

  push(value: number): void {
    if (this.size === this.items.length) this.grow();
    this.items[(this.front + this.size) & (this.items.length - 1)] = value;
    this.size++;
  }

  /** The entry `index` places behind the front (0 = oldest). The caller keeps index < count. */
  at(index: number): number {
    return this.items[(this.front + index) & (this.items.length - 1)]!;
  }

  /** The oldest entry. The caller keeps count > 0. */
  peekFront(): number {
    return this.items[this.front]!;
  }

  /** Removes the oldest entry. The caller keeps count > 0. */
  popFront(): void {
    this.front = (this.front + 1) & (this.items.length - 1);
    this.size--;
  }

  private grow(): void {
    const grown = new Float64Array(this.items.length * 2);
    for (let i = 0; i < this.size; i++) grown[i] = this.at(i);
    this.items = grown;
    this.front = 0;
  }
}
