/**
 * The package as a team installs it: `npm pack`, then a fresh project with only its own
 * allocator module, its own small system and mutants, a config file and a vitest file
 * (properties/fixtures/team-project) installs the tarball and uses the `gpumv` command and the
 * vitest helpers, from its root and from a sub-directory.
 */
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve(__dirname, '..');
const FIXTURE = path.join(__dirname, 'fixtures', 'team-project');
const VITEST_VERSION = (JSON.parse(readFileSync(path.join(ROOT, 'node_modules', 'vitest', 'package.json'), 'utf8')) as { version: string }).version;

function run(command: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = {}): SpawnSyncReturns<string> {
  return spawnSync(command, args, { cwd, encoding: 'utf8', env: { ...process.env, ...env, npm_config_audit: 'false', npm_config_fund: 'false' }, timeout: 240_000 });
}

function output(result: SpawnSyncReturns<string>): string {
  return `${result.stdout}\n${result.stderr}`;
}

describe('the installed package', () => {
  let project = '';
  const gpumv = (args: readonly string[], cwd = project) => run(path.join(project, 'node_modules', '.bin', 'gpumv'), args, cwd, { SOURCE_DATE_EPOCH: '1764460800' });

  beforeAll(() => {
    const packs = mkdtempSync(path.join(tmpdir(), 'gpumv-pack-'));
    const packed = run('npm', ['pack', '--pack-destination', packs, '--silent'], ROOT);
    expect(packed.status, output(packed)).toBe(0);
    const tarball = path.join(packs, packed.stdout.trim().split('\n').at(-1)!);
    project = mkdtempSync(path.join(tmpdir(), 'gpumv-team-'));
    cpSync(FIXTURE, project, { recursive: true });
    // Runtime dependencies come from the tarball's package.json; vitest is the team's own.
    const installed = run('npm', ['install', '--prefer-offline', '--no-package-lock', tarball, `vitest@${VITEST_VERSION}`], project);
    expect(installed.status, output(installed)).toBe(0);
  }, 300_000);

  it('runs compiled JavaScript, not TypeScript through a loader', () => {
    const bin = readFileSync(path.join(project, 'node_modules', 'gpu-memory-verifier', 'package.json'), 'utf8');
    expect((JSON.parse(bin) as { bin: Record<string, string> }).bin.gpumv).toMatch(/^dist\/.*\.js$/);
    expect(existsSync(path.join(project, 'node_modules', 'gpu-memory-verifier', 'dist', 'src', 'index.d.ts'))).toBe(true);
    const help = gpumv(['--help']);
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/usage: gpumv <command>/);
    const fuzzHelp = gpumv(['fuzz', '--help']);
    expect(fuzzHelp.stdout).toMatch(/gpumv fuzz/);
    expect(fuzzHelp.stdout).not.toMatch(/npm run fuzz/);
    const benches = gpumv(['bench', '--help']);
    expect(benches.stdout).toMatch(/benchmarks: alloc, campaign, native, residency-manager, residency-set, upload-pages/);
    // A benchmark whose peers are the repository's dev dependencies says so.
    const peers = gpumv(['bench', 'alloc', '--seconds', '0.1']);
    expect(peers.status).toBe(2);
    expect(peers.stderr).toMatch(/error: benchmark 'alloc' compares with @thi\.ng\/malloc, a dev dependency/);
  });

  it('gpumv mutants runs the team\'s own mutants, each caught by the check it names', () => {
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
    const name = readdirSync(findings).find((candidate) => candidate.startsWith('fuzz-no-overlap-'));
    expect(name, readdirSync(findings).join(', ')).toBeDefined();
    const finding = JSON.parse(readFileSync(path.join(findings, name!), 'utf8')) as { config: { allocatorModule: string } };
    expect(finding.config.allocatorModule).toBe('src/slab-allocator.mjs');
    expect(existsSync(path.join(project, 'verify', 'regressions')), 'a campaign never writes into the regressions folder').toBe(false);

    const sub = path.join(project, 'verify');
    const saved = gpumv(['regress', 'save', '--finding', path.join('..', '.fuzz', 'findings', 'user-allocator', name!), '--slug', 'slab-exact-fit'], sub);
    expect(saved.status, output(saved)).toBe(0);
    const file = path.join(project, 'verify', 'regressions', 'user-allocator', 'slab-exact-fit.json');
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
    const replayFixed = run(path.join(project, 'node_modules', '.bin', 'gpumv'), ['regress', 'replay'], sub, fixed);
    expect(replayFixed.status, output(replayFixed)).toBe(0);
  });

  it('ships the native driver header: a C driver built against gpumv include-dir runs under fuzz --exec', () => {
    const include = gpumv(['include-dir']);
    expect(include.status, output(include)).toBe(0);
    expect(existsSync(path.join(include.stdout.trim(), 'gpumv_driver.h'))).toBe(true);
    const source = path.join(project, 'node_modules', 'gpu-memory-verifier', 'examples', 'native', 'bump.c');
    const built = run('cc', ['-std=c99', '-O1', `-I${include.stdout.trim()}`, '-o', path.join(project, 'bump'), source], project);
    expect(built.status, output(built)).toBe(0);
    const campaign = gpumv(['fuzz', '--exec', './bump', '--runs', '50', '--workers', '1', '--out', path.join(project, '.fuzz', 'native')]);
    expect(campaign.status, output(campaign)).toBe(0);
    expect(campaign.stdout).toMatch(/systems native-allocator/);
  });

  it('runs the vitest helpers: the team system with its mutants, and its regressions', () => {
    const tests = run(path.join(project, 'node_modules', '.bin', 'vitest'), ['run', '--reporter', 'verbose'], project, { NO_COLOR: '1', FORCE_COLOR: '0' });
    const text = output(tests);
    expect(text).toMatch(/counter-pool: model and implementation agree step for step over 200 generated sequences \(seed 7\)/);
    expect(text).toMatch(/catches loses-counter-zero with observation/);
    expect(text).toMatch(/catches keeps-last-free with taken-distinct/);
    // The stored regression of the (unfixed) allocator fails, with the readable report.
    expect(tests.status, text).toBe(1);
    expect(text).toMatch(/slab-exact-fit\.json: passes against the implementation/);
    expect(text).toMatch(/FINDING user-allocator: check 'no-overlap'/);
    expect(text).toMatch(/Tests +1 failed \| 4 passed/);
  });
});
