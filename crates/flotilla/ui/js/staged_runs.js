// Staged update runs of placements (ClusterStagedUpdateRun, StagedUpdateRun): the list, and
// one run as a diagram of its stages left to right, each with its clusters, before- and
// after-stage tasks (waits counting down on the hub's clock, approvals with the command that
// grants them), then the deletion stage. Every state is a word as well as a colour.

import { acquire, release } from './informer.js';
import { badge, command, cond, countdown, esc, goDuration, notice, pending, span, stale, summarised, table, tick } from './html.js';

const GROUP = '/apis/placement.kubernetes-fleet.io/v1beta1';
const RUNS = `${GROUP}/clusterstagedupdateruns`;
const NAMESPACED_RUNS = `${GROUP}/stagedupdateruns`;
const REQUESTS = `${GROUP}/clusterapprovalrequests`;
const NAMESPACED_REQUESTS = `${GROUP}/approvalrequests`;

/** The page: the list, or one run (`[name]` or `[namespace, name]`). */
export function mount(el, params) {
  return params.length ? mountOne(el, params) : mountList(el);
}

/** A run's overall state word and the message saying why. */
export function runState(run) {
  const initialized = cond(run, 'Initialized');
  if (initialized?.status === 'False') return ['Failed', initialized.message];
  const succeeded = cond(run, 'Succeeded');
  if (succeeded) return [succeeded.status === 'True' ? 'Succeeded' : 'Failed', succeeded.message];
  const progressing = cond(run, 'Progressing');
  if (progressing) {
    const word = {
      UpdateRunNotStarted: 'NotStarted',
      UpdateRunStopping: 'Stopping',
      UpdateRunStopped: 'Stopped',
      UpdateRunStuck: 'Stuck',
      UpdateRunStatusTooLarge: 'Failed',
    }[progressing.reason];
    if (word) return [word, progressing.message];
    return [progressing.status === 'False' ? 'Waiting' : 'Running', progressing.message];
  }
  if (run.spec?.state === 'Initialize') return ['NotStarted', 'initialized only: set spec.state to Run to start'];
  return ['Pending', initialized?.message || 'initializing'];
}

function mountList(el) {
  const runs = acquire(RUNS);
  const namespaced = acquire(NAMESPACED_RUNS);
  const render = () => {
    const waiting = pending(runs, 'staged update runs');
    const rows = [...runs.list(), ...(namespaced.synced ? namespaced.list() : [])]
      .sort((a, b) => b.metadata.creationTimestamp.localeCompare(a.metadata.creationTimestamp))
      .map((run) => {
        const ns = run.metadata.namespace;
        const href = `#/staged-runs/${ns ? `${encodeURIComponent(ns)}/` : ''}${encodeURIComponent(run.metadata.name)}`;
        const [state, message] = runState(run);
        const stages = run.status?.stagesStatus || [];
        const done = stages.filter((s) => cond(s, 'Succeeded')?.status === 'True').length;
        return [
          `<a href="${href}">${esc(run.metadata.name)}</a>${ns ? ` <span class="muted">in ${esc(ns)}</span>` : ''}`,
          esc(run.spec.placementName),
          esc(run.spec.stagedRolloutStrategyName),
          esc(run.status?.resourceSnapshotIndexUsed ?? run.spec.resourceSnapshotIndex ?? 'latest'),
          `${done} of ${stages.length}`,
          `${badge(state)} <span class="muted">${esc(message)}</span>`,
        ];
      });
    el.innerHTML = `<h1>Staged update runs</h1>${waiting || table(
      ['Run', 'Placement', 'Strategy', 'Snapshot', 'Stages done', 'State'],
      rows,
      'No staged update runs. Create a ClusterStagedUpdateRun with kubectl (see examples/staged-update-run.yaml).',
      'class="runs"',
    )}`;
  };
  const unsubscribe = [runs.subscribe(render), namespaced.subscribe(render)];
  render();
  return () => {
    unsubscribe.forEach((u) => u());
    release(runs);
    release(namespaced);
  };
}

