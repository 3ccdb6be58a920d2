/**
 * The public API of gpu-memory-verifier (`import ... from 'gpu-memory-verifier'`):
 * - defining systems (defineSystem, opsFor, the schema helpers) and mutants;
 * - running them (runSequence, checkSystem, minimizeCase, campaign runs) and reporting findings;
 * - projects (defineConfig for gpumv.config.ts, loadProject);
 * - the built-in systems, and the shipped residency and allocator code as a library.
 * The vitest helpers are in `gpu-memory-verifier/vitest`.
 */

// Defining systems
export {
  defineSystem,
  opsFor,
  type DefinedSystem,
  type SystemSpec,
} from './harness/define-system.js';
export {
  Int,
  Nat,
  Bool,
  Str,
  OneOf,
  Strict,
  Type,
  parseWith,
  type Static,
  type TObject,
  type TSchema,
} from './harness/schema.js';
export type {
  AnyMutant,
  AnySystem,
  Command,
  GenerationPlan,
  Invariant,
  Mutant,
  OpNamed,
  RunEnv,
  SystemDef,
} from './harness/system.js';
export { InputError, jsonEqual, jsonDiff, type Json, type JsonObject } from './harness/json.js';
export { ContractError, contractErrorObservation } from './contract.js';
export { Registry, type RegistrySpec, type SystemResolver } from './harness/registry.js';
export { bothSides, pickLive, sameNumbers, SKIPPED } from './systems/common.js';

// Running and reporting
export {
  runSequence,
  minimizeCase,
  minimizeSequence,
  traceSequence,
  formatFailure,
  failureKey,
  RunContext,
  type Failure,
  type RunOutcome,
  type RunOptions,
  type ImplFactory,
  type TracedStep,
} from './harness/runner.js';
export {
  buildReport,
  formatReport,
  renderReportText,
  checksText,
  type ReportData,
  type ReportInput,
} from './harness/report.js';
export { renderHtmlReport, writeHtmlReport } from './report/html.js';
export {
  TIMELINE_STATES,
  type Visual,
  type HeapVisual,
  type TimelineVisual,
  type TimelineRow,
  type TimelineState,
  type VisualRange,
} from './harness/visual.js';
export {
  checkSystem,
  caseArb,
  firstCase,
  saveCommandLine,
  cliCommand,
  ReplayPathError,
  type Case,
  type CheckOptions,
  type CheckResult,
  type Finding,
} from './harness/property.js';
export {
  planRun,
  executeRun,
  runCase,
  generationPlan,
  type RunPlan,
  type RunResult,
  type RunFinding,
  type CampaignSummary,
} from './harness/campaign.js';
export {
  loadRegression,
  replayRegression,
  replayProblems,
  serializeRegression,
  REGRESSION_FORMAT,
  type Regression,
  type ReplayResult,
} from './harness/regression.js';
export { DEFAULT_SEED, seedNumber } from './harness/seed.js';

// Projects
export {
  defineConfig,
  loadProject,
  findConfigFile,
  projectFromConfig,
  CONFIG_FILE_NAMES,
  type GpumvConfig,
  type Project,
} from './project.js';

// The built-in systems
export { BUILTIN_SYSTEMS, BUILTIN_REGISTRY, loadBuiltinMutants } from './systems/index.js';
export { residencySetSystem } from './systems/residency-set.js';
export { residencyManagerSystem } from './systems/residency-manager.js';
export { allocBuddySystem } from './systems/alloc-buddy.js';
export { allocBestFitSystem } from './systems/alloc-best-fit.js';
export { allocFirstFitSystem } from './systems/alloc-first-fit.js';
export { ringUploadSystem } from './systems/ring-upload.js';
export { deferredFreeSystem } from './systems/deferred-free.js';
export {
  userAllocatorSystem,
  userAllocatorSystemFromModule,
  userAllocatorSystemForConfig,
  USER_ALLOCATOR_SYSTEM,
  GPU_HEAP_MIN_BYTES,
  GPU_HEAP_MAX_BYTES,
  type UserAllocatorOptions,
  type UserAllocatorConfig,
} from './systems/user-allocator.js';
export {
  loadUserAllocator,
  UserAllocatorError,
  ALLOCATOR_POLICIES,
  type UserAllocatorModule,
} from './user-allocator-module.js';
export {
  promises,
  promiseProblem,
  promiseText,
  DEFAULT_PROMISE,
  BUDDY_DECLARATION,
  bestFitDeclaration,
  type AllocatorPromise,
  type PromiseFunction,
} from './systems/alloc-promise.js';
export {
  falseOutOfMemoryShare,
  largestEmptyPoolShare,
  allocatorMetricsCell,
} from './systems/alloc-false-oom.js';

// The shipped code as a library
export { ResidencySet, ResidencySetPoolImpl } from './residency/residency-set.js';
export { ResidencyManagerImpl, type ManagerOptions } from './residency/residency-manager.js';
export type { ResidencyDevice } from './residency/residency-device.js';
export { SimGpu } from './gpu/sim-gpu.js';
export { QueueTimeline } from './gpu/queue-timeline.js';
export {
  BuddyAllocator,
  BestFitAllocator,
  FirstFitAllocator,
  createSubAllocator,
  type SubAllocatorConfig,
  type SubAllocatorKind,
} from './alloc/index.js';
export {
  alignUp,
  isPowerOfTwo,
  type Allocator,
  type AllocatorPolicy,
  type BlockAllocator,
  type BlockInfo,
  type LiveAllocation,
} from './alloc/allocator.js';
export { RingUploadAllocatorImpl } from './alloc/ring-upload.js';
export { DeferredFreeAllocatorImpl } from './alloc/deferred-free.js';
