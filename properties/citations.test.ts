/**
 * Spec citations resolve (tools/citations.mjs): every citation in src/, models/, mutants/,
 * properties/, bench/, examples/, docs/, tools/ and README.md names an anchor of a file under
 * docs/spec/, which the package ships. The fixture tests show the checker failing on a bad
 * citation, rewriting the older forms with --fix, and --fix changing nothing the second time.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const checker = join(root, 'tools', 'citations.mjs');

function run(args: string[], cwd = root): { status: number | null; out: string } {
  const r = spawnSync(process.execPath, [checker, ...args], { cwd, encoding: 'utf8' });
  return { status: r.status, out: r.stdout + r.stderr };
}

describe('spec citations', () => {
  it('every citation in the shipped code and docs resolves to docs/spec/', () => {
    const { status, out } = run([]);
    expect(out, out).toMatch(/ 0 unresolved$/m);
    expect(status).toBe(0);
  });
});

describe('the citation checker', () => {
  let dir = '';
  afterEach(() => {
    if (dir !== '') rmSync(dir, { recursive: true, force: true });
    dir = '';
  });

  function fixture(files: Record<string, string>): string {
    dir = mkdtempSync(join(tmpdir(), 'citations-'));
    cpSync(join(root, 'docs', 'spec'), join(dir, 'docs', 'spec'), { recursive: true });
    for (const [name, text] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, name)), { recursive: true });
      writeFileSync(join(dir, name), text);
    }
    return dir;
  }

  it('passes on resolvable citations, new form and Markdown links', () => {
    const d = fixture({
      'src/a.ts':
        '/** See docs/spec/residency-library.md#rl-8-5-1 and docs/spec/allocators.md#al-buddy, #al-ring. */\n',
      'docs/a.md':
        'The [slot pool](spec/residency-library.md#rl-3) and [1024 slots](spec/engine.md#rs-4-2).\n',
    });
    const { status, out } = run(['--root', d, 'src', 'docs/a.md'], d);
    expect(out).toMatch(/^5 citation\(s\) in 2 file\(s\); 0 unresolved$/m);
    expect(status).toBe(0);
  });

  it('fails on an anchor that does not exist, a missing file, and an old form', () => {
    const d = fixture({
      'src/a.ts': [
        '/** docs/spec/residency-library.md#rl-99 */',
        '// docs/spec/nowhere.md#x',
        '// spec/allocators.md "Buddy"',
        '// [text](spec/engine.md#mem-5-3) is not a link outside Markdown',
        '',
      ].join('\n'),
      'docs/a.md': 'A [broken link](spec/engine.md#mem-42).\n',
    });
    const { status, out } = run(['--root', d, 'src', 'docs/a.md'], d);
    expect(status).toBe(1);
    expect(out).toContain(
      'src/a.ts:1: docs/spec/residency-library.md#rl-99: no anchor #rl-99 in docs/spec/residency-library.md',
    );
    expect(out).toContain(
      'src/a.ts:2: docs/spec/nowhere.md#x: docs/spec/nowhere.md does not exist',
    );
    expect(out).toContain(
      `src/a.ts:3: 'spec/allocators.md "Buddy"': names a file the package does not ship; --fix writes docs/spec/allocators.md#al-buddy`,
    );
    expect(out).toContain(
      'docs/a.md:1: [broken link](spec/engine.md#mem-42): no anchor #mem-42 in docs/spec/engine.md',
    );
    expect(out).toMatch(/; 4 unresolved$/m);
  });

  it('--fix rewrites the old forms, keeps comments within 100 columns, and is idempotent', () => {
    const before = [
      '/**',
      " * The manager (residency-library.md §4-§8, §10; Unreal's settings from the seed",
      ' * ue5-dx12-residency-set, sections 2 and 5). The batch loop adds the non-local usage',
      ' * (§8 step 5.1); pages of the seed d3d12-memory-allocation.zh.txt §1 constraint ④, §5.3;',
      ' * the ring (spec/allocators.md "Ring',
      ' * upload allocator"; seed gpu-resource-lifetime.zh.txt, 环形上传区间).',
      ' */',
      '',
    ].join('\n');
    const d = fixture({ 'src/a.ts': before, 'src/b.ts': '// §3 with no spec named before it\n' });
    const first = run(['--root', d, '--fix', 'src'], d);
    expect(first.out).toContain(
      "src/b.ts:1: '§3': a section with no spec named before it in this file",
    );
    expect(first.out).toMatch(/^rewrote 1 file\(s\)$/m);
    const after = readFileSync(join(d, 'src/a.ts'), 'utf8');
    expect(after).toBe(
      [
        '/**',
        " * The manager (docs/spec/residency-library.md#rl-4 to #rl-8, #rl-10; Unreal's settings from",
        ' * docs/spec/engine.md#rs-2, #rs-5). The batch loop adds the non-local usage',
        ' * (docs/spec/residency-library.md#rl-8-5-1); pages of docs/spec/engine.md#mem-1-2-4, #mem-5-3; the',
        ' * ring (docs/spec/allocators.md#al-ring; docs/spec/engine.md#life-ring).',
        ' */',
        '',
      ].join('\n'),
    );
    expect(run(['--root', d, 'src/a.ts'], d).status).toBe(0);
    const second = run(['--root', d, '--fix', 'src'], d);
    expect(second.out).toMatch(/^rewrote 0 file\(s\)$/m);
    expect(readFileSync(join(d, 'src/a.ts'), 'utf8')).toBe(after);
  });

  it('refuses bad usage with one error line and exit code 2', () => {
    const a = run(['--frobnicate']);
    expect(a.status).toBe(2);
    expect(a.out).toBe('error: unknown option --frobnicate (see --help)\n');
    const b = run(['no-such-folder']);
    expect(b.status).toBe(2);
    expect(b.out).toMatch(/^error: no-such-folder: no such file or folder under /);
    expect(run(['--help']).out).toMatch(/^usage: node tools\/citations.mjs/);
  });
});
