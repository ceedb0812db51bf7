// Placements: every ClusterResourcePlacement (and namespaced ResourcePlacement) with its
// policy and rollout at a glance; one placement's page shows every cluster the scheduler
// considered, with its verdict, score and reason, the rollout state on each selected
// cluster, and the resources placed.

import { acquire, release } from './informer.js';
import { badge, cond, errorText, esc, notice, pending, stale, table } from './html.js';

const GROUP = '/apis/placement.kubernetes-fleet.io/v1beta1';
const CRPS = `${GROUP}/clusterresourceplacements`;
const RPS = `${GROUP}/resourceplacements`;
const PAGE = 100;

/** The page: the list, or one placement (`[name]` or `[namespace, name]`). */
export function mount(el, params) {
  return params.length ? mountOne(el, params) : mountList(el);
}

function mountList(el) {
  const crps = acquire(CRPS);
  const rps = acquire(RPS);
  const render = () => {
    const waiting = pending(crps, 'placements');
    const rows = [...crps.list(), ...(rps.synced ? rps.list() : [])]
      .sort((a, b) => a.metadata.name.localeCompare(b.metadata.name))
      .map((p) => {
        const ns = p.metadata.namespace;
        const href = ns ? `#/placements/${encodeURIComponent(ns)}/${encodeURIComponent(p.metadata.name)}` : `#/placements/${encodeURIComponent(p.metadata.name)}`;
        const statuses = p.status?.placementStatuses || [];
        const available = statuses.filter((s) => cond(s, 'Available')?.status === 'True').length;
        return [
          `<a href="${href}">${esc(p.metadata.name)}</a>${ns ? ` <span class="muted">in ${esc(ns)}</span>` : ''}`,
          esc(policyText(p.spec.policy)),
          esc(p.spec.strategy?.type || 'RollingUpdate'),
          `${statuses.filter((s) => s.clusterName).length}`,
          `${available}`,
          overall(p),
        ];
      });
    el.innerHTML = `<h1>Placements</h1>${waiting || table(
      ['Placement', 'Policy', 'Strategy', 'Clusters', 'Available', 'State'],
      rows,
      'No placements yet. Create a ClusterResourcePlacement with kubectl (see examples/crp-app.yaml).',
      'class="placements"',
    )}`;
  };
  const unsubscribe = [crps.subscribe(render), rps.subscribe(render)];
  render();
  return () => {
    unsubscribe.forEach((u) => u());
    release(crps);
    release(rps);
  };
}

function policyText(policy) {
  const type = policy?.placementType || 'PickAll';
  if (type === 'PickN') return `PickN ${policy.numberOfClusters ?? ''}`.trim();
  if (type === 'PickFixed') return `PickFixed (${(policy.clusterNames || []).join(', ')})`;
  return type;
}

/** The placement's state: its first condition that is not True, else Available. */
function overall(placement) {
  const conditions = placement.status?.conditions || [];
  if (!conditions.length) return badge('Pending', 'not scheduled yet');
  const failing = conditions.find((c) => c.status !== 'True');
  if (failing) {
    const word = failing.status === 'False' ? 'Failed' : 'Pending';
    return `${badge(word, failing.message)} <span class="muted">${esc(failing.type.replace(/^(ClusterResourcePlacement|ResourcePlacement)/, ''))}: ${esc(failing.reason)}</span>`;
  }
  return badge('Available', conditions.at(-1).message);
}

function mountOne(el, params) {
  const [namespace, name] = params.length > 1 ? params : [null, params[0]];
  const placements = acquire(namespace ? `${GROUP}/namespaces/${encodeURIComponent(namespace)}/resourceplacements` : CRPS);
  // KubeFleet's label keys spell `parent-CRP` for both scopes.
  const selector = encodeURIComponent(`kubernetes-fleet.io/parent-CRP=${name},kubernetes-fleet.io/is-latest-snapshot=true`);
  const snapshotPath = namespace
    ? `${GROUP}/namespaces/${encodeURIComponent(namespace)}/schedulingpolicysnapshots?labelSelector=${selector}`
    : `${GROUP}/clusterschedulingpolicysnapshots?labelSelector=${selector}`;
  const snapshots = acquire(snapshotPath);
  let limit = PAGE;
  const onClick = (event) => {
    if (!event.target.closest('button[data-more]')) return;
    limit += PAGE;
    render();
  };
  el.addEventListener('click', onClick);
  const render = () => {
    const waiting = pending(placements, 'placements');
    const key = namespace ? `${namespace}/${name}` : name;
    const placement = placements.items.get(key);
    const title = `<h1><a href="#/placements">Placements</a> › ${esc(name)}</h1>`;
    if (waiting) { el.innerHTML = title + waiting; return; }
    if (!placement) { el.innerHTML = title + notice('empty', `There is no placement ${name}${namespace ? ` in ${namespace}` : ''}.`); return; }
    const snapshot = snapshots.list()[0];
    el.innerHTML = `${title}${stale(placements, snapshots)}
      <p>${esc(policyText(placement.spec.policy))} · strategy ${esc(placement.spec.strategy?.type || 'RollingUpdate')} · ${overall(placement)}</p>
      ${conditionsHtml(placement.status?.conditions || [])}
      <h2>Clusters</h2>${clustersHtml(placement, snapshot, snapshots, limit)}
      <h2>Resources placed</h2>${resourcesHtml(placement)}`;
  };
  const unsubscribe = [placements.subscribe(render), snapshots.subscribe(render)];
  render();
  return () => {
    el.removeEventListener('click', onClick);
    unsubscribe.forEach((u) => u());
    release(placements);
    release(snapshots);
  };
}

