/**
 * The residency manager's device port: a manager handed a device runs on that device, through
 * the port alone (src/residency/residency-device.ts).
 */
import { describe, expect, it } from 'vitest';
import { ResidencyManagerImpl } from '../src/residency/residency-manager.js';
import type { ResidencyDevice } from '../src/residency/residency-device.js';
import type { ResidencyManagerConfig } from '../src/residency/residency-manager-types.js';
import { SimGpu } from '../src/gpu/sim-gpu.js';

const CONFIG: ResidencyManagerConfig = {
  objectSizesBytes: [4, 4, 4],
  queueCount: 1,
  mode: 'inline',
  startEvicted: true,
  maxLatency: 2,
  ticksPerSecond: 10,
  localBudgetBytes: 8,
  nonLocalBudgetBytes: 0,
  unrealBudgetCap: false,
  debugBudgetBytes: -1,
  slotCount: 32,
  initialCapacity: 4,
};

function simulatedGpu(config: ResidencyManagerConfig): SimGpu {
  const { objectSizesBytes, queueCount, ticksPerSecond, localBudgetBytes, nonLocalBudgetBytes } =
    config;
  return new SimGpu({
    objectSizesBytes,
    queueCount,
    ticksPerSecond,
    localBudgetBytes,
    nonLocalBudgetBytes,
  });
}

/** A device that forwards every port call to a simulated GPU and names each call it forwarded. */
function recordingDevice(gpu: SimGpu, calls: string[]): ResidencyDevice {
  const forward = <K extends keyof ResidencyDevice>(name: K) =>
    ((...args: unknown[]) => {
      calls.push(name);
      return (gpu[name] as (...a: unknown[]) => unknown).apply(gpu, args);
    }) as ResidencyDevice[K];
  return {
    get localBudgetBytes() {
      return gpu.localBudgetBytes;
    },
    get nonLocalBudgetBytes() {
      return gpu.nonLocalBudgetBytes;
    },
    get localUsageBytes() {
      return gpu.localUsageBytes;
    },
    get nonLocalUsageBytes() {
      return gpu.nonLocalUsageBytes;
    },
    get ticks() {
      return gpu.ticks;
    },
    createObject: forward('createObject'),
    destroyObject: forward('destroyObject'),
    isReferencedByPendingWork: forward('isReferencedByPendingWork'),
    makeResident: forward('makeResident'),
    enqueueMakeResident: forward('enqueueMakeResident'),
    evict: forward('evict'),
    queueWaitPaging: forward('queueWaitPaging'),
    executeCommandLists: forward('executeCommandLists'),
    queueSignal: forward('queueSignal'),
    fenceCompleted: forward('fenceCompleted'),
    cpuWait: forward('cpuWait'),
    cpuSignalPaging: forward('cpuSignalPaging'),
  };
}

/** Tracks every object, then submits sets {0, 1} and {2} (over budget together: a split), lets the GPU run, submits {0} again. */
function scenario(manager: ResidencyManagerImpl<ResidencyDevice>, gpu: SimGpu): string[] {
  const answers: string[] = [];
  for (let object = 0; object < 3; object++) manager.beginTracking(object);
  const sets = [[0, 1], [2]].map((objects) => {
    const set = manager.sets.createSet();
    manager.sets.open(set);
    for (const object of objects) manager.sets.insert(set, object);
    manager.sets.close(set);
    return set;
  });
  answers.push(
    manager.executeCommandLists(
      0,
      sets.map((set) => manager.sets.contents(set)),
      sets,
    ),
  );
  gpu.pagingProgress(8);
  gpu.progress(0, 16);
  answers.push(manager.executeCommandLists(0, [manager.sets.contents(sets[0]!)], [sets[0]!]));
  return answers;
}

describe('residency manager device port', () => {
  it('a manager without a device builds its simulated GPU from the config', () => {
    const manager = new ResidencyManagerImpl(CONFIG);
    expect(manager.gpu).toBeInstanceOf(SimGpu);
    expect(manager.gpu.localBudgetBytes).toBe(8);
  });

  it('a manager handed a device runs on it, and only through the port', () => {
    const gpu = simulatedGpu(CONFIG);
    const calls: string[] = [];
    const device = recordingDevice(gpu, calls);
    const manager = new ResidencyManagerImpl(CONFIG, { device });
    expect(manager.gpu).toBe(device);
    const reference = new ResidencyManagerImpl(CONFIG);
    const expectedAnswers = scenario(reference, reference.gpu);
    const answers = scenario(manager, gpu);
    expect(answers).toEqual(expectedAnswers);
    // The same device calls, in the same order, as the manager on its own simulated GPU.
    expect(gpu.drainCalls()).toEqual(reference.gpu.drainCalls());
    expect(manager.residentList()).toEqual(reference.residentList());
    expect(calls).toContain('enqueueMakeResident');
    expect(calls).toContain('evict');
    expect(calls.filter((call) => call === 'createObject')).toHaveLength(3);
  });
});
