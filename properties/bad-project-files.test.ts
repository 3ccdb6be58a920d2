/**
 * Every problem with a user's file is one `error:` line naming the file, and exit code 2, from
 * every entry point that reads the project (fuzz, regress, mutants, schemas); the library
 * helpers throw one clear Error. (The benchmarks read no project file.)
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadProject } from '../src/project.js';
import { cliScript, type Finished, runTsAsync } from './cli.js';

/** Runs an entry point in `dir`; independent runs overlap. */
const cli = (dir: string, tool: string, ...args: string[]) =>
  runTsAsync(cliScript(tool), args, { cwd: dir });

function project(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'bad-project-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
  return dir;
}

const oneError = (run: Finished, pattern: RegExp) => {
  expect(run.status, String(run.stdout) + String(run.stderr)).toBe(2);
  const lines = String(run.stderr).trim().split('\n');
  expect(lines, String(run.stderr)).toHaveLength(1);
  expect(lines[0]).toMatch(/^error: /);
  expect(lines[0]).toMatch(pattern);
};

describe('bad project files', () => {
  it('a config with a syntax error is one line naming the file and its line, from every entry point', async () => {
    const js = project({ 'gpumv.config.mjs': "export default {\n  seed: 'x',,\n};\n" });
    const pattern = /gpumv\.config\.mjs: failed to load: line 2: SyntaxError: Unexpected token/;
    const ts = project({ 'gpumv.config.ts': "export default {\n  seed: 'x',,\n};\n" });
    const runs = await Promise.all([
      cli(js, 'fuzz', '--runs', '1'),
      cli(js, 'regress', 'list'),
      cli(js, 'mutants'),
      cli(js, 'schemas', '--out', path.join(js, 'schema')),
      cli(ts, 'fuzz', '--runs', '1'),
    ]);
    for (const run of runs.slice(0, 4)) oneError(run, pattern);
    // The library (here under vitest's own loader) throws one Error naming the file and the line.
    await expect(loadProject({ cwd: js })).rejects.toThrow(
      /gpumv\.config\.mjs: failed to load: line 2\b.*\S$/,
    );
    oneError(runs[4]!, /gpumv\.config\.ts: failed to load: line 2:\d+: /);
  });

  it('a config that throws while it loads names the file and the line', async () => {
    const dir = project({
      'gpumv.config.mjs':
        "const seed = 1;\nthrow new Error('no seed today');\nexport default { seed };\n",
    });
    oneError(
      await cli(dir, 'fuzz', '--runs', '1'),
      /gpumv\.config\.mjs: failed to load: line 2:\d+: no seed today/,
    );
  });

  it('a misnamed export lists the exports found', async () => {
    const dir = project({
      'gpumv.config.mjs': 'export const config2 = {};\n',
      'alloc.mjs': 'export const policy = "any";\nexport function createAlocator() {}\n',
    });
    oneError(
      await cli(dir, 'fuzz', '--runs', '1'),
      /a config file must export its config as the default export .*; it exports: config2$/,
    );
    writeFileSync(path.join(dir, 'gpumv.config.mjs'), 'export default {};\n');
    oneError(
      await cli(dir, 'fuzz', '--allocator', 'alloc.mjs', '--runs', '1'),
      /alloc\.mjs: must export a function createAllocator\(capacityBytes\); found no such export \(it exports: createAlocator, policy\)/,
    );
  });
});
