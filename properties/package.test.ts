/**
 * The package as a team installs it: `npm pack`, then a fresh project with only its own
 * allocator module, its own small system and mutants, a config file and a vitest file
 * (properties/fixtures/team-project) installs the tarball and uses the `gpumv` command and the
 * vitest helpers, from its root and from a sub-directory. A second project, in JavaScript and
 * without a test runner, shows what the package alone installs (no vitest, vite, rolldown,
 * esbuild or tsx: those are the team's own, optional peers) and that it runs there.
 */
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { seedNumber } from '../src/harness/seed.js';

const ROOT = path.resolve(__dirname, '..');
const FIXTURE = path.join(__dirname, 'fixtures', 'team-project');
const versionOf = (name: string) =>
  (
    JSON.parse(readFileSync(path.join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as {
      version: string;
    }
  ).version;
const VITEST_VERSION = versionOf('vitest');
const TSX_VERSION = versionOf('tsx');

function run(
  command: string,
  args: readonly string[],
  cwd: string,
  env: NodeJS.ProcessEnv = {},
): SpawnSyncReturns<string> {
  return spawnSync(command, args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, ...env, npm_config_audit: 'false', npm_config_fund: 'false' },
    timeout: 240_000,
  });
}

function output(result: SpawnSyncReturns<string>): string {
  return `${result.stdout}\n${result.stderr}`;
}

