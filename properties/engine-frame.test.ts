import { engineFrameSystem } from '../src/systems/engine-frame.js';
import { describeSystem } from './support.js';

// Agreement over the fixed seed (with every probe reached: pressure, eviction, re-residency, both
// Close paths, reserved commits, aliasing, defrag), and every mutant caught by the check it names.
// The stored shrunk regressions (regressions/engine-frame/) replay in properties/regressions.test.ts.
describeSystem(engineFrameSystem, { numRuns: 200, mutantRuns: 300 });
