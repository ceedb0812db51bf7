// The fleet: every member grouped by region, with its state, versions, size, use, cost,
// update group and next maintenance window. Large fleets stay responsive: every region is
// summarised in its header; beyond SMALL_FLEET members only the first region starts unfolded;
// an unfolded region shows its rows a page at a time; a filter narrows the rows.

import { acquire, release } from './informer.js';
import { badge, bytes, cond, esc, meter, notice, pending, quantity, relative, stale, when } from './html.js';

const MEMBERS = '/apis/cluster.kubernetes-fleet.io/v1beta1/memberclusters';
const WINDOWS = '/apis/updates.flotilla.dev/v1beta1/maintenanceconfigurations';
const REGION_LABELS = ['fleet.azure.com/location', 'topology.kubernetes.io/region', 'region'];
const GROUP_LABEL = 'updates.flotilla.dev/group';
const SMALL_FLEET = 200;
const PAGE = 100;

/** The page. */
export function mount(el) {
  el.innerHTML = `
    <h1>Fleet</h1>
    <div class="toolbar"><label for="member-filter">Filter</label>
      <input id="member-filter" type="search" placeholder="name, region, label or version">
      <span id="fleet-summary" class="muted"></span></div>
    <div id="fleet-body"></div>`;
  const body = el.querySelector('#fleet-body');
  const filter = el.querySelector('#member-filter');
  const members = acquire(MEMBERS);
  const windows = acquire(WINDOWS);
  const view = { folded: new Map(), shown: new Map() };
  const render = () => {
    body.innerHTML = fleetHtml(members, windows, filter.value.trim().toLowerCase(), view);
    el.querySelector('#fleet-summary').textContent = summary(members.list());
    if (members.synced) markFirstRender();
  };
  body.addEventListener('click', (event) => {
    const fold = event.target.closest('button[data-region]');
    const more = event.target.closest('button[data-more]');
    if (fold) view.folded.set(fold.dataset.region, fold.getAttribute('aria-expanded') === 'true');
    else if (more) view.shown.set(more.dataset.more, (view.shown.get(more.dataset.more) || PAGE) + PAGE);
    else return;
    render();
  });
  filter.addEventListener('input', render);
  const unsubscribe = [members.subscribe(render), windows.subscribe(render)];
  render();
  return () => {
    unsubscribe.forEach((u) => u());
    release(members);
    release(windows);
  };
}

/**
 * Records in `window.flotillaFleetRendered` when the page first showed the whole fleet
 * (milliseconds since navigation, once the browser has laid it out and painted): the
 * figure the browser test measures.
 */
function markFirstRender() {
  if (window.flotillaFleetRendered !== undefined) return;
  window.flotillaFleetRendered = null;
  requestAnimationFrame(() => setTimeout(() => {
    window.flotillaFleetRendered = performance.now();
  }));
}

function summary(list) {
  const joined = list.filter((m) => cond(m, 'Joined')?.status === 'True').length;
  const healthy = list.filter((m) => cond(m, 'Healthy')?.status === 'True').length;
  return `${list.length} members · ${joined} joined · ${healthy} healthy`;
}

function regionOf(member) {
  const labels = member.metadata.labels || {};
  for (const key of REGION_LABELS) if (labels[key]) return labels[key];
  return '(no region label)';
}

function fleetHtml(members, windows, query, view) {
  const waiting = pending(members, 'member clusters');
  if (waiting) return waiting;
  const list = members.list();
  if (!list.length) {
    return notice('empty', 'No member clusters yet. Join one with `flotilla member` or start a fleet with `flotilla up`.');
  }
  const windowsByMember = new Map();
  for (const config of windows.list()) {
    const member = (config.metadata.namespace || '').replace(/^fleet-member-/, '');
    if (!windowsByMember.has(member)) windowsByMember.set(member, []);
    windowsByMember.get(member).push(config);
  }
  const regions = new Map();
  for (const member of list) {
    const region = regionOf(member);
    if (!regions.has(region)) regions.set(region, []);
    regions.get(region).push(member);
  }
  const warning = windows.error && !windows.synced
    ? notice('error', `Maintenance windows unavailable: ${windows.error.message}`) : '';
  const sections = [...regions.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([region, all], index) => {
      all.sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
      const matching = query ? all.filter((m) => matches(m, region, query)) : all;
      if (!matching.length) return '';
      const open = !(view.folded.get(region) ?? (index > 0 && list.length > SMALL_FLEET && !query));
      const limit = view.shown.get(region) || PAGE;
      const shown = matching.slice(0, limit);
      const rows = open ? shown.map((m) => row(m, windowsByMember.get(m.metadata.name) || [])).join('') : '';
      const rest = matching.length - shown.length;
      const more = open && rest > 0
        ? `<p class="more">Showing ${shown.length} of ${matching.length}. <button type="button" data-more="${esc(region)}">Show ${Math.min(rest, PAGE)} more</button> or filter above.</p>`
        : '';
      return `<section class="region" data-region="${esc(region)}">
        <h2><button type="button" data-region="${esc(region)}" aria-expanded="${open}" aria-label="${open ? 'fold' : 'unfold'} ${esc(region)}">${open ? '▾' : '▸'}</button>
          ${esc(region)} <span class="muted">${esc(summary(matching))}${matching.length < all.length ? ` (of ${all.length})` : ''}</span>
          <span class="versions">${versionsSummary(matching)}</span></h2>
        ${open ? `<table class="members"><thead><tr>
          <th scope="col">Member</th><th scope="col">State</th><th scope="col">Kubernetes</th>
          <th scope="col">Node images</th><th scope="col">Nodes</th><th scope="col">CPU use</th>
          <th scope="col">Memory use</th><th scope="col">Cost</th><th scope="col">Update group</th>
          <th scope="col">Next maintenance</th></tr></thead><tbody>${rows}</tbody></table>${more}` : ''}
      </section>`;
    })
    .join('');
  return stale(members, windows) + warning + (sections || notice('empty', `No member matches “${query}”.`));
}

