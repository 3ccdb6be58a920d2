/**
 * A vitest reporter that prints, per test file, the time the file held its worker: importing it
 * (collect), its setup file, and its tests with their hooks (a `beforeAll` that builds or runs a
 * campaign counts), slowest first, then their sum and the run's wall time. The json reporter's
 * per-file times leave the hooks out; this one is what docs/measurements.md's `npm test` rows use:
 *
 *   npx vitest run --reporter=default --reporter=./tools/vitest-file-times.ts
 */
import type { Reporter, TestModule } from 'vitest/node';

export default class FileTimes implements Reporter {
  private readonly rows: { file: string; collect: number; tests: number }[] = [];
  private readonly start = performance.now();

  onTestModuleEnd(module: TestModule): void {
    const d = module.diagnostic();
    this.rows.push({
      file: module.moduleId.replace(/^.*\/properties\//, ''),
      collect: d.collectDuration + d.setupDuration + d.environmentSetupDuration,
      tests: d.duration,
    });
  }

  onTestRunEnd(): void {
    const s = (ms: number): string => (ms / 1000).toFixed(1).padStart(6);
    const rows = [...this.rows].sort((a, b) => b.collect + b.tests - (a.collect + a.tests));
    let sum = 0;
    const lines = ['  file s  import  tests+hooks  file'];
    for (const r of rows) {
      sum += r.collect + r.tests;
      lines.push(`${s(r.collect + r.tests)}  ${s(r.collect)}  ${s(r.tests)}       ${r.file}`);
    }
    lines.push(`${s(sum)}  sum over ${rows.length} files`);
    lines.push(`${s(performance.now() - this.start)}  wall time of the run`);
    process.stdout.write(`${lines.join('\n')}\n`);
  }
}
