// node bench/_first-fit-wasm/summarize.mjs LOG...: medians (ns/pair) per row and workload from
// measure.sh's logs. 'speed vs TLSF' is the bench's 'vs AS TLSF' convention (pairs/s over TLSF's
// pairs/s = TLSF ns / row ns): the same-process rows pair each run with the TLSF run beside it;
// the last column divides the pooled median of all TLSF runs by the row's median (rougher).
import { readFileSync } from 'node:fs';
const rows = new Map();
const sums = new Map();
const add = (name, w, ns, sum) => {
  const key = `${name}|${w}`;
  if (!rows.has(key)) rows.set(key, []);
  rows.get(key).push(Number(ns));
  if (sum !== undefined) (sums.get(key) ?? sums.set(key, new Set()).get(key)).add(sum);
};
for (const line of process.argv
  .slice(2)
  .map((f) => readFileSync(f, 'utf8'))
  .join('\n')
  .split('\n')) {
  const probe = /^first fit, (\w+): ([\d.]+) ns\/pair, offsets sum (\d+)/.exec(line);
  const native = /^(.*) C\+\+ native, (\w+): ([\d.]+) ns\/pair, offsets sum (\d+)/.exec(line);
  const loop = /^(\S+) C\+\+ wasm loop-inside, (\w+): ([\d.]+) ns\/pair, offsets sum (\d+)/.exec(
    line,
  );
  const m =
    /^calls, (\w+): (\S+) C\+\+ wasm ([\d.]+) ns\/pair \(sum (\d+)\), AS TLSF ([\d.]+) ns\/pair \(sum (\d+)\), TS first fit ([\d.]+) ns\/pair \(sum (\d+)\)/.exec(
      line,
    );
  if (probe) add('JS probe (TS first fit)', probe[1], probe[2], probe[3]);
  else if (native) add(`C++ native ${native[1]}`, native[2], native[3], native[4]);
  else if (loop) add(`C++ wasm loop-inside (${loop[1]})`, loop[2], loop[3], loop[4]);
  else if (m) {
    add(`C++ wasm called from JS (${m[2]})`, m[1], m[3], m[4]);
    add(`AS TLSF called from JS (run with ${m[2]})`, m[1], m[5], m[6]);
    add(`TS first fit called from JS (run with ${m[2]})`, m[1], m[7], m[8]);
    add(`C++ wasm called (${m[2]}): speed vs TLSF, same process`, m[1], (m[5] / m[3]).toFixed(3));
    add(
      `TS first fit called: speed vs TLSF, same process (run with ${m[2]})`,
      m[1],
      (m[5] / m[7]).toFixed(3),
    );
  }
}
const median = (a) => {
  const s = [...a].sort((x, y) => x - y);
  return s.length % 2 ? s[(s.length - 1) >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const names = [...new Set([...rows.keys()].map((k) => k.split('|')[0]))];
const pooled = (w) =>
  median(
    [...rows.entries()]
      .filter(([k]) => k.startsWith('AS TLSF') && k.endsWith(`|${w}`))
      .flatMap(([, v]) => v),
  );
const tlsf = { small: pooled('small'), mixed: pooled('mixed') };
const fmt = (v, d = 1) => (Number.isFinite(v) ? v.toFixed(d) : '-');
console.log(`pooled AS TLSF medians: W1 ${fmt(tlsf.small)} ns/pair, W2 ${fmt(tlsf.mixed)} ns/pair`);
console.log(
  '| row | W1 median | W2 median | W1 runs | W2 runs | speed vs pooled TLSF W1 / W2 | offsets sums W1 ; W2 |',
);
console.log('| --- | --- | --- | --- | --- | --- | --- |');
for (const n of names) {
  const s = rows.get(`${n}|small`) ?? [];
  const x = rows.get(`${n}|mixed`) ?? [];
  const ratio = n.includes('speed vs TLSF');
  const d = ratio ? 2 : 1;
  const vs = ratio ? '' : `${fmt(tlsf.small / median(s), 2)} / ${fmt(tlsf.mixed / median(x), 2)}`;
  const sumText = ['small', 'mixed']
    .map((w) => [...(sums.get(`${n}|${w}`) ?? [])].join('/'))
    .join(' ; ');
  console.log(
    `| ${n} | ${fmt(median(s), d)} | ${fmt(median(x), d)} | ${s.map((v) => fmt(v, d)).join(', ')} | ${x.map((v) => fmt(v, d)).join(', ')} | ${vs} | ${sumText} |`,
  );
}
