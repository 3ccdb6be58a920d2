/**
 * The manager's LRU cache (docs/spec/residency-library.md#rl-4): every tracked object sits in the
 * resident or the evicted list, the resident head being the stalest (the first eviction candidate)
 * and its tail the most recently used.
 *
 * Intrusive over typed arrays: `prev`/`next` links with two sentinel nodes (the resident and the
 * evicted list), so insert, reference, make-resident, evict and each trim step are O(1). The
 * per-object stamps (last sync point, last-used tick) live here too: the trims read them.
 * Operations that pick objects to evict write them to `evictList` and return the count, so
 * the caller hands one array to the device's Evict.
 */

export const UNTRACKED = 0;
export const RESIDENT = 1;
export const EVICTED = 2;

export class LruList {
  readonly objectCount: number;
  readonly sizesBytes: Float64Array;
  /** UNTRACKED, RESIDENT or EVICTED per object. */
  readonly statusOf: Uint8Array;
  readonly prev: Int32Array;
  readonly next: Int32Array;
  /** Sentinel nodes of the two circular lists. */
  readonly residentHead: number;
  readonly evictedHead: number;
  /** LastGPUSyncPoint: the generation of the last submission that used the object. */
  readonly lastSync: Float64Array;
  /** LastUsedTimestamp in ticks. */
  readonly lastUsedTicks: Float64Array;
  numResident = 0;
  numEvicted = 0;
  residentSizeBytes = 0;
  /** The objects the last trim selected, in eviction order. */
  readonly evictList: Int32Array;
  /**
   * Bumped by every change of the links (`unlink` and `linkAfter` are the only writers of `prev`
   * and `next`), so a view walked since the last change is handed out again without a walk: the
   * invariants read both lists several times after every command, most of which move nothing.
   */
  private linksVersion = 0;
  private readonly residentView: number[] = [];
  private readonly evictedView: number[] = [];
  /** The links version each view was walked at (-1: never). */
  private residentViewVersion = -1;
  private evictedViewVersion = -1;

  constructor(objectSizesBytes: readonly number[]) {
    const n = objectSizesBytes.length;
    this.objectCount = n;
    this.sizesBytes = Float64Array.from(objectSizesBytes);
    this.statusOf = new Uint8Array(n);
    this.prev = new Int32Array(n + 2);
    this.next = new Int32Array(n + 2);
    this.residentHead = n;
    this.evictedHead = n + 1;
    this.prev[this.residentHead] = this.residentHead;
    this.next[this.residentHead] = this.residentHead;
    this.prev[this.evictedHead] = this.evictedHead;
    this.next[this.evictedHead] = this.evictedHead;
    this.lastSync = new Float64Array(n);
    this.lastUsedTicks = new Float64Array(n);
    this.evictList = new Int32Array(n);
  }

  unlink(object: number): void {
    const before = this.prev[object]!;
    const after = this.next[object]!;
    this.next[before] = after;
    this.prev[after] = before;
    this.linksVersion++;
  }

  linkAfter(anchor: number, object: number): void {
    const after = this.next[anchor]!;
    this.prev[object] = anchor;
    this.next[object] = after;
    this.prev[after] = object;
    this.next[anchor] = object;
    this.linksVersion++;
  }

  /** At the tail: just before the sentinel. */
  linkTail(sentinel: number, object: number): void {
    this.linkAfter(this.prev[sentinel]!, object);
  }

  /** BeginTracking's bookkeeping: the status, zero stamps, then LRU.Insert. */
  track(object: number, status: typeof RESIDENT | typeof EVICTED): void {
    this.statusOf[object] = status;
    this.lastSync[object] = 0;
    this.lastUsedTicks[object] = 0;
    this.insertNewTracked(object);
  }

  /** LRU.Insert: at the head of the list matching the status. */
  insertNewTracked(object: number): void {
    if (this.statusOf[object] === RESIDENT) {
      this.linkAfter(this.residentHead, object);
      this.numResident++;
      this.residentSizeBytes += this.sizesBytes[object]!;
    } else {
      this.linkAfter(this.evictedHead, object);
      this.numEvicted++;
    }
  }

