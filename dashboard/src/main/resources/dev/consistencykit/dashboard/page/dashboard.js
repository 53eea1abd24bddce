// consistency-kit dashboard: polls the JSON API beside this page (api/…, relative, so it works under any path) and
// draws it. Everything from the database goes into the page as text (textContent), never as markup.
'use strict';

const state = {
  overview: null,
  selected: null,          // instance key
  operationsOffset: 0,
  deadOffset: 0,
  deadType: '',
  deadError: '',
  pageSize: 20,
  opened: null,            // {key, idParam}
  token: null,
  refreshes: 0,
  stale: 0,                // answers dropped because another instance was selected while they were on their way
  timer: null,
};
// what a test (or a curious operator) can read from the console
window.dashboard = state;

function el(tag, text, className) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = String(text);
  if (className) e.className = className;
  return e;
}

function $(id) { return document.getElementById(id); }

/** The one row of an empty table: what it would list, across its columns. */
function emptyRow(body, text, columns) {
  const row = el('tr');
  const cell = el('td', text, 'muted');
  cell.colSpan = columns;
  row.appendChild(cell);
  body.appendChild(row);
}

function age(seconds) {
  if (seconds === null || seconds === undefined) return '–';
  if (seconds < 1) return Math.round(seconds * 1000) + ' ms';
  if (seconds < 120) return seconds.toFixed(1) + ' s';
  if (seconds < 7200) return (seconds / 60).toFixed(1) + ' min';
  if (seconds < 172800) return (seconds / 3600).toFixed(1) + ' h';
  return (seconds / 86400).toFixed(1) + ' d';
}

function say(text, isError) {
  const m = $('message');
  m.textContent = text;
  m.className = isError ? 'error' : '';
}

function instancePath(key) {
  const slash = key.indexOf('/');
  return 'api/instances/' + encodeURIComponent(key.substring(0, slash)) + '/'
    + encodeURIComponent(key.substring(slash + 1));
}

/**
 * Whether an answer for instance `key` came after another instance was selected: it is dropped (and counted),
 * since drawn it would put the first instance's rows, and their buttons, under the second's title.
 */
function stale(key) {
  if (state.selected === key) return false;
  state.stale++;
  return true;
}

async function api(path, method) {
  const headers = {};
  if (method === 'POST' && state.token) headers['X-Consistency-Kit-Token'] = state.token;
  const response = await fetch(path, { method: method || 'GET', headers, cache: 'no-store' });
  let body;
  try { body = await response.json(); } catch (e) { body = { error: 'not JSON: HTTP ' + response.status }; }
  if (!response.ok) throw new Error(body.error || ('HTTP ' + response.status));
  return body;
}

function idText(id) {
  if (id && typeof id === 'object' && typeof id.$oid === 'string') return id.$oid;   // as printed everywhere
  if (id && typeof id === 'object') return JSON.stringify(id);
  return String(id);
}

// ------------------------------------------------------------------ overview

function drawChart(svgId, nowId, values) {
  const svg = $(svgId);
  while (svg.firstChild) svg.removeChild(svg.firstChild);
  const ns = 'http://www.w3.org/2000/svg';
  const base = document.createElementNS(ns, 'line');
  base.setAttribute('x1', '0'); base.setAttribute('x2', '300');
  base.setAttribute('y1', '78'); base.setAttribute('y2', '78');
  svg.appendChild(base);
  $(nowId).textContent = values.length ? String(values[values.length - 1]) : '';
  if (values.length < 2) return;
  const max = Math.max(1, ...values);
  const step = 300 / (values.length - 1);
  const points = values.map((v, i) => (i * step).toFixed(1) + ',' + (78 - (v / max) * 72).toFixed(1));
  const line = document.createElementNS(ns, 'polyline');
  line.setAttribute('points', points.join(' '));
  const title = document.createElementNS(ns, 'title');
  title.textContent = 'max ' + max;
  line.appendChild(title);
  svg.appendChild(line);
}

