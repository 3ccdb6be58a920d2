/**
 * System `native-residency`: a C++ residency manager written against d3d12.h, built with the
 * D3D12 kit (include/gpumv_d3d12/) and its driver loop (residency_driver.h), run as a driver
 * process; every device call it makes travels back to a simulated GPU here
 * (docs/native-protocol.md, "Call-backs"; docs/d3d12-kit.md).
 *
 * Policies:
 * - `spec`: the manager claims the spec's behaviour: each step's device calls (which objects, in
 *   which calls, in which order; waits and signals with their values) and answers are compared
 *   with the spec model's (models/residency-manager.ts), as the built-in residency manager is;
 * - `any`: safety only, judged by the simulated GPU: no list touches a non-resident object (or
 *   one whose queued make-resident is not done), no Evict of an object in flight, MakeResident
 *   and Evict balanced, no deadlock, no leak once everything is destroyed, and (paging inline)
 *   usage within the budget after a submission whose needs fit.
 * A driver whose hello declares `policy=spec` (the default) gets both: three runs in four are
 * compared with the model, the rest run under `any`, where the scheduler's preemption seed may
 * switch threads at any kit call.
 */
import path from 'node:path';
import { InputError } from '../harness/json.js';
import { defineSystem } from '../harness/define-system.js';
import { parseWith } from '../harness/schema.js';
import type { Invariant, SystemDef } from '../harness/system.js';
import type { ViolationKind } from '../gpu/sim-gpu.js';
import { ResidencyManagerModel } from '../../models/residency-manager.js';
import { DriverStartError, FAULT_CHECKS, type NativeFaultKind } from './driver.js';
import { recordedPath } from './native-allocator.js';
import type { SyncDriver } from './sync-driver.js';
import {
  adoptSession,
  NATIVE_SETS,
  NativeRun,
  residencySessionFor,
  type NativeResidencySession,
} from './native-residency-run.js';
import {
  FAULT_OPS,
  ops,
  opsWithoutFailures,
  type NativeSide,
  type Side,
} from './native-residency-ops.js';
import {
  modelConfigOf,
  nativeResidencyConfigArb,
  nativeResidencyConfigProblem,
  NativeResidencyConfigSchema,
  type NativeResidencyConfig,
  type NativeResidencyDeclared,
} from './native-residency-config.js';

export const NATIVE_RESIDENCY_SYSTEM = 'native-residency';

/** What a driver's hello declares; a string names the problem. */
export function declaredResidency(driver: SyncDriver): NativeResidencyDeclared | string {
  const fields = driver.hello.fields;
  if (fields.get('system') !== 'residency')
    return `its hello declares system ${JSON.stringify(fields.get('system'))}, not 'residency'`;
  const callbacks = fields.get('callbacks');
  if (callbacks !== '1' && callbacks !== '2')
    return 'its hello does not declare callbacks=1 or callbacks=2 (the call-back extension of protocol version 1)';
  const policy = fields.get('policy') ?? 'spec';
  if (policy !== 'spec' && policy !== 'any')
    return `its hello declares policy ${JSON.stringify(policy)}; expected spec or any`;
  const thread = fields.get('pagingThread') ?? '0';
  if (thread !== '0' && thread !== '1')
    return `its hello declares pagingThread=${thread}; expected 0 or 1`;
  const failures = fields.get('failures') ?? '0';
  if (failures !== '0' && failures !== '1')
    return `its hello declares failures=${failures}; expected 0 or 1`;
  return { policy, pagingThread: thread === '1', failures: failures === '1' };
}

function native(side: Side): NativeSide | null {
  return side.kind === 'native' ? side : null;
}

const FAULT_DESCRIPTIONS: Readonly<Record<NativeFaultKind, string>> = {
  sanitizer: 'the driver runs every command without a sanitizer (ASan, UBSan, ...) stopping it',
  crash: 'the driver runs every command without being killed by a signal',
  exit: 'the driver runs every command without exiting',
  garbage: 'every frame the driver sends is a well-formed call-back or answer',
  protocol: 'a driver started again says the hello it said first',
  hang: 'the driver sends a call-back or an answer within the time limit',
};