function mountOne(el, params) {
  const [namespace, name] = params.length > 1 ? params : [null, params[0]];
  const nsPath = (plural) => `${GROUP}/namespaces/${encodeURIComponent(namespace)}/${plural}`;
  const runs = acquire(namespace ? nsPath('stagedupdateruns') : RUNS);
  const requests = acquire(namespace ? nsPath('approvalrequests') : REQUESTS);
  const render = () => {
    const title = `<h1><a href="#/staged-runs">Staged update runs</a> › ${esc(name)}</h1>`;
    const waiting = pending(runs, 'staged update runs');
    const run = runs.items.get(namespace ? `${namespace}/${name}` : name);
    if (waiting) { el.innerHTML = title + waiting; return; }
    if (!run) { el.innerHTML = title + notice('empty', `There is no staged update run ${name}${namespace ? ` in ${namespace}` : ''}.`); return; }
    el.innerHTML = title + stale(runs, requests) + runHtml(run, requests, namespace);
  };
  const unsubscribe = [runs.subscribe(render), requests.subscribe(render)];
  const ticker = setInterval(() => tick(el), 1000);
  render();
  return () => {
    clearInterval(ticker);
    unsubscribe.forEach((u) => u());
    release(runs);
    release(requests);
  };
}

function runHtml(run, requests, namespace) {
  const [state, message] = runState(run);
  const status = run.status || {};
  const strategy = status.stagedUpdateStrategySnapshot?.stages || [];
  const stages = status.stagesStatus || [];
  const head = `<p id="run-state">${badge(state)} ${esc(message)}</p>
    <p class="muted">placement ${esc(run.spec.placementName)} · strategy ${esc(run.spec.stagedRolloutStrategyName)}
    · resource snapshot ${esc(status.resourceSnapshotIndexUsed ?? run.spec.resourceSnapshotIndex ?? 'latest')}
    · policy snapshot ${esc(status.policySnapshotIndexUsed ?? '?')} (${esc(status.policyObservedClusterCount ?? '?')} clusters)</p>`;
  if (!stages.length) return head + notice('empty', 'The run has not been initialized yet.');
  const boxes = stages.map((stage, i) => stageHtml(stage, strategy[i] || {}, requests, namespace));
  if (status.deletionStageStatus) boxes.push(deletionHtml(status.deletionStageStatus));
  return `${head}<div class="diagram" role="list" aria-label="stages">${boxes.join('<span class="arrow" aria-hidden="true">→</span>')}</div>`;
}

function stageState(stage) {
  const succeeded = cond(stage, 'Succeeded');
  if (succeeded) return succeeded.status === 'True' ? 'Succeeded' : 'Failed';
  const progressing = cond(stage, 'Progressing');
  if (!progressing) return 'NotStarted';
  if (progressing.reason === 'StageUpdatingWaiting') return 'Waiting';
  return progressing.status === 'True' ? 'Running' : 'Pending';
}

function clusterState(cluster) {
  const succeeded = cond(cluster, 'Succeeded');
  if (succeeded) return [succeeded.status === 'True' ? 'Succeeded' : 'Failed', succeeded.message];
  const started = cond(cluster, 'Started');
  if (started?.status === 'True') return ['Updating', started.message];
  return ['NotStarted', 'waiting for its turn'];
}

function stageHtml(stage, config, requests, namespace) {
  const state = stageState(stage);
  const drawCluster = (cluster) => {
    const [word, message] = clusterState(cluster);
    return `<li class="cluster" data-cluster="${esc(cluster.clusterName)}">${esc(cluster.clusterName)} ${badge(word, message)}${word === 'Failed' ? `<div class="why">${esc(message)}</div>` : ''}</li>`;
  };
  const clusters = summarised(stage.clusters || [], (c) => clusterState(c)[0], drawCluster);
  const before = (stage.beforeStageTaskStatus || []).map((task) => taskHtml(task, config, stage, requests, namespace, 'before'));
  const after = (stage.afterStageTaskStatus || []).map((task) => taskHtml(task, config, stage, requests, namespace, 'after'));
  const progressing = cond(stage, 'Progressing');
  return `<section class="stage" role="listitem" data-stage="${esc(stage.stageName)}" data-state="${esc(state)}">
    <h2>${esc(stage.stageName)} ${badge(state, progressing?.message || '')}</h2>
    ${before.length ? `<div class="tasks before"><h3>Before the stage</h3>${before.join('')}</div>` : ''}
    <ul class="clusters">${clusters || '<li class="muted">no clusters</li>'}</ul>
    ${after.length ? `<div class="tasks after"><h3>After the stage</h3>${after.join('')}</div>` : ''}
  </section>`;
}

