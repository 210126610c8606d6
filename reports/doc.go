// Package reports renders an *engine.Result for people and programs.
//
// One view model feeds several renderers:
//
//   - Markdown: GitHub-flavoured, sized to fit a pull-request comment
//     (under MarkdownLimit bytes; long tables are trimmed and say so),
//     with evidence and rule docs in <details> blocks.
//   - HTML: one self-contained file: inline CSS and inline SVG charts, no
//     scripts, no fonts, images or stylesheets from the network; rule docs go
//     through goldmark with raw HTML off (images become links).
//   - JSON: versioned (schema_version = JSONSchemaVersion), indented, with a
//     fixed key order per object and sorted fact keys.
//   - Text: a compact ranked summary for a terminal, optionally coloured.
//
// Every string that comes from a trace (event names, paths, device names,
// messages that embed kernel names) is escaped for the output format: HTML
// escaping in HTML, Markdown and HTML escaping in Markdown, control
// characters removed in text. Output is deterministic: no wall clock, fixed
// precision (ratios as percentages with one decimal, durations in µs with one
// decimal below 1 ms and in ms with two decimals above), and maps rendered in
// sorted key order, so the same Result always renders to the same bytes.
//
// Units follow the facts naming: fields ending in _us are microseconds,
// _ratio are fractions in 0..1, _bytes are bytes.
//
// Package reports only reads results; it never evaluates rules.
package reports
