/**
 * writeFileAtomic: the target holds the old content or the new, never a part, and no temp file
 * outlives a write, whether it succeeds or fails.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { writeFileAtomic } from '../src/harness/files.js';

/** Failures injected into node:fs as writeFileAtomic sees it (all off unless a test sets one). */
const inject = vi.hoisted(() => ({
  write: false,
  fsync: false,
  rename: false,
  fsyncDir: '' as string,
}));

vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const fail = (code: string): never => {
    throw Object.assign(new Error(`${code}: injected failure`), { code });
  };
  return {
    ...fs,
    writeFileSync: ((file: number | string, ...rest: unknown[]) => {
      if (inject.write && typeof file === 'number') fail('ENOSPC');
      return (fs.writeFileSync as (...args: unknown[]) => void)(file, ...rest);
    }) as typeof fs.writeFileSync,
    fsyncSync: ((fd: number) => {
      if (inject.fsync) fail('EIO');
      if (inject.fsyncDir !== '' && fs.fstatSync(fd).isDirectory()) fail(inject.fsyncDir);
      return fs.fsyncSync(fd);
    }) as typeof fs.fsyncSync,
    renameSync: ((from: string, to: string) => {
      if (inject.rename) fail('EXDEV');
      return fs.renameSync(from, to);
    }) as typeof fs.renameSync,
  };
});

afterEach(() => {
  Object.assign(inject, { write: false, fsync: false, rename: false, fsyncDir: '' });
});

const dirs: string[] = [];
function freshDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'files-test-'));
  dirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('writeFileAtomic', () => {
  it('creates a file with exactly the text', () => {
    const dir = freshDir();
    const file = path.join(dir, 'a.json');
    writeFileAtomic(file, '{"a": 1}\n');
    expect(readFileSync(file, 'utf8')).toBe('{"a": 1}\n');
    expect(readdirSync(dir)).toEqual(['a.json']);
  });

  it('replaces an existing file, many times, leaving no temp file', () => {
    const dir = freshDir();
    const file = path.join(dir, 'summary.json');
    writeFileSync(file, 'old content that is longer than the new one');
    for (let i = 0; i < 20; i++) writeFileAtomic(file, `v${i}`);
    expect(readFileSync(file, 'utf8')).toBe('v19');
    expect(readdirSync(dir)).toEqual(['summary.json']);
  });

  it('writes large and non-ASCII text whole', () => {
    const dir = freshDir();
    const file = path.join(dir, 'big.txt');
    const text = 'µ€😀'.repeat(300_000);
    writeFileAtomic(file, text);
    expect(readFileSync(file, 'utf8')).toBe(text);
  });

  it('takes a relative path', () => {
    const dir = freshDir();
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      writeFileAtomic('rel.txt', 'x');
    } finally {
      process.chdir(cwd);
    }
    expect(readFileSync(path.join(dir, 'rel.txt'), 'utf8')).toBe('x');
    expect(readdirSync(dir)).toEqual(['rel.txt']);
  });

  it('fails when the target is a folder, leaving the folder and no temp file', () => {
    const dir = freshDir();
    const target = path.join(dir, 'taken');
    mkdirSync(target);
    writeFileSync(path.join(target, 'inside.txt'), 'kept');
    expect(() => writeFileAtomic(target, 'new')).toThrow();
    expect(readdirSync(dir)).toEqual(['taken']);
    expect(readFileSync(path.join(target, 'inside.txt'), 'utf8')).toBe('kept');
  });

  it('fails when the folder does not exist, creating nothing', () => {
    const dir = freshDir();
    expect(() => writeFileAtomic(path.join(dir, 'missing', 'a.json'), 'x')).toThrow(
      expect.objectContaining({ code: 'ENOENT' }),
    );
    expect(readdirSync(dir)).toEqual([]);
  });

  it.each([
    ['write', 'ENOSPC'],
    ['fsync', 'EIO'],
    ['rename', 'EXDEV'],
  ] as const)(
    'keeps the old content when %s fails, rethrows %s and removes the temp file',
    (step, code) => {
      const dir = freshDir();
      const file = path.join(dir, 'keep.json');
      writeFileSync(file, 'old');
      inject[step] = true;
      expect(() => writeFileAtomic(file, 'new content')).toThrow(expect.objectContaining({ code }));
      expect(readFileSync(file, 'utf8')).toBe('old');
      expect(readdirSync(dir)).toEqual(['keep.json']);
      // And a failed write does not spoil the next one.
      inject[step] = false;
      writeFileAtomic(file, 'new content');
      expect(readFileSync(file, 'utf8')).toBe('new content');
      expect(readdirSync(dir)).toEqual(['keep.json']);
    },
  );

  it.each(['EISDIR', 'EPERM', 'EINVAL'])(
    'ignores %s from fsyncing the folder (platforms that refuse it)',
    (code) => {
      const dir = freshDir();
      const file = path.join(dir, 'a.txt');
      inject.fsyncDir = code;
      writeFileAtomic(file, 'x');
      expect(readFileSync(file, 'utf8')).toBe('x');
    },
  );

  it('reports any other failure to fsync the folder (the new file is in place)', () => {
    const dir = freshDir();
    const file = path.join(dir, 'a.txt');
    inject.fsyncDir = 'EIO';
    expect(() => writeFileAtomic(file, 'x')).toThrow(expect.objectContaining({ code: 'EIO' }));
    expect(readdirSync(dir)).toEqual(['a.txt']);
  });
});