function conditionsHtml(conditions) {
  if (!conditions.length) return '';
  return `<ul class="conditions">${conditions.map((c) => `<li>${badge(c.status === 'True' ? 'Succeeded' : c.status === 'False' ? 'Failed' : 'Pending')} <strong>${esc(c.type)}</strong> ${esc(c.reason)} — ${esc(c.message)}</li>`).join('')}</ul>`;
}

function rollout(status) {
  if (!status) return '<span class="muted">—</span>';
  const step = (type) => {
    const c = cond(status, type);
    if (!c) return badge('Pending', `${type}: not reported yet`);
    return badge(c.status === 'True' ? (type === 'Scheduled' ? 'Scheduled' : type) : c.status === 'False' ? 'Failed' : 'Pending', `${type}: ${c.reason} — ${c.message}`);
  };
  return step('Scheduled') + ' ' + step('Applied') + ' ' + step('Available');
}

function clustersHtml(placement, snapshot, snapshots, limit) {
  const byCluster = new Map((placement.status?.placementStatuses || []).filter((s) => s.clusterName).map((s) => [s.clusterName, s]));
  const decisions = snapshot?.status?.targetClusters || [];
  const names = new Set([...decisions.map((d) => d.clusterName), ...byCluster.keys()]);
  const problem = snapshots.error ? notice('error', errorText(snapshots.error, 'scheduling decisions')) : '';
  if (!names.size) {
    return problem || (snapshots.synced ? notice('empty', 'The scheduler has not considered any cluster yet.') : notice('empty', 'Loading the scheduling decisions…'));
  }
  const decisionOf = new Map(decisions.map((d) => [d.clusterName, d]));
  const all = [...names].sort();
  const rows = all.slice(0, limit).map((cluster) => {
    const decision = decisionOf.get(cluster);
    const status = byCluster.get(cluster);
    const score = decision?.clusterScore;
    const drifted = status?.driftedPlacements?.length || 0;
    const failed = status?.failedPlacements || [];
    const verdict = decision ? badge(decision.selected ? 'Selected' : 'Rejected') : badge('Unknown', 'no scheduling decision read for this cluster');
    return [
      `<span data-cluster="${esc(cluster)}">${esc(cluster)}</span>`,
      verdict,
      score ? `affinity ${esc(score.affinityScore ?? 0)} · topology ${esc(score.priorityScore ?? 0)}` : '<span class="muted">—</span>',
      esc(decision?.reason || ''),
      rollout(status),
      drifted ? badge('Drifted', status.driftedPlacements.map((d) => `${d.kind} ${d.name}`).join(', ')) + ` ${drifted}` : (status ? 'none' : ''),
      failed.map((f) => `${esc(f.kind)} ${esc(f.name)}: ${esc(f.condition?.message || '')}`).join('<br>'),
    ];
  });
  const more = all.length > limit
    ? `<p class="more">Showing ${limit} of ${all.length} clusters. <button type="button" data-more="clusters">Show ${Math.min(all.length - limit, PAGE)} more</button></p>`
    : '';
  return problem + table(['Cluster', 'Verdict', 'Score', 'Reason', 'Rollout', 'Drift', 'Failures'], rows, '', 'class="clusters"') + more;
}

function resourcesHtml(placement) {
  const resources = placement.status?.selectedResources || [];
  const rows = resources.map((r) => [
    esc(r.kind), esc(r.namespace || '—'), esc(r.name), esc([r.group || 'core', r.version].join('/')),
  ]);
  return table(['Kind', 'Namespace', 'Name', 'API'], rows, 'No resources selected yet.');
}
