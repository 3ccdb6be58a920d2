/** The report pages' stylesheet (inlined): light and dark by prefers-color-scheme. */
export const PAGE_STYLE = `
:root {
  color-scheme: light dark;
  --bg: #fbfbfa; --fg: #1d1f21; --muted: #5f6368; --panel: #f0f1f3; --line: #d5d8dc;
  --model: #2f6fdb; --impl: #d9822b; --free: #cfe8d4; --busy: rgba(214, 160, 0, 0.45); --region: #9aa0a6;
  --fail: #d93025; --hl: #d93025; --sel: #7b1fa2;
  --s-resident: #34a853; --s-in-flight: #f9ab00; --s-evicted: #9aa0a6; --s-untracked: transparent;
  --s-open: #4285f4; --s-closed: #80cbc4; --s-failed: #d93025;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #17191c; --fg: #e8eaed; --muted: #9aa0a6; --panel: #212428; --line: #3c4043;
    --model: #6ea8fe; --impl: #ffb86b; --free: #24452d; --busy: rgba(255, 214, 90, 0.35); --region: #80868b;
    --fail: #ff6b6b; --hl: #ff5252; --sel: #ce93d8;
    --s-resident: #5bb974; --s-in-flight: #fdd663; --s-evicted: #5f6368; --s-untracked: transparent;
    --s-open: #8ab4f8; --s-closed: #4db6ac; --s-failed: #ff6b6b;
  }
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg); font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; }
header { padding: 14px 20px 10px; border-bottom: 1px solid var(--line); }
h1 { font-size: 17px; margin: 0 0 6px; }
h1 .bad { color: var(--fail); }
h2 { font-size: 14px; margin: 14px 0 6px; }
code, pre, .mono { font: 12.5px/1.4 ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; }
pre { white-space: pre-wrap; word-break: break-all; margin: 0; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 6px 0; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; }
dl.facts dd code { word-break: break-all; }
.message { background: var(--panel); border-left: 3px solid var(--fail); padding: 6px 10px; margin-top: 6px; }
.message.ok { border-left-color: var(--s-resident); }
main { display: grid; grid-template-columns: minmax(0, 1fr) 420px; gap: 16px; padding: 12px 20px; align-items: start; }
.picture { position: relative; overflow: auto; max-height: 78vh; border: 1px solid var(--line); background: var(--bg); }
.picture canvas { display: block; }
.picture canvas.overlay, .picture canvas.labels { position: absolute; left: 0; top: 0; pointer-events: none; }
.picture canvas.labels { display: none; background: var(--bg); }
.legend { display: flex; flex-wrap: wrap; gap: 4px 14px; margin: 6px 0; color: var(--muted); font-size: 12.5px; }
.legend span::before { content: ""; display: inline-block; width: 12px; height: 10px; margin-right: 5px; vertical-align: -1px; background: var(--c); border: 1px solid var(--line); }
aside { position: sticky; top: 8px; max-height: 96vh; display: flex; flex-direction: column; gap: 10px; }
.detail { background: var(--panel); border: 1px solid var(--line); padding: 8px 10px; overflow: auto; max-height: 48vh; }
.detail .k { color: var(--muted); }
.detail .fails { color: var(--fail); font-weight: 600; }
ol.steps { position: relative; list-style: none; margin: 0; padding: 0; overflow: auto; max-height: 40vh; border: 1px solid var(--line); }
ol.steps li { padding: 1px 8px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; cursor: pointer; }
ol.steps li.failing { color: var(--fail); font-weight: 600; }
ol.steps li.sel { background: var(--sel); color: var(--bg); }
ul.highlights { margin: 4px 0; padding-left: 18px; }
.tip { position: fixed; z-index: 5; pointer-events: none; max-width: 520px; background: var(--panel); border: 1px solid var(--line); padding: 6px 8px; box-shadow: 0 2px 8px rgba(0,0,0,.25); display: none; }
.keys { color: var(--muted); font-size: 12.5px; }
kbd { border: 1px solid var(--line); border-bottom-width: 2px; border-radius: 3px; padding: 0 4px; font-size: 11.5px; }
details { margin: 10px 20px 24px; }
table.summary { border-collapse: collapse; margin: 8px 0; }
table.summary th, table.summary td { border-bottom: 1px solid var(--line); padding: 4px 10px; text-align: right; }
table.summary th:not(:last-child), table.summary td:not(:last-child) { white-space: nowrap; }
table.summary th:first-child, table.summary td:first-child, table.summary td.left, table.summary th:last-child { text-align: left; }
table.summary td.bad { color: var(--fail); font-weight: 600; }
.bar { display: inline-block; height: 10px; background: var(--model); vertical-align: middle; }
a { color: var(--model); }
section.page { padding: 12px 20px; }
`;
