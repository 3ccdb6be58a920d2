/**
 * The native-residency system's config (src/native/native-residency.ts): the residency manager
 * system's config reduced to what a native manager's API and the kit's device take, plus the
 * driver, the policy and the scheduler's seed.
 */
import fc from 'fast-check';
import { Bool, Nat, OneOf, Str, Strict, Type, type Static } from '../harness/schema.js';
import type { ResidencyManagerConfig } from '../residency/residency-manager-types.js';
import { residencyManagerSystem } from '../systems/residency-manager.js';

export const NATIVE_RESIDENCY_POLICIES = ['spec', 'any'] as const;
export type NativeResidencyPolicy = (typeof NATIVE_RESIDENCY_POLICIES)[number];

export const NativeResidencyConfigSchema = Strict({
  executable: Str({
    description:
      'the driver executable, relative to the project root (the folder of gpumv.config, else the working directory)',
  }),
  policy: OneOf(NATIVE_RESIDENCY_POLICIES, {
    description:
      "'spec': compared step by step with the spec model (device calls, answers); 'any': safety only, judged by the simulated GPU",
  }),
  deviceVersion: Nat({
    description:
      '3: the device answers ID3D12Device3 (queued make-resident, paging inline); 0: it does not (the manager pages on its own thread, or inline)',
  }),
  objectSizesBytes: Type.Array(Nat(), {
    description:
      'size of each pageable object (a kit heap); object ids are the indices; 1 to 64 objects',
  }),
  queueCount: Nat({ description: 'command queues, 1 to 8' }),
  startEvicted: Bool({ description: 'objects are created not resident and tracked EVICTED' }),
  maxLatency: Nat({
    description: "the manager's MaxLatency, 1 to 6 (1 under policy spec with device 0)",
  }),
  ticksPerSecond: Nat({ description: 'simulated clock ticks per second, at least 1' }),
  localBudgetBytes: Nat({ description: 'local segment budget the adapter reports' }),
  nonLocalBudgetBytes: Nat({ description: 'non-local segment budget the adapter reports' }),
  seed: Nat({
    description:
      "the kit scheduler's preemption seed: 0 switches threads only when one blocks; another value may switch at any kit call (policy any only)",
  }),
});
export type NativeResidencyConfig = Static<typeof NativeResidencyConfigSchema>;

/** What a driver declares in its hello that shapes its configs. */
export interface NativeResidencyDeclared {
  /** The policy the manager claims ('spec' runs also draw 'any' configs, which it must pass too). */
  readonly policy: NativeResidencyPolicy;
  /** Without ID3D12Device3, the manager pages on a thread of its own (hello `pagingThread=1`). */
  readonly pagingThread: boolean;
  /**
   * The driver takes the `Fail` command (hello `failures=1`): its next MakeResident,
   * EnqueueMakeResident or Evict fails with E_OUTOFMEMORY, as the simulated GPU's `failNext`.
   */
  readonly failures: boolean;
}

/** The rules between fields; null when the config is fine. */
export function nativeResidencyConfigProblem(
  c: NativeResidencyConfig,
  declared: NativeResidencyDeclared,
): string | null {
  const count = c.objectSizesBytes.length;
  if (count < 1 || count > 64) return `objectSizesBytes must name 1 to 64 objects, got ${count}`;
  if (c.deviceVersion !== 0 && c.deviceVersion !== 3)
    return `deviceVersion must be 0 or 3, got ${c.deviceVersion}`;
  if (c.queueCount < 1 || c.queueCount > 8) return `queueCount must be 1 to 8, got ${c.queueCount}`;
  if (c.maxLatency < 1 || c.maxLatency > 6) return `maxLatency must be 1 to 6, got ${c.maxLatency}`;
  if (c.ticksPerSecond < 1) return 'ticksPerSecond must be >= 1';
  if (declared.policy === 'any' && c.policy === 'spec')
    return "policy 'spec' for a driver whose hello declares policy=any";
  if (c.policy === 'spec') {
    if (c.seed !== 0)
      return 'policy spec runs with seed 0 (preemption changes the order of device calls)';
    if (c.deviceVersion === 0 && !declared.pagingThread)
      return 'policy spec with deviceVersion 0 needs a paging thread (hello pagingThread=1): inline paging without ID3D12Device3 orders its calls unlike the model';
    if (c.deviceVersion === 0 && c.maxLatency !== 1)
      return 'policy spec with deviceVersion 0 runs with maxLatency 1 (a paging thread drains its whole queue once it runs; the model steps one work)';
  }
  return null;
}

/** Configs of a driver: objects, queues, latency, clock and budgets as the residency manager system draws them. */
export function nativeResidencyConfigArb(
  executable: string,
  declared: NativeResidencyDeclared,
): fc.Arbitrary<NativeResidencyConfig> {
  const policy: fc.Arbitrary<NativeResidencyPolicy> =
    declared.policy === 'any'
      ? fc.constant('any')
      : fc.oneof(
          { weight: 3, arbitrary: fc.constant<NativeResidencyPolicy>('spec') },
          { weight: 1, arbitrary: fc.constant<NativeResidencyPolicy>('any') },
        );
  return fc
    .tuple(
      residencyManagerSystem.configArb(),
      policy,
      fc.constantFrom(3, 0),
      fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 0x7fffffff })),
    )
    .map(
      ([m, policy, deviceVersion, seed]): NativeResidencyConfig => ({
        executable,
        policy,
        deviceVersion,
        objectSizesBytes: m.objectSizesBytes,
        queueCount: m.queueCount,
        startEvicted: m.startEvicted,
        maxLatency: m.maxLatency,
        ticksPerSecond: m.ticksPerSecond,
        localBudgetBytes: m.localBudgetBytes,
        nonLocalBudgetBytes: m.nonLocalBudgetBytes,
        seed,
      }),
    )
    .map((c): NativeResidencyConfig => {
      if (c.policy === 'any') return c;
      // What policy spec can compare (nativeResidencyConfigProblem says why).
      const deviceVersion = c.deviceVersion === 0 && !declared.pagingThread ? 3 : c.deviceVersion;
      return { ...c, deviceVersion, seed: 0, maxLatency: deviceVersion === 0 ? 1 : c.maxLatency };
    });
}

/** The spec model's config for a native config (no Unreal settings; the starter library's 32-slot pool). */
export function modelConfigOf(c: NativeResidencyConfig): ResidencyManagerConfig {
  return {
    objectSizesBytes: c.objectSizesBytes,
    queueCount: c.queueCount,
    mode: c.deviceVersion === 3 ? 'inline' : 'async',
    startEvicted: c.startEvicted,
    maxLatency: c.maxLatency,
    ticksPerSecond: c.ticksPerSecond,
    localBudgetBytes: c.localBudgetBytes,
    nonLocalBudgetBytes: c.nonLocalBudgetBytes,
    unrealBudgetCap: false,
    debugBudgetBytes: -1,
    slotCount: 32,
    initialCapacity: 4,
  };
}
