// Small rendering helpers shared by the pages: escaping, states as text labels (readable
// without colour), conditions, durations, quantities.

import * as clock from './clock.js';

/** `text` escaped for HTML. */
export function esc(text) {
  return String(text ?? '').replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The condition `type` of an object's status (or of a plain conditions array holder). */
export function cond(holder, type) {
  const list = holder?.conditions || holder?.status?.conditions || [];
  return list.find((c) => c.type === type);
}

/** The tone of a state word, for colour: ok, warn, bad, run, idle. */
export function tone(state) {
  switch (state) {
    case 'Completed': case 'Succeeded': case 'Available': case 'Applied': case 'Joined':
    case 'Healthy': case 'Approved': case 'Selected': case 'Ready': case 'Elapsed': case 'Open':
      return 'ok';
    case 'Failed': case 'Rejected': case 'Unhealthy': case 'NotJoined': case 'Stuck': case 'Error':
    case 'Drifted': case 'NotReady': case 'Invalid': case 'Blocked':
      return 'bad';
    case 'Pending': case 'WaitingForApproval': case 'Waiting': case 'Stopped': case 'Stopping':
    case 'Skipped': case 'Paused':
      return 'warn';
    case 'Running': case 'Updating': case 'Started': case 'Progressing': case 'Scheduled':
      return 'run';
    default:
      return 'idle';
  }
}

/** A state label: the word itself, coloured by its tone. */
export function badge(state, title = '') {
  return `<span class="badge ${tone(state)}" data-state="${esc(state)}"${title ? ` title="${esc(title)}"` : ''}>${esc(state)}</span>`;
}

/** A loading, empty or error notice. */
export function notice(kind, text) {
  return `<p class="${kind}" role="${kind === 'error' ? 'alert' : 'status'}">${esc(text)}</p>`;
}

/** The notice for an informer that has no data to show yet, or null when it has. */
export function pending(informer, what) {
  if (informer.error && !informer.synced) return notice('error', errorText(informer.error, what));
  if (!informer.synced) return notice('empty', `Loading ${what}…`);
  return null;
}

/** What to tell the user about `error` while reading `what`. */
export function errorText(error, what) {
  if (error.status === 403) return `You may not read ${what}: ${error.message}`;
  if (error.status === 404) return `Not found (${what}): ${error.message}`;
  return `Could not read ${what}: ${error.message}`;
}

/**
 * A banner over data that is no longer live: an informer whose watch failed after it had
 * listed keeps its last data, and the page says so (and why) while it reconnects.
 */
export function stale(...informers) {
  const broken = informers.filter((i) => i.synced && i.error);
  if (!broken.length) return '';
  const why = broken.map((i) => i.error.message).join('; ');
  return notice('error', `Live updates interrupted (${why}); showing the last data received${broken.some((i) => i.stopped) ? '' : ', reconnecting'}.`);
}

/** `seconds` as `2d 3h`, `4h 10m`, `5m 12s` or `40s`. */
export function span(seconds) {
  const s = Math.max(0, Math.round(seconds));
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (d) return `${d}d ${h}h`;
  if (h) return `${h}h ${m}m`;
  if (m) return `${m}m ${s % 60}s`;
  return `${s}s`;
}

/** How long from the hub's now until `time` (RFC 3339), e.g. `in 4h 10m` or `5m ago`. */
export function relative(time) {
  if (!time) return '';
  const seconds = (Date.parse(time) - clock.now()) / 1000;
  return seconds >= 0 ? `in ${span(seconds)}` : `${span(-seconds)} ago`;
}

/** `time` (RFC 3339) as `2026-11-22 14:00 UTC`. */
export function when(time) {
  if (!time) return '';
  return `${time.slice(0, 10)} ${time.slice(11, 16)} UTC`;
}

/** A Go duration (`1h0m0s`, `30m`, `90s`) in seconds. */
export function goDuration(text) {
  let total = 0;
  for (const [, n, unit] of String(text || '').matchAll(/([\d.]+)(h|ms|m|s)/g)) {
    total += Number(n) * { h: 3600, m: 60, s: 1, ms: 0.001 }[unit];
  }
  return total;
}

const SUFFIX = { n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15,
  Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50 };

/** A Kubernetes quantity (`5790m`, `22455Mi`, `6`) as a number. */
export function quantity(text) {
  const match = /^([+-]?[\d.]+(?:e[+-]?\d+)?)([a-zA-Z]*)$/.exec(String(text ?? '').trim());
  if (!match || !(match[2] in SUFFIX)) return NaN;
  return Number(match[1]) * SUFFIX[match[2]];
}

/** Bytes as `21.9 GiB`. */
export function bytes(n) {
  if (!Number.isFinite(n)) return '?';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i += 1; }
  return `${n.toFixed(n < 10 && i ? 1 : 0)} ${units[i]}`;
}

