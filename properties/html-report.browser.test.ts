/**
 * The HTML report in a real browser: Debian's Chromium driven by playwright-core (one browser
 * for the whole file). Opens the reports of stored regressions (an overlap, an out-of-bounds
 * range, an eviction in flight), checks what the canvas shows (the failing step marked, the
 * highlighted ranges are the ones the finding names, one row per step), steps through with the
 * keyboard, renders 1000-step sequences, and saves screenshots under .artifacts/screenshots.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildReport, type ReportInput } from '../src/harness/report.js';
import { renderCampaignHtml } from '../src/report/campaign-html.js';
import { renderHtmlReport } from '../src/report/html.js';
import { allocFirstFitSystem } from '../src/systems/alloc-first-fit.js';
import { residencyManagerSystem } from '../src/systems/residency-manager.js';
import { launchBrowser, type RunningBrowser } from './browser.js';
import { longSequenceReport, namedRanges, storedReport } from './html-report-support.js';

const SCREENSHOTS = path.resolve(__dirname, '..', '.artifacts', 'screenshots');

interface Drawn {
  kind: string;
  steps: number;
  failingStep: number;
  failingMarked: boolean;
  highlights: {
    step: number;
    side: string;
    reason: string;
    range?: [number, number];
    row?: string;
    x0: number;
    x1?: number;
    y0: number;
    y1: number;
  }[];
}
interface Geometry {
  left: number;
  top: number;
  rowH: number;
  colW?: number;
  rows?: string[];
}

let browser: RunningBrowser;
let page: Page;
let dir: string;
/** Script errors of the pages (each test ends with none). */
const pageErrors: string[] = [];

beforeAll(async () => {
  browser = await launchBrowser('light');
  page = await browser.context.newPage();
  page.on('pageerror', (error) => pageErrors.push(error.message));
  dir = mkdtempSync(path.join(os.tmpdir(), 'gpumv-html-'));
  mkdirSync(SCREENSHOTS, { recursive: true });
});

afterEach(() => {
  expect(pageErrors.splice(0)).toEqual([]);
});

