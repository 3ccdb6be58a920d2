/**
 * Bug catalog for `engine-frame`: each mutant re-creates one failure story of the seeds
 * (docs/spec/engine.md#rs-3-3, #rs-4-3 to #rs-4-4, #rs-7, #rs-9-1; docs/spec/engine.md#mem-6-2,
 * #mem-8-1, #mem-8-2) by overriding one step of the shipped engine (src/engine/engine-frame.ts).
 * Most surface only under memory pressure: the system generates low (debug) budgets for that.
 */
import { mutantsOf } from './define.js';
import type { AnyMutant } from '../src/harness/system.js';
import {
  EngineFrameImpl,
  type EngineList,
  type EngineResource,
} from '../src/engine/engine-frame.js';
import type {
  EngineEvents,
  EngineFrameConfig,
  ResidencyPort,
} from '../src/engine/engine-frame-types.js';
import { ResidencyManagerImpl } from '../src/residency/residency-manager.js';
import type { ResidencyManagerConfig } from '../src/residency/residency-manager-types.js';
import { engineFrameSystem, engineSide, managerConfig } from '../src/systems/engine-frame.js';
import { WaitsForNextFenceValue } from './residency-manager.js';

type EngineClass = new (
  config: EngineFrameConfig,
  port: ResidencyPort,
  events: EngineEvents,
) => EngineFrameImpl;

const mutant = mutantsOf(engineFrameSystem, (Engine: EngineClass, config, env) =>
  engineSide(
    config,
    env,
    new ResidencyManagerImpl(managerConfig(config)),
    (c, port, events) => new Engine(c, port, events),
  ),
);

type ManagerClass = new (config: ResidencyManagerConfig) => ResidencyManagerImpl;

/** Entries whose bug sits in the residency manager the engine runs on (the shipped engine above it). */
const managerMutant = mutantsOf(engineFrameSystem, (Manager: ManagerClass, config, env) =>
  engineSide(
    config,
    env,
    new Manager(managerConfig(config)),
    (c, port, events) => new EngineFrameImpl(c, port, events),
  ),
);

export const ENGINE_FRAME_MUTANTS: AnyMutant[] = [
  mutant(
    'forget-indirect-args',
    'gpu-touches-resident',
    'ExecuteIndirect reads its argument buffer without a descriptor, and the recording path does not register it: under pressure the args buffer (or its heap) is evicted while the GPU reads it',
    class extends EngineFrameImpl {
      protected override registerIndirectArgs(): void {}
    },
  ),
  mutant(
    'forget-uav-counter',
    'gpu-touches-resident',
    "The UAV's counter buffer is bound beside the descriptor table and never registered: the GPU increments a counter that may be paged out",
    class extends EngineFrameImpl {
      protected override registerUavCounter(): void {}
    },
  ),
  mutant(
    'forget-query-heap',
    'gpu-touches-resident',
    'The query resolve on the submission thread registers the result buffer but not the query heap it reads',
    class extends EngineFrameImpl {
      protected override registerQueryResolve(l: EngineList): void {
        this.addToResidencySet(l, [this.layout.queryResult]);
      }
    },
  ),
  mutant(
    'forget-shader-table',
    'gpu-touches-resident',
    'DispatchRays registers its output but not the shader binding table, which the GPU reads indirectly',
    class extends EngineFrameImpl {
      protected override registerShaderTable(): void {}
    },
  ),
  mutant(
    'register-placed-resource-not-heap',
    'gpu-touches-resident',
    'A placed resource registers its own residency handle, which is never initialised (only its heap is tracked), so nothing is inserted and the heap may stay evicted',
    class extends EngineFrameImpl {
      protected override residencyHandles(r: EngineResource): readonly number[] {
        return r.kind === 'placed' ? [] : super.residencyHandles(r);
      }
    },
  ),
  mutant(
    'reserved-snapshot-at-record',
    'gpu-touches-resident',
    "A reserved resource's backing heaps are inserted when the command is recorded, not on the submission thread: a commit that lands between recording and execution maps heaps the set never names",
    class extends EngineFrameImpl {
      protected override updateResidency(l: EngineList, r: EngineResource): void {
        if (r.kind === 'reserved') this.addToResidencySet(l, r.backing);
        else super.updateResidency(l, r);
      }
    },
  ),
  mutant(
    'close-on-both-paths',
    'sets-closed-exactly-once',
    'Close() on the recording thread closes the set even when reserved resources are deferred, and CloseResidencySet() on the submission thread closes it again',
    class extends EngineFrameImpl {
      protected override closePathA(l: EngineList): void {
        this.port.sets.close(l.set);
      }
    },
  ),
  mutant(
    'close-on-neither-path',
    'sets-closed-exactly-once',
    'Close() leaves the set open for the submission thread, which only closes sets with deferred resources: a list without reserved resources reaches ExecuteCommandLists with its set open',
    class extends EngineFrameImpl {
      protected override closePathA(): void {}
    },
  ),
  mutant(
    'track-back-buffer',
    'untracked-never-tracked',
    'Back buffers and external resources are tracked like any committed resource, though presents and third-party command buffers use them outside the fences the LRU relies on',
    class extends EngineFrameImpl {
      protected override createUntracked(object: number): void {
        this.port.beginTracking(object);
      }
    },
  ),
  mutant(
    'resolve-on-closed-list',
    'no-insert-into-closed-set',
    'The query resolve on the submission thread registers on the list it just executed (its set already closed) instead of a freshly obtained list',
    class extends EngineFrameImpl {
      protected override resolveList(): EngineList | null {
        return this.lastExecutedList >= 0
          ? this.lists[this.lastExecutedList]!
          : super.resolveList();
      }
    },
  ),
  mutant(
    'alias-overlapping-lifetimes',
    'transient-no-overlap',
    "Transient lifetimes that meet in one pass (one's last pass is the other's first) count as disjoint, so both may be placed on the same bytes while that pass uses both",
    class extends EngineFrameImpl {
      protected override lifetimesOverlap(
        firstA: number,
        lastA: number,
        firstB: number,
        lastB: number,
      ): boolean {
        return firstA < lastB && firstB < lastA;
      }
    },
  ),
  mutant(
    'release-before-frame-fence',
    'no-reuse-before-frame-fence',
    "The pool heaps read the frame fence's last signalled value as completed: a block released this frame returns at end of frame while the GPU still runs the frame",
    class extends EngineFrameImpl {
      protected override poolCompletedFrames(): number {
        return this.frameValues.length;
      }
    },
  ),
  mutant(
    'defrag-locked-block',
    'defrag-only-unlocked',
    'Defrag moves blocks whose initial upload is still running (locked), so the upload lands in the old bytes',
    class extends EngineFrameImpl {
      protected override isMovable(): boolean {
        return true;
      }
    },
  ),
  managerMutant(
    'engine-manager-waits-next-fence-value',
    'gpu-touches-resident',
    "Under memory pressure the engine's residency manager CPU-waits for the value the direct queue will signal next (the current generation's sync point, which no queued Signal carries yet) instead of the sync point's recorded value: in the engine the frame hangs inside ExecuteCommandLists; the simulated GPU runs the queue dry and reports the deadlock",
    WaitsForNextFenceValue,
  ),
];
