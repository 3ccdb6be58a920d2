/**
 * Projects (src/project.ts): the config file is found walking up from the working directory,
 * its mistakes name the file and the field, and every path it holds is relative to its folder.
 */
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import {
  findConfigFile,
  loadProject,
  parseConfig,
  projectFromConfig,
  projectRelative,
} from '../src/project.js';
import { InputError } from '../src/harness/json.js';
import { fileSystemName, resolveTargets } from '../src/cli/fuzz-targets.js';
import { closeDrivers } from '../src/native/native-allocator.js';
import { BUILTIN_SYSTEMS } from '../src/systems/index.js';
import { runsScale } from '../src/vitest.js';

const EXAMPLES = path.resolve(__dirname, '..', 'examples');

function tempProject(config: string, name = 'gpumv.config.mjs'): string {
  const root = mkdtempSync(path.join(tmpdir(), 'gpumv-project-'));
  mkdirSync(path.join(root, 'src', 'deep', 'er'), { recursive: true });
  copyFileSync(
    path.join(EXAMPLES, 'simple-first-fit-allocator.mjs'),
    path.join(root, 'src', 'first-fit.mjs'),
  );
  copyFileSync(path.join(EXAMPLES, 'broken-allocator.mjs'), path.join(root, 'src', 'broken.mjs'));
  writeFileSync(path.join(root, name), config);
  return root;
}

/** A native driver that says its hello (system `system`) and waits for the end of its input. */
function helloDriver(root: string, relative: string, system: string): void {
  const file = path.join(root, relative);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(
    file,
    `#!/usr/bin/env node
const fs = require('node:fs');
const p = Buffer.alloc(8); p.writeUInt32LE(0x564d5047, 0); p.writeUInt32LE(1, 4);
const body = Buffer.concat([p, Buffer.from('system=${system}\\n')]);
const h = Buffer.alloc(8); h[0] = 0x48; h.writeUInt32LE(body.length, 4);
fs.writeSync(4, Buffer.concat([h, body]));
const b = Buffer.alloc(4096); try { while (fs.readSync(3, b, 0, b.length, null) > 0); } catch {}
`,
  );
  chmodSync(file, 0o755);
}

afterAll(() => closeDrivers());