/** The first violation of these kinds the native side's simulated GPU reported. */
function violation(kinds: readonly ViolationKind[]) {
  return (_model: Side, impl: Side): string | null => {
    const side = native(impl);
    if (side === null) return null;
    for (const v of side.run.judge.gpu.violations) if (kinds.includes(v.kind)) return v.message;
    return null;
  };
}

function invariants(executable: string): Invariant<Side, NativeResidencyConfig>[] {
  const faults = (Object.keys(FAULT_CHECKS) as NativeFaultKind[]).map(
    (kind): Invariant<Side, NativeResidencyConfig> => ({
      name: FAULT_CHECKS[kind],
      description: FAULT_DESCRIPTIONS[kind],
      check: (_model, impl) => {
        const fault = native(impl)?.run.fault;
        if (fault === undefined || fault === null || fault.kind !== kind) return null;
        const stderr = fault.stderr.map((line) => `\n  driver stderr: ${line}`).join('');
        return `${executable}: ${fault.detail}${stderr}`;
      },
    }),
  );
  return [
    ...faults,
    {
      name: 'kit-calls-supported',
      description:
        'the manager makes only calls the kit implements, on live kit objects, and uses fences as the simulated GPU models them (one per queue, one paging fence)',
      check: (_model, impl) => native(impl)?.run.judge.faults[0] ?? null,
    },
    {
      name: 'residency-before-execution',
      description:
        'every object a list touches is device-resident and its queued make-resident has reached the paging fence when the GPU runs the list; CPU waits complete (no deadlock)',
      check: (model, impl) => {
        const fatal = native(impl)?.run.judge.fatal;
        if (fatal !== undefined && fatal !== null) return fatal;
        return violation(['touch-not-resident', 'touch-before-paging', 'deadlock'])(model, impl);
      },
    },
    {
      name: 'no-eviction-in-flight',
      description:
        'no object is evicted while a submitted list that may run, or has not retired, references it',
      check: violation(['evict-in-flight']),
    },
    {
      name: 'residency-balanced',
      description:
        'MakeResident only of objects not resident, Evict only of resident ones (one device call per status flip)',
      check: violation(['refcount']),
    },
    {
      name: 'within-budget',
      description:
        'policy any, paging inline: a submission whose needs fit the budget goes past it only as the starter library falls back (no submitted work pending, or no resident object it does not need)',
      check: (_model, impl) => native(impl)?.budgetFinding ?? null,
    },
    {
      name: 'no-leak',
      description:
        'once the manager is destroyed and every object released, no kit fence is still referenced',
      check: (_model, impl) => native(impl)?.run.judge.leaks[0] ?? null,
    },
    {
      name: 'device-matches-model',
      description:
        "policy spec: the native side's device has the model's paging fence, queue backlogs and segment usage",
      check: (model, impl) => {
        const side = native(impl);
        // After the last step the run is over (manager destroyed, objects released): nothing to compare.
        if (side === null || side.run.ended || model.kind !== 'model' || model.manager === null)
          return null;
        const i = side.run.judge.gpu;
        const m = model.manager.gpu;
        if (i.pagingFenceCompleted !== m.pagingFenceCompleted)
          return `paging fence at ${i.pagingFenceCompleted}, the model's at ${m.pagingFenceCompleted}`;
        for (let q = 0; q < side.config.queueCount; q++)
          if (i.pendingItems(q) !== m.pendingItems(q))
            return `queue ${q} holds ${i.pendingItems(q)} items, the model's ${m.pendingItems(q)}`;
        if (
          i.localUsageBytes !== m.localUsageBytes ||
          i.nonLocalUsageBytes !== m.nonLocalUsageBytes
        )
          return `usage local ${i.localUsageBytes} + non-local ${i.nonLocalUsageBytes}, the model's ${m.localUsageBytes} + ${m.nonLocalUsageBytes}`;
        return null;
      },
    },
  ];
}

