/**
 * Builds the D3D12 kit's test driver (examples/native/residency/driver.cpp: the kit's own tests,
 * the example residency manager's clean, single-threaded and planted-bug builds, the scenarios)
 * with g++ under AddressSanitizer and UndefinedBehaviorSanitizer, against Debian's
 * directx-headers-dev.
 *
 * The executable is cached under .build/d3d12-kit/<hash>/, the hash covering the compiler's
 * version, the flags and every source file, so a second run costs nothing. A missing compiler or
 * header is an Error naming what to install, never a skipped build.
 *
 *   npx tsx tools/d3d12-kit/build.ts          builds (if needed) and prints the executable's path
 *   npx tsx tools/d3d12-kit/build.ts --residency [--release]
 *                                             builds the example manager's native-residency driver
 *                                             and prints the folder of its residency-<variant> links
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  symlinkSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
/** The package root: two folders up from the sources, three from the compiled dist/tools/d3d12-kit/. */
const ROOT =
  [resolve(HERE, '../..'), resolve(HERE, '../../..')].find((root) =>
    existsSync(join(root, 'include', 'gpumv_d3d12', 'kit.h')),
  ) ?? resolve(HERE, '../..');
export const KIT_INCLUDE = join(ROOT, 'include');
export const KIT_SHIM = join(ROOT, 'include', 'gpumv_d3d12', 'shim');
/** Debian's directx-headers-dev: d3d12.h and the WSL adapter headers. */
export const DIRECTX_HEADER = '/usr/include/directx/d3d12.h';
export const WSL_STUBS = '/usr/include/wsl/stubs';
const DRIVER_SOURCE = join(ROOT, 'examples', 'native', 'residency', 'driver.cpp');

/**
 * The flags the issue asks for, plus: warnings as errors, UBSan findings fatal (never
 * print-and-continue). -Og rather than -O1: the sanitizers are the same and the build costs about
 * 60 % of the CPU time (23 s against 38 s of g++ 12 on this machine, docs/measurements.md);
 * unlike -O0 it keeps the flow analysis behind -Wmaybe-uninitialized, so -Werror still sees it.
 */
export const CXXFLAGS = [
  '-std=c++17',
  '-Og',
  '-g',
  '-fsanitize=address,undefined',
  '-fno-sanitize-recover=undefined',
  '-fno-omit-frame-pointer',
  '-Wall',
  '-Wextra',
  '-Werror',
];

function compilerVersion(cxx: string): string {
  try {
    return execFileSync(cxx, ['--version'], { encoding: 'utf8' });
  } catch {
    throw new Error(
      `${cxx} not found: install g++ (Debian: apt-get install -y g++) to build the D3D12 kit's driver`,
    );
  }
}

function sources(): string[] {
  const dirs = [
    join(ROOT, 'include', 'gpumv_d3d12'),
    KIT_SHIM,
    join(ROOT, 'examples', 'native', 'residency'),
  ];
  const files: string[] = [];
  for (const dir of dirs)
    for (const name of readdirSync(dir).sort())
      if (/\.(h|cpp)$/.test(name)) files.push(join(dir, name));
  return files;
}

/** The compiler's version text; an Error naming what to install when the compiler or the headers are missing. */
function toolchain(cxx: string): string {
  const version = compilerVersion(cxx);
  if (!existsSync(DIRECTX_HEADER) || !existsSync(join(WSL_STUBS, 'unknwn.h'))) {
    throw new Error(
      `${DIRECTX_HEADER} or ${WSL_STUBS}/unknwn.h missing: install Debian's directx-headers-dev (apt-get install -y directx-headers-dev)`,
    );
  }
  return version;
}

/** The cache key of a build: the compiler, the flags and every kit and example source. */
function buildHash(version: string, flags: readonly string[]): string {
  const hash = createHash('sha256');
  hash.update(version).update(flags.join(' '));
  for (const file of sources()) hash.update(file.slice(ROOT.length)).update(readFileSync(file));
  return hash.digest('hex').slice(0, 16);
}