function taskHtml(task, config, stage, requests, namespace, timing) {
  if (task.type === 'TimedWait') {
    const configured = (config.afterStageTasks || []).find((t) => t.type === 'TimedWait');
    const seconds = goDuration(configured?.waitTime);
    if (cond(task, 'WaitTimeElapsed')?.status === 'True') {
      return `<div class="task" data-task="TimedWait">${badge('Elapsed')} waited ${esc(span(seconds))}</div>`;
    }
    const waitingSince = cond(stage, 'Progressing');
    if (waitingSince?.reason === 'StageUpdatingWaiting') {
      const end = Date.parse(waitingSince.lastTransitionTime) + seconds * 1000;
      return `<div class="task" data-task="TimedWait">${badge('Waiting')} ${countdown(end)} of ${esc(span(seconds))}</div>`;
    }
    return `<div class="task" data-task="TimedWait">${badge('NotStarted')} wait ${esc(span(seconds))}</div>`;
  }
  const name = task.approvalRequestName;
  const request = name ? requests.items.get(namespace ? `${namespace}/${name}` : name) : null;
  if (cond(task, 'ApprovalRequestApproved')?.status === 'True') {
    return `<div class="task" data-task="Approval">${badge('Approved')} ${esc(name)}</div>`;
  }
  if (!request) {
    return `<div class="task" data-task="Approval">${badge('NotStarted')} approval ${esc(name || '')}</div>`;
  }
  if (cond(request, 'Approved')?.status === 'True') {
    return `<div class="task" data-task="Approval">${badge('Approved')} ${esc(name)} <span class="muted">(being accepted)</span></div>`;
  }
  const kind = namespace ? 'approvalrequests' : 'clusterapprovalrequests';
  const nsFlag = namespace ? ` -n ${namespace}` : '';
  const generation = request.metadata.generation || 1;
  const reason = namespace ? 'ApprovalRequest' : 'ClusterApprovalRequest';
  const short = `Approve with ${command(`flotilla approve ${name}${nsFlag}`, true)} or`;
  const patch = `kubectl patch ${kind} ${name}${nsFlag} --type=merge -p '{"status":{"conditions":[{"type":"Approved","status":"True","reason":"${reason}Approved","message":"${reason} has been approved","lastTransitionTime":"'$(date --utc +%Y-%m-%dT%H:%M:%SZ)'","observedGeneration":${generation}}]}}' --subresource=status`;
  // A before-stage request holds the stage from starting. An after-stage request may exist
  // before the stage ends (and may be approved early); the stage only waits for it once its
  // clusters are updated.
  const waiting = timing === 'before' || stageState(stage) === 'Waiting';
  const state = waiting ? badge('WaitingForApproval') : `${badge('Pending')} <span class="muted">approvable now; the stage waits for it after its clusters</span>`;
  return `<div class="task approval" data-task="Approval" data-request="${esc(name)}">${state} <strong>${esc(name)}</strong>
    <p>${short}</p>${command(patch)}</div>`;
}

function deletionHtml(stage) {
  const clusters = stage.clusters || [];
  const state = stageState(stage);
  return `<section class="stage deletion" role="listitem" data-stage="${esc(stage.stageName)}" data-state="${esc(state)}">
    <h2>Deletion ${badge(state)}</h2>
    <ul class="clusters">${clusters.map((c) => {
      const [word, message] = clusterState(c);
      return `<li class="cluster" data-cluster="${esc(c.clusterName)}">${esc(c.clusterName)} ${badge(word, message)}</li>`;
    }).join('') || '<li class="muted">nothing to remove</li>'}</ul>
  </section>`;
}
