/**
 * The public API of gpu-memory-verifier (`import ... from 'gpu-memory-verifier'`):
 * - defining systems (defineSystem, opsFor, the schema helpers) and mutants;
 * - running them (runSequence, checkSystem, minimizeCase, campaign runs) and reporting findings;
 * - projects (defineConfig for gpumv.config.ts, loadProject);
 * - the built-in systems, and the shipped residency and allocator code as a library.
 * The vitest helpers are in `gpu-memory-verifier/vitest`.
 */

// Defining systems
export { defineSystem, opsFor, type DefinedSystem, type SystemSpec } from './harness/define-system';
export { Int, Nat, Bool, Str, OneOf, Strict, Type, parseWith, type Static, type TObject, type TSchema } from './harness/schema';
export type { AnyMutant, AnySystem, Command, GenerationPlan, Invariant, Mutant, OpNamed, RunEnv, SystemDef } from './harness/system';
export { InputError, jsonEqual, jsonDiff, type Json, type JsonObject } from './harness/json';
export { ContractError, contractErrorObservation } from './contract';
export { Registry, type RegistrySpec, type SystemResolver } from './harness/registry';

// Running and reporting
export { runSequence, minimizeCase, minimizeSequence, traceSequence, formatFailure, failureKey, RunContext, type Failure, type RunOutcome, type RunOptions, type ImplFactory, type TracedStep } from './harness/runner';
export { checkSystem, caseArb, firstCase, saveCommandLine, ReplayPathError, type Case, type CheckOptions, type CheckResult, type Finding } from './harness/property';
export { formatReport, checksText, type ReportInput } from './harness/report';
export { planRun, executeRun, runCase, generationPlan, type RunPlan, type RunResult, type RunFinding, type CampaignSummary } from './harness/campaign';
export { loadRegression, replayRegression, replayProblems, serializeRegression, REGRESSION_FORMAT, type Regression, type ReplayResult } from './harness/regression';
export { DEFAULT_SEED } from './harness/seed';

// Projects
export { defineConfig, loadProject, findConfigFile, projectFromConfig, CONFIG_FILE_NAMES, type GpumvConfig, type Project } from './project';

// The built-in systems
export { BUILTIN_SYSTEMS, BUILTIN_REGISTRY, loadBuiltinMutants } from './systems/index';
export { residencySetSystem } from './systems/residency-set';
export { residencyManagerSystem } from './systems/residency-manager';
export { allocBuddySystem } from './systems/alloc-buddy';
export { allocBestFitSystem } from './systems/alloc-best-fit';
export { allocFirstFitSystem } from './systems/alloc-first-fit';
export { ringUploadSystem } from './systems/ring-upload';
export { deferredFreeSystem } from './systems/deferred-free';
export { userAllocatorSystem, USER_ALLOCATOR_SYSTEM } from './systems/user-allocator';

// The shipped code as a library
export { ResidencySet, ResidencySetPoolImpl } from './residency/residency-set';
export { ResidencyManagerImpl } from './residency/residency-manager';
export { SimGpu } from './gpu/sim-gpu';
export { QueueTimeline } from './gpu/queue-timeline';
export { BuddyAllocator, BestFitAllocator, FirstFitAllocator, createSubAllocator, type SubAllocatorConfig, type SubAllocatorKind } from './alloc/index';
export type { Allocator, AllocatorPolicy, BlockAllocator, BlockInfo, LiveAllocation } from './alloc/allocator';
export { RingUploadAllocatorImpl } from './alloc/ring-upload';
export { DeferredFreeAllocatorImpl } from './alloc/deferred-free';