function drawOverview(o) {
  $('database').textContent = o.database;
  $('mode').textContent = o.actions ? (state.token ? 'actions on' : 'actions on (open the address with its #token= to use them)')
    : 'read-only';
  $('stale-after').textContent = age(o.staleAfterSeconds);
  $('updated').textContent = new Date().toLocaleTimeString();
  const s = o.series;
  drawChart('chart-finished', 'now-finished', s.map(x => x.finishedLastMinute));
  drawChart('chart-unfinished', 'now-unfinished', s.map(x => x.unfinished));
  drawChart('chart-interrupted', 'now-interrupted', s.map(x => x.interrupted));
  drawChart('chart-recovered', 'now-recovered', s.map(x => x.recovered));

  const body = $('instances').tBodies[0];
  while (body.firstChild) body.removeChild(body.firstChild);
  $('no-instances').hidden = o.instances.length > 0;
  for (const i of o.instances) {
    const row = el('tr');
    row.dataset.key = i.key;
    if (i.key === state.selected) row.className = 'selected';
    row.appendChild(el('td', i.pattern));
    row.appendChild(el('td', i.name));
    if (i.error) {
      const cell = el('td', i.error, 'bad');
      cell.colSpan = 6;
      row.appendChild(cell);
    } else {
      const states = Object.entries(i.byState).map(([k, v]) => k + ' ' + v).join(', ');
      row.appendChild(el('td', (states || 'none') + (i.unfinishedCapped ? ' (' + o.limits.unfinishedCap + '+ read)' : ''),
        'states'));
      row.appendChild(el('td', i.interrupted, 'num interrupted' + (i.interrupted > 0 ? ' bad' : '')));
      row.appendChild(el('td', i.jobQueue ? i.dead : '–', 'num dead' + (i.dead > 0 ? ' bad' : '')));
      row.appendChild(el('td', age(i.oldestAgeSeconds), 'num'));
      row.appendChild(el('td', i.finishedLastMinute === null ? 'not kept' : i.finishedLastMinute
        + (i.finishedLastMinute >= o.limits.finishedCap ? '+' : ''), 'num'));
      const kept = i.kept.length ? ' · ' + i.kept.length + (i.kept.length >= o.limits.keptCap ? '+' : '')
        + ' record(s) held by their writer: ' + i.kept.map(k => JSON.stringify(k.id) + ' (' + k.writer + ', '
        + age(k.ageSeconds) + (k.compacted ? ', compacted' : '') + ')').join(', ') : '';
      row.appendChild(el('td', (i.setupProblems.length ? i.setupProblems.join('; ') : 'ok') + kept,
        i.setupProblems.length ? 'bad' : i.kept.length ? 'warn' : 'good'));
    }
    const open = el('td');
    const button = el('button', 'open');
    button.type = 'button';
    button.addEventListener('click', () => select(i.key));
    open.appendChild(button);
    row.appendChild(open);
    body.appendChild(row);
  }
}

async function refresh() {
  if (state.busy) return;   // a slow server: one poll at a time
  state.busy = true;
  try {
    state.overview = await api('api/overview');
    drawOverview(state.overview);
    if (state.selected) await loadInstance(false);
    state.refreshes++;
  } catch (e) {
    say('could not read the dashboard\'s API: ' + e.message, true);
  } finally {
    state.busy = false;
  }
}

// ------------------------------------------------------------------ one instance

function selectedInstance() {
  return state.overview && state.overview.instances.find(i => i.key === state.selected);
}

async function select(key, scroll = true) {
  state.selected = key;
  state.operationsOffset = 0;
  state.deadOffset = 0;
  $('states').textContent = '';
  $('checks').textContent = '';
  for (const table of ['operations', 'dead']) {
    const body = $(table).tBodies[0];
    while (body.firstChild) body.removeChild(body.firstChild);
  }
  $('operation').hidden = true;
  state.opened = null;
  if (state.overview) drawOverview(state.overview);
  await loadInstance(scroll);
}