describe('the installed package', () => {
  let project = '';
  let tarball = '';
  const gpumv = (args: readonly string[], cwd = project) =>
    run(path.join(project, 'node_modules', '.bin', 'gpumv'), args, cwd, {
      SOURCE_DATE_EPOCH: '1764460800',
    });

  /** A 50-run, one-worker campaign of the installed gpumv over `target`, its findings under .fuzz/`out`. */
  const shortCampaign = (target: readonly string[], out: string) =>
    gpumv([
      'fuzz',
      ...target,
      '--runs',
      '50',
      '--workers',
      '1',
      '--out',
      path.join(project, '.fuzz', out),
    ]);

  beforeAll(() => {
    const packs = mkdtempSync(path.join(tmpdir(), 'gpumv-pack-'));
    const packed = run('npm', ['pack', '--pack-destination', packs, '--silent'], ROOT);
    expect(packed.status, output(packed)).toBe(0);
    tarball = path.join(packs, packed.stdout.trim().split('\n').at(-1)!);
    project = mkdtempSync(path.join(tmpdir(), 'gpumv-team-'));
    cpSync(FIXTURE, project, { recursive: true });
    // Runtime dependencies come from the tarball's package.json; vitest and tsx (the project's
    // config and systems are TypeScript) are the team's own.
    const installed = run(
      'npm',
      [
        'install',
        '--prefer-offline',
        '--no-package-lock',
        tarball,
        `vitest@${VITEST_VERSION}`,
        `tsx@${TSX_VERSION}`,
      ],
      project,
    );
    expect(installed.status, output(installed)).toBe(0);
  }, 300_000);

  it('runs compiled JavaScript, not TypeScript through a loader', () => {
    const bin = readFileSync(
      path.join(project, 'node_modules', 'gpu-memory-verifier', 'package.json'),
      'utf8',
    );
    expect((JSON.parse(bin) as { bin: Record<string, string> }).bin.gpumv).toMatch(
      /^dist\/.*\.js$/,
    );
    expect(
      existsSync(
        path.join(project, 'node_modules', 'gpu-memory-verifier', 'dist', 'src', 'index.d.ts'),
      ),
    ).toBe(true);
    const help = gpumv(['--help']);
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/usage: npx gpumv <command>/);
    const fuzzHelp = gpumv(['fuzz', '--help']);
    expect(fuzzHelp.stdout).toMatch(/gpumv fuzz/);
    expect(fuzzHelp.stdout).not.toMatch(/npm run fuzz/);
    const benches = gpumv(['bench', '--help']);
    expect(benches.stdout).toMatch(
      /benchmarks: alloc, campaign, native, native-residency, residency-manager, residency-set, upload-pages/,
    );
    // A benchmark whose peers are the repository's dev dependencies says so.
    const peers = gpumv(['bench', 'alloc', '--seconds', '0.1']);
    expect(peers.status).toBe(2);
    expect(peers.stderr).toMatch(
      /error: benchmark 'alloc' compares with @thi\.ng\/malloc, a dev dependency/,
    );
  });

  it("gpumv mutants runs the team's own mutants, each caught by the check it names", () => {
    const mutants = gpumv(['mutants', '--runs', '300']);
    expect(mutants.status, output(mutants)).toBe(0);
    expect(mutants.stdout).toMatch(/detected +loses-counter-zero +counter-pool/);
    expect(mutants.stdout).toMatch(/detected +keeps-last-free +counter-pool/);
  });

  it('fuzz finds the planted allocator bug; regress save, replay and show work from a sub-directory', () => {
    const campaign = gpumv(['fuzz', '--runs', '200', '--workers', '1']);
    expect(campaign.status, output(campaign)).toBe(1);
    // The config's seed, its system and its allocator; no built-in system.
    expect(campaign.stdout).toMatch(/seed team-seed-1, systems counter-pool,user-allocator,/);
    expect(campaign.stdout).toMatch(/FINDING user-allocator: check 'no-overlap'/);
    // The report shows the offsets the team's allocator returned at each step.
    expect(campaign.stdout).toMatch(/"offsetBytes":\d+/);
    const findings = path.join(project, '.fuzz', 'findings', 'user-allocator');
    // The planted bug also leaves the free list unable to serve an empty pool whole (an
    // empty-pool-liveness finding); the overlap is the one stored here.
    const name = readdirSync(findings).find(
      (candidate) => candidate.startsWith('fuzz-no-overlap-') && candidate.endsWith('.json'),
    );
    expect(name, readdirSync(findings).join(', ')).toBeDefined();
    const finding = JSON.parse(readFileSync(path.join(findings, name!), 'utf8')) as {
      config: { allocatorModule: string };
    };
    expect(finding.config.allocatorModule).toBe('src/slab-allocator.mjs');
    expect(
      existsSync(path.join(project, 'verify', 'regressions')),
      'a campaign never writes into the regressions folder',
    ).toBe(false);

    // The hint to keep it runs as printed, in the project (then its file goes: the steps below save it their way).
    const keep = new RegExp(
      `keep it: (npx gpumv regress save --finding \\.fuzz/findings/user-allocator/${name!.replace(/\./g, '\\.')})`,
    ).exec(campaign.stdout);
    expect(keep, campaign.stdout).not.toBeNull();
    expect(campaign.stdout).not.toMatch(/npm run /);
    const kept = run('sh', ['-c', keep![1]!], project, { npm_config_offline: 'true' });
    expect(kept.status, output(kept)).toBe(0);
    const keptFile = path.join(project, 'verify', 'regressions', 'user-allocator', name!);
    expect(existsSync(keptFile), output(kept)).toBe(true);
    rmSync(keptFile);

    const sub = path.join(project, 'verify');
    const saved = gpumv(
      [
        'regress',
        'save',
        '--finding',
        path.join('..', '.fuzz', 'findings', 'user-allocator', name!),
        '--slug',
        'slab-exact-fit',
      ],
      sub,
    );
    expect(saved.status, output(saved)).toBe(0);
    const file = path.join(
      project,
      'verify',
      'regressions',
      'user-allocator',
      'slab-exact-fit.json',
    );
    expect(existsSync(file)).toBe(true);

    const replay = gpumv(['regress', 'replay'], sub);
    expect(replay.status, output(replay)).toBe(1);
    expect(replay.stdout).toMatch(/FAIL regressions\/user-allocator\/slab-exact-fit\.json/);
    const show = gpumv(['regress', 'show', 'regressions/user-allocator/slab-exact-fit.json'], sub);
    expect(show.status, output(show)).toBe(0);
    expect(show.stdout).toMatch(/REGRESSION user-allocator: check 'no-overlap'/);
    expect(show.stdout).toMatch(/>> +\d+ +\{"op":"alloc"/);

    // Fixed: the regression passes, from the root as from the sub-directory.
    const fixed = { NODE_OPTIONS: `--import ${path.join(project, 'fix.mjs')}` };
    writeFileSync(path.join(project, 'fix.mjs'), 'globalThis.SLAB_ALLOCATOR_FIXED = true;\n');
    const replayFixed = run(
      path.join(project, 'node_modules', '.bin', 'gpumv'),
      ['regress', 'replay'],
      sub,
      fixed,
    );
    expect(replayFixed.status, output(replayFixed)).toBe(0);
  });

  it('ships the native driver header: a C driver built against gpumv include-dir runs under fuzz --exec', () => {
    const include = gpumv(['include-dir']);
    expect(include.status, output(include)).toBe(0);
    expect(existsSync(path.join(include.stdout.trim(), 'gpumv_driver.h'))).toBe(true);
    const source = path.join(
      project,
      'node_modules',
      'gpu-memory-verifier',
      'examples',
      'native',
      'bump.c',
    );
    const built = run(
      'cc',
      ['-std=c99', '-O1', `-I${include.stdout.trim()}`, '-o', path.join(project, 'bump'), source],
      project,
    );
    expect(built.status, output(built)).toBe(0);
    const campaign = shortCampaign(['--exec', './bump'], 'native');
    expect(campaign.status, output(campaign)).toBe(0);
    expect(campaign.stdout).toMatch(/systems native-allocator/);
  });

  it('ships the WebAssembly example: its committed .wasm runs from the installed package under fuzz --allocator', () => {
    const module = path.join(
      'node_modules',
      'gpu-memory-verifier',
      'examples',
      'wasm',
      'first-fit.mjs',
    );
    const campaign = shortCampaign(['--allocator', module], 'wasm');
    expect(campaign.status, output(campaign)).toBe(0);
    expect(campaign.stdout).toMatch(/systems user-allocator/);
  });

  it('runs the vitest helpers: the team system with its mutants, its allocator module, and its regressions', () => {
    const tests = run(
      path.join(project, 'node_modules', '.bin', 'vitest'),
      ['run', '--reporter', 'verbose'],
      project,
      { NO_COLOR: '1', FORCE_COLOR: '0' },
    );
    const text = output(tests);
    expect(text).toMatch(
      /counter-pool: model and implementation agree step for step over 200 generated sequences \(seed 7\)/,
    );
    expect(text).toMatch(/catches loses-counter-zero with observation/);
    expect(text).toMatch(/catches keeps-last-free with taken-distinct/);
    // The stored regression of the (unfixed) allocator fails, with the readable report.
    expect(tests.status, text).toBe(1);
    expect(text).toMatch(/slab-exact-fit\.json: passes against the implementation/);
    expect(text).toMatch(/FINDING user-allocator: check 'no-overlap'/);
    // describeAllocator: the module's checks over the config's seed, its promise, its stored regression.
    expect(text).toMatch(
      /the allocator in src\/slab-allocator\.mjs \(policy any\): every check holds over 200 generated sequences \(the project's seed\)/,
    );
    expect(text).toMatch(
      /src\/slab-allocator\.mjs: keeps its empty-pool promise on 1000 fresh pools, one request each/,
    );
    expect(text).toMatch(/user-allocator\/slab-exact-fit\.json: the stored regression passes/);
    // The printed hint runs in the team's project, with the config's seed.
    expect(text).toContain(
      `npx gpumv regress save --allocator src/slab-allocator.mjs --seed ${seedNumber('team-seed-1')} --path `,
    );
    expect(text).not.toContain('npm run regress');
    expect(text).toMatch(/Tests +3 failed \| 5 passed/);
  });

  it('installs light: the package and its three dependencies, no test runner or loader; runs in a JavaScript project', () => {
    const plain = mkdtempSync(path.join(tmpdir(), 'gpumv-plain-'));
    writeFileSync(
      path.join(plain, 'package.json'),
      '{ "name": "plain", "private": true, "type": "module" }\n',
    );
    const installed = run(
      'npm',
      ['install', '--prefer-offline', '--no-package-lock', tarball],
      plain,
    );
    expect(installed.status, output(installed)).toBe(0);
    const modules = path.join(plain, 'node_modules');
    for (const heavy of [
      'vitest',
      'vite',
      'rolldown',
      'esbuild',
      'tsx',
      '@fast-check/vitest',
      'lightningcss',
    ]) {
      expect(existsSync(path.join(modules, heavy)), heavy).toBe(false);
    }
    const shipped = path.join(modules, 'gpu-memory-verifier');
    expect(
      existsSync(path.join(shipped, 'regressions')),
      "this repository's regression files",
    ).toBe(false);
    expect(existsSync(path.join(shipped, 'docs', 'maintainers')), 'lab notes').toBe(false);
    expect(existsSync(path.join(shipped, 'docs', 'campaigns.md'))).toBe(true);
    copyFileSync(
      path.join(ROOT, 'examples', 'broken-allocator.mjs'),
      path.join(plain, 'allocator.mjs'),
    );
    const bin = path.join(modules, '.bin', 'gpumv');
    const campaign = run(
      bin,
      ['fuzz', '--allocator', 'allocator.mjs', '--runs', '20', '--workers', '1'],
      plain,
    );
    expect(campaign.status, output(campaign)).toBe(1);
    expect(campaign.stdout).toMatch(
      /keep it: npx gpumv regress save --finding \.fuzz\/findings\/user-allocator\/fuzz-no-overlap-/,
    );
    // A TypeScript config without tsx installed: one line that says what to install.
    writeFileSync(path.join(plain, 'gpumv.config.ts'), 'export default { seed: 1 };\n');
    const ts = run(bin, ['fuzz', '--runs', '1'], plain);
    expect(ts.status, output(ts)).toBe(2);
    expect(ts.stderr.trim().split('\n')).toHaveLength(1);
    expect(ts.stderr).toMatch(
      /^error: .*gpumv\.config\.ts: a TypeScript file needs the tsx package to load: npm install --save-dev tsx/,
    );
  });
});