/** Compiles `source` with the kit's include path into `exe` (through a partial file: an interrupted build never counts as cached). */
function compile(cxx: string, flags: readonly string[], source: string, exe: string): void {
  mkdirSync(dirname(exe), { recursive: true });
  const partial = `${exe}.partial-${process.pid}`;
  const args = [
    ...flags,
    `-I${KIT_INCLUDE}`,
    `-I${KIT_SHIM}`,
    `-I${WSL_STUBS}`,
    source,
    '-o',
    partial,
    '-lpthread',
  ];
  try {
    execFileSync(cxx, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    rmSync(partial, { force: true });
    const err = e as { stderr?: string; message: string };
    throw new Error(`${cxx} ${args.join(' ')} failed:\n${err.stderr ?? err.message}`);
  }
  renameSync(partial, exe);
}

/** Builds the driver if its cached build is missing; returns the executable's path. */
export function buildD3d12Driver(cxx = process.env.CXX ?? 'g++'): string {
  const version = toolchain(cxx);
  const dir = join(ROOT, '.build', 'd3d12-kit', buildHash(version, CXXFLAGS));
  const exe = join(dir, 'driver');
  if (existsSync(exe)) return exe;
  compile(cxx, CXXFLAGS, DRIVER_SOURCE, exe);
  // Older builds (other hashes) are stale: only the current one is kept.
  const cache = dirname(dir);
  for (const name of readdirSync(cache))
    if (join(cache, name) !== dir) rmSync(join(cache, name), { recursive: true, force: true });
  return exe;
}

const RESIDENCY_DRIVER_SOURCE = join(
  ROOT,
  'examples',
  'native',
  'residency',
  'residency_driver.cpp',
);
/** The builds of the example manager that residency_driver.cpp serves, by the name it is started under. */
export const RESIDENCY_VARIANTS = [
  'clean',
  'single-threaded',
  'bug-lru-touch-skipped',
  'bug-trim-in-flight',
  'bug-fence-off-by-one',
  'bug-no-paging-wait',
  'bug-local-usage-only',
  'bug-split-drops-set',
  'bug-failed-batch-counted',
  'misuse-leak',
  'misuse-unsupported-call',
  'misuse-resident-behind-back',
] as const;
/** Where the example's native-residency drivers are linked: `<dir>/residency-<variant>` (regression files name these paths). */
export const RESIDENCY_BIN = join(ROOT, '.build', 'native-residency');

/**
 * Builds the example manager's native-residency driver (examples/native/residency/
 * residency_driver.cpp, the manager header included unchanged) under the same sanitizers, cached
 * like the kit's driver, and links `.build/native-residency/residency-<variant>` to it for each
 * variant. `release` builds with -O2 and no sanitizers instead (the benchmark's build), linked as
 * `residency-<variant>-release`. Returns the links' directory.
 */
export function buildResidencyDrivers(options: { cxx?: string; release?: boolean } = {}): string {
  const cxx = options.cxx ?? process.env.CXX ?? 'g++';
  const version = toolchain(cxx);
  const flags =
    options.release === true ? ['-std=c++17', '-O2', '-Wall', '-Wextra', '-Werror'] : CXXFLAGS;
  const name = buildHash(version, flags);
  const exe = join(RESIDENCY_BIN, 'builds', name, 'driver');
  if (!existsSync(exe)) compile(cxx, flags, RESIDENCY_DRIVER_SOURCE, exe);
  const suffix = options.release === true ? '-release' : '';
  for (const variant of RESIDENCY_VARIANTS) {
    const link = join(RESIDENCY_BIN, `residency-${variant}${suffix}`);
    const target = join('builds', name, 'driver');
    let current: string | null = null;
    try {
      current = readlinkSync(link);
    } catch {
      // no link yet
    }
    if (current !== target) {
      rmSync(link, { force: true });
      symlinkSync(target, link);
    }
  }
  return RESIDENCY_BIN;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    if (process.argv[2] === '--residency') {
      process.stdout.write(
        `${buildResidencyDrivers({ release: process.argv[3] === '--release' })}\n`,
      );
      process.exit(0);
    }
    process.stdout.write(`${buildD3d12Driver()}\n`);
  } catch (e) {
    process.stderr.write(`error: ${(e as Error).message}\n`);
    process.exit(2);
  }
}