async function loadInstance(scroll) {
  const i = selectedInstance();
  if (!i) { $('instance').hidden = true; return; }
  $('instance').hidden = false;
  $('instance-title').textContent = i.pattern + ' · ' + i.name;
  $('run-checks').hidden = !i.checks;
  $('recover-instance').hidden = !state.overview.actions;
  const only = $('only-interrupted').checked;
  const ops = await api(instancePath(i.key) + '/operations?offset=' + state.operationsOffset + '&limit='
    + state.pageSize + '&interrupted=' + only);
  if (stale(i.key)) return;
  const body = $('operations').tBodies[0];
  while (body.firstChild) body.removeChild(body.firstChild);
  for (const op of ops.operations) {
    const row = el('tr');
    row.dataset.id = op.idParam;
    row.appendChild(el('td', idText(op.id)));
    row.appendChild(el('td', op.state, op.interrupted ? 'bad' : ''));
    row.appendChild(el('td', age(op.ageSeconds), 'num'));
    row.appendChild(el('td', op.detail));
    const cell = el('td');
    const open = el('button', 'open');
    open.type = 'button';
    open.addEventListener('click', () => openOperation(i.key, op.idParam));
    cell.appendChild(open);
    row.appendChild(cell);
    body.appendChild(row);
  }
  if (!ops.operations.length) {
    emptyRow(body, only ? 'no interrupted operation' : 'no unfinished operation', 5);
  }
  $('operations-page').textContent = ops.operations.length
    ? (ops.offset + 1) + '–' + (ops.offset + ops.operations.length) : '';
  $('operations-prev').disabled = ops.offset === 0;
  $('operations-next').disabled = !ops.more;

  $('dead-section').hidden = !i.jobQueue;
  $('backlog-section').hidden = !i.jobQueue;
  $('recurring-section').hidden = !i.jobQueue;
  $('workers-section').hidden = !i.jobQueue;
  $('search-section').hidden = !i.jobQueue;
  $('dead-bulk').hidden = !state.overview.actions;
  if (i.jobQueue) {
    const backlogBody = $('backlog').tBodies[0];
    while (backlogBody.firstChild) backlogBody.removeChild(backlogBody.firstChild);
    for (const b of (i.backlog || [])) {
      const row = el('tr');
      row.dataset.type = b.type;
      row.appendChild(el('td', b.type));
      row.appendChild(el('td', b.waiting, 'num'));
      row.appendChild(el('td', age(b.oldestWaitingSeconds), 'num'));
      row.appendChild(el('td', b.scheduled, 'num'));
      row.appendChild(el('td', b.awaiting, 'num'));
      row.appendChild(el('td', b.running, 'num'));
      row.appendChild(el('td', b.dead, 'num'));
      backlogBody.appendChild(row);
    }
    if (!(i.backlog || []).length) {
      emptyRow(backlogBody, 'no job waiting, scheduled, awaiting, running or dead', 7);
    }
    const recurringBody = $('recurring').tBodies[0];
    while (recurringBody.firstChild) recurringBody.removeChild(recurringBody.firstChild);
    for (const r of (i.recurring || [])) {
      const row = el('tr');
      row.dataset.name = r.name;
      row.appendChild(el('td', r.name));
      row.appendChild(el('td', r.schedule));
      row.appendChild(el('td', r.type));
      row.appendChild(el('td', r.nextRun || 'none'));
      row.appendChild(el('td', r.lastRun || 'never'));
      row.appendChild(el('td', r.lastJob || ''));
      recurringBody.appendChild(row);
    }
    if (!(i.recurring || []).length) {
      emptyRow(recurringBody, 'no recurring job', 6);
    }
    const workers = await api(instancePath(i.key) + '/workers');
    if (stale(i.key)) return;
    const workersBody = $('workers').tBodies[0];
    while (workersBody.firstChild) workersBody.removeChild(workersBody.firstChild);
    for (const w of workers.workers) {
      const row = el('tr');
      row.appendChild(el('td', w.owner));
      const jobs = el('td');
      for (const job of w.jobs) {
        const link = el('button', idText(job.id) + ' (' + job.type + ')');
        link.type = 'button';
        link.addEventListener('click', () => openOperation(i.key, job.idParam));
        jobs.appendChild(link);
      }
      row.appendChild(jobs);
      row.appendChild(el('td', age(w.longestRunningSeconds), 'num'));
      row.appendChild(el('td', w.leaseLeftSeconds > 0 ? age(w.leaseLeftSeconds) : 'ran out', 'num'
        + (w.leaseLeftSeconds > 0 ? '' : ' bad')));
      workersBody.appendChild(row);
    }
    if (!workers.workers.length) {
      emptyRow(workersBody, 'no job running', 4);
    }
    const dead = await api(instancePath(i.key) + '/dead?offset=' + state.deadOffset + '&limit=' + state.pageSize
      + deadQuery());
    if (stale(i.key)) return;
    const deadBody = $('dead').tBodies[0];
    while (deadBody.firstChild) deadBody.removeChild(deadBody.firstChild);
    for (const job of dead.dead) {
      const row = el('tr');
      row.dataset.id = job.idParam;
      row.appendChild(el('td', idText(job.id)));
      row.appendChild(el('td', age(job.ageSeconds), 'num'));
      row.appendChild(el('td', job.detail, 'error-text'));
      const cell = el('td');
      const open = el('button', 'open');
      open.type = 'button';
      open.addEventListener('click', () => openOperation(i.key, job.idParam));
      cell.appendChild(open);
      if (state.overview.actions) {
        for (const verb of ['replay', 'discard', 'delete']) {
          const button = el('button', verb, 'action ' + verb);
          button.type = 'button';
          button.addEventListener('click', () => act(instancePath(i.key) + '/dead/' + encodeURIComponent(job.idParam)
            + '/' + verb, r => r.jobs ? verb + ': job ' + idText(job.id) + ' done'
              : 'job ' + idText(job.id) + ' was no longer dead (a worker or another operator moved it first)'));
          cell.appendChild(button);
        }
      }
      row.appendChild(cell);
      deadBody.appendChild(row);
    }
    if (!dead.dead.length) {
      emptyRow(deadBody, 'no dead job', 4);
    }
    $('dead-page').textContent = dead.dead.length ? (dead.offset + 1) + '–' + (dead.offset + dead.dead.length) : '';
    $('dead-prev').disabled = dead.offset === 0;
    $('dead-next').disabled = !dead.more;
  }
  if (scroll) $('instance').scrollIntoView({ block: 'start' });
}