  /** LRU.Remove by the current status; the object is untracked afterwards. */
  untrack(object: number): void {
    this.unlink(object);
    if (this.statusOf[object] === RESIDENT) {
      this.numResident--;
      this.residentSizeBytes -= this.sizesBytes[object]!;
    } else {
      this.numEvicted--;
    }
    this.statusOf[object] = UNTRACKED;
  }

  /** LRU.MakeResident (bookkeeping only): to the resident tail. */
  makeResident(object: number): void {
    this.unlink(object);
    this.statusOf[object] = RESIDENT;
    this.linkTail(this.residentHead, object);
    this.numEvicted--;
    this.numResident++;
    this.residentSizeBytes += this.sizesBytes[object]!;
  }

  /** LRU.Evict (bookkeeping only): to the evicted tail. */
  evict(object: number): void {
    this.unlink(object);
    this.statusOf[object] = EVICTED;
    this.linkTail(this.evictedHead, object);
    this.numResident--;
    this.numEvicted++;
    this.residentSizeBytes -= this.sizesBytes[object]!;
  }

  /**
   * The mark step of docs/spec/residency-library.md#rl-8-3 for one object of a paging work: an
   * evicted object is made resident in the bookkeeping (true: it needs a device call), a resident
   * one is referenced (to the resident tail); both get the work's generation and tick.
   */
  mark(object: number, generation: number, nowTicks: number): boolean {
    let flipped = false;
    if (this.statusOf[object] === EVICTED) {
      this.makeResident(object);
      flipped = true;
    } else {
      // ObjectReferenced: to the resident tail.
      this.unlink(object);
      this.linkTail(this.residentHead, object);
    }
    this.lastSync[object] = generation;
    this.lastUsedTicks[object] = nowTicks;
    return flipped;
  }

  /** The resident head (stalest), or -1. */
  headObject(): number {
    const head = this.next[this.residentHead]!;
    return head === this.residentHead ? -1 : head;
  }

  /** True when the aged trim stops at this head object. */
  agedTrimStops(
    object: number,
    firstUncompletedGeneration: number,
    nowTicks: number,
    graceTicks: number,
  ): boolean {
    if (firstUncompletedGeneration >= 0 && this.lastSync[object]! >= firstUncompletedGeneration)
      return true;
    return nowTicks - this.lastUsedTicks[object]! <= graceTicks;
  }

  /** TrimAgedAllocations into evictList; returns the count. */
  trimAged(firstUncompletedGeneration: number, nowTicks: number, graceTicks: number): number {
    let count = 0;
    for (let head = this.headObject(); head >= 0; head = this.headObject()) {
      if (this.agedTrimStops(head, firstUncompletedGeneration, nowTicks, graceTicks)) break;
      this.evictList[count++] = head;
      this.evict(head);
    }
    return count;
  }

  /** TrimToSyncPointInclusive into evictList; returns the count. */
  trimToSyncPointInclusive(usageBytes: number, budgetBytes: number, syncPoint: number): number {
    let count = 0;
    let usage = usageBytes;
    for (let head = this.headObject(); head >= 0; head = this.headObject()) {
      if (this.lastSync[head]! > syncPoint || usage < budgetBytes) break;
      this.evictList[count++] = head;
      this.evict(head);
      usage -= this.sizesBytes[head]!;
    }
    return count;
  }

  /** Resident list from head to tail (a view reused between calls, not a copy). */
  residentList(): readonly number[] {
    if (this.residentViewVersion !== this.linksVersion) {
      this.walk(this.residentHead, this.residentView);
      this.residentViewVersion = this.linksVersion;
    }
    return this.residentView;
  }

  evictedList(): readonly number[] {
    if (this.evictedViewVersion !== this.linksVersion) {
      this.walk(this.evictedHead, this.evictedView);
      this.evictedViewVersion = this.linksVersion;
    }
    return this.evictedView;
  }

  private walk(sentinel: number, out: number[]): readonly number[] {
    let count = 0;
    for (
      let node = this.next[sentinel]!, guard = 0;
      node !== sentinel && guard <= this.objectCount;
      node = this.next[node]!, guard++
    )
      out[count++] = node;
    if (out.length !== count) out.length = count; // a length store is a runtime call, even unchanged
    return out;
  }
}
