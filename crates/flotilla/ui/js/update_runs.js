// Cluster update runs (UpdateRun): the list, and one run as a diagram of stages (in order),
// their groups (in parallel) and each group's members, with gates (and the command that
// approves them), the after-stage wait counting down, failures with their messages, and the
// run's forecast timeline (the hub's `updateruns/NAME/forecast`, what `flotilla updaterun
// plan` prints).

import { get } from './api.js';
import { acquire, release } from './informer.js';
import { badge, command, countdown, errorText, esc, notice, pending, span, stale, summarised, table, tick, when } from './html.js';

const GROUP = '/apis/updates.flotilla.dev/v1beta1';
const RUNS = `${GROUP}/updateruns`;
const GATES = `${GROUP}/gates`;
const FORECAST_EVERY_MS = 15000;

/** The page: the list, or one run (`[name]`). */
export function mount(el, params) {
  return params.length ? mountOne(el, params[0]) : mountList(el);
}

function upgradeText(run) {
  const upgrade = run.spec.managedClusterUpdate?.upgrade || {};
  const images = run.spec.managedClusterUpdate?.nodeImageSelection?.type || 'Latest';
  const version = upgrade.kubernetesVersion ? ` to ${upgrade.kubernetesVersion}` : '';
  return `${upgrade.type || 'Full'}${version}, node images ${images}`;
}

function mountList(el) {
  const runs = acquire(RUNS);
  const render = () => {
    const waiting = pending(runs, 'update runs');
    const rows = runs.list()
      .sort((a, b) => b.metadata.creationTimestamp.localeCompare(a.metadata.creationTimestamp))
      .map((run) => {
        const progress = run.status || {};
        return [
          `<a href="#/update-runs/${encodeURIComponent(run.metadata.name)}">${esc(run.metadata.name)}</a>`,
          esc(upgradeText(run)),
          esc(run.spec.updateStrategyName || (run.spec.strategy ? 'inline' : 'none (one by one)')),
          esc(run.status?.progressSummary || ''),
          `${badge(progress.state || 'NotStarted')} ${progress.error ? `<span class="why">${esc(progress.error.message)}</span>` : ''}`,
        ];
      });
    el.innerHTML = `<h1>Update runs</h1>${waiting || table(
      ['Run', 'Upgrade', 'Strategy', 'Progress', 'State'],
      rows,
      'No update runs. Create one with kubectl (examples/updates/update-run.yaml) or `flotilla updaterun create`.',
      'class="runs"',
    )}`;
  };
  const unsubscribe = runs.subscribe(render);
  render();
  return () => {
    unsubscribe();
    release(runs);
  };
}

function mountOne(el, name) {
  const runs = acquire(RUNS);
  const gates = acquire(GATES);
  el.innerHTML = `<h1><a href="#/update-runs">Update runs</a> › ${esc(name)}</h1>
    <div id="run-body"></div><section id="forecast"><h2>Planned timeline</h2><div id="forecast-body">${notice('empty', 'Forecasting…')}</div></section>`;
  const body = el.querySelector('#run-body');
  const forecastBody = el.querySelector('#forecast-body');
  // The forecast is refreshed in its own part of the page (selections elsewhere survive),
  // one request at a time, and never after the page is left.
  const abort = new AbortController();
  let next = null;
  const refreshForecast = async () => {
    try {
      const forecast = await get(`${RUNS}/${encodeURIComponent(name)}/forecast`, abort.signal);
      forecastBody.innerHTML = forecastHtml(forecast);
    } catch (error) {
      if (abort.signal.aborted) return;
      forecastBody.innerHTML = notice('error', errorText(error, 'forecast'));
    }
    if (!abort.signal.aborted) next = setTimeout(refreshForecast, FORECAST_EVERY_MS);
  };
  const render = () => {
    const waiting = pending(runs, 'update runs');
    const run = runs.items.get(name);
    if (waiting) { body.innerHTML = waiting; return; }
    if (!run) { body.innerHTML = notice('empty', `There is no update run ${name}.`); return; }
    body.innerHTML = stale(runs, gates) + runHtml(run, gates);
  };
  const unsubscribe = [runs.subscribe(render), gates.subscribe(render)];
  const ticker = setInterval(() => tick(el), 1000);
  render();
  refreshForecast();
  return () => {
    abort.abort();
    clearTimeout(next);
    clearInterval(ticker);
    unsubscribe.forEach((u) => u());
    release(runs);
    release(gates);
  };
}

