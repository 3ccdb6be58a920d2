/**
 * System `residency-manager`: the LRU residency manager over a simulated GPU
 * (docs/spec/residency-library.md#rl-4 to #rl-8, #rl-10, #rl-11; Unreal's settings from
 * docs/spec/engine.md#rs-2, #rs-5, #rs-6, #rs-8, #rs-9).
 *
 * Each side is a manager (model or implementation) with its own simulated GPU and set pool.
 * Commands are plain data; handles resolve modulo what exists (4 residency sets created up
 * front, object ids modulo the object count, queues modulo the queue count), so every
 * subsequence of a program is a program. Every object is tracked at the start, in id order;
 * `untrack`/`track` end and begin tracking again.
 *
 * The observation of every command holds its result, the device calls and CPU waits it caused
 * (from the GPU's log: which objects, in which calls, in which order) and the manager's events,
 * so model and implementation must agree decision for decision.
 *
 * A share of configs (`benchmarkTwin`) gives the implementation side a twin built in the
 * benchmark's unchecked mode: a debug/release pair. The twin runs every command too, and its
 * answers and state must equal the checked implementation's: a behaviour that exists only when
 * nothing is checking (a side effect kept inside a debug-only branch, an unchecked path of the
 * simulated GPU that crashes) would otherwise ship unseen, and the benchmark would measure it.
 *
 * The parts: residency-manager-side.ts (config schema, sides), residency-manager-ops.ts (the
 * ops), residency-manager-invariants.ts (the checks), residency-manager-twin.ts (the benchmark
 * twin's comparison); this file defines the system from them.
 */
import fc from 'fast-check';
import type { Json, JsonObject } from '../harness/json.js';
import { defineSystem } from '../harness/define-system.js';
import { ResidencyManagerModel } from '../../models/residency-manager.js';
import { ResidencyManagerImpl } from '../residency/residency-manager.js';
import { invariants } from './residency-manager-invariants.js';
import { ops } from './residency-manager-ops.js';
import {
  implementationSide,
  managerSide,
  PROBES,
  ResidencyManagerConfigSchema,
} from './residency-manager-side.js';
import { twinShare, twinStep } from './residency-manager-twin.js';
import { managerVisual } from './visuals.js';

export * from './residency-manager-side.js';

/** An op's observation, which is an object for every op here: `around` adds the calls and events to it. */
function observationFields(result: Json): JsonObject {
  if (typeof result !== 'object' || result === null || Array.isArray(result)) {
    throw new Error(`residency-manager: an op observed ${JSON.stringify(result)}, not an object`);
  }
  return result;
}

export const residencyManagerSystem = defineSystem({
  name: 'residency-manager',
  summary:
    'LRU residency manager over a simulated GPU: paging before execution, trims, sync points, split, both execution modes',
  config: {
    schema: ResidencyManagerConfigSchema,
    check: (c) => {
      if (c.objectSizesBytes.length < 1) return 'objectSizesBytes must name at least one object';
      if (c.queueCount < 1) return `queueCount must be >= 1, got ${c.queueCount}`;
      if (c.maxLatency < 1) return 'maxLatency must be >= 1 (0 hangs the first submission)';
      if (c.ticksPerSecond < 1) return 'ticksPerSecond must be >= 1';
      if (c.slotCount < 1 || c.slotCount > 4096)
        return `slotCount must be 1..4096, got ${c.slotCount}`;
      if (c.initialCapacity < 2) return `initialCapacity must be >= 2, got ${c.initialCapacity}`;
      return null;
    },
    arbitrary: () =>
      fc
        .array(fc.integer({ min: 1, max: 16 }), { minLength: 3, maxLength: 10 })
        .chain((objectSizesBytes) => {
          const totalBytes = objectSizesBytes.reduce((a, b) => a + b, 0);
          return fc
            .record({
              objectSizesBytes: fc.constant(objectSizesBytes),
              queueCount: fc.integer({ min: 1, max: 3 }),
              mode: fc.constantFrom('inline', 'async'),
              startEvicted: fc.boolean(),
              maxLatency: fc.integer({ min: 1, max: 6 }),
              ticksPerSecond: fc.integer({ min: 1, max: 10 }),
              localBudgetBytes: fc
                .integer({ min: 30, max: 120 })
                .map((percent) => Math.floor((totalBytes * percent) / 100)),
              nonLocalBudgetBytes: fc
                .integer({ min: 0, max: 20 })
                .map((percent) => Math.floor((totalBytes * percent) / 100)),
              unrealBudgetCap: fc.boolean(),
              debugBudgetBytes: fc.oneof(
                { weight: 3, arbitrary: fc.constant(-1) },
                { weight: 1, arbitrary: fc.integer({ min: 0, max: totalBytes }) },
              ),
              slotCount: fc.oneof(
                { weight: 4, arbitrary: fc.constant(32) },
                { weight: 1, arbitrary: fc.integer({ min: 2, max: 4 }) },
              ),
              initialCapacity: fc.integer({ min: 2, max: 4 }),
              // Drawn from the other fields (no draw of its own), so adding it left every generated
              // case as it was: 1 config in 8 gets the twin.
              benchmarkTwin: fc.constant(false),
            })
            .map((config) => ({
              // Spelt out, not a spread: the same fields in the same order, without copying
              // the record through the generic slow path once per run.
              objectSizesBytes: config.objectSizesBytes,
              queueCount: config.queueCount,
              mode: config.mode,
              startEvicted: config.startEvicted,
              maxLatency: config.maxLatency,
              ticksPerSecond: config.ticksPerSecond,
              localBudgetBytes: config.localBudgetBytes,
              nonLocalBudgetBytes: config.nonLocalBudgetBytes,
              unrealBudgetCap: config.unrealBudgetCap,
              debugBudgetBytes: config.debugBudgetBytes,
              slotCount: config.slotCount,
              initialCapacity: config.initialCapacity,
              benchmarkTwin: twinShare(config),
            }));
        }),
  },
  ops,
  // Every command: note the generation before it (generations-increasing compares against it),
  // then drain the events and device calls it caused, even when it threw, so the next step
  // starts clean; they are part of the observation.
  around: (s, command, dispatch) => {
    s.highestGeneration = Math.max(s.highestGeneration, s.manager.currentGeneration());
    let result: Json = null;
    let failure: unknown;
    try {
      result = dispatch(s, command);
    } catch (error) {
      failure = error;
    }
    const events = s.manager.drainEvents();
    const calls = s.manager.gpu.drainCalls();
    for (let i = 0; i < events.length; i++) s.env.probe(events[i]!);
    if (s.twin !== null && s.twinDisagreement === null)
      s.twinDisagreement = twinStep(s, s.twin, command, dispatch, result, failure);
    if (failure !== undefined) throw failure;
    // Each op answers a fresh object: the calls and events are added to it (a spread of the
    // op's own shape would copy it through the megamorphic slow path on every command).
    const observation = observationFields(result);
    observation.calls = calls;
    observation.events = events;
    return observation;
  },
  sequence: { minLength: 1, maxLength: 150 },
  createModel: (config, env) => managerSide(new ResidencyManagerModel(config), config, env),
  visual: (s) => managerVisual(s.manager),
  createImpl: (config, env) =>
    implementationSide((options) => new ResidencyManagerImpl(config, options), config, env),
  invariants,
  probes: PROBES,
  faultOps: { 'device-call-failure': ['failNext'], 'set-growth-failure': ['failNextGrowth'] },
});
