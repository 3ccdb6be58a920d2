/**
 * System `residency-set`: residency sets and their slot pool (residency-library.md §2, §3, §10.4,
 * §10.5; Unreal's 1024-slot variant in the seed ue5-dx12-residency-set, sections 4 and 6).
 *
 * Commands are plain data. A set handle `set: k` means the k-th live set (creation order) modulo
 * the number of live sets, so any subsequence of a program is still a program; an object id is
 * taken modulo the configured object count.
 */
import fc from 'fast-check';
import type { Json } from '../harness/json';
import type { Invariant, RunEnv } from '../harness/system';
import { defineSystem, opsFor } from '../harness/define-system';
import { Nat, Strict, Type, type Static } from '../harness/schema';
import { ResidencySetModel } from '../../models/residency-set';
import { ResidencySetPoolImpl } from '../residency/residency-set';
import { INVALID_SLOT, nextCapacity, type ResidencySetPool } from '../residency/residency-set-types';
import { bothSides, pickLive, sameNumbers, SKIPPED } from './common';

export const ResidencySetConfigSchema = Strict({
  slotCount: Nat({ description: 'slots in the pool: 32 in the library, 1024 in Unreal' }),
  initialCapacity: Nat({ description: "entries of a set's first storage allocation (4096 in the library)" }),
  objectSizesBytes: Type.Array(Nat(), { description: 'size of each tracked object; object ids are the indices' }),
});
export type ResidencySetSystemConfig = Static<typeof ResidencySetConfigSchema>;

/** One side of a run: the pool, the live handles, and the Open/Close protocol monitor. */
export interface SetSide {
  readonly pool: ResidencySetPool;
  readonly config: ResidencySetSystemConfig;
  readonly env: RunEnv;
  /** Live set ids in creation order; handles index into it. */
  readonly live: number[];
  /** Protocol monitor: sets whose last successful Open has not yet been matched by a Close. */
  readonly openedNotClosed: Set<number>;
  readonly protocolViolations: string[];
}

function side(pool: ResidencySetPool, config: ResidencySetSystemConfig, env: RunEnv): SetSide {
  return { pool, config, env, live: [], openedNotClosed: new Set(), protocolViolations: [] };
}

function pick(s: SetSide, handle: number): number | undefined {
  return pickLive(s.live, handle);
}

/** Set handles: the k-th live set modulo the live count. */
const handle = fc.nat({ max: 7 });
const op = opsFor<ResidencySetSystemConfig, SetSide>();