export type NativeResidencySystem = SystemDef<NativeResidencyConfig, { readonly op: string }, Side>;

/** The system of a started driver; `executable` is what configs record (relative to the project root). */
export function nativeResidencySystem(
  session: NativeResidencySession,
  executable: string,
): NativeResidencySystem {
  const declared = declaredResidency(session.driver);
  if (typeof declared === 'string') throw new DriverStartError(executable, declared);
  const check = (c: NativeResidencyConfig) => nativeResidencyConfigProblem(c, declared);
  const base = defineSystem({
    name: NATIVE_RESIDENCY_SYSTEM,
    summary: `the native residency manager ${executable} (policy ${declared.policy})`,
    config: {
      schema: NativeResidencyConfigSchema,
      check,
      arbitrary: () => nativeResidencyConfigArb(executable, declared),
    },
    // A driver that cannot fail a device call on command never gets the op.
    ops: declared.failures ? ops : opsWithoutFailures,
    ...(declared.failures ? { faultOps: FAULT_OPS } : {}),
    sequence: { minLength: 1, maxLength: 100 },
    createModel: (config): Side => {
      if (config.policy === 'any') return { kind: 'model', manager: null, setIds: [], config };
      const manager = new ResidencyManagerModel(modelConfigOf(config));
      const setIds: number[] = [];
      for (let s = 0; s < NATIVE_SETS; s++) setIds.push(manager.sets.createSet());
      for (let object = 0; object < config.objectSizesBytes.length; object++)
        manager.beginTracking(object);
      manager.drainEvents();
      manager.gpu.drainCalls();
      return { kind: 'model', manager, setIds, config };
    },
    createImpl: (): Side => {
      throw new Error(`${NATIVE_RESIDENCY_SYSTEM}: the runner passes the run's commands`);
    },
    invariants: invariants(executable),
    probes: [],
  });
  return {
    ...base,
    parseConfig: (raw, source, at) => {
      const config = parseWith(NativeResidencyConfigSchema, raw, source, at);
      const problem = check(config);
      if (problem !== null) throw new InputError(source, at, problem);
      return config;
    },
    createImpl: (config, _env, commands): Side => {
      const run = new NativeRun(session, config, commands?.length ?? 0);
      run.begin();
      if (commands !== undefined && commands.length === 0) run.finish();
      return { kind: 'native', run, config, budgetFinding: null };
    },
    apply: (side, command) => {
      const observation = base.apply(side, command as never);
      if (side.kind === 'native') {
        const run = side.run;
        run.step++;
        if (run.step >= run.commands) run.finish();
      }
      return observation;
    },
  };
}

/** The schemas of the native-residency system's files. */
export const nativeResidencySchemas = {
  name: NATIVE_RESIDENCY_SYSTEM,
  configSchema: NativeResidencyConfigSchema,
  commandSchemas: defineSystem({
    name: NATIVE_RESIDENCY_SYSTEM,
    summary: '',
    config: {
      schema: NativeResidencyConfigSchema,
      arbitrary: () =>
        nativeResidencyConfigArb('', { policy: 'spec', pagingThread: true, failures: true }),
    },
    ops,
    sequence: { minLength: 1, maxLength: 1 },
    createModel: () => {
      throw new Error('schemas only');
    },
    createImpl: () => {
      throw new Error('schemas only');
    },
    invariants: [],
    probes: [],
  }).commandSchemas,
};

/** The system of an executable relative to `root`, its driver started once per thread. */
export function nativeResidencyForProject(root: string, executable: string): NativeResidencySystem {
  const absolute = path.resolve(root, executable);
  return nativeResidencySystem(residencySessionFor(absolute), recordedPath(root, absolute));
}

/** The system of a driver the hello dispatch already started. */
export function nativeResidencyOfDriver(root: string, driver: SyncDriver): NativeResidencySystem {
  const absolute = path.resolve(driver.executable);
  return nativeResidencySystem(adoptSession(driver), recordedPath(root, absolute));
}
