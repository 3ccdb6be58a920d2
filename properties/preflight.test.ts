/**
 * The campaign preflight (src/cli/preflight.ts): the stored regressions of a campaign's systems
 * replay before it fuzzes; a file whose judge no longer holds (its mutant escapes, another check
 * now catches it first) or that cannot be read stops the campaign; a file that fails against the
 * implementation (a bug not fixed yet) is reported and the campaign runs.
 */
import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { preflightDirs, runPreflight } from '../src/cli/preflight.js';
import { projectFromConfig } from '../src/project.js';
import { LruList } from '../src/residency/lru-list.js';
import { cliScript, runTsAsync, TSX_IMPORT } from './cli.js';

const ROOT = path.resolve(__dirname, '..');
const SOURCE = path.join(ROOT, 'regressions', 'alloc-buddy', 'buddy-top-order-unreachable.json');

// biome-ignore lint/suspicious/noExplicitAny: regression files parsed and edited field by field
type Json = Record<string, any>;
const original = (): Json => JSON.parse(readFileSync(SOURCE, 'utf8')) as Json;

/** A project whose regressions folder holds the given files (built-ins on, so their mutants resolve). */
function projectWith(files: Record<string, Json | string>) {
  const root = mkdtempSync(path.join(tmpdir(), 'preflight-'));
  for (const [name, content] of Object.entries(files)) {
    const file = path.join(root, 'regressions', name);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  }
  return { root, project: projectFromConfig({}, root, null) };
}

