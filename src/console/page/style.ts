/**
 * The console's one stylesheet, a small design system: type and spacing scales, one accent, status colours used
 * only beside words (badges always carry text), cards, buttons (primary, plain, danger), a visible focus ring on
 * every control, light and dark schemes. One column that reflows at 400 % zoom (no fixed widths); under 48rem the
 * accounts table becomes one card per account.
 */

export const CONSOLE_CSS = `
:root { color-scheme: light dark;
  --font: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  --mono: ui-monospace, "SF Mono", Menlo, Consolas, monospace;
  --s1: .25rem; --s2: .5rem; --s3: .75rem; --s4: 1rem; --s5: 1.5rem; --s6: 2rem;
  --radius: .6rem;
  --bg: #f4f5f7; --surface: #ffffff; --fg: #1c2230; --muted: #576071; --line: #dde1e8; --soft: #eef0f4;
  --accent: #2451c7; --accent-fg: #ffffff; --accent-soft: #e7edfc; --focus: #2451c7;
  --ok: #176a3a; --ok-soft: #e2f3e8; --warn: #8a4d00; --warn-soft: #fdf0dc; --bad: #b3261e; --bad-soft: #fbe6e4;
  --shadow: 0 1px 2px rgb(20 30 50 / 6%), 0 2px 8px rgb(20 30 50 / 5%); }
@media (prefers-color-scheme: dark) {
  :root { --bg: #12151b; --surface: #1b1f27; --fg: #e7e9ee; --muted: #a7afbd; --line: #323845; --soft: #242a35;
    --accent: #8fb0ff; --accent-fg: #0d1424; --accent-soft: #24304d; --focus: #8fb0ff;
    --ok: #7bd79b; --ok-soft: #1c3527; --warn: #f2bf6b; --warn-soft: #3a2d17; --bad: #ff9a92; --bad-soft: #3d1f1d;
    --shadow: none; }
}
* { box-sizing: border-box; }
[hidden] { display: none !important; }
html { background: var(--bg); }
body { margin: 0; font: 1rem/1.55 var(--font); color: var(--fg); background: var(--bg); overflow-wrap: break-word; }
.wrap { max-width: 76rem; margin: 0 auto; padding: 0 var(--s4); }
.narrow { max-width: 44rem; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
h1 { font-size: 1.5rem; line-height: 1.2; margin: 0 0 var(--s2); display: flex; align-items: center; gap: var(--s2); }
h2 { font-size: 1.125rem; line-height: 1.3; margin: 0; }
.doc h2 { margin: var(--s5) 0 var(--s2); }
p { margin: var(--s2) 0; }
a { color: var(--accent); text-underline-offset: 2px; }
code, output { font-family: var(--mono); font-size: .9em; }
code { background: var(--soft); padding: 0 .25em; border-radius: .25rem; overflow-wrap: anywhere; }
.muted { color: var(--muted); }
.small { font-size: .875rem; }
.sub { display: block; color: var(--muted); font-size: .8125rem; }
.scopes { font-family: var(--mono); font-size: .75rem; }
.error { color: var(--bad); }
.error:empty { display: none; }
.logo { width: 1.4rem; height: 1.4rem; border-radius: .4rem; flex: none;
  background: linear-gradient(135deg, var(--accent) 0 55%, var(--ok) 55% 100%); }
.top { background: var(--surface); border-bottom: 1px solid var(--line); padding: var(--s5) 0 var(--s3); }
.intro { color: var(--muted); max-width: 48rem; margin: 0; }
.status-line { min-height: 1.5em; margin: var(--s2) 0 0; font-weight: 600; }
main.wrap { padding-top: var(--s5); padding-bottom: var(--s6); display: grid; gap: var(--s4); }
.card { background: var(--surface); border: 1px solid var(--line); border-radius: var(--radius); box-shadow: var(--shadow);
  padding: var(--s4) var(--s5); min-width: 0; }
.card-head { display: flex; flex-wrap: wrap; align-items: center; justify-content: space-between; gap: var(--s3); margin-bottom: var(--s3); }
.card-head form, .card-head label { margin: 0; }
.row { display: flex; flex-wrap: wrap; align-items: center; gap: var(--s2) var(--s3); }
.row.end { justify-content: flex-end; }
label { display: inline-flex; flex-wrap: wrap; align-items: center; gap: var(--s2); max-width: 100%; }
select, button, input { font: inherit; max-width: 100%; }
select { padding: .35rem .5rem; border: 1px solid var(--line); border-radius: .4rem; background: var(--surface); color: var(--fg); min-width: 0; }
.button { display: inline-flex; align-items: center; gap: var(--s1); padding: .4rem .85rem; border-radius: .45rem;
  border: 1px solid var(--line); background: var(--surface); color: var(--fg); cursor: pointer; font-weight: 600;
  text-decoration: none; white-space: nowrap; line-height: 1.3; }
.button:hover { background: var(--soft); }
.button.primary { background: var(--accent); border-color: var(--accent); color: var(--accent-fg); }
.button.primary:hover { filter: brightness(1.08); }
.button.danger { color: var(--bad); border-color: currentColor; background: var(--surface); }
.button.danger:hover { background: var(--bad-soft); }
.button.small { padding: .25rem .6rem; font-size: .875rem; }
.button:disabled { opacity: .55; cursor: not-allowed; }
a:focus-visible, button:focus-visible, select:focus-visible, input:focus-visible, summary:focus-visible {
  outline: 3px solid var(--focus); outline-offset: 2px; }
.badge { display: inline-flex; align-items: center; gap: .35rem; padding: .1rem .55rem; border-radius: 999px;
  font-size: .8125rem; font-weight: 600; white-space: nowrap; background: var(--soft); color: var(--fg); }
.badge .dot { width: .5rem; height: .5rem; border-radius: 50%; background: currentColor; }
.badge-ok { background: var(--ok-soft); color: var(--ok); }
.badge-warn { background: var(--warn-soft); color: var(--warn); }
.badge-bad { background: var(--bad-soft); color: var(--bad); }
.badge-neutral { background: var(--soft); color: var(--muted); }
.loading { color: var(--muted); font-style: italic; }
.empty { color: var(--muted); padding: var(--s3) 0; }
.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; }
th { text-align: start; font-size: .75rem; text-transform: uppercase; letter-spacing: .04em; color: var(--muted);
  padding: var(--s2) var(--s3) var(--s2) 0; border-bottom: 1px solid var(--line); white-space: nowrap; }
td { vertical-align: top; padding: var(--s3) var(--s3) var(--s3) 0; border-bottom: 1px solid var(--line); overflow-wrap: anywhere; }
tbody tr:last-child td { border-bottom: 0; }
td.token { min-width: 10rem; width: 22%; }
td.actions { text-align: end; white-space: nowrap; }
.timeline { display: block; width: 100%; height: .9rem; margin: .2rem 0 .15rem; overflow: visible; }
.tl-track { stroke: var(--line); stroke-width: 1; vector-effect: non-scaling-stroke; }
.tl-life-ok { fill: var(--ok); opacity: .8; }
.tl-life-warn { fill: var(--warn); opacity: .8; }
.tl-life-open { fill: var(--muted); opacity: .5; }
.tl-mark { fill: var(--surface); stroke: var(--accent); stroke-width: 1.5; vector-effect: non-scaling-stroke; }
.tl-now { stroke: var(--fg); stroke-width: 1.5; vector-effect: non-scaling-stroke; }
ul, ol { margin: var(--s2) 0 0; padding: 0; list-style: none; }
.items li, li.item { display: flex; flex-wrap: wrap; align-items: center; gap: var(--s2) var(--s3); padding: var(--s2) 0;
  border-top: 1px solid var(--soft); }
.items li:first-child { border-top: 0; }
.items li.line { display: block; }
#acp-accounts li { padding: var(--s1) 0; }
output { display: block; flex-basis: 100%; white-space: pre-wrap; background: var(--soft); border-radius: .4rem; padding: var(--s2) var(--s3); }
output.failed { color: var(--bad); }
.prompt { background: var(--accent-soft); border-radius: .45rem; padding: var(--s3); }
.code { font-family: var(--mono); letter-spacing: .08em; }
.activity li { display: grid; grid-template-columns: auto auto 1fr auto; align-items: baseline; gap: var(--s3);
  padding: var(--s2) 0; border-top: 1px solid var(--soft); }
.activity li:first-child { border-top: 0; }
.activity time { color: var(--muted); font-variant-numeric: tabular-nums; font-size: .875rem; white-space: nowrap; }
.activity .tag { font-size: .6875rem; font-weight: 700; letter-spacing: .05em; color: var(--muted); background: var(--soft);
  border-radius: .3rem; padding: 0 .4rem; }
.activity .count { font-weight: 700; color: var(--accent); white-space: nowrap; }
dialog { border: 1px solid var(--line); border-radius: var(--radius); padding: var(--s5); max-width: min(32rem, calc(100vw - 2rem));
  background: var(--surface); color: var(--fg); box-shadow: 0 10px 40px rgb(0 0 0 / 25%); }
dialog::backdrop { background: rgb(15 20 30 / 45%); }
@media (max-width: 48rem) {
  .card { padding: var(--s4); }
  table, thead, tbody, tr, th, td, caption { display: block; }
  thead { position: absolute; left: -10000px; }
  tr { border-bottom: 1px solid var(--line); padding: var(--s3) 0; }
  tbody tr:last-child { border-bottom: 0; }
  td { border: 0; padding: var(--s1) 0; width: auto; }
  td.token { width: auto; }
  td.actions { text-align: start; padding-top: var(--s2); }
  td[data-label]:not([data-label="Account"]):not([data-label="Actions"])::before { content: attr(data-label);
    display: block; font-size: .75rem; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); }
  .activity li { grid-template-columns: auto 1fr; }
  .activity .what { grid-column: 1 / -1; }
  label, label select { width: 100%; }
}
`;
