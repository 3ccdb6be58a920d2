/**
 * System `residency-set`: residency sets and their slot pool (residency-library.md §2, §3, §10.4,
 * §10.5; Unreal's 1024-slot variant in the seed ue5-dx12-residency-set, sections 4 and 6).
 *
 * Commands are plain data. A set handle `set: k` means the k-th live set (creation order) modulo
 * the number of live sets, so any subsequence of a program is still a program; an object id is
 * taken modulo the configured object count.
 */
import fc from 'fast-check';
import type { Json } from '../harness/json.js';
import type { Invariant, RunEnv } from '../harness/system.js';
import { defineSystem, opsFor } from '../harness/define-system.js';
import { Nat, Strict, Type, type Static } from '../harness/schema.js';
import { ResidencySetModel } from '../../models/residency-set.js';
import { INITIAL_MASTER_SCRATCH, ResidencySetPoolImpl } from '../residency/residency-set.js';
import { INVALID_SLOT, nextCapacity, type ResidencySetPool } from '../residency/residency-set-types.js';
import { bothSides, pickLive, sameNumbers, SKIPPED } from './common.js';
import { setPoolVisual } from './visuals.js';

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
/** Scale configs reach further into the live sets (openMany creates hundreds). */
const wideHandle = fc.oneof({ weight: 3, arbitrary: handle }, { weight: 1, arbitrary: fc.nat({ max: 1100 }) });
const op = opsFor<ResidencySetSystemConfig, SetSide>();

/** Object count and slot counts the ordinary configs stay within; a scale config goes past one. */
const ORDINARY_MAX_OBJECTS = 12;
const ORDINARY_SLOT_COUNTS = new Set([1, 2, 3, 4, 5, 8, 32, 33, 1024]);

/**
 * A scale config (a small share of the generated ones): hundreds of objects, so one batch
 * references more objects than the master scratch first holds and a set's storage grows many
 * times, or a pool of 34 to 1040 slots that `openMany` fills past its first bitset word (and
 * past 1024 slots).
 */
export function isScaleConfig(config: ResidencySetSystemConfig): boolean {
  return config.objectSizesBytes.length > ORDINARY_MAX_OBJECTS || !ORDINARY_SLOT_COUNTS.has(config.slotCount);
}
/** What kind of config this is, for measurements: 'ordinary', 'objects', 'slots' or 'slots1024'. */
export function configKind(config: ResidencySetSystemConfig): string {
  if (manyObjects(config)) return 'objects';
  if (!manySlots(config)) return 'ordinary';
  return config.slotCount > 1024 ? 'slots1024' : 'slots';
}
function manyObjects(config: ResidencySetSystemConfig): boolean {
  return config.objectSizesBytes.length > ORDINARY_MAX_OBJECTS;
}
function manySlots(config: ResidencySetSystemConfig): boolean {
  return !ORDINARY_SLOT_COUNTS.has(config.slotCount);
}
function handleFor(config: ResidencySetSystemConfig): fc.Arbitrary<number> {
  return manySlots(config) ? wideHandle : handle;
}