describe('the preflight', () => {
  it('reads the project folder and the built-ins folder, the same folder once', () => {
    const { root, project } = projectWith({ 'alloc-buddy/a.json': original() });
    expect(preflightDirs(project)).toEqual([
      path.join(root, 'regressions'),
      path.join(ROOT, 'regressions'),
    ]);
    expect(preflightDirs(projectFromConfig({}, ROOT, null))).toEqual([
      path.join(ROOT, 'regressions'),
    ]);
    expect(preflightDirs(projectFromConfig({ builtins: false }, root, null))).toEqual([
      path.join(root, 'regressions'),
    ]);
  });

  it('accepts a file that holds and counts its mutant replays', async () => {
    const { root, project } = projectWith({ 'alloc-buddy/a.json': original() });
    const result = await runPreflight(project, new Set(['alloc-buddy']), [
      path.join(root, 'regressions'),
    ]);
    expect(result).toMatchObject({
      files: 1,
      mutantReplays: 1,
      skipped: 0,
      problems: [],
      failing: [],
    });
  });

  it('reports a mutant that escapes, a check that changed, a malformed file; skips other systems and hang files', async () => {
    const escaped = original();
    escaped.catches.push('buddy-split-keeps-right');
    const otherCheck = original();
    otherCheck.origin.check = 'no-overlap';
    const hang = original();
    hang.origin.check = 'hang';
    const { root, project } = projectWith({
      'alloc-buddy/escaped.json': escaped,
      'alloc-buddy/other-check.json': otherCheck,
      'alloc-buddy/malformed.json': '{ "format": 2, ',
      'alloc-buddy/hang.json': hang,
      'alloc-best-fit/not-in-campaign.json': { ...original(), system: 'alloc-best-fit' },
    });
    const result = await runPreflight(project, new Set(['alloc-buddy']), [
      path.join(root, 'regressions'),
    ]);
    expect(result.files).toBe(3);
    expect(result.skipped).toBe(1);
    const byFile = new Map(
      result.problems.map((entry) => [path.basename(entry.file), entry.problems.join('; ')]),
    );
    expect([...byFile.keys()].sort()).toEqual([
      'escaped.json',
      'malformed.json',
      'other-check.json',
    ]);
    expect(byFile.get('escaped.json')).toBe('buddy-split-keeps-right is no longer caught');
    expect(byFile.get('other-check.json')).toBe(
      'buddy-top-order-unreachable is now caught first by empty-pool-liveness, not no-overlap',
    );
    expect(byFile.get('malformed.json')).toMatch(/^\$: /);
  });

  it("lists a file that fails against the implementation (a saved finding) apart; user-allocator files only for the campaign's modules", async () => {
    const finding = (module: string) => ({
      $schema: '../../schema/regression.schema.json',
      format: 2,
      system: 'user-allocator',
      description: 'a saved finding: the hole is handed out twice',
      config: { capacityBytes: 4096, allocatorModule: module, policy: 'any' },
      origin: { tool: 'hand-written', date: '2026-12-01' },
      catches: [],
      commands: [
        { op: 'alloc', sizeBytes: 16, alignBytes: 1 },
        { op: 'free', index: 0 },
        { op: 'alloc', sizeBytes: 8, alignBytes: 1 },
        { op: 'alloc', sizeBytes: 8, alignBytes: 1 },
      ],
    });
    const { root, project } = projectWith({
      'user-allocator/broken.json': finding('broken.mjs'),
      'user-allocator/other.json': finding('other.mjs'),
    });
    copyFileSync(
      path.join(ROOT, 'examples', 'broken-allocator.mjs'),
      path.join(root, 'broken.mjs'),
    );
    const result = await runPreflight(
      project,
      new Set(['user-allocator']),
      [path.join(root, 'regressions')],
      new Set(['broken.mjs']),
    );
    expect(result.problems).toEqual([]);
    expect(result.files).toBe(1);
    expect(result.failing).toEqual([
      {
        file: path.join(root, 'regressions', 'user-allocator', 'broken.json'),
        check: 'no-overlap',
        step: 3,
      },
    ]);
    expect(result.ignored).toEqual([]);
  });

  it('stops a campaign before it starts, naming the file (exit 4); --no-preflight runs it anyway', () => {
    const escaped = original();
    escaped.catches.push('buddy-split-keeps-right');
    const { root } = projectWith({ 'alloc-buddy/escaped.json': escaped });
    writeFileSync(path.join(root, 'gpumv.config.mjs'), 'export default {};\n');
    const fuzz = (...args: string[]) =>
      spawnSync(
        process.execPath,
        [
          ...TSX_IMPORT,
          path.join(ROOT, 'src', 'cli', 'fuzz.ts'),
          '--system',
          'alloc-buddy',
          '--runs',
          '3',
          '--workers',
          '1',
          ...args,
        ],
        { encoding: 'utf8', cwd: root },
      );
    const stopped = fuzz();
    expect(stopped.status, stopped.stderr).toBe(4);
    expect(stopped.stdout).toContain(
      `PREFLIGHT ${path.join('regressions', 'alloc-buddy', 'escaped.json')}: buddy-split-keeps-right is no longer caught`,
    );
    expect(stopped.stdout).toMatch(
      /preflight: 1 of \d+ stored regressions do not hold, so the campaign did not start/,
    );
    expect(stopped.stdout).not.toContain('fuzz: seed');
    expect(existsSync(path.join(root, '.fuzz', 'last-campaign.json'))).toBe(false);
    const skipped = fuzz('--no-preflight');
    expect(skipped.status, skipped.stderr).toBe(0);
    expect(skipped.stdout).not.toContain('preflight');
    expect(skipped.stdout).toContain('fuzz: seed');
  });

  it('a stored regression that now hangs is stopped by the time limit and named; the campaign does not start', () => {
    const loop = {
      $schema: '../../schema/regression.schema.json',
      format: 2,
      system: 'user-allocator',
      description:
        'a free links a node of the free list to itself; the next alloc that walks past it loops',
      // The case a campaign on this module shrank its hang to.
      config: { capacityBytes: 65537, allocatorModule: 'looping.mjs', policy: 'any' },
      origin: { tool: 'hand-written', date: '2026-12-01' },
      catches: [],
      commands: [
        { op: 'alloc', sizeBytes: 1, alignBytes: 256 },
        { op: 'alloc', sizeBytes: 257, alignBytes: 256 },
        { op: 'alloc', sizeBytes: 32768, alignBytes: 256 },
        { op: 'free', index: 34 },
        { op: 'alloc', sizeBytes: 4096, alignBytes: 1 },
      ],
    };
    const { root } = projectWith({ 'user-allocator/loop.json': loop });
    copyFileSync(
      path.join(ROOT, 'examples', 'looping-free-list-allocator.mjs'),
      path.join(root, 'looping.mjs'),
    );
    writeFileSync(
      path.join(root, 'gpumv.config.mjs'),
      "export default { allocators: ['looping.mjs'], builtins: false };\n",
    );
    const run = spawnSync(
      process.execPath,
      [
        ...TSX_IMPORT,
        path.join(ROOT, 'src', 'cli', 'fuzz.ts'),
        '--runs',
        '1',
        '--workers',
        '1',
        '--timeout',
        '500ms',
      ],
      { encoding: 'utf8', cwd: root },
    );
    expect(run.status, run.stdout + run.stderr).toBe(4);
    expect(run.stdout).toContain(
      `PREFLIGHT ${path.join('regressions', 'user-allocator', 'loop.json')}: hang: a run did not return within 500 ms`,
    );
    expect(run.stdout).not.toContain('fuzz: seed');
  });

  it("blames the implementation, not a judge, when a bug planted beneath a mutant changes the mutant's check", async () => {
    const file = path.join(
      ROOT,
      'regressions',
      'residency-manager',
      'rm-g-minus-one-underflow.json',
    );
    const { root, project } = projectWith({
      'residency-manager/rm-g-minus-one-underflow.json': JSON.parse(
        readFileSync(file, 'utf8'),
      ) as Json,
    });
    const dirs = [path.join(root, 'regressions')];
    // The pressure trim with `<=` for `<` on the budget, planted in the shipped LRU list for this
    // test (every mutant of the catalog inherits it, as a user's edit would reach them).
    type Trim = (usageBytes: number, budgetBytes: number, syncPoint: number) => number;
    const proto = LruList.prototype as unknown as { trimToSyncPointInclusive: Trim };
    const shipped = proto.trimToSyncPointInclusive;
    proto.trimToSyncPointInclusive = function (
      this: LruList,
      usageBytes: number,
      budgetBytes: number,
      syncPoint: number,
    ): number {
      let count = 0;
      let usage = usageBytes;
      for (let head = this.headObject(); head >= 0; head = this.headObject()) {
        if (this.lastSync[head]! > syncPoint || usage <= budgetBytes) break;
        this.evictList[count++] = head;
        this.evict(head);
        usage -= this.sizesBytes[head]!;
      }
      return count;
    };
    let planted: Awaited<ReturnType<typeof runPreflight>>;
    try {
      planted = await runPreflight(project, new Set(['residency-manager']), dirs);
    } finally {
      proto.trimToSyncPointInclusive = shipped;
    }
    // The file still replays clean against the implementation; its mutant is caught first by another check...
    expect(planted.problems).toEqual([]);
    expect(planted.failing).toHaveLength(1);
    const failing = planted.failing[0]!;
    expect(failing.judged).toEqual([
      'rm-g-minus-one-underflow is now caught first by answers-match-model, not residency-before-execution',
    ]);
    // ...and the implementation alone fails: its bug, with a command that stores its case.
    expect(failing.probe).toBeDefined();
    expect(failing.probe!.save).toMatch(
      /^npm run regress -- save --system residency-manager --seed -?\d+ --path [\d:]+$/,
    );
    // Without the planted bug the file holds: the probe only runs when a mutant's check changed.
    const shippedResult = await runPreflight(project, new Set(['residency-manager']), dirs);
    expect(shippedResult).toMatchObject({ files: 1, problems: [], failing: [] });
  });

  it('names and skips a JSON file that is no regression at all; a broken regression still stops', async () => {
    const { root, project } = projectWith({
      'notes.json': { todo: 'look at buddy' },
      'alloc-buddy/list.json': '[1, 2]',
      'alloc-buddy/a.json': original(),
    });
    const result = await runPreflight(project, new Set(['alloc-buddy']), [
      path.join(root, 'regressions'),
    ]);
    expect(result.ignored.map((entry) => [path.basename(entry.file), entry.reason])).toEqual([
      ['list.json', 'not a regression file (not a JSON object)'],
      ['notes.json', 'not a regression file (no "format" field)'],
    ]);
    expect(result).toMatchObject({ files: 1, problems: [], failing: [] });
    writeFileSync(path.join(root, 'gpumv.config.mjs'), 'export default {};\n');
    // Four independent runs at once (the campaign's .fuzz folder is read by none of the others).
    const regress = (...args: string[]) => runTsAsync(cliScript('regress'), args, { cwd: root });
    const [list, replay, named, fuzz] = await Promise.all([
      regress('list'),
      regress('replay'),
      regress('replay', 'regressions/notes.json'),
      runTsAsync(cliScript('fuzz'), ['--system', 'alloc-buddy', '--runs', '2', '--workers', '1'], {
        cwd: root,
      }),
    ]);
    for (const run of [list, replay]) {
      expect(run.status, run.stdout + run.stderr).toBe(0);
      expect(
        run.stderr.match(
          /warning: regressions\/notes\.json: not a regression file \(no "format" field\); skipped/g,
        ),
      ).toHaveLength(1);
    }
    // Named on the command line, it is read, and refused as what it is.
    expect(named.status).toBe(2);
    expect(named.stderr.trim().split('\n')).toHaveLength(1);
    expect(fuzz.status, fuzz.stdout + fuzz.stderr).toBe(0);
    expect(
      fuzz.stderr.match(/warning: regressions\/notes\.json: not a regression file/g),
    ).toHaveLength(1);
    expect(fuzz.stdout).toMatch(
      /preflight: \d+ stored regressions replayed; \d+ mutant replays, each caught by its recorded check; [\d.]+ s/,
    );
  });

  it('passes on the repo: every stored regression of the built-in systems holds', async () => {
    const project = projectFromConfig({}, ROOT, null);
    const systems = new Set(project.registry.systems.map((system) => system.name));
    const result = await runPreflight(project, systems);
    expect(result.problems).toEqual([]);
    expect(result.failing).toEqual([]);
    expect(result.files).toBeGreaterThan(100);
    expect(result.mutantReplays).toBeGreaterThanOrEqual(result.files);
  });
});