describe('projects', () => {
  it('finds the config walking up from a sub-directory, and resolves its folders from the config', async () => {
    const root = tempProject(
      `export default { regressions: 'verify/regs', findings: 'out', seed: 'team', builtins: false, allocators: ['src/first-fit.mjs'] };\n`,
    );
    const deep = path.join(root, 'src', 'deep', 'er');
    expect(findConfigFile(deep)).toBe(path.join(root, 'gpumv.config.mjs'));
    const project = await loadProject({ cwd: deep });
    expect(project.root).toBe(root);
    expect(project.regressionsDir).toBe(path.join(root, 'verify', 'regs'));
    expect(project.findingsDir).toBe(path.join(root, 'out'));
    expect(project.seed).toBe('team');
    expect(project.registry.systems).toEqual([]);
    expect(project.allocators).toEqual(['src/first-fit.mjs']);
    // The allocator's system records its module relative to the root, wherever the tool runs.
    const [target] = await resolveTargets({ systems: 'all' }, project);
    expect(target!.system.name).toBe('user-allocator');
    const [config] = fc.sample(target!.system.configArb(), { numRuns: 1, seed: 1 }) as {
      allocatorModule: string;
    }[];
    expect(config?.allocatorModule).toBe('src/first-fit.mjs');
  });

  it('names each of several allocators apart; builtins are in by default', async () => {
    const root = tempProject(
      `export default { allocators: ['src/first-fit.mjs', 'src/broken.mjs'] };\n`,
    );
    const project = await loadProject({ cwd: root });
    expect(project.registry.systems.length).toBe(BUILTIN_SYSTEMS.length);
    const targets = await resolveTargets({ systems: 'all' }, project);
    expect(targets.slice(-2).map((target) => target.system.name)).toEqual([
      'user-allocator:src/first-fit.mjs',
      'user-allocator:src/broken.mjs',
    ]);
  });

  it('lists native drivers as `executables`: each is the system its hello declares, found relative to the config, several named apart', async () => {
    const root = tempProject(`export default { builtins: false, executables: ['bin/ring'] };\n`);
    helloDriver(root, 'bin/ring', 'ring-upload');
    helloDriver(root, 'bin/deferred', 'deferred-free\\nkinds=first-fit');
    const project = await loadProject({ cwd: path.join(root, 'src', 'deep') });
    expect(project.executables).toEqual(['bin/ring']);
    const [target] = await resolveTargets({ systems: 'all' }, project);
    expect(target!.system.name).toBe('native-ring-upload');
    const [config] = fc.sample(target!.system.configArb(), { numRuns: 1, seed: 1 }) as {
      executable: string;
    }[];
    expect(config?.executable).toBe('bin/ring');
    // A file's executable is relative to the config, whichever folder the tool runs from.
    const stored = await project.registry.systemForFile('native-ring-upload', {
      capacityBytes: 64,
      executable: 'bin/ring',
    });
    expect(stored?.summary).toContain('bin/ring');
    const both = projectFromConfig({ executables: ['bin/ring', 'bin/deferred'] }, root, null);
    const names = (await resolveTargets({ systems: 'all' }, both)).map((t) => t.system.name);
    expect(names.slice(-2)).toEqual([
      'native-ring-upload:bin/ring',
      'native-deferred-free:bin/deferred',
    ]);
    expect(names.slice(-2).map(fileSystemName)).toEqual([
      'native-ring-upload',
      'native-deferred-free',
    ]);
  });

  it('without a config: the built-in systems, the working directory as root', async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'gpumv-none-'));
    const project = await loadProject({ cwd: root });
    expect(project.configFile).toBeNull();
    expect(project.root).toBe(root);
    expect(project.regressionsDir).toBe(path.join(root, 'regressions'));
  });

  it.each([
    [`export default { regresions: 'x' };`, /gpumv\.config\.mjs: \$\.regresions: unknown field/],
    [`export default { seed: 5 };`, /gpumv\.config\.mjs: \$\.seed: /],
    [
      `export default { systems: [{ name: 'x' }] };`,
      /gpumv\.config\.mjs: \$\.systems\[0\]: expected a system built with defineSystem/,
    ],
    [
      `export default { allocators: ['src/nope.mjs'] };`,
      /gpumv\.config\.mjs: \$\.allocators\[0\]: no such file src\/nope\.mjs/,
    ],
    [
      `export default { executables: ['bin/nope'] };`,
      /gpumv\.config\.mjs: \$\.executables\[0\]: no such file bin\/nope \(paths are relative to the config's folder\)/,
    ],
    [
      `export default { executables: ['src/first-fit.mjs'] };`,
      /gpumv\.config\.mjs: \$\.executables\[0\]: not executable: src\/first-fit\.mjs/,
    ],
    [`export default { executables: 'bin/ring' };`, /gpumv\.config\.mjs: \$\.executables: /],
    [
      `export const other = 1;`,
      /gpumv\.config\.mjs: \$: a config file must export its config as the default export/,
    ],
    [`export default {;`, /gpumv\.config\.mjs: failed to load/],
  ])('a bad config %s is one error naming the file and the field', async (text, pattern) => {
    const root = tempProject(`${text}\n`);
    await expect(loadProject({ cwd: root })).rejects.toThrow(pattern);
  });

  it('checks a config object by shape and writes paths with forward slashes relative to the root', () => {
    expect(() => parseConfig({ mutants: [3] }, '/x/gpumv.config.ts')).toThrow(InputError);
    expect(projectRelative('/a/b', '/a/b/c/d.mjs')).toBe('c/d.mjs');
    expect(projectFromConfig({}, '/a/b', null).findingsDir).toBe(
      path.join('/a/b', '.fuzz', 'findings'),
    );
  });
});

describe('GPUMV_RUNS_SCALE', () => {
  it("multiplies the agreement tests' run counts; unset or blank is 1; anything but a positive number is refused", () => {
    expect(runsScale(undefined)).toBe(1);
    expect(runsScale(' ')).toBe(1);
    expect(runsScale('0.25')).toBe(0.25);
    expect(runsScale('10')).toBe(10);
    for (const bad of ['0', '-1', 'abc', 'Infinity'])
      expect(() => runsScale(bad)).toThrow(
        `GPUMV_RUNS_SCALE must be a positive number, got '${bad}'`,
      );
  });
});
