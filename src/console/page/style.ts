/**
 * The console's one stylesheet: readable defaults, one column that reflows at 400 % zoom (no fixed widths), a
 * visible focus ring on every control, and status shown in words (colour only repeats what the words say).
 */

export const CONSOLE_CSS = `
:root { color-scheme: light dark; --fg: #1b1b1b; --bg: #fdfdfd; --muted: #555; --line: #c8c8c8;
  --ok: #0a6b2d; --warn: #8a4b00; --bad: #a4161a; --focus: #1a5fd0; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #ececec; --bg: #161616; --muted: #b0b0b0; --line: #444; --ok: #6fd08c; --warn: #f0b35c;
    --bad: #ff8a8a; --focus: #8ab4ff; }
}
* { box-sizing: border-box; }
[hidden] { display: none !important; }
body { margin: 0 auto; padding: 1rem; max-width: 70rem; font: 1rem/1.5 system-ui, sans-serif; color: var(--fg);
  background: var(--bg); overflow-wrap: break-word; }
button { white-space: nowrap; }
/* Identifiers and URLs may break anywhere (no sideways scroll); words and headings never break mid-word. */
td { overflow-wrap: anywhere; }
th, td[data-label="Status"], td[data-label="Expires"], td[data-label="Last refresh"] { overflow-wrap: normal; }
h1 { font-size: 1.6rem; margin: 0 0 1rem; }
h2 { font-size: 1.25rem; margin: 0 0 .5rem; }
section { border-top: 1px solid var(--line); padding: 1rem 0; }
table { border-collapse: collapse; width: 100%; }
caption { text-align: start; color: var(--muted); padding-bottom: .25rem; }
th, td { text-align: start; vertical-align: top; padding: .25rem .5rem .25rem 0; border-bottom: 1px solid var(--line); }
.table-wrap { overflow-x: auto; }
ul, ol { padding-inline-start: 1.25rem; }
li { margin: .25rem 0; }
label { display: inline-block; margin: .25rem 1rem .25rem 0; max-width: 100%; }
select, button, input { font: inherit; padding: .3rem .6rem; max-width: 100%; }
/* A select is as wide as its longest option unless told otherwise: it may shrink with the window. */
label select { min-width: 0; width: auto; }
form { max-width: 100%; }
button { cursor: pointer; }
a, button, select, input, summary { outline-offset: 2px; }
a:focus-visible, button:focus-visible, select:focus-visible, input:focus-visible, summary:focus-visible {
  outline: 3px solid var(--focus); }
.status-active, .status-completed { color: var(--ok); }
.status-expired, .status-authorizing, .status-waiting { color: var(--warn); }
.status-login_required, .status-failed { color: var(--bad); }
.muted { color: var(--muted); }
.status-line { min-height: 1.5em; font-weight: 600; }
output { display: block; white-space: pre-wrap; font-family: ui-monospace, monospace; }
code { font-family: ui-monospace, monospace; }
@media (max-width: 40rem) {
  table, thead, tbody, tr, th, td, caption { display: block; }
  thead { position: absolute; left: -10000px; }
  tr { border-bottom: 1px solid var(--line); padding: .5rem 0; }
  td { border: 0; padding: .1rem 0; }
  td[data-label]::before { content: attr(data-label) ": "; font-weight: 600; }
  label { display: block; margin-right: 0; }
  label select { display: block; width: 100%; }
}
`;
