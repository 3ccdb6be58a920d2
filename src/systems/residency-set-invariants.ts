/**
 * The `residency-set` system's invariants: slot accounting, per-slot flags matching the open sets,
 * no duplicates, capacity growth, contents and answers matching the model, and the open/close
 * protocol (docs/spec/residency-library.md#rl-10-4, #rl-10-5).
 */
import type { Invariant } from '../harness/system.js';
import { ResidencySetModel } from '../../models/residency-set.js';
import { ResidencySetPoolImpl } from '../residency/residency-set.js';
import { INVALID_SLOT, nextCapacity } from '../residency/residency-set-types.js';
import { bothSides, sameNumbers } from './common.js';
import {
  ORDINARY_MAX_OBJECTS,
  type ResidencySetSystemConfig,
  type SetSide,
} from './residency-set-side.js';

function flagsMessage(
  object: number,
  actual: readonly number[],
  expected: readonly number[],
): string {
  return `object ${object} is flagged at slots [${actual}] but belongs to the open sets at slots [${expected}]`;
}

// The scale configs' forms of two invariants, kept out of the ordinary paths (one function per
// data shape keeps the hot ordinary checks monomorphic: measured, sharing them cost ~15 % of a
// campaign's commands/s once a scale run had passed through).

/** flags-match-open-sets with many objects: one pass over the model's sets instead of one per object. */
function flagsMatchManyObjects(model: SetSide, impl: SetSide): string | null {
  const all = model.pool instanceof ResidencySetModel ? model.pool.allFlaggedSlots() : null;
  for (let object = 0; object < impl.config.objectSizesBytes.length; object++) {
    const expected = all !== null ? all[object]! : model.pool.flaggedSlots(object);
    const actual = impl.pool.flaggedSlots(object);
    if (expected.length !== actual.length) return flagsMessage(object, actual, expected);
    for (let i = 0; i < expected.length; i++)
      if (expected[i] !== actual[i]) return flagsMessage(object, actual, expected);
  }
  return null;
}

/** no-duplicates' marks for long sets: object -> the stamp of the set walk that saw it last. */
let seenScratch = new Uint32Array(0);
let seenStamp = 0;

/** no-duplicates with many objects: one pass per set with a mark per object, instead of a quadratic scan. */
function noDuplicatesManyObjects(s: SetSide): string | null {
  const objects = s.config.objectSizesBytes.length;
  if (seenScratch.length < objects) seenScratch = new Uint32Array(objects);
  for (const id of s.live) {
    const contents = s.pool.contents(id);
    seenStamp = seenStamp === 0xffffffff ? 1 : seenStamp + 1;
    if (seenStamp === 1) seenScratch.fill(0);
    for (const object of contents) {
      // An id outside the objects cannot repeat one inside; other invariants name it.
      if (!(object >= 0 && object < objects)) continue;
      if (seenScratch[object] === seenStamp) return `set ${id} holds duplicates: [${contents}]`;
      seenScratch[object] = seenStamp;
    }
  }
  return null;
}