/** The jobs of the selected queue the search form selects, whatever their state, newest first. */
async function searchJobs() {
  const key = state.selected;
  const params = new URLSearchParams();
  for (const [name, input] of [['id', 'search-id'], ['type', 'search-type'], ['state', 'search-state'],
    ['from', 'search-from'], ['to', 'search-to']]) {
    const value = $(input).value.trim();
    if (value) params.set(name, value);
  }
  const body = $('search-results').tBodies[0];
  while (body.firstChild) body.removeChild(body.firstChild);
  let found;
  try {
    found = await api(instancePath(key) + '/jobs?' + params.toString());
  } catch (e) {
    say(e.message, true);
    return;
  }
  if (stale(key)) return;
  for (const job of found.jobs) {
    const row = el('tr');
    row.dataset.id = job.idParam;
    const open = el('button', idText(job.id));
    open.type = 'button';
    open.addEventListener('click', () => openOperation(key, job.idParam));
    const cell = el('td');
    cell.appendChild(open);
    row.appendChild(cell);
    row.appendChild(el('td', job.type));
    row.appendChild(el('td', job.state, 'state-' + job.state));
    row.appendChild(el('td', job.enqueuedAt || ''));
    row.appendChild(el('td', String(job.attempts), 'num'));
    row.appendChild(el('td', job.lastError || '', 'error-text'));
    body.appendChild(row);
  }
  if (!found.jobs.length) {
    emptyRow(body, 'no job: ' + found.search, 6);
  }
}

async function countStates() {
  const i = selectedInstance();
  if (!i) return;
  try {
    const s = await api(instancePath(i.key) + '/status');
    if (stale(i.key)) return;
    $('states').textContent = 'every state: ' + (Object.entries(s.countsByState).map(([k, v]) => k + ' ' + v)
      .join(', ') || 'no operation kept');
  } catch (e) { say(e.message, true); }
}

async function runChecks() {
  const i = selectedInstance();
  if (!i) return;
  const box = $('checks');
  box.textContent = 'checking…';
  try {
    const c = await api(instancePath(i.key) + '/checks');
    if (stale(i.key)) return;
    box.textContent = '';
    box.appendChild(el('p', c.check + ': ' + c.problems + ' problem(s) (' + age(c.seconds) + ')',
      c.problems > 0 ? 'bad' : 'good'));
    const list = el('ul');
    for (const d of c.details) list.appendChild(el('li', d));
    box.appendChild(list);
  } catch (e) { box.textContent = ''; say(e.message, true); }
}

// ------------------------------------------------------------------ one operation

async function openOperation(key, idParam) {
  try {
    const view = await api(instancePath(key) + '/operations/' + encodeURIComponent(idParam));
    if (stale(key)) return;
    state.opened = { key, idParam };
    $('operation').hidden = false;
    $('operation-title').textContent = 'operation ' + idText(view.id) + ' · ' + view.state;
    $('recover-operation').hidden = !state.overview.actions;
    $('live-actions').hidden = !state.overview.actions || !(selectedInstance() || {}).jobQueue;
    $('operation-record').textContent = JSON.stringify(view.record, null, 2);
    const docs = $('operation-documents');
    docs.textContent = '';
    if (!view.documents.length) docs.appendChild(el('p', 'none recorded', 'muted'));
    for (const d of view.documents) {
      const box = el('div', null, 'document');
      box.appendChild(el('div', d.collection + ' · ' + idText(d.id)));
      box.appendChild(el('div', d.note, 'note'));
      box.appendChild(el('pre', d.asReaderSees === null ? '(no such document)' : JSON.stringify(d.asReaderSees, null, 2)));
      docs.appendChild(box);
    }
    $('operation').scrollIntoView({ block: 'start' });
  } catch (e) { say(e.message, true); }
}