/** A used-of-total meter with its percentage as text. */
export function meter(used, total, label) {
  if (!Number.isFinite(used) || !Number.isFinite(total) || total <= 0) return '<span class="muted">unknown</span>';
  const pct = Math.round((100 * used) / total);
  return `<meter min="0" max="100" low="70" high="85" optimum="40" value="${Math.min(100, pct)}" title="${esc(label)}"></meter> <span class="pct">${pct}%</span> <span class="muted">${esc(label)}</span>`;
}

/** A table of `rows` (arrays of HTML cells) under `headers`, or `empty` when there are none. */
export function table(headers, rows, empty, attrs = '') {
  if (!rows.length) return notice('empty', empty);
  return `<table ${attrs}><thead><tr>${headers.map((h) => `<th scope="col">${esc(h)}</th>`).join('')}</tr></thead><tbody>${rows
    .map((cells) => `<tr>${cells.map((c) => `<td>${c}</td>`).join('')}</tr>`)
    .join('')}</tbody></table>`;
}

/** A copyable command line: a block of its own, or `inline` in a sentence. */
export function command(text, inline = false) {
  return `<code class="command${inline ? ' inline' : ''}">${esc(text)}</code>`;
}

/** A countdown to `endMs` (hub time) that [`tick`] keeps current. */
export function countdown(endMs) {
  return `<span class="countdown" data-end="${endMs}">${esc(countdownText(endMs))}</span>`;
}

function countdownText(endMs) {
  const left = (endMs - clock.now()) / 1000;
  return left > 0 ? `${span(left)} left` : 'ending now';
}

/** Updates the countdowns under `el` without re-rendering (selections survive). */
export function tick(el) {
  for (const node of el.querySelectorAll('.countdown[data-end]')) {
    node.textContent = countdownText(Number(node.dataset.end));
  }
}

const SETTLED = new Set(['Completed', 'Succeeded', 'NotStarted', 'Skipped']);

/**
 * List items for `items` (each drawn by `draw`), summarised when there are more than
 * `limit`: a count per state (`stateOf`), then only the items in an unsettled state (running,
 * waiting, failed: the ones to look at), at most `limit` of them.
 */
export function summarised(items, stateOf, draw, limit = 50) {
  if (items.length <= limit) return items.map(draw).join('');
  const counts = new Map();
  for (const item of items) counts.set(stateOf(item), (counts.get(stateOf(item)) || 0) + 1);
  const summary = [...counts.entries()].map(([state, n]) => `${badge(state)} ×${n}`).join(' ');
  const notable = items.filter((item) => !SETTLED.has(stateOf(item)));
  const shown = notable.slice(0, limit);
  const hidden = items.length - shown.length;
  return `<li class="summary">${summary}</li>${shown.map(draw).join('')}<li class="muted">${hidden} more not listed (${notable.length > limit ? 'including unsettled ones' : 'settled or not started'})</li>`;
}
