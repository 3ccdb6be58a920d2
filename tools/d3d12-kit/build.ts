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
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
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

/** Builds the driver if its cached build is missing; returns the executable's path. */
export function buildD3d12Driver(cxx = process.env.CXX ?? 'g++'): string {
  const version = compilerVersion(cxx);
  if (!existsSync(DIRECTX_HEADER) || !existsSync(join(WSL_STUBS, 'unknwn.h'))) {
    throw new Error(
      `${DIRECTX_HEADER} or ${WSL_STUBS}/unknwn.h missing: install Debian's directx-headers-dev (apt-get install -y directx-headers-dev)`,
    );
  }
  const hash = createHash('sha256');
  hash.update(version).update(CXXFLAGS.join(' '));
  for (const file of sources()) hash.update(file.slice(ROOT.length)).update(readFileSync(file));
  const dir = join(ROOT, '.build', 'd3d12-kit', hash.digest('hex').slice(0, 16));
  const exe = join(dir, 'driver');
  if (existsSync(exe)) return exe;
  mkdirSync(dir, { recursive: true });
  const partial = `${exe}.partial-${process.pid}`;
  const args = [
    ...CXXFLAGS,
    `-I${KIT_INCLUDE}`,
    `-I${KIT_SHIM}`,
    `-I${WSL_STUBS}`,
    DRIVER_SOURCE,
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
  renameSync(partial, exe); // a build interrupted half-way never counts as cached
  // Older builds (other hashes) are stale: only the current one is kept.
  const cache = dirname(dir);
  for (const name of readdirSync(cache))
    if (join(cache, name) !== dir) rmSync(join(cache, name), { recursive: true, force: true });
  return exe;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    process.stdout.write(`${buildD3d12Driver()}\n`);
  } catch (e) {
    process.stderr.write(`error: ${(e as Error).message}\n`);
    process.exit(2);
  }
}
