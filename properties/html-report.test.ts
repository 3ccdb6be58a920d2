/**
 * The HTML report (src/report/) built in Node: one page per system from a stored regression,
 * with the picture the system's visual hook gives, the console text of the same data, and the
 * highlights the finding names. The browser tests (html-report.browser.test.ts) check what is drawn.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildReport, formatReport } from '../src/harness/report.js';
import type { HeapVisual, TimelineVisual } from '../src/harness/visual.js';
import { findHighlights } from '../src/report/highlights.js';
import { renderHtmlReport } from '../src/report/html.js';
import { pageData } from '../src/report/page-data.js';
import { renderCampaignHtml } from '../src/report/campaign-html.js';
import {
  findingHtmlPath,
  writeCampaignSummaryHtml,
  writeFindingHtml,
} from '../src/report/fuzz-html.js';
import { MUTANTS } from '../mutants/index.js';
import { BUILTIN_SYSTEMS } from '../src/systems/index.js';
import { userAllocatorSystemFromModule } from '../src/systems/user-allocator.js';
import { loadUserAllocator } from '../src/user-allocator-module.js';
import { checkSystem } from '../src/harness/property.js';
import { namedRanges, REGRESSIONS, storedReport } from './html-report-support.js';
import { TSX_IMPORT } from './cli.js';

const ROOT = path.resolve(__dirname, '..');
const cli = (name: string, ...args: string[]) =>
  spawnSync(
    process.execPath,
    [...TSX_IMPORT, path.join(ROOT, 'src', 'cli', `${name}.ts`), ...args],
    {
      encoding: 'utf8',
      cwd: ROOT,
    },
  );

/** One failing regression of each built-in system, and the picture its report must have. */
const ONE_PER_SYSTEM: Record<string, { file: string; kind: 'heap' | 'timeline' }> = {
  'alloc-best-fit': { file: 'alloc-best-fit/bf-returns-units.json', kind: 'heap' },
  'alloc-buddy': { file: 'alloc-buddy/buddy-oversize-takes-whole-heap.json', kind: 'heap' },
  'alloc-first-fit': { file: 'alloc-first-fit/ff-fit-off-by-one.json', kind: 'heap' },
  'ring-upload': { file: 'ring-upload/ring-wrap-crosses-tail.json', kind: 'heap' },
  'deferred-free': { file: 'deferred-free/deferred-release-at-next-value.json', kind: 'heap' },
  'fast-allocator': { file: 'fast-allocator/fast-cursor-bump-lost.json', kind: 'heap' },
  'fast-constant-allocator': {
    file: 'fast-constant-allocator/constant-update-in-place.json',
    kind: 'heap',
  },
  'residency-manager': {
    file: 'residency-manager/rm-sync-wait-does-not-block.json',
    kind: 'timeline',
  },
  'residency-set': { file: 'residency-set/set-close-keeps-flags.json', kind: 'timeline' },
  'engine-frame': {
    file: 'engine-frame/engine-manager-waits-next-fence-value.json',
    kind: 'timeline',
  },
};