const ops = {
  create: op({
    fields: {},
    weight: 3,
    apply: (s) => {
      s.live.push(s.pool.createSet());
      return { live: s.live.length };
    },
  }),
  destroy: op({
    fields: { set: Nat() },
    weight: 1,
    arbitrary: (_config, op) => handle.map((set) => ({ op, set })),
    apply: (s, command) => {
      const id = pick(s, command.set);
      if (id === undefined) return SKIPPED;
      s.pool.destroySet(id);
      s.live.splice(s.live.indexOf(id), 1);
      s.openedNotClosed.delete(id);
      return { live: s.live.length };
    },
  }),
  open: op({
    fields: { set: Nat() },
    weight: 6,
    arbitrary: (_config, op) => handle.map((set) => ({ op, set })),
    apply: (s, command) => {
      const id = pick(s, command.set);
      if (id === undefined) return SKIPPED;
      const hr = s.pool.open(id);
      if (hr === 'S_OK') s.openedNotClosed.add(id);
      if (hr === 'E_OUTOFMEMORY') s.env.probe('slot-pool-exhausted');
      return { hr, slot: s.pool.slotOf(id) };
    },
  }),
  insert: op({
    fields: { set: Nat(), obj: Nat() },
    weight: 20,
    arbitrary: (config, op) => fc.tuple(handle, fc.nat({ max: config.objectSizesBytes.length - 1 })).map(([set, obj]) => ({ op, set, obj })),
    apply: (s, command) => {
      const { pool } = s;
      const id = pick(s, command.set);
      if (id === undefined) return SKIPPED;
      const capacityBefore = pool.capacity(id);
      const inserted = pool.insert(id, command.obj % s.config.objectSizesBytes.length);
      if (pool.isOutOfMemory(id)) s.env.probe('set-stuck-out-of-memory');
      else if (capacityBefore > 0 && pool.capacity(id) > capacityBefore) s.env.probe('set-storage-grown');
      return { inserted, size: pool.size(id) };
    },
  }),
  close: op({
    fields: { set: Nat() },
    weight: 6,
    arbitrary: (_config, op) => handle.map((set) => ({ op, set })),
    apply: (s, command) => {
      const id = pick(s, command.set);
      if (id === undefined) return SKIPPED;
      const hr = s.pool.close(id);
      if (hr === 'S_OK') {
        if (!s.openedNotClosed.delete(id)) s.protocolViolations.push(`set ${id} was closed successfully without an open`);
      }
      if (hr === 'E_OUTOFMEMORY') s.env.probe('close-stuck-set');
      return { hr };
    },
  }),
  execute: op({
    fields: { sets: Type.Array(Type.Union([Nat(), Type.Null()])) },
    weight: 4,
    arbitrary: (_config, op) => fc.array(fc.option(handle, { freq: 6, nil: null }), { minLength: 0, maxLength: 4 }).map((sets) => ({ op, sets })),
    apply: (s, command) => {
      const { pool } = s;
      const ids = command.sets.map((setHandle) => (setHandle === null ? null : pick(s, setHandle) ?? null));
      const result = pool.execute(ids);
      if (result.hr === 'S_OK') {
        for (const id of ids) {
          if (id !== null && s.openedNotClosed.has(id)) s.protocolViolations.push(`set ${id} executed while open`);
        }
        let stored = 0;
        for (const id of ids) if (id !== null) stored += pool.size(id);
        if (stored > result.objects.length) s.env.probe('execute-merged-duplicates');
      } else if (result.hr === 'E_OUTOFMEMORY') {
        s.env.probe('master-set-no-slot');
      } else if (result.hr === 'E_INVALIDARG') {
        s.env.probe('execute-with-open-set');
      }
      return { hr: result.hr, objects: result.objects, totalSizeBytes: result.totalSizeBytes } satisfies Json;
    },
  }),
  failNextGrowth: op({
    fields: {},
    weight: 1,
    apply: (s) => {
      s.pool.failNextGrowth();
      return {};
    },
  }),
};

