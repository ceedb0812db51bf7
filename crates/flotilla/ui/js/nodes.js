// Node pools of one member, read through the hub's member proxy (/clusters/MEMBER/…, RBAC
// `memberclusters/proxy`): each NodePool with the disruptions it allows per reason right now
// (and the budget that says so), its nodes grouped by instance type with their utilisation
// (pod requests over allocatable), and the recent disruption decisions with their reasons.

import { acquire, release } from './informer.js';
import { badge, bytes, cond, esc, meter, notice, pending, quantity, relative, stale, table } from './html.js';

const MEMBERS = '/apis/cluster.kubernetes-fleet.io/v1beta1/memberclusters';
const POOL_LABEL = 'karpenter.sh/nodepool';
const AGENT_POOL_LABEL = 'kubernetes.azure.com/agentpool';
const INSTANCE_LABEL = 'node.kubernetes.io/instance-type';
const CAPACITY_LABEL = 'karpenter.sh/capacity-type';
const DECISION_KINDS = new Set(['Node', 'NodeClaim', 'NodePool']);
const RECENT = 50;

/** The page: pick a member, or one member's pools (`[member]`). */
export function mount(el, params) {
  return params.length ? mountMember(el, params[0]) : mountPicker(el);
}

function mountPicker(el) {
  const members = acquire(MEMBERS);
  const render = () => {
    const waiting = pending(members, 'member clusters');
    const names = members.list().map((m) => m.metadata.name).sort();
    el.innerHTML = `<h1>Node pools</h1>${waiting || (names.length
      ? `<p>Choose a member cluster:</p><ul class="picker">${names.map((n) => `<li><a href="#/nodes/${encodeURIComponent(n)}">${esc(n)}</a></li>`).join('')}</ul>`
      : notice('empty', 'No member clusters yet.'))}`;
  };
  const unsubscribe = members.subscribe(render);
  render();
  return () => {
    unsubscribe();
    release(members);
  };
}

function mountMember(el, member) {
  const base = `/clusters/${encodeURIComponent(member)}`;
  const pools = acquire(`${base}/apis/karpenter.sh/v1/nodepools`);
  const nodes = acquire(`${base}/api/v1/nodes`);
  const pods = acquire(`${base}/api/v1/pods`);
  const events = acquire(`${base}/api/v1/events`);
  const all = [pools, nodes, pods, events];
  const render = () => {
    const title = `<h1><a href="#/nodes">Node pools</a> › ${esc(member)}</h1>`;
    const waiting = pending(nodes, `the nodes of ${member}`);
    if (waiting) { el.innerHTML = title + waiting; return; }
    el.innerHTML = title + stale(...all) + poolsHtml(pools, nodes, pods) + decisionsHtml(events);
  };
  const unsubscribe = all.map((informer) => informer.subscribe(render));
  render();
  return () => {
    unsubscribe.forEach((u) => u());
    all.forEach(release);
  };
}

/** CPU and memory requested by the running pods of each node. */
function requestsByNode(pods) {
  const byNode = new Map();
  for (const pod of pods.list()) {
    const node = pod.spec?.nodeName;
    const phase = pod.status?.phase;
    if (!node || phase === 'Succeeded' || phase === 'Failed') continue;
    const sum = byNode.get(node) || { cpu: 0, memory: 0, pods: 0 };
    for (const container of pod.spec.containers || []) {
      const requests = container.resources?.requests || {};
      sum.cpu += quantity(requests.cpu) || 0;
      sum.memory += quantity(requests.memory) || 0;
    }
    sum.pods += 1;
    byNode.set(node, sum);
  }
  return byNode;
}

function poolOf(node) {
  const labels = node.metadata.labels || {};
  if (labels[POOL_LABEL]) return labels[POOL_LABEL];
  return `${labels[AGENT_POOL_LABEL] || 'unmanaged'} (agent pool)`;
}

function poolsHtml(pools, nodes, pods) {
  const requests = requestsByNode(pods);
  const byPool = new Map();
  for (const node of nodes.list()) {
    const pool = poolOf(node);
    if (!byPool.has(pool)) byPool.set(pool, []);
    byPool.get(pool).push(node);
  }
  for (const pool of pools.list()) if (!byPool.has(pool.metadata.name)) byPool.set(pool.metadata.name, []);
  if (!byPool.size) return notice('empty', 'This member has no nodes and no NodePools.');
  const poolObjects = new Map(pools.list().map((p) => [p.metadata.name, p]));
  const poolsNote = pools.error && !pools.synced ? notice('error', `NodePools unavailable: ${pools.error.message}`) : '';
  return poolsNote + [...byPool.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([name, list]) => {
    const pool = poolObjects.get(name);
    return `<section class="pool" data-pool="${esc(name)}">
      <h2>${esc(name)} ${pool ? poolState(pool) : '<span class="muted">not provisioned by a NodePool</span>'}</h2>
      ${pool ? poolDetails(pool) : ''}
      ${nodesHtml(list, requests)}
    </section>`;
  }).join('');
}

