/** Sanitizer stack frames symbolized by addr2line (cached), for the stderr lines a report keeps. */
import { execFileSync } from 'node:child_process';

/** A sanitizer's unsymbolized stack frame: `#3 0x55d1c2a4 (/path/to/binary+0x1a2b)`. */
const FRAME = /^(\s*#\d+) 0x[0-9a-f]+\s+\((.+)\+(0x[0-9a-f]+)\)$/;
/** addr2line's answers, by binary and offset (a shrink meets the same frames again and again). */
const SYMBOLS = new Map<string, string>();

/** Replaces unsymbolized frames by `#3 in function file:line` where addr2line knows them. */
export function symbolize(lines: readonly string[]): string[] {
  const wanted = new Map<string, Set<string>>();
  for (const line of lines) {
    const match = FRAME.exec(line);
    if (match !== null && !SYMBOLS.has(`${match[2]}+${match[3]}`)) {
      const offsets = wanted.get(match[2]!) ?? new Set<string>();
      offsets.add(match[3]!);
      wanted.set(match[2]!, offsets);
    }
  }
  for (const [binary, offsets] of wanted) {
    const list = [...offsets];
    let answer: string[] = [];
    try {
      answer = execFileSync('addr2line', ['-f', '-C', '-e', binary, ...list], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
        timeout: 10_000,
      }).split('\n');
    } catch {
      // no addr2line, or a binary it cannot read: the frames stay as they are
    }
    list.forEach((offset, i) => {
      const fn = answer[2 * i];
      const where = answer[2 * i + 1];
      SYMBOLS.set(
        `${binary}+${offset}`,
        fn === undefined || where === undefined || fn === '??'
          ? ''
          : `in ${fn} ${where.replace(/ \(discriminator \d+\)$/, '')}`,
      );
    });
  }
  return lines.map((line) => {
    const match = FRAME.exec(line);
    const symbol = match === null ? '' : (SYMBOLS.get(`${match[2]}+${match[3]}`) ?? '');
    return match === null || symbol === '' ? line : `${match[1]} ${symbol}`;
  });
}