async function act(path, describe) {
  try {
    const result = await api(path, 'POST');
    say(describe(result), false);
    await refresh();
  } catch (e) { say('refused: ' + e.message, true); }
}

function recovered(r) {
  const jobs = (selectedInstance() || {}).jobQueue;
  return 'recovery of ' + r.instance + ': examined ' + r.examined + ', finished ' + r.rolledForward
    + (jobs ? ', requeued ' : ', undone ') + r.rolledBack + ', left to another process ' + r.skipped
    + (r.setAside ? (jobs ? ', dead (killed on their last attempt: replay or discard them) '
      : ', set aside ') + r.setAside : '');
}

function deadQuery() {
  return (state.deadType ? '&type=' + encodeURIComponent(state.deadType) : '')
    + (state.deadError ? '&error=' + encodeURIComponent(state.deadError) : '');
}

function bulk(verb) {
  const i = selectedInstance();
  if (!i) return;
  const selection = deadQuery();
  const what = selection ? 'the dead jobs shown' : 'every dead job';
  if (!window.confirm(verb + ' ' + what + ' of ' + i.key + '?')) return;
  act(instancePath(i.key) + '/dead/' + verb + '?' + (selection ? selection.substring(1) : 'all=true'),
    r => verb + ': ' + r.jobs + ' job(s) (' + r.selection + ')');
}

// ------------------------------------------------------------------ start

function start() {
  const hash = new URLSearchParams(location.hash.substring(1));
  if (hash.get('token')) {
    sessionStorage.setItem('consistency-kit-token', hash.get('token'));
    history.replaceState(null, '', location.pathname + location.search);
  }
  state.token = sessionStorage.getItem('consistency-kit-token');
  const every = Number(new URLSearchParams(location.search).get('every'));
  $('only-interrupted').addEventListener('change', () => { state.operationsOffset = 0; loadInstance(false); });
  $('operations-prev').addEventListener('click', () => {
    state.operationsOffset = Math.max(0, state.operationsOffset - state.pageSize); loadInstance(false);
  });
  $('operations-next').addEventListener('click', () => { state.operationsOffset += state.pageSize; loadInstance(false); });
  $('dead-prev').addEventListener('click', () => {
    state.deadOffset = Math.max(0, state.deadOffset - state.pageSize); loadInstance(false);
  });
  $('dead-next').addEventListener('click', () => { state.deadOffset += state.pageSize; loadInstance(false); });
  $('dead-filter').addEventListener('submit', e => {
    e.preventDefault();
    state.deadType = $('dead-type').value.trim();
    state.deadError = $('dead-error').value.trim();
    state.deadOffset = 0;
    loadInstance(false);
  });
  for (const verb of ['replay', 'discard', 'delete']) {
    $('dead-' + verb + '-all').addEventListener('click', () => bulk(verb));
  }
  $('find-form').addEventListener('submit', e => {
    e.preventDefault();
    const id = $('find-id').value.trim();
    if (id && state.selected) openOperation(state.selected, id);
  });
  $('search-form').addEventListener('submit', e => { e.preventDefault(); searchJobs(); });
  $('count-states').addEventListener('click', countStates);
  $('run-checks').addEventListener('click', runChecks);
  $('recover-instance').addEventListener('click', () => act(instancePath(state.selected) + '/recover', recovered));
  $('recover-operation').addEventListener('click', () => {
    const o = state.opened;
    if (o) act(instancePath(o.key) + '/operations/' + encodeURIComponent(o.idParam) + '/recover', recovered);
  });
  for (const verb of ['cancel', 'reschedule', 'rerun']) {
    $('job-' + verb).addEventListener('click', () => {
      const o = state.opened;
      if (!o) return;
      const at = verb === 'reschedule' ? '?at=' + encodeURIComponent($('job-at').value.trim()) : '';
      act(instancePath(o.key) + '/jobs/' + encodeURIComponent(o.idParam) + '/' + verb + at,
        r => verb + ' of job ' + o.idParam + ': done' + (r.job !== undefined ? ', the new job is ' + idText(r.job) : ''));
    });
  }
  const open = new URLSearchParams(location.search).get('open');   // ?open=pattern/name: that instance at once
  refresh().then(() => {
    if (open && state.overview && state.overview.instances.some(i => i.key === open)) select(open, false);
    const seconds = every > 0 ? every : (state.overview ? state.overview.refreshSeconds : 2);
    state.timer = setInterval(refresh, Math.max(0.5, seconds) * 1000);
  });
}

document.addEventListener('DOMContentLoaded', start);