const invariants: Invariant<SetSide, ResidencySetSystemConfig>[] = [
  {
    name: 'slot-accounting',
    description: 'taken slots are exactly the slots of the open sets, distinct, within the pool; closed sets hold Invalid',
    check: bothSides((s) => {
      const held: number[] = [];
      for (const id of s.live) {
        const slot = s.pool.slotOf(id);
        if (s.pool.isOpen(id)) {
          if (slot < 0 || slot >= s.config.slotCount) return `open set ${id} holds slot ${slot} outside the pool`;
          held.push(slot);
        } else if (slot !== INVALID_SLOT) {
          return `closed set ${id} still holds slot ${slot}`;
        }
      }
      held.sort((a, b) => a - b);
      const taken = s.pool.takenSlots();
      if (taken.length > s.config.slotCount) return `${taken.length} slots taken from a pool of ${s.config.slotCount}`;
      for (let i = 1; i < held.length; i++) if (held[i] === held[i - 1]) return `two open sets share a slot: ${held.join(',')}`;
      if (!sameNumbers(taken, held)) return `taken slots [${taken}] but open sets hold [${held}]`;
      return null;
    }),
  },
  {
    name: 'flags-match-open-sets',
    description: "an object's flag at slot s is set exactly when it is in the open set holding s (or is that stuck set's failed object)",
    check: (model, impl) => {
      // The model derives flags from contents; the implementation's bitset must agree with it.
      for (let object = 0; object < impl.config.objectSizesBytes.length; object++) {
        const expected = model.pool.flaggedSlots(object);
        const actual = impl.pool.flaggedSlots(object);
        if (!sameNumbers(expected, actual)) {
          return `object ${object} is flagged at slots [${actual}] but belongs to the open sets at slots [${expected}]`;
        }
      }
      return null;
    },
  },
  {
    name: 'no-duplicates',
    description: 'no set holds the same object twice',
    check: bothSides((s) => {
      for (const id of s.live) {
        const contents = s.pool.contents(id);
        for (let i = 1; i < contents.length; i++) {
          if (contents.lastIndexOf(contents[i]!, i - 1) !== -1) return `set ${id} holds duplicates: [${contents}]`;
        }
      }
      return null;
    }),
  },
  {
    name: 'capacity-growth',
    description: "a set's size never exceeds its storage, whose capacity follows the spec's growth sequence",
    check: bothSides((s) => {
      for (const id of s.live) {
        const size = s.pool.size(id);
        const capacity = s.pool.capacity(id);
        if (size > capacity) return `set ${id} stores ${size} entries in a capacity of ${capacity}`;
        let expected = 0;
        while (expected < capacity) expected = nextCapacity(expected, s.config.initialCapacity);
        if (expected !== capacity) return `set ${id} has capacity ${capacity}, not on the growth sequence from ${s.config.initialCapacity}`;
      }
      return null;
    }),
  },
  {
    name: 'contents-match-model',
    description: 'every set holds the same objects in the same (insertion) order as the model, open or closed',
    check: (model, impl) => {
      if (model.live.length !== impl.live.length) return `model has ${model.live.length} live sets, implementation ${impl.live.length}`;
      for (let handle = 0; handle < impl.live.length; handle++) {
        const expected = model.pool.contents(model.live[handle]!);
        const actual = impl.pool.contents(impl.live[handle]!);
        if (!sameNumbers(expected, actual)) return `set #${handle} holds [${actual}], the model [${expected}]`;
        const modelOpen = model.pool.isOpen(model.live[handle]!);
        if (modelOpen !== impl.pool.isOpen(impl.live[handle]!)) return `set #${handle} open=${!modelOpen}, the model open=${modelOpen}`;
      }
      return null;
    },
  },
  {
    name: 'open-close-protocol',
    description: 'every successful Open is matched by exactly one successful Close before the set executes',
    check: bothSides((s) => (s.protocolViolations.length === 0 ? null : s.protocolViolations[0]!)),
  },
];

export const residencySetSystem = defineSystem({
  name: 'residency-set',
  summary: 'residency sets and their slot pool: open/insert/close, dedupe flags, master-set merge',
  config: {
    schema: ResidencySetConfigSchema,
    check: (c) => {
      if (c.slotCount < 1 || c.slotCount > 4096) return `slotCount must be 1..4096, got ${c.slotCount}`;
      if (c.initialCapacity < 2) return `initialCapacity must be >= 2 (x1.5 growth of 1 never grows), got ${c.initialCapacity}`;
      if (c.objectSizesBytes.length < 1) return 'objectSizesBytes must name at least one object';
      return null;
    },
    arbitrary: () =>
      fc.record({
        slotCount: fc.oneof(
          { weight: 6, arbitrary: fc.integer({ min: 1, max: 5 }) },
          { weight: 2, arbitrary: fc.constantFrom(8, 32, 33) },
          { weight: 1, arbitrary: fc.constant(1024) },
        ),
        initialCapacity: fc.oneof({ weight: 5, arbitrary: fc.integer({ min: 2, max: 5 }) }, { weight: 1, arbitrary: fc.constant(4096) }),
        objectSizesBytes: fc.array(fc.integer({ min: 1, max: 1 << 20 }), { minLength: 1, maxLength: 12 }),
      }),
  },
  ops,
  sequence: { minLength: 1, maxLength: 120 },
  createModel: (config, env) => side(new ResidencySetModel(config), config, env),
  createImpl: (config, env) => side(new ResidencySetPoolImpl(config), config, env),
  invariants,
  probes: [
    'slot-pool-exhausted',
    'master-set-no-slot',
    'set-stuck-out-of-memory',
    'close-stuck-set',
    'set-storage-grown',
    'execute-merged-duplicates',
    'execute-with-open-set',
  ],
  faultOps: { 'set-growth-failure': ['failNextGrowth'] },
});

/** Wraps any pool as a side; mutants use it to build their implementation side. */
export function residencySetSide(pool: ResidencySetPool, config: ResidencySetSystemConfig, env: RunEnv): SetSide {
  return side(pool, config, env);
}