function runHtml(run, gates) {
  const status = run.status || {};
  const progress = status;
  const stages = status.stages || [];
  const head = `<p id="run-state">${badge(progress.state || 'NotStarted')} ${esc(upgradeText(run))}
    ${status.progressSummary ? `· ${esc(status.progressSummary)}` : ''}
    ${progress.startTime ? `· started ${esc(when(progress.startTime))}` : ''}
    ${progress.completedTime ? `· finished ${esc(when(progress.completedTime))}` : ''}</p>
    ${progress.error ? `<p class="error" role="alert">${esc(progress.error.code)}: ${esc(progress.error.message)}</p>` : ''}
    ${(run.spec.state ?? 'NotStarted') === 'NotStarted' ? `<p>Start it with ${command(`flotilla updaterun start ${run.metadata.name}`, true)}</p>` : ''}`;
  if (!stages.length) return head + notice('empty', 'The run has no stages yet: it is being initialized.');
  const boxes = stages.map((stage) => stageHtml(stage, gates));
  return `${head}<div class="diagram" role="list" aria-label="stages">${boxes.join('<span class="arrow" aria-hidden="true">→</span>')}</div>`;
}

function gateHtml(gate, gates) {
  const name = gate.gateId;
  const object = name ? gates.items.get(name) : null;
  const label = esc(gate.displayName || gate.type);
  const state = object?.status?.state || gate.state || 'NotStarted';
  if (gate.type === 'Approval' && state === 'Pending' && name) {
    return `<div class="task approval" data-task="gate" data-gate="${esc(name)}">${badge('WaitingForApproval')} <strong>${label}</strong>
      <p>Approve with ${command(`flotilla gate approve ${name}`, true)} or</p>
      ${command(`kubectl patch gate ${name} --type=merge -p '{"status":{"state":"Completed"}}' --subresource=status`)}</div>`;
  }
  const at = object?.spec?.scheduledStartTime;
  return `<div class="task" data-task="gate">${badge(state)} ${label}${at && state === 'Pending' ? ` at ${esc(when(at))}` : ''}</div>`;
}

function memberHtml(member) {
  const progress = member;
  const state = progress.state || 'NotStarted';
  const why = progress.error?.message || member.message || '';
  const note = why && state !== 'Completed' ? `<div class="${state === 'Failed' ? 'why' : 'muted'}">${esc(why)}</div>` : '';
  return `<li class="member" data-member="${esc(member.name)}">${esc(member.name)} ${badge(state, why)}${note}</li>`;
}

function groupHtml(group, gates) {
  const progress = group;
  const members = group.members || [];
  return `<section class="group" data-group="${esc(group.name)}">
    <h3>${esc(group.name)} ${badge(progress.state || 'NotStarted')} <span class="muted">${members.length} members · ${esc(group.failureCount || 0)}/${esc(group.maxAllowedFailures ?? 0)} failures allowed · ${esc(group.maxConcurrency || 1)} at a time</span></h3>
    ${(group.beforeGates || []).map((g) => gateHtml(g, gates)).join('')}
    <ul class="members">${summarised(members, (m) => m.state || 'NotStarted', memberHtml)}</ul>
    ${(group.afterGates || []).map((g) => gateHtml(g, gates)).join('')}
  </section>`;
}

function stageHtml(stage, gates) {
  const progress = stage;
  const state = progress.state || 'NotStarted';
  const wait = stage.afterStageWaitStatus;
  let waitHtml = '';
  if (wait) {
    const waitState = wait.state || 'NotStarted';
    const seconds = wait.waitDurationInSeconds || 0;
    waitHtml = waitState === 'Running' && wait.startTime
      ? `<div class="task" data-task="wait">${badge('Waiting')} ${countdown(Date.parse(wait.startTime) + seconds * 1000)} of ${esc(span(seconds))}</div>`
      : `<div class="task" data-task="wait">${badge(waitState)} wait ${esc(span(seconds))}</div>`;
  }
  return `<section class="stage" role="listitem" data-stage="${esc(stage.name)}" data-state="${esc(state)}">
    <h2>${esc(stage.name)} ${badge(state, progress.error?.message || '')}</h2>
    ${progress.error ? `<p class="why">${esc(progress.error.message)}</p>` : ''}
    ${(stage.beforeGates || []).map((g) => gateHtml(g, gates)).join('')}
    <div class="groups">${(stage.groups || []).map((g) => groupHtml(g, gates)).join('')}</div>
    ${(stage.afterGates || []).map((g) => gateHtml(g, gates)).join('')}
    ${waitHtml}
  </section>`;
}

function forecastHtml(forecast) {
  const end = forecast.end?.finished
    ? `Predicted to finish ${esc(when(forecast.end.finished.at))} (${esc(forecast.end.finished.state)})`
    : `Predicted to get stuck: ${esc((forecast.end?.stuck?.reasons || []).slice(0, 3).join('; '))}`;
  return `<p id="forecast-end">${end}. <span class="muted">Assumes approvals come at once; the same as ${command(`flotilla updaterun plan ${forecast.metadata.name}`, true)}.</span></p>
    <pre class="timeline">${esc(forecast.timeline)}</pre>`;
}