function poolState(pool) {
  const ready = cond(pool, 'Ready');
  if (!ready) return badge('Pending', 'no status yet');
  return badge(ready.status === 'True' ? 'Ready' : 'NotReady', ready.message);
}

function poolDetails(pool) {
  const status = pool.status || {};
  const resources = status.resources || {};
  const allowed = (status.allowedDisruptions || []).map((a) => [
    esc(a.reason),
    `<span class="num">${esc(a.allowed)}</span> ${a.allowed > 0 ? badge('Open') : badge('Blocked')}`,
    esc(a.message || ''),
  ]);
  const policy = pool.spec?.disruption || {};
  return `<p class="muted">node class ${esc(pool.spec?.template?.spec?.nodeClassRef?.name || 'default')}
      · ${esc(resources.nodes ?? 0)} nodes · consolidation ${esc(policy.consolidationPolicy || 'WhenEmptyOrUnderutilized')}
      after ${esc(policy.consolidateAfter || '0s')} · nodes expire after ${esc(status.expireAfter || '?')}
      ${status.expireAfterSource ? `(${esc(status.expireAfterSource)})` : ''}</p>
    <h3>Disruptions allowed now</h3>
    ${table(['Reason', 'Allowed', 'Why'], allowed, 'The pool has not reported its budgets yet.', 'class="budgets"')}`;
}

function nodesHtml(list, requests) {
  if (!list.length) return notice('empty', 'No nodes in this pool right now.');
  const byType = new Map();
  for (const node of list) {
    const type = node.metadata.labels?.[INSTANCE_LABEL] || 'unknown type';
    if (!byType.has(type)) byType.set(type, []);
    byType.get(type).push(node);
  }
  return [...byType.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([type, nodes]) => {
    const rows = nodes.sort((a, b) => a.metadata.name.localeCompare(b.metadata.name)).map((node) => {
      const allocatable = node.status?.allocatable || {};
      const used = requests.get(node.metadata.name) || { cpu: 0, memory: 0, pods: 0 };
      const cpu = quantity(allocatable.cpu);
      const memory = quantity(allocatable.memory);
      const ready = cond(node, 'Ready')?.status === 'True';
      const leaving = node.metadata.deletionTimestamp
        || (node.spec?.taints || []).some((t) => t.key === 'karpenter.sh/disrupted');
      return [
        `<span data-node="${esc(node.metadata.name)}">${esc(node.metadata.name)}</span>`,
        `${badge(ready ? 'Ready' : 'NotReady')}${leaving ? ` ${badge('Disrupting')}` : ''}`,
        esc(node.metadata.labels?.[CAPACITY_LABEL] || 'on-demand'),
        esc(node.metadata.labels?.['topology.kubernetes.io/zone'] || ''),
        meter(used.cpu, cpu, `${used.cpu.toFixed(2)} of ${cpu.toFixed(2)} cores`),
        meter(used.memory, memory, `${bytes(used.memory)} of ${bytes(memory)}`),
        `<span class="num">${used.pods}</span>`,
        esc(relative(node.metadata.creationTimestamp)),
      ];
    });
    return `<h3>${esc(type)} <span class="muted">× ${nodes.length}</span></h3>
      ${table(['Node', 'State', 'Capacity', 'Zone', 'CPU requested', 'Memory requested', 'Pods', 'Created'], rows, '', 'class="nodes"')}`;
  }).join('');
}

function decisionsHtml(events) {
  const heading = '<h2>Recent disruption decisions</h2>';
  const waiting = pending(events, 'events');
  if (waiting) return heading + waiting;
  const time = (e) => e.lastTimestamp || e.eventTime || e.metadata.creationTimestamp || '';
  const rows = events.list()
    .filter((e) => DECISION_KINDS.has(e.involvedObject?.kind))
    .sort((a, b) => time(b).localeCompare(time(a)))
    .slice(0, RECENT)
    .map((e) => [
      esc(relative(time(e))),
      `${esc(e.involvedObject.kind)} ${esc(e.involvedObject.name)}`,
      badge(e.reason, e.type),
      esc(e.message || ''),
    ]);
  return heading + table(['When', 'Object', 'Decision', 'Why'], rows, 'No disruption decisions recorded yet.', 'class="decisions"');
}