/** Probes of the growth paths of the implementation's internal tables (see isScaleConfig). */
function probeSlot(s: SetSide, slot: number): void {
  if (slot >= 32) s.env.probe('slot-pool-past-first-word');
  if (slot >= 1024) s.env.probe('slot-pool-past-1024');
}

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
    arbitrary: (config, op) => handleFor(config).map((set) => ({ op, set })),
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
    arbitrary: (config, op) => handleFor(config).map((set) => ({ op, set })),
    apply: (s, command) => {
      const id = pick(s, command.set);
      if (id === undefined) return SKIPPED;
      const hr = s.pool.open(id);
      if (hr === 'S_OK') {
        s.openedNotClosed.add(id);
        probeSlot(s, s.pool.slotOf(id));
      }
      if (hr === 'E_OUTOFMEMORY') s.env.probe('slot-pool-exhausted');
      return { hr, slot: s.pool.slotOf(id) };
    },
  }),
  insert: op({
    fields: { set: Nat(), obj: Nat() },
    weight: 20,
    arbitrary: (config, op) => fc.tuple(handleFor(config), fc.nat({ max: config.objectSizesBytes.length - 1 })).map(([set, obj]) => ({ op, set, obj })),
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
    arbitrary: (config, op) => handleFor(config).map((set) => ({ op, set })),
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
    arbitrary: (config, op) => fc.array(fc.option(handleFor(config), { freq: 6, nil: null }), { minLength: 0, maxLength: 4 }).map((sets) => ({ op, sets })),
    apply: (s, command) => {
      const { pool } = s;
      const ids = command.sets.map((setHandle) => (setHandle === null ? null : pick(s, setHandle) ?? null));
      const result = pool.execute(ids);
      if (result.hr === 'S_OK') {
        let references = 0;
        for (const id of ids) if (id !== null) references += pool.size(id);
        if (references > INITIAL_MASTER_SCRATCH) s.env.probe('master-scratch-grown');
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
  // The two scale ops keep the field names of the ordinary ones ({op, set} and {op, set, obj}):
  // every command then has one of four shapes, and the harness's reads of commands stay
  // polymorphic (measured: a fifth and sixth shape made them megamorphic and cost about 15 % of
  // the campaign's commands/s, scale runs or not).
  openMany: op({
    fields: { set: Nat({ description: 'creates set + 1 new sets (live sets stay below the pool size + 4) and opens each' }) },
    // Scale configs with many slots only: hundreds of open sets in one command.
    weight: (config) => (manySlots(config) ? 3 : 0),
    arbitrary: (config, op) => fc.nat({ max: config.slotCount + 1 }).map((set) => ({ op, set })),
    apply: (s, command) => {
      let opened = 0;
      let highestSlot = INVALID_SLOT;
      const count = Math.min(command.set + 1, s.config.slotCount + 4 - s.live.length);
      for (let i = 0; i < count; i++) {
        const id = s.pool.createSet();
        s.live.push(id);
        const hr = s.pool.open(id);
        if (hr !== 'S_OK') {
          if (hr === 'E_OUTOFMEMORY') s.env.probe('slot-pool-exhausted');
          continue;
        }
        s.openedNotClosed.add(id);
        opened++;
        highestSlot = Math.max(highestSlot, s.pool.slotOf(id));
      }
      probeSlot(s, highestSlot);
      return { live: s.live.length, opened, highestSlot };
    },
  }),
  fill: op({
    fields: { set: Nat(), obj: Nat({ description: 'the first object; every object is inserted, from this one on (modulo the object count)' }) },
    // Scale configs with many objects only: records a set in one command and submits it alone:
    // opens it if it is closed, inserts every object from obj on, closes it again if it opened
    // it, and executes it (a batch that references more objects than the master scratch first holds).
    weight: (config) => (manyObjects(config) ? 4 : 0),
    arbitrary: (config, op) => fc.tuple(handle, fc.nat({ max: config.objectSizesBytes.length - 1 })).map(([set, obj]) => ({ op, set, obj })),
    apply: (s, command) => {
      const { pool } = s;
      const id = pick(s, command.set);
      if (id === undefined) return SKIPPED;
      let opened: string | null = null;
      if (!pool.isOpen(id)) {
        opened = pool.open(id);
        if (opened !== 'S_OK') return { open: opened };
        probeSlot(s, pool.slotOf(id));
      }
      const objects = s.config.objectSizesBytes.length;
      const capacityBefore = pool.capacity(id);
      let inserted = 0;
      for (let i = 0; i < objects; i++) if (pool.insert(id, (command.obj + i) % objects)) inserted++;
      const capacity = pool.capacity(id);
      if (capacity > nextCapacity(nextCapacity(nextCapacity(capacityBefore, s.config.initialCapacity), s.config.initialCapacity), s.config.initialCapacity)) {
        s.env.probe('set-storage-grown-three-times');
      }
      if (pool.isOutOfMemory(id)) s.env.probe('set-stuck-out-of-memory');
      const observation = { inserted, size: pool.size(id) };
      if (opened === null) return observation;
      const closed = pool.close(id);
      // An open that this command closes again is balanced; a close that fails (stuck) leaves it open.
      if (closed !== 'S_OK') {
        s.openedNotClosed.add(id);
        return { ...observation, open: opened, close: closed };
      }
      const result = pool.execute([id]);
      if (result.hr === 'S_OK' && pool.size(id) > INITIAL_MASTER_SCRATCH) s.env.probe('master-scratch-grown');
      return { ...observation, open: opened, close: closed, execute: result.hr, objects: result.objects, totalSizeBytes: result.totalSizeBytes };
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

function flagsMessage(object: number, actual: readonly number[], expected: readonly number[]): string {
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
    for (let i = 0; i < expected.length; i++) if (expected[i] !== actual[i]) return flagsMessage(object, actual, expected);
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
      if (impl.config.objectSizesBytes.length > ORDINARY_MAX_OBJECTS) return flagsMatchManyObjects(model, impl);
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
      if (s.config.objectSizesBytes.length > ORDINARY_MAX_OBJECTS) return noDuplicatesManyObjects(s);
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
          if (!pool.slotPool.isTaken(pool.slotOf(id))) return `open set ${id} holds slot ${pool.slotOf(id)} but the slot pool says it is free`;
        }
        if (pool.slotPool.taken !== open) return `the slot pool counts ${pool.slotPool.taken} taken slots, the open sets hold ${open}`;
      }
      const count = Math.min(model.live.length, impl.live.length);
      for (let handle = 0; handle < count; handle++) {
        const m = model.live[handle]!;
        const i = impl.live[handle]!;
        const stuck = impl.pool.isOutOfMemory(i);
        if (stuck !== model.pool.isOutOfMemory(m)) return `set #${handle}: isOutOfMemory() is ${stuck}, the model's ${!stuck}`;
        const capacity = impl.pool.capacity(i);
        if (capacity !== model.pool.capacity(m)) return `set #${handle}: capacity() is ${capacity}, the model's ${model.pool.capacity(m)}`;
        const size = impl.pool.size(i);
        if (size !== model.pool.size(m)) return `set #${handle}: size() is ${size}, the model's ${model.pool.size(m)}`;
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

/**
 * Probes of the growth paths of the implementation's internal tables, reached by the scale
 * configs (per shape: see SCALE_SHAPES). They are counted in campaign summaries like any probe,
 * but not listed in `probes`: scale configs are too rare a share for every property-suite run
 * to meet them, so properties/residency-set.test.ts runs each shape alone and requires these.
 */
export const GROWTH_PROBES: Readonly<Record<ScaleShape, readonly string[]>> = {
  objects: ['master-scratch-grown', 'set-storage-grown-three-times'],
  slots: ['slot-pool-past-first-word'],
  slots1024: ['slot-pool-past-1024'],
};

/** Ordinary : scale configs (about 1 in 5000: measured, 1 in 1000 cost 10-19 % of a campaign's commands/s, 1 in 250 more; see docs/coverage.md). */
const SCALE_CONFIG_WEIGHT = [5000, 1] as const;

/** The shapes of scale config (see isScaleConfig) and their weights among the scale configs. */
const SCALE_SHAPES = {
  /** 65 to 256 objects in a pool of ordinary size. */
  objects: { weight: 30 },
  /** Few objects, 34 to 100 slots. */
  slots: { weight: 19 },
  /** Few objects, 1040 slots: the costliest shape, a thousand open sets for every later step. */
  slots1024: { weight: 0 },
} as const;
export type ScaleShape = keyof typeof SCALE_SHAPES;

function scaleShapeArb(shape: ScaleShape): fc.Arbitrary<ResidencySetSystemConfig> {
  const fewObjects = fc.array(fc.integer({ min: 1, max: 1 << 20 }), { minLength: 1, maxLength: ORDINARY_MAX_OBJECTS });
  switch (shape) {
    case 'objects':
      return fc.record({
        slotCount: fc.constantFrom(8, 32, 33),
        initialCapacity: fc.integer({ min: 2, max: 5 }),
        objectSizesBytes: fc.array(fc.integer({ min: 1, max: 1 << 20 }), { minLength: INITIAL_MASTER_SCRATCH + 1, maxLength: 4 * INITIAL_MASTER_SCRATCH }),
      });
    case 'slots':
      return fc.record({ slotCount: fc.integer({ min: 34, max: 100 }), initialCapacity: fc.integer({ min: 2, max: 5 }), objectSizesBytes: fewObjects });
    case 'slots1024':
      return fc.record({ slotCount: fc.constant(1040), initialCapacity: fc.integer({ min: 2, max: 5 }), objectSizesBytes: fewObjects });
  }
}

/** The scale configs, or one shape of them (the growth-probe test runs each shape alone). */
export function scaleConfigArb(only?: ScaleShape): fc.Arbitrary<ResidencySetSystemConfig> {
  if (only !== undefined) return scaleShapeArb(only);
  return fc.oneof(...(Object.keys(SCALE_SHAPES) as ScaleShape[]).map((shape) => ({ weight: SCALE_SHAPES[shape].weight, arbitrary: scaleShapeArb(shape) })));
}

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
      fc.oneof(
        {
          weight: SCALE_CONFIG_WEIGHT[0],
          arbitrary: fc.record({
            slotCount: fc.oneof(
              { weight: 6, arbitrary: fc.integer({ min: 1, max: 5 }) },
              { weight: 2, arbitrary: fc.constantFrom(8, 32, 33) },
              { weight: 1, arbitrary: fc.constant(1024) },
            ),
            initialCapacity: fc.oneof({ weight: 5, arbitrary: fc.integer({ min: 2, max: 5 }) }, { weight: 1, arbitrary: fc.constant(4096) }),
            objectSizesBytes: fc.array(fc.integer({ min: 1, max: 1 << 20 }), { minLength: 1, maxLength: ORDINARY_MAX_OBJECTS }),
          }),
        },
        { weight: SCALE_CONFIG_WEIGHT[1], arbitrary: scaleConfigArb() },
      ),
  },
  ops,
  // A plan's weight replaces an op's default, except that the scale ops stay off in the configs
  // they are not for (a swarm plan would otherwise open a thousand sets in an ordinary pool).
  weights: (defaults, plan, config) => {
    const weights = { ...defaults, ...plan?.weights };
    if (!manySlots(config)) weights.openMany = 0;
    if (!manyObjects(config)) weights.fill = 0;
    // A swarm plan that kept only scale ops runs the ordinary ops at their defaults instead (its fault ops stay as planned).
    if (Object.values(weights).every((weight) => weight <= 0)) {
      for (const name of ['create', 'destroy', 'open', 'insert', 'close', 'execute']) weights[name] = defaults[name]!;
    }
    return weights;
  },
  sequence: { minLength: 1, maxLength: 120 },
  createModel: (config, env) => side(new ResidencySetModel(config), config, env),
  visual: (s) => setPoolVisual(s.pool, s.live),
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