export const invariants: Invariant<SetSide, ResidencySetSystemConfig>[] = [
  {
    name: 'slot-accounting',
    description:
      'taken slots are exactly the slots of the open sets, distinct, within the pool; closed sets hold Invalid',
    check: bothSides((s) => {
      const held: number[] = [];
      for (const id of s.live) {
        const slot = s.pool.slotOf(id);
        if (s.pool.isOpen(id)) {
          if (slot < 0 || slot >= s.config.slotCount)
            return `open set ${id} holds slot ${slot} outside the pool`;
          held.push(slot);
        } else if (slot !== INVALID_SLOT) {
          return `closed set ${id} still holds slot ${slot}`;
        }
      }
      held.sort((a, b) => a - b);
      const taken = s.pool.takenSlots();
      if (taken.length > s.config.slotCount)
        return `${taken.length} slots taken from a pool of ${s.config.slotCount}`;
      for (let i = 1; i < held.length; i++)
        if (held[i] === held[i - 1]) return `two open sets share a slot: ${held.join(',')}`;
      if (!sameNumbers(taken, held)) return `taken slots [${taken}] but open sets hold [${held}]`;
      return null;
    }),
  },
  {
    name: 'flags-match-open-sets',
    description:
      "an object's flag at slot s is set exactly when it is in the open set holding s (or is that stuck set's failed object)",
    check: (model, impl) => {
      // The model derives flags from contents; the implementation's bitset must agree with it.
      if (impl.config.objectSizesBytes.length > ORDINARY_MAX_OBJECTS)
        return flagsMatchManyObjects(model, impl);
      for (let object = 0; object < impl.config.objectSizesBytes.length; object++) {
        const expected = model.pool.flaggedSlots(object);
        const actual = impl.pool.flaggedSlots(object);
        if (!sameNumbers(expected, actual)) return flagsMessage(object, actual, expected);
      }
      return null;
    },
  },
  {
    name: 'no-duplicates',
    description: 'no set holds the same object twice',
    check: bothSides((s) => {
      if (s.config.objectSizesBytes.length > ORDINARY_MAX_OBJECTS)
        return noDuplicatesManyObjects(s);
      for (const id of s.live) {
        const contents = s.pool.contents(id);
        for (let i = 1; i < contents.length; i++) {
          if (contents.lastIndexOf(contents[i]!, i - 1) !== -1)
            return `set ${id} holds duplicates: [${contents}]`;
        }
      }
      return null;
    }),
  },
  {
    name: 'capacity-growth',
    description:
      "a set's size never exceeds its storage, whose capacity follows the spec's growth sequence",
    check: bothSides((s) => {
      for (const id of s.live) {
        const size = s.pool.size(id);
        const capacity = s.pool.capacity(id);
        if (size > capacity) return `set ${id} stores ${size} entries in a capacity of ${capacity}`;
        let expected = 0;
        while (expected < capacity) expected = nextCapacity(expected, s.config.initialCapacity);
        if (expected !== capacity)
          return `set ${id} has capacity ${capacity}, not on the growth sequence from ${s.config.initialCapacity}`;
      }
      return null;
    }),
  },
  {
    name: 'contents-match-model',
    description:
      'every set holds the same objects in the same (insertion) order as the model, open or closed',
    check: (model, impl) => {
      if (model.live.length !== impl.live.length)
        return `model has ${model.live.length} live sets, implementation ${impl.live.length}`;
      for (let handle = 0; handle < impl.live.length; handle++) {
        const expected = model.pool.contents(model.live[handle]!);
        const actual = impl.pool.contents(impl.live[handle]!);
        if (!sameNumbers(expected, actual))
          return `set #${handle} holds [${actual}], the model [${expected}]`;
        const modelOpen = model.pool.isOpen(model.live[handle]!);
        if (modelOpen !== impl.pool.isOpen(impl.live[handle]!))
          return `set #${handle} open=${!modelOpen}, the model open=${modelOpen}`;
      }
      return null;
    },
  },
  {
    name: 'answers-match-model',
    // takenSlots() needs no comparison here: slot-accounting holds it to the slots of the open
    // sets on each side, and each open set's slot is the model's (the open observation).
    description:
      "every set's capacity(), size() and isOutOfMemory() are the model's answers; the flag memory per object is one bit per slot; the slot pool's taken count and isTaken() agree with the open sets",
    check: (model, impl) => {
      if (impl.pool instanceof ResidencySetPoolImpl) {
        const pool = impl.pool;
        if (pool.flagBytesPerObject !== 4 * Math.ceil(impl.config.slotCount / 32)) {
          return `flagBytesPerObject is ${pool.flagBytesPerObject}, not one bit per slot in 32-bit words (${4 * Math.ceil(impl.config.slotCount / 32)})`;
        }
        // The slot pool's own answers: its count and its per-slot test agree with the slots of the open sets.
        let open = 0;
        for (const id of impl.live) {
          if (!pool.isOpen(id)) continue;
          open++;
          if (!pool.slotPool.isTaken(pool.slotOf(id)))
            return `open set ${id} holds slot ${pool.slotOf(id)} but the slot pool says it is free`;
        }
        if (pool.slotPool.taken !== open)
          return `the slot pool counts ${pool.slotPool.taken} taken slots, the open sets hold ${open}`;
      }
      const count = Math.min(model.live.length, impl.live.length);
      for (let handle = 0; handle < count; handle++) {
        const m = model.live[handle]!;
        const i = impl.live[handle]!;
        const stuck = impl.pool.isOutOfMemory(i);
        if (stuck !== model.pool.isOutOfMemory(m))
          return `set #${handle}: isOutOfMemory() is ${stuck}, the model's ${!stuck}`;
        const capacity = impl.pool.capacity(i);
        if (capacity !== model.pool.capacity(m))
          return `set #${handle}: capacity() is ${capacity}, the model's ${model.pool.capacity(m)}`;
        const size = impl.pool.size(i);
        if (size !== model.pool.size(m))
          return `set #${handle}: size() is ${size}, the model's ${model.pool.size(m)}`;
      }
      return null;
    },
  },
  {
    name: 'open-close-protocol',
    description:
      'every successful Open is matched by exactly one successful Close before the set executes',
    check: bothSides((s) => (s.protocolViolations.length === 0 ? null : s.protocolViolations[0]!)),
  },
];