afterAll(async () => {
  await browser?.close();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

async function open(name: string, html: string): Promise<void> {
  const file = path.join(dir, `${name}.html`);
  writeFileSync(file, html);
  await page.goto(`file://${file}`);
  await page.waitForFunction("'gpumvReport' in window");
}

async function openReport(name: string, input: ReportInput): Promise<void> {
  await open(name, renderHtmlReport(buildReport({ ...input, withVisuals: true })));
}

// Evaluated in the page (this project's TypeScript has no DOM types, so as expressions).
const drawn = () => page.evaluate<Drawn>('window.gpumvReport.drawn');
const geometry = () => page.evaluate<Geometry>('window.gpumvReport.geometry');
const selected = () => page.evaluate<number>('window.gpumvReport.selected()');
const drawnInMs = () =>
  page.evaluate<number>("performance.getEntriesByName('gpumv-drawn')[0].startTime");

/** The canvas pixel at CSS coordinates (x, y), as [r, g, b]. */
async function pixel(x: number, y: number): Promise<number[]> {
  const read = `(() => { const r = window.devicePixelRatio || 1; return Array.from(document.getElementById('picture').getContext('2d').getImageData(Math.floor(${x} * r), Math.floor(${y} * r), 1, 1).data.slice(0, 3)); })()`;
  return page.evaluate<number[]>(read);
}

/** The failing and highlight colour (#d93025 light, #ff5252 dark), not the implementation's orange or any other. */
const reddish = ([r, g, b]: number[]) => r! > 180 && g! < 100 && b! < 100;

async function screenshot(name: string): Promise<void> {
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`) });
}

/** Steps with the keyboard and checks the selection, the detail panel and the step list follow. */
async function expectSelected(step: number): Promise<void> {
  expect(await selected()).toBe(step);
  expect(await page.getAttribute('#detail', 'data-step')).toBe(String(step));
  expect(await page.getAttribute('#steps li.sel', 'data-step')).toBe(String(step));
}

describe('HTML report in Chromium', () => {
  it('overlap (bf-returns-units): one row per step, the failing step marked, the overlapping ranges highlighted; keyboard steps', async () => {
    const { input, regression, failure } = await storedReport(
      'alloc-best-fit/bf-returns-units.json',
    );
    await openReport('heap-overlap', input);
    const n = regression.commands.length;
    expect(await page.getAttribute('#picture', 'data-steps')).toBe(String(n));
    expect(await page.locator('#steps li').count()).toBe(n);
    const shown = await drawn();
    expect(shown.kind).toBe('heap');
    expect(shown.failingMarked).toBe(true);
    const geo = await geometry();
    // The failing step's band in the margin is drawn at its row.
    expect(reddish(await pixel(3, geo.top + failure.step * geo.rowH + geo.rowH / 2))).toBe(true);
    expect(reddish(await pixel(3, geo.top + (failure.step - 1) * geo.rowH + geo.rowH / 2))).toBe(
      false,
    );
    // The highlighted ranges are the ones the finding names, drawn in the implementation's half of the failing row.
    expect(new Set(shown.highlights.map((h) => h.range!.join('+')))).toEqual(
      new Set(namedRanges(failure.message).map((range) => range.join('+'))),
    );
    for (const h of shown.highlights) {
      expect(h.step).toBe(failure.step);
      expect(reddish(await pixel((h.x0 + h.x1!) / 2, (h.y0 + h.y1) / 2))).toBe(true);
    }
    // Step 0's model range [0, 2) is drawn, in the model's colour (not highlighted).
    expect(
      reddish(
        await pixel(
          (shown.highlights[0]!.x0 + shown.highlights[0]!.x1!) / 2,
          geo.top + geo.rowH / 4,
        ),
      ),
    ).toBe(false);
    expect(await page.locator('#highlights li').count()).toBe(shown.highlights.length);
    await screenshot('heap-overlap');

    await expectSelected(failure.step);
    await page.keyboard.press('Home');
    await expectSelected(0);
    await page.keyboard.press('j');
    await expectSelected(1);
    await page.keyboard.press('k');
    await expectSelected(0);
    await page.keyboard.press('ArrowDown');
    await expectSelected(1);
    await page.keyboard.press('ArrowUp');
    await page.keyboard.press('End');
    await expectSelected(n - 1);
    await page.keyboard.press('Home');
    await page.keyboard.press('f');
    await expectSelected(failure.step);
    expect(await page.textContent('#detail')).toContain(regression.commands[failure.step]!.op);
  });

  it('out of bounds (buddy-oversize-takes-whole-heap): the range past the capacity is highlighted', async () => {
    const { input, failure } = await storedReport(
      'alloc-buddy/buddy-oversize-takes-whole-heap.json',
    );
    await openReport('heap-out-of-bounds', input);
    const shown = await drawn();
    expect(shown.highlights.map((h) => [h.reason, h.range])).toEqual([
      ['out-of-bounds', namedRanges(failure.message)[0]],
    ]);
    expect(
      reddish(
        await pixel(
          (shown.highlights[0]!.x0 + shown.highlights[0]!.x1!) / 2,
          (shown.highlights[0]!.y0 + shown.highlights[0]!.y1) / 2,
        ),
      ),
    ).toBe(true);
    expect(shown.failingMarked).toBe(true);
    await screenshot('heap-out-of-bounds');
  });

  it('eviction in flight (rm-sync-wait-does-not-block): the timeline marks the failing step and flags the evicted object', async () => {
    const { input, regression, failure } = await storedReport(
      'residency-manager/rm-sync-wait-does-not-block.json',
    );
    await openReport('residency-eviction-in-flight', input);
    const shown = await drawn();
    const geo = await geometry();
    expect(shown.kind).toBe('timeline');
    expect(await page.getAttribute('#picture', 'data-steps')).toBe(
      String(regression.commands.length),
    );
    expect(geo.rows).toEqual(
      (regression.config.objectSizesBytes as number[]).map((_, object) => `object ${object}`),
    );
    const object = /Evict of object (\d+)/.exec(failure.message)![1];
    expect(shown.highlights.map((h) => [h.step, h.row])).toEqual([
      [failure.step, `object ${object}`],
    ]);
    // The failing column's mark above the rows, and the flagged row's mark in the margin.
    expect(reddish(await pixel(geo.left + failure.step * geo.colW! + geo.colW! / 2, 3))).toBe(true);
    expect(reddish(await pixel(geo.left + (failure.step - 1) * geo.colW! + geo.colW! / 2, 3))).toBe(
      false,
    );
    expect(reddish(await pixel(geo.left - 7, shown.highlights[0]!.y0 + geo.rowH / 2))).toBe(true);
    await screenshot('residency-eviction-in-flight');
    await page.keyboard.press('ArrowLeft');
    await expectSelected(failure.step - 1);
    await page.keyboard.press('ArrowRight');
    await expectSelected(failure.step);
    await page.emulateMedia({ colorScheme: 'dark' });
    await openReport('residency-eviction-in-flight-dark', input);
    expect(await page.evaluate<string>('getComputedStyle(document.body).backgroundColor')).toBe(
      'rgb(23, 25, 28)',
    );
    expect((await drawn()).failingMarked).toBe(true);
    await screenshot('residency-eviction-in-flight-dark');
    await page.emulateMedia({ colorScheme: 'light' });
  });

  it('campaign summary page: a row per system and the findings linked to their reports', async () => {
    const system = {
      runs: 40,
      commands: 3200,
      completed: {},
      probes: { 'null-answers': 50, 'null-answers-with-fitting-gap': 6 },
      probesNeverHit: [],
      swarm: { defaultPlanRuns: 0, smallConfigRuns: 0, opEnabledRuns: {} },
      faults: { faultFreeRuns: 0, siteRuns: {} },
    };
    const finding = {
      signature: 'alloc-best-fit/no-overlap/alloc',
      system: 'alloc-best-fit',
      check: 'no-overlap',
      op: 'alloc',
      runIndex: 3,
      commands: 2,
      file: 'findings/bf.json',
      replay: 'npm run regress -- replay findings/bf.json',
      weights: null,
      faults: [],
      smallConfigs: false,
    };
    const summary = {
      format: 2,
      seed: '20261130',
      runs: 40,
      budgetMs: null,
      targets: { systems: 'all' },
      shards: ['0/1'],
      systems: {
        'alloc-best-fit': system,
        'residency-manager': { ...system, probes: {}, probesNeverHit: ['evict-failed'] },
      },
      findings: [finding],
      timing: {
        elapsedMs: 2000,
        workers: 2,
        busyMs: {},
        commandsPerSecond: { 'alloc-best-fit': 8000, 'residency-manager': 2500 },
        totalCommandsPerSecond: 3200,
        threadRuns: 80,
      },
      stopped: 'complete',
    };
    await openReport(
      'heap-overlap-for-link',
      (await storedReport('alloc-best-fit/bf-returns-units.json')).input,
    );
    writeFileSync(
      path.join(dir, 'summary.html'),
      renderCampaignHtml(summary as never, new Map([[finding.file, 'heap-overlap-for-link.html']])),
    );
    await page.goto(`file://${path.join(dir, 'summary.html')}`);
    expect(await page.locator('#systems tbody tr').count()).toBe(2);
    expect(await page.textContent('tr[data-system="alloc-best-fit"]')).toContain('12.0 % of 50');
    expect(await page.textContent('tr[data-system="residency-manager"]')).toContain('evict-failed');
    await screenshot('campaign-summary');
    await page.click('#findings a');
    await page.waitForFunction("'gpumvReport' in window");
    expect(await page.textContent('#heading')).toContain('alloc-best-fit');
  });

  it('1000-step heap map and timeline: drawn in under a second, every step listed, End reaches the last', async () => {
    for (const [name, input] of [
      ['heap-1000-steps', longSequenceReport(allocFirstFitSystem, 1000, 11)],
      ['timeline-1000-steps', longSequenceReport(residencyManagerSystem, 1000, 12)],
    ] as const) {
      await openReport(name, input);
      expect(await page.getAttribute('#picture', 'data-steps')).toBe('1000');
      expect(await page.locator('#steps li').count()).toBe(1000);
      // From navigation start to the picture drawn, in the page's own clock.
      const ms = await drawnInMs();
      console.log(`${name}: drawn ${ms.toFixed(0)} ms after navigation start`);
      expect(ms).toBeLessThan(1000);
      await page.keyboard.press('End');
      expect(await selected()).toBe(999);
      await screenshot(name);
    }
  });
});