/** How many members run each Kubernetes version: `1.30.6 ×120 · 1.31.2 ×14`. */
function versionsSummary(list) {
  const counts = new Map();
  for (const member of list) {
    const version = member.status?.versions?.kubernetesVersion || 'unknown';
    counts.set(version, (counts.get(version) || 0) + 1);
  }
  return [...counts.entries()]
    .sort(([a], [b]) => a.localeCompare(b, undefined, { numeric: true }))
    .map(([version, n]) => `<span class="version">${esc(version)} ×${n}</span>`)
    .join(' · ');
}

function matches(member, region, query) {
  const labels = Object.entries(member.metadata.labels || {}).map(([k, v]) => `${k}=${v}`).join(' ');
  const version = member.status?.versions?.kubernetesVersion || '';
  return `${member.metadata.name} ${region} ${labels} ${version}`.toLowerCase().includes(query);
}

function state(member) {
  const joined = cond(member, 'Joined');
  const healthy = cond(member, 'Healthy');
  if (member.metadata.deletionTimestamp) return badge('Leaving', 'the member is being removed from the fleet');
  if (joined?.status !== 'True') return badge('NotJoined', joined?.message || 'the member agent has not joined yet');
  if (healthy && healthy.status !== 'True') return `${badge('Joined')} ${badge('Unhealthy', healthy.message)}`;
  return `${badge('Joined')} ${badge(healthy ? 'Healthy' : 'Unknown', healthy?.message || 'no health reported yet')}`;
}

function property(member, name) {
  return member.status?.properties?.[name]?.value;
}

function row(member, configs) {
  const name = member.metadata.name;
  const versions = member.status?.versions || {};
  const usage = member.status?.resourceUsage || {};
  const cpuTotal = quantity(usage.allocatable?.cpu);
  const cpuUsed = cpuTotal - quantity(usage.available?.cpu);
  const memTotal = quantity(usage.allocatable?.memory);
  const memUsed = memTotal - quantity(usage.available?.memory);
  const pools = versions.nodePools || [];
  const images = [...new Set(pools.map((p) => p.image).filter(Boolean))];
  const nodes = property(member, 'kubernetes-fleet.io/node-count') ?? pools.reduce((n, p) => n + (p.nodeCount || 0), 0);
  const coreCost = property(member, 'kubernetes.azure.com/per-cpu-core-cost');
  const gbCost = property(member, 'kubernetes.azure.com/per-gb-memory-cost');
  return `<tr data-member="${esc(name)}">
    <th scope="row"><a href="#/nodes/${encodeURIComponent(name)}" title="node pools of ${esc(name)}">${esc(name)}</a></th>
    <td>${state(member)}</td>
    <td>${esc(versions.kubernetesVersion || property(member, 'k8s.io/k8s-version') || '?')}</td>
    <td>${images.length ? images.map(esc).join('<br>') : '<span class="muted">none reported</span>'}</td>
    <td class="num">${esc(nodes)}</td>
    <td>${meter(cpuUsed, cpuTotal, `${cpuUsed.toFixed(1)} of ${cpuTotal.toFixed(1)} cores`)}</td>
    <td>${meter(memUsed, memTotal, `${bytes(memUsed)} of ${bytes(memTotal)}`)}</td>
    <td>${coreCost || gbCost ? `${esc(coreCost ?? '?')}/core·h<br>${esc(gbCost ?? '?')}/GB·h` : '<span class="muted">unknown</span>'}</td>
    <td>${esc(member.metadata.labels?.[GROUP_LABEL] || '—')}</td>
    <td>${maintenance(configs)}</td>
  </tr>`;
}

function maintenance(configs) {
  if (!configs.length) return '<span class="muted">any time (no window)</span>';
  return configs
    .sort((a, b) => a.metadata.name.localeCompare(b.metadata.name))
    .map((config) => {
      const status = config.status || {};
      const label = `<span class="muted">${esc(config.metadata.name)}:</span>`;
      if (status.open && status.currentWindow) {
        return `${label} ${badge('Open')} until ${esc(when(status.currentWindow.end))}`;
      }
      if (status.nextWindow) {
        return `${label} ${esc(relative(status.nextWindow.start))} <span class="muted">(${esc(when(status.nextWindow.start))})</span>`;
      }
      const valid = cond(status, 'Valid');
      if (valid && valid.status !== 'True') return `${label} ${badge('Invalid', valid.message)}`;
      return `${label} ${esc(status.schedule || 'no upcoming window')}`;
    })
    .join('<br>');
}