describe('HTML report', () => {
  it('has a stored regression for every built-in system but user-allocator (covered by alloc-user)', () => {
    expect(Object.keys(ONE_PER_SYSTEM).sort()).toEqual(
      BUILTIN_SYSTEMS.map((system) => system.name)
        .filter((name) => name !== 'user-allocator')
        .sort(),
    );
  });

  for (const [name, { file, kind }] of Object.entries(ONE_PER_SYSTEM)) {
    it(`${name}: ${file} gives a ${kind} picture of every step, both sides, and the same console text`, async () => {
      const { input, regression } = await storedReport(file);
      const data = buildReport({ ...input, withVisuals: true });
      const page = pageData(data);
      expect(page.kind).toBe(kind);
      expect(page.steps).toHaveLength(regression.commands.length);
      for (const step of page.steps) {
        expect(step.modelVisual?.kind).toBe(kind);
        expect(step.implVisual?.kind).toBe(kind);
      }
      // One source: the page carries the console report of the same data, byte for byte.
      expect(page.text).toBe(formatReport(input));
      const html = renderHtmlReport(data);
      expect(html).not.toMatch(/<(link|img|iframe)\b|\bsrc=|https?:\/\//);
      expect(html).toContain(`data-steps="${regression.commands.length}"`);
    });
  }

  it('highlights the ranges an overlap finding names', async () => {
    for (const file of [
      'alloc-best-fit/bf-returns-units.json',
      'alloc-buddy/buddy-returns-units.json',
      'ring-upload/ring-wrap-crosses-tail.json',
      'alloc-first-fit/ff-fit-off-by-one.json',
    ]) {
      const { input, failure } = await storedReport(file);
      const page = pageData(buildReport({ ...input, withVisuals: true }));
      const named = new Set(namedRanges(failure.message).map((range) => range.join('+')));
      expect(failure.check, file).toBe('no-overlap');
      expect(new Set(page.highlights.map((h) => `${h.range!.join('+')}`)), file).toEqual(named);
      expect(
        page.highlights.every(
          (h) => h.reason === 'overlap' && h.step === failure.step && h.side === 'impl',
        ),
        file,
      ).toBe(true);
    }
  });

  it('highlights the out-of-bounds range an in-bounds finding names', async () => {
    const { input, failure } = await storedReport(
      'alloc-buddy/buddy-oversize-takes-whole-heap.json',
    );
    const page = pageData(buildReport({ ...input, withVisuals: true }));
    expect(page.highlights).toEqual([
      {
        step: failure.step,
        side: 'impl',
        reason: 'out-of-bounds',
        range: namedRanges(failure.message)[0],
      },
    ]);
  });

  it('flags the object an eviction-in-flight finding names', async () => {
    const { input, failure } = await storedReport(
      'residency-manager/rm-sync-wait-does-not-block.json',
    );
    const page = pageData(buildReport({ ...input, withVisuals: true }));
    const object = /Evict of object (\d+)/.exec(failure.message)![1];
    expect(page.highlights.map((h) => h.row)).toEqual([`object ${object}`]);
    // The work queued on the GPU is the count the answers check names ("queue 0 holds 5 items").
    const [, queue, items] = /queue (\d+) holds (\d+) items/.exec(failure.message)!;
    const visual = page.steps[failure.step]!.implVisual as TimelineVisual;
    expect(visual.queued?.[`queue ${queue}`]).toBe(Number(items));
  });

  it('findHighlights: overlap, out of bounds, over GPU reads, else one side only; flagged, else differing states', () => {
    const heap = (live: [number, number][], extra: Partial<HeapVisual> = {}): HeapVisual => ({
      kind: 'heap',
      extentBytes: 100,
      live,
      ...extra,
    });
    expect(
      findHighlights(
        3,
        heap([[0, 10]]),
        heap([
          [0, 10],
          [5, 10],
          [40, 5],
        ]),
      ).map((h) => [h.reason, h.range]),
    ).toEqual([
      ['overlap', [0, 10]],
      ['overlap', [5, 10]],
    ]);
    expect(
      findHighlights(0, heap([]), heap([[95, 10]])).map((h) => [h.side, h.reason, h.range]),
    ).toEqual([['impl', 'out-of-bounds', [95, 10]]]);
    expect(
      findHighlights(0, heap([]), heap([[20, 10]], { busy: [[25, 1]] })).map((h) => h.reason),
    ).toEqual(['in-flight']);
    // A range already held at the step before is in flight by the caller's own GPU work: not a problem.
    expect(
      findHighlights(1, heap([[20, 10]]), heap([[20, 10]], { busy: [[25, 1]] }), {
        impl: heap([[20, 10]]),
      }),
    ).toEqual([]);
    expect(findHighlights(0, heap([[0, 4]]), heap([[8, 4]])).map((h) => [h.side, h.range])).toEqual(
      [
        ['impl', [8, 4]],
        ['model', [0, 4]],
      ],
    );
    expect(
      findHighlights(
        -1,
        heap([]),
        heap([
          [0, 10],
          [0, 10],
        ]),
      ),
    ).toEqual([]);
    const timeline = (rows: TimelineVisual['rows']): TimelineVisual => ({ kind: 'timeline', rows });
    expect(
      findHighlights(
        2,
        timeline([{ name: 'a', state: 'resident' }]),
        timeline([{ name: 'a', state: 'evicted', flagged: true }]),
      ).map((h) => [h.reason, h.row]),
    ).toEqual([['flagged', 'a']]);
    expect(
      findHighlights(
        2,
        timeline([
          { name: 'a', state: 'resident' },
          { name: 'b', state: 'resident' },
        ]),
        timeline([
          { name: 'a', state: 'resident' },
          { name: 'b', state: 'evicted' },
        ]),
      ).map((h) => [h.reason, h.row]),
    ).toEqual([['state-differs', 'b']]);
  });

  it('keeps the page data inside its script element (no "</script" from the data)', async () => {
    const { input } = await storedReport('alloc-best-fit/bf-returns-units.json');
    const html = renderHtmlReport(
      buildReport({ ...input, withVisuals: true, notes: ['</script><b>x</b>'] }),
    );
    expect(html.match(/<\/script>/g)).toHaveLength(2);
    expect(html).toContain('&lt;/script&gt;&lt;b&gt;x&lt;/b&gt;');
  });

  it('campaign summary page: a row per system, findings linked to their reports', () => {
    const system = {
      runs: 3,
      commands: 120,
      completed: {},
      probes: { 'null-answers': 4, 'null-answers-with-fitting-gap': 1 },
      probesNeverHit: ['deep-path'],
      swarm: { defaultPlanRuns: 0, smallConfigRuns: 0, opEnabledRuns: {} },
      faults: { faultFreeRuns: 0, siteRuns: {} },
    };
    const finding = {
      signature: 'alloc-buddy/no-overlap/alloc',
      system: 'alloc-buddy',
      check: 'no-overlap',
      op: 'alloc',
      runIndex: 2,
      commands: 2,
      file: '.fuzz/findings/alloc-buddy/f.json',
      replay: 'npm run regress -- replay .fuzz/findings/alloc-buddy/f.json',
      weights: null,
      faults: [],
      smallConfigs: false,
    };
    const html = renderCampaignHtml(
      {
        format: 2,
        seed: '7',
        runs: 3,
        budgetMs: null,
        targets: { systems: 'all' },
        shards: ['0/1'],
        systems: { 'alloc-buddy': system, 'ring-upload': { ...system, probesNeverHit: [] } },
        findings: [finding],
        timing: {
          elapsedMs: 1000,
          workers: 1,
          busyMs: {},
          commandsPerSecond: { 'alloc-buddy': 120 },
          totalCommandsPerSecond: 240,
          threadRuns: 3,
        },
        stopped: 'complete',
      } as never,
      new Map([[finding.file, 'findings/alloc-buddy/f.html']]),
    );
    expect(html.match(/<tr data-system=/g)).toHaveLength(2);
    expect(html).toContain(
      '<a href="findings/alloc-buddy/f.html">alloc-buddy/no-overlap/alloc</a>',
    );
    expect(html).toContain('deep-path');
    expect(html).toContain('25.0 % of 4');
  });

  it('regress show FILE --html OUT writes the page; --html with two files is a usage error', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'gpumv-show-html-'));
    try {
      const out = path.join(dir, 'r.html');
      const file = path.join(REGRESSIONS, 'residency-manager', 'rm-sync-wait-does-not-block.json');
      const shown = cli('regress', 'show', file, '--html', out);
      expect(shown.status, shown.stderr).toBe(0);
      expect(shown.stdout).toContain('REGRESSION residency-manager');
      const html = readFileSync(out, 'utf8');
      expect(html).toContain('data-kind="timeline"');
      expect(html).toContain(
        `data-steps="${JSON.parse(readFileSync(file, 'utf8')).commands.length}"`,
      );
      const two = cli('regress', 'show', file, file, '--html', out);
      expect(two.status).toBe(2);
      expect(two.stderr).toMatch(/^error: --html writes the report of one file; got 2$/m);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('fuzz: an HTML report beside every finding, and --html OUT links them from the summary page', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'gpumv-fuzz-html-'));
    try {
      const summaryPage = path.join(dir, 'campaign.html');
      const run = cli(
        'fuzz',
        '--mutant',
        'bf-returns-units',
        '--runs',
        '6',
        '--workers',
        '1',
        '--out',
        path.join(dir, 'findings'),
        '--json',
        path.join(dir, 'summary.json'),
        '--html',
        summaryPage,
      );
      expect(run.status, run.stderr).toBe(1);
      const folder = path.join(dir, 'findings', 'alloc-best-fit');
      const findings = readdirSync(folder).filter((name) => name.endsWith('.json'));
      expect(findings.length).toBeGreaterThan(0);
      for (const finding of findings)
        expect(existsSync(path.join(folder, finding.replace(/\.json$/, '.html'))), finding).toBe(
          true,
        );
      const page = readFileSync(summaryPage, 'utf8');
      for (const finding of findings)
        expect(page).toContain(
          `href="findings/alloc-best-fit/${finding.replace(/\.json$/, '.html')}"`,
        );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('writeFindingHtml: the page beside the finding, none for a hang; the summary links it', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'gpumv-finding-html-'));
    try {
      const { regression, system, failure } = await storedReport(
        'alloc-best-fit/bf-returns-units.json',
      );
      const mutant = MUTANTS.find((candidate) => candidate.name === 'bf-returns-units')!;
      const target = { system, implFactory: mutant.createImpl, catches: [mutant.name] };
      const entry = (file: string) => ({
        signature: 's',
        system: system.name,
        check: failure.check,
        op: 'alloc',
        runIndex: 0,
        commands: regression.commands.length,
        file,
        replay: `npm run regress -- replay ${file}`,
        weights: null,
        faults: [],
        smallConfigs: false,
      });
      const finding = (check: string) => ({
        signature: 's',
        system: system.name,
        check,
        checks: [check],
        op: 'alloc',
        runIndex: 0,
        seed: 1,
        path: '0',
        config: regression.config,
        commands: [...regression.commands],
        message: 'm',
        weights: null,
        faults: [],
        smallConfigs: false,
        originalLength: 9,
        firstCheck: check,
        firstOp: 'alloc',
      });
      mkdirSync(path.join(dir, 'f'));
      writeFindingHtml(dir, entry('f/new.json'), target, finding(failure.check));
      expect(readdirSync(path.join(dir, 'f'))).toEqual(['new.html']);
      expect(readFileSync(path.join(dir, 'f', 'new.html'), 'utf8')).toContain(
        'replay: npm run regress -- replay f/new.json',
      );
      writeFindingHtml(dir, entry('f/hang.json'), target, finding('hang'));
      expect(existsSync(findingHtmlPath(path.join(dir, 'f', 'hang.json')))).toBe(false);
      const summary = JSON.parse(
        readFileSync(path.join(ROOT, 'properties', 'fixtures', 'summary-html.json'), 'utf8'),
      );
      summary.findings = [entry('f/new.json'), entry('f/hang.json')];
      writeCampaignSummaryHtml(path.join(dir, 'out', 'campaign.html'), summary, dir);
      const page = readFileSync(path.join(dir, 'out', 'campaign.html'), 'utf8');
      expect(page).toContain('<a href="../f/new.html">');
      expect(page.match(/<a href=/g)).toHaveLength(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a user allocator of policy 'any' (no model): the implementation's side only, its heap map drawn", async () => {
    const system = userAllocatorSystemFromModule(
      await loadUserAllocator(path.join(ROOT, 'examples', 'broken-allocator.mjs')),
    );
    expect(system.modelless).toBe(true);
    const result = checkSystem(system, { seed: 7, numRuns: 200 });
    expect(result.failed).toBe(true);
    if (!result.failed) return;
    const input = { system, failure: result.failure, commands: result.commands };
    const page = pageData(buildReport({ ...input, withVisuals: true }));
    expect(page.modelless).toBe(true);
    expect(page.kind).toBe('heap');
    expect(
      page.steps.every(
        (step) =>
          step.modelVisual === undefined &&
          step.modelReturned === undefined &&
          step.implVisual?.kind === 'heap',
      ),
    ).toBe(true);
    expect(page.text).toBe(formatReport(input));
    expect(page.ending.some((line) => line.includes('agree'))).toBe(false);
  });
});
