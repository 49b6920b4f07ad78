// The inventory-mock dashboard: the live state of a session, its request
// journal with the contract's verdicts, the chaos rules and the rate
// limit, through the mock's admin API. Plain JavaScript, no library, no build step.
//
// Rules this file keeps:
// - The admin key lives in sessionStorage and goes out only in the
//   Authorization header of calls to this origin: never in a URL, a
//   cookie, the DOM or the console.
// - Every value from the mock reaches the page as text (textContent,
//   append of strings, setAttribute): the journal holds what any caller
//   sent, and nothing of it is ever parsed as HTML.
// - The page types in no field, status or example: they come from GET
//   /__admin/contract, read from the loaded contract.

const ADMIN = document.body.dataset.admin;
const KEY = 'inventory-mock.admin-key';
const POLL_MS = 1000;   // the journal, while live
const SLOW_EVERY = 5;   // sessions, chaos rules, the rate limit and violations, every 5 polls
const MAX_ENTRIES = 200;

const $ = (id) => document.getElementById(id);

const state = {
  contract: null,
  session: 'default',
  offset: 0, limit: 50, sort: '', order: 'asc', filters: {}, find: '',
  total: 0,
  shown: new Map(),     // record key -> its JSON, as last shown
  staleRecords: false,  // a refresh waits for an edit in the table to end
  recordsSeq: 0,
  seen: new Set(),      // journal ids shown
  lastSeq: 0, lastID: '',
  writes: null,         // the session's write count when last read
  chaos: { seed: 0, rules: [] },
  rateLimit: {},        // the rate limit in force: {rate, burst}, or {} for none
  violations: true,     // the mock may have GET /__admin/violations; false once it answered 404
  ticks: 0, timer: 0, polling: false,
};

// --- the admin API -----------------------------------------------------

class APIError extends Error {
  constructor(status, body) {
    super(body && body.message ? body.message : `the mock answered ${status}`);
    this.status = status;
    this.code = body && body.code ? body.code : '';
  }
}

class SignedOut extends Error {}

// exact keeps integers JSON.parse would round (past 2^53) as their text.
function exact(key, value, context) {
  if (typeof value === 'number' && !Number.isSafeInteger(value) && context && /^-?\d+$/.test(context.source)) {
    return context.source;
  }
  return value;
}

// api calls an admin operation. query is a list of [name, value] pairs.
async function api(method, path, { query = [], body } = {}) {
  const key = sessionStorage.getItem(KEY);
  if (!key) throw new SignedOut();
  const url = new URL(ADMIN + path, location.origin);
  for (const [name, value] of query) url.searchParams.append(name, value);
  // fetch throws the same TypeError for a header it cannot send as for a
  // network that failed: the header is made first, so the two are told
  // apart. The key is not repeated in the message.
  const headers = { Authorization: 'Bearer ' + key };
  try {
    new Headers(headers);
  } catch {
    throw new APIError(0, { message: 'That key cannot be sent: it holds a character an HTTP header cannot carry (a letter outside Latin-1, or a line break). Check what was pasted.' });
  }
  const init = { method, headers, cache: 'no-store', credentials: 'omit', redirect: 'error', referrerPolicy: 'no-referrer' };
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
  }
  let resp;
  try {
    resp = await fetch(url, init);
  } catch (e) {
    throw new APIError(0, { message: 'The mock is not answering. Is it still running?' });
  }
  const text = await resp.text();
  let data = null;
  try { data = text ? JSON.parse(text, exact) : null; } catch { data = null; }
  if (resp.status === 401) {
    signOut('The admin key was not accepted: ' + (data && data.message ? data.message : '401'));
    throw new SignedOut();
  }
  if (!resp.ok) throw new APIError(resp.status, data);
  return data;
}

// --- small DOM helpers -------------------------------------------------

// el makes an element; children that are strings become text nodes.
function el(tag, props = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) if (c !== null && c !== undefined && c !== false) e.append(c);
  return e;
}

let announceTimer = 0;
// announce tells screen readers what an action did.
function announce(text) {
  const region = $('announce');
  region.textContent = '';
  clearTimeout(announceTimer);
  announceTimer = setTimeout(() => { region.textContent = text; }, 50);
}

const capital = (s) => s.charAt(0).toUpperCase() + s.slice(1);
const count = (n) => Number(n).toLocaleString('en');
const show = (v) => (v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v));

function fieldsOf() { return state.contract.record.fields; }
function keyName() { return state.contract.record.key; }

// --- skip links ----------------------------------------------------------

// A skip link moves the focus to its section, so the next Tab goes to the
// section's first control: past the table's rows, to the requests.
for (const a of document.querySelectorAll('a.skip, a.skip-inline')) {
  a.addEventListener('click', (ev) => {
    const target = document.getElementById(a.getAttribute('href').slice(1));
    if (!target || target.closest('[hidden]')) return;
    ev.preventDefault();
    target.focus();
  });
}

// showApp shows the dashboard, or the prompt alone.
function showApp(on) {
  $('login').hidden = on;
  $('app').hidden = !on;
  $('session-controls').hidden = !on;
  $('skip-inventory').hidden = !on;
  $('skip-requests').hidden = !on;
}

// --- signing in and out ------------------------------------------------

$('login-form').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const input = $('key');
  const key = input.value.trim();
  input.value = '';
  if (!key) {
    $('login-error').textContent = 'Give the admin key.';
    input.focus();
    return;
  }
  sessionStorage.setItem(KEY, key);
  await enter();
});

$('logout').addEventListener('click', () => signOut('You are signed out: the key is forgotten in this tab.'));

// enter loads the dashboard with the stored key.
async function enter() {
  try {
    state.contract = await api('GET', '/contract');
  } catch (e) {
    if (!(e instanceof SignedOut)) {
      sessionStorage.removeItem(KEY);
      $('login-error').textContent = e.message;
    }
    return;
  }
  $('login-error').textContent = '';
  showApp(true);
  buildRecordControls();
  buildRuleForm();
  $('journal-note').textContent = '';
  $('live').disabled = state.contract.journalSize === 0;
  await Promise.all([loadSessions(), loadChaos(), loadLimit(), loadRecords(), pollJournal(), loadViolations()]);
  $('session').focus();
  announce('Dashboard open for session ' + state.session);
  schedule();
}

// signOut forgets the key and every piece of data on the page.
function signOut(message) {
  sessionStorage.removeItem(KEY);
  clearTimeout(state.timer);
  state.timer = 0;
  state.contract = null;
  state.shown.clear();
  state.seen.clear();
  state.lastSeq = 0;
  state.lastID = '';
  state.writes = null;
  state.violations = true;
  Object.assign(state, { offset: 0, sort: '', order: 'asc', filters: {}, find: '' });
  $('find').value = '';
  for (const id of ['records-head', 'records-body', 'entries', 'rules', 'findings', 'session', 'rule-op', 'rule-effect']) {
    $(id).replaceChildren();
  }
  for (const id of ['range', 'journal-note', 'record-error', 'rule-error', 'limit-error', 'limit-now']) $(id).textContent = '';
  state.rateLimit = {};
  $('record-filters').querySelectorAll('.enum-filter').forEach((n) => n.remove());
  showApp(false);
  $('violations').hidden = true;
  $('login-error').textContent = message || '';
  $('key').focus();
}

// --- polling -------------------------------------------------------------

function schedule() {
  clearTimeout(state.timer);
  state.timer = setTimeout(tick, POLL_MS);
}

// tick polls the journal every second while the tab is visible and live is
// on, and the rest every few seconds.
async function tick() {
  if (!state.contract) return;
  if (!document.hidden && !state.polling) {
    state.polling = true;
    try {
      state.ticks++;
      const work = [];
      if ($('live').checked) work.push(pollJournal());
      if (state.ticks % SLOW_EVERY === 0) work.push(loadSessions(), loadChaos(), loadLimit(), loadViolations());
      await Promise.all(work);
    } finally {
      state.polling = false;
    }
  }
  if (state.contract) schedule();
}

document.addEventListener('visibilitychange', () => {
  if (!document.hidden && state.contract) tick();
});

// --- sessions -------------------------------------------------------------

async function loadSessions() {
  let sessions;
  try {
    sessions = await api('GET', '/sessions');
  } catch (e) {
    return;
  }
  const select = $('session');
  const names = sessions.map((s) => s.name);
  if (!names.includes(state.session)) names.push(state.session);
  const current = [...select.options].map((o) => o.value);
  if (current.join('\n') !== names.join('\n')) {
    select.replaceChildren(...names.map((n) => el('option', { value: n, text: n })));
    select.value = state.session;
  }
  // A write or a reset from outside the journal's view (another tool, or
  // the journal off) shows in the session's write count.
  const mine = sessions.find((s) => s.name === state.session);
  const writes = mine ? mine.writes : 0;
  if (state.writes !== null && writes !== state.writes) loadRecords({ live: true });
  state.writes = writes;
}

// The list of sessions is read again when the developer goes to it.
$('session').addEventListener('focus', () => loadSessions());

$('session').addEventListener('change', () => {
  state.session = $('session').value;
  state.offset = 0;
  state.writes = null;
  clearJournal();
  loadRecords();
  pollJournal();
  loadChaos();
  loadLimit();
  announce('Showing session ' + state.session);
});

$('reset').addEventListener('click', async () => {
  try {
    await api('POST', '/reset', { query: [['session', state.session]] });
  } catch (e) {
    if (!(e instanceof SignedOut)) $('record-error').textContent = e.message;
    return;
  }
  await loadRecords();
  announce(`Session ${state.session} holds its fixtures again`);
});

// --- records --------------------------------------------------------------

function buildRecordControls() {
  const bar = $('record-filters');
  bar.querySelectorAll('.enum-filter').forEach((n) => n.remove());
  const first = bar.firstElementChild;
  for (const f of fieldsOf()) {
    if (!f.enum || f.key) continue;
    const id = 'filter-' + f.name;
    const select = el('select', { id, 'data-field': f.name },
      el('option', { value: '', text: 'All' }),
      f.enum.map((v) => el('option', { value: v, text: v })));
    select.addEventListener('change', () => {
      state.filters[f.name] = select.value;
      state.offset = 0;
      loadRecords();
    });
    bar.insertBefore(el('div', { class: 'field enum-filter' }, el('label', { for: id, text: capital(f.name) }), select), first);
  }
  $('find-label').textContent = 'Find ' + keyName();
  $('records-caption').textContent = `${state.contract.record.name} records of the session, one page`;
  $('inventory-title').textContent = 'Inventory';
  renderHead();
}

let findTimer = 0;
$('find').addEventListener('input', () => {
  clearTimeout(findTimer);
  findTimer = setTimeout(() => {
    state.find = $('find').value.trim();
    state.offset = 0;
    loadRecords();
  }, 250);
});

$('page-size').addEventListener('change', () => {
  state.limit = Number($('page-size').value);
  state.offset = 0;
  loadRecords();
});
$('prev').addEventListener('click', () => { state.offset = Math.max(0, state.offset - state.limit); loadRecords(); });
$('next').addEventListener('click', () => { state.offset += state.limit; loadRecords(); });

function renderHead() {
  const row = $('records-head');
  row.replaceChildren(...fieldsOf().map((f) => {
    const sorted = (state.sort || keyName()) === f.name;
    const dir = sorted ? state.order : '';
    const th = el('th', { scope: 'col', 'aria-sort': sorted ? (dir === 'desc' ? 'descending' : 'ascending') : null },
      el('button', {
        type: 'button',
        title: f.description || null,
        onclick: () => sortBy(f.name),
      }, f.name, el('span', { class: 'arrow', 'aria-hidden': 'true', text: sorted ? (dir === 'desc' ? '▼' : '▲') : '' })));
    return th;
  }));
}

function sortBy(field) {
  if ((state.sort || keyName()) === field) state.order = state.order === 'asc' ? 'desc' : 'asc';
  else { state.sort = field; state.order = 'asc'; }
  state.offset = 0;
  renderHead();
  loadRecords();
  const dir = state.order === 'asc' ? 'ascending' : 'descending';
  announce(`Sorted by ${field}, ${dir}`);
  // Keep the focus on the header that was pressed.
  const i = fieldsOf().findIndex((f) => f.name === field);
  $('records-head').children[i].querySelector('button').focus();
}

// editing reports whether a cell of the table is being edited, so that a
// live refresh does not throw the edit away.
function editing() {
  const body = $('records-body');
  if (body.contains(document.activeElement) && document.activeElement.tagName === 'INPUT') return true;
  return [...body.querySelectorAll('input')].some((i) => i.value !== i.dataset.original);
}

// loadRecords reads the page the state asks for. A live refresh waits
// while a cell is being edited.
async function loadRecords({ live = false } = {}) {
  if (!state.contract) return;
  if (live && editing()) {
    state.staleRecords = true;
    return;
  }
  state.staleRecords = false;
  const seq = ++state.recordsSeq;
  const query = [['session', state.session], ['offset', state.offset], ['limit', state.limit]];
  if (state.sort) query.push(['sort', state.sort]);
  if (state.order === 'desc') query.push(['order', 'desc']);
  for (const [field, value] of Object.entries(state.filters)) if (value) query.push(['filter', `${field}:${value}`]);
  if (state.find) query.push(['filter', `${keyName()}:${state.find}`]);
  let page;
  try {
    page = await api('GET', '/records', { query });
  } catch (e) {
    if (seq === state.recordsSeq && !(e instanceof SignedOut)) {
      // The rows and the range on screen were for another query: they go,
      // so that nothing on the page answers the one that failed.
      $('record-error').textContent = e.message;
      clearRecords();
    }
    return;
  }
  if (seq !== state.recordsSeq || !state.contract) return;
  $('record-error').textContent = '';
  renderRecords(page, live);
}

function clearRecords() {
  state.total = 0;
  state.shown.clear();
  $('records-body').replaceChildren();
  $('range').textContent = '';
  $('prev').disabled = true;
  $('next').disabled = true;
}

function renderRecords(page, live) {
  state.total = page.total;
  const shown = new Map();
  const rows = page.records.map((rec) => {
    const k = show(rec[keyName()]);
    const json = JSON.stringify(rec);
    const changed = live && state.shown.has(k) && state.shown.get(k) !== json;
    shown.set(k, json);
    return renderRow(rec, changed);
  });
  state.shown = shown;
  $('records-body').replaceChildren(...rows);
  if (page.records.length === 0) {
    const why = page.total === 0 ? 'No record passes the filters.' : 'No records on this page.';
    $('records-body').append(el('tr', {}, el('td', { colspan: fieldsOf().length, text: why })));
  }
  const from = page.total === 0 ? 0 : page.offset + 1;
  const to = page.offset + page.records.length;
  $('range').textContent = `${count(from)}–${count(to)} of ${count(page.total)}`;
  $('prev').disabled = page.offset === 0;
  $('next').disabled = to >= page.total;
}

// renderRow makes the row of one record: the key as the row's header, a
// small form for each field the contract's update sets.
function renderRow(rec, changed) {
  const k = show(rec[keyName()]);
  const tr = el('tr', { 'data-key': k, class: changed ? 'changed' : null });
  for (const f of fieldsOf()) {
    const v = rec[f.name];
    if (f.key) {
      tr.append(el('th', { scope: 'row', class: 'num', text: show(v) }));
    } else if (f.writable) {
      tr.append(el('td', {}, editForm(k, f, v)));
    } else if (f.enum) {
      const i = f.enum.indexOf(show(v));
      tr.append(el('td', {}, el('span', { class: `pill tag-${i < 0 ? 3 : i % 4}`, text: show(v) })));
    } else {
      tr.append(el('td', { class: f.type === 'integer' || f.type === 'number' ? 'num' : null, text: show(v) }));
    }
  }
  return tr;
}

function editForm(k, f, v) {
  const label = `${f.name} of ${keyName()} ${k}`;
  const input = el('input', {
    type: 'text', value: show(v), 'data-original': show(v), 'aria-label': label,
    inputmode: f.type === 'integer' ? 'numeric' : f.type === 'number' ? 'decimal' : null,
    autocomplete: 'off', spellcheck: 'false',
  });
  const button = el('button', { type: 'submit', text: 'Set', 'aria-label': 'Set ' + label, hidden: true });
  input.addEventListener('input', () => { button.hidden = input.value === input.dataset.original; });
  input.addEventListener('keydown', (ev) => {
    if (ev.key === 'Escape') {
      input.value = input.dataset.original;
      button.hidden = true;
      clearRowError(k);
    }
  });
  input.addEventListener('blur', () => {
    // A refresh that waited for this edit runs once the cell is left as it was.
    setTimeout(() => { if (state.staleRecords && !editing()) loadRecords({ live: true }); }, 0);
  });
  const form = el('form', { class: 'edit', novalidate: true }, input, button);
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    setField(k, f, input);
  });
  return form;
}

// jsonValue writes what was typed as the JSON the contract will judge: a
// number where it reads as one for a number field, else a string. The
// contract, not the page, decides whether it is acceptable.
function jsonValue(text, f) {
  if ((f.type === 'integer' || f.type === 'number') && /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/.test(text)) return text;
  if (f.type === 'boolean' && (text === 'true' || text === 'false')) return text;
  if (text === 'null') return text;
  return JSON.stringify(text);
}

async function setField(k, f, input) {
  const body = `{${JSON.stringify(f.name)}:${jsonValue(input.value.trim(), f)}}`;
  let rec;
  try {
    rec = await api('PATCH', '/records/' + encodeURIComponent(k), { query: [['session', state.session]], body });
  } catch (e) {
    if (e instanceof SignedOut) return;
    showRowError(k, input, e);
    return;
  }
  clearRowError(k);
  state.shown.set(k, JSON.stringify(rec));
  const old = input.closest('tr');
  const row = renderRow(rec, true);
  old.replaceWith(row);
  row.querySelector(`input[aria-label="${CSS.escape(input.getAttribute('aria-label'))}"]`).focus();
  announce(`${keyName()} ${k}: ${f.name} is ${show(rec[f.name])}`);
}

function showRowError(k, input, e) {
  clearRowError(k);
  const id = 'row-error-' + k;
  const tr = input.closest('tr');
  const text = (e.status ? `${e.status} ${e.code}: ` : '') + e.message;
  tr.after(el('tr', { class: 'row-error', 'data-error-for': k },
    el('td', { colspan: fieldsOf().length, role: 'alert', id }, `${keyName()} ${k}: ${text}`)));
  input.setAttribute('aria-invalid', 'true');
  input.setAttribute('aria-describedby', id);
  input.focus();
}

function clearRowError(k) {
  const body = $('records-body');
  for (const tr of body.querySelectorAll('tr.row-error')) {
    if (tr.dataset.errorFor === k) tr.remove();
  }
  const row = [...body.rows].find((r) => r.dataset.key === k);
  if (row) row.querySelectorAll('input').forEach((i) => { i.removeAttribute('aria-invalid'); i.removeAttribute('aria-describedby'); });
}

// --- the journal ----------------------------------------------------------

function clearJournal() {
  state.seen.clear();
  state.lastSeq = 0;
  state.lastID = '';
  $('entries').replaceChildren();
}

$('journal-clear').addEventListener('click', async () => {
  try {
    await api('DELETE', '/requests', { query: [['session', state.session]] });
  } catch (e) {
    return;
  }
  clearJournal();
  noteJournal();
  announce('The journal of session ' + state.session + ' is cleared');
});

$('live').addEventListener('change', () => {
  announce($('live').checked ? 'Live updates on' : 'Live updates paused');
  if ($('live').checked) tick();
});

// pollJournal adds what was journaled since the last poll, newest first.
// since is the id of the entry journaled last (highest seq), so a slow
// request that started earlier still arrives.
async function pollJournal() {
  if (!state.contract || state.contract.journalSize === 0) {
    noteJournal();
    return;
  }
  const session = state.session;
  const query = [['session', session], ['limit', '100']];
  if (state.lastID) query.push(['since', state.lastID]);
  let entries;
  try {
    entries = await api('GET', '/requests', { query });
  } catch (e) {
    if (!(e instanceof SignedOut)) $('journal-note').textContent = e.message;
    return;
  }
  if (session !== state.session || !state.contract) return;
  const fresh = entries.filter((e) => !state.seen.has(e.id));
  const first = state.seen.size === 0 && $('entries').children.length === 0;
  for (const e of entries) {
    if (e.seq > state.lastSeq) { state.lastSeq = e.seq; state.lastID = e.id; }
  }
  if (fresh.length > 0) {
    const list = $('entries');
    // entries are newest first; each goes in by its start time.
    for (const e of [...fresh].reverse()) {
      state.seen.add(e.id);
      const li = renderEntry(e, !first);
      const ms = Date.parse(e.time);
      const after = [...list.children].find((n) => Number(n.dataset.ms) <= ms);
      list.insertBefore(li, after || null);
    }
    while (list.children.length > MAX_ENTRIES) {
      const last = list.lastElementChild;
      state.seen.delete(last.dataset.id);
      last.remove();
    }
    const wrote = fresh.some((e) => !['GET', 'HEAD', 'OPTIONS'].includes(e.method) && e.status >= 200 && e.status < 300);
    if (wrote && !first) loadRecords({ live: true });
  }
  noteJournal();
}

function noteJournal() {
  const note = $('journal-note');
  if (state.contract && state.contract.journalSize === 0) {
    note.textContent = 'The journal is off (--journal-size 0): start the mock with a journal to see requests here.';
  } else if ($('entries').children.length === 0 && state.contract) {
    note.textContent = `No requests in session ${state.session} yet. Calls to ${location.origin}${state.contract.basePath} appear here as they are answered.`;
  } else {
    note.textContent = '';
  }
}

// ms renders a duration: two decimals under a millisecond, one up to a
// second, seconds past it.
function ms(d) {
  if (d < 1) return d.toFixed(2) + ' ms';
  if (d < 1000) return d.toFixed(1) + ' ms';
  return (d / 1000).toFixed(2) + ' s';
}

function statusClass(status) { return 's' + Math.floor(status / 100); }

// chaosOf splits what the chaos rules did to an exchange (e.fault, such
// as "latency 300ms, forced example=empty") into the answer a rule forced
// and the rest: latency and faults.
function chaosOf(e) {
  const parts = (e.fault || '').split(', ').filter((p) => p);
  const forced = parts.filter((p) => p.startsWith('forced '));
  return {
    forced: forced.map((p) => p.slice('forced '.length)).join(', '),
    rest: parts.filter((p) => !p.startsWith('forced ')).join(', '),
  };
}

// renderEntry makes one exchange: a summary line, and the whole exchange
// once opened.
function renderEntry(e, fresh) {
  const time = new Date(e.time);
  const chaos = chaosOf(e);
  const summary = el('summary', {},
    el('span', { class: 'method', text: e.method }),
    el('span', { class: 'path', title: e.path, text: e.path }),
    el('span', { class: `pill ${statusClass(e.status)}`, text: e.status === 0 ? 'dropped' : String(e.status) }),
    verdictPill(e.verdict),
    e.forced ? el('span', { class: 'pill forced', text: 'Prefer ' + e.forced }) : null,
    chaos.forced ? el('span', { class: 'pill forced', text: 'forced ' + chaos.forced }) : null,
    chaos.rest ? el('span', { class: 'pill fault', text: chaos.rest }) : null,
    el('span', { class: 'when', text: `${ms(e.durationMs)} · ${time.toLocaleTimeString('en-GB')}` }));
  const details = el('details', {}, summary);
  details.addEventListener('toggle', () => {
    if (details.open && details.children.length === 1) details.append(renderExchange(e));
  }, { once: false });
  return el('li', { 'data-id': e.id, 'data-ms': Date.parse(e.time), class: fresh ? 'fresh' : null }, details);
}

function verdictPill(v) {
  if (!v) return el('span', { class: 'pill', text: 'no operation' });
  if (v.note) return el('span', { class: 'pill', text: 'not checked' });
  return v.valid ? el('span', { class: 'pill valid', text: '✓ valid' }) : el('span', { class: 'pill invalid', text: '✗ breaks the contract' });
}

// headerText renders headers, given as the journal gives them (a list of
// values per name) or as a single value per name.
function headerText(h) {
  return Object.keys(h || {}).sort().flatMap((k) => [].concat(h[k]).map((v) => `${k}: ${show(v)}`)).join('\n');
}

// contentEncoding returns a message's Content-Encoding, if it has one.
function contentEncoding(headers) {
  const name = Object.keys(headers || {}).find((k) => k.toLowerCase() === 'content-encoding');
  return name ? show([].concat(headers[name])[0]) : '';
}

// bodyText renders a body as the journal keeps it: whole (JSON indented),
// or its start with the size of the whole. Of a compressed answer the
// journal keeps no body, only a note that says so, shown as it is.
function bodyText(m) {
  if (!m.body) return m.bytes ? `(${count(m.bytes)} bytes, not kept)` : '(no body)';
  if (m.truncated && contentEncoding(m.headers)) return m.body;
  if (m.truncated) return `${m.body}\n… (cut short: ${count(m.bytes)} bytes in all)`;
  try { return JSON.stringify(JSON.parse(m.body), null, 2); } catch { return m.body; }
}

function renderExchange(e) {
  const meta = el('dl', { class: 'meta' });
  const row = (name, ...value) => meta.append(el('dt', { text: name }), el('dd', {}, ...value));
  const wide = (name, ...value) => meta.append(el('dt', { class: 'wide', text: name }), el('dd', {}, ...value));
  row('Operation', e.operation || 'none of the contract');
  row('Session', e.session);
  row('Request id', el('code', { text: e.id }));
  row('Started', new Date(e.time).toLocaleString('en-GB'));
  row('Duration', ms(e.durationMs));
  if (e.code) row('Error code', el('code', { text: e.code }));
  const chaos = chaosOf(e);
  const forced = [];
  if (e.forced) forced.push('Prefer: ' + e.forced);
  if (chaos.forced) forced.push(chaos.forced + ' (a chaos rule)');
  row('Forced answer', forced.join('; ') || 'none');
  row('Chaos', chaos.rest || 'none');
  const v = e.verdict;
  if (!v) wide('Verdict', 'not judged: no operation of the contract has this method and path');
  else if (v.note) wide('Verdict', v.note);
  else if (v.valid) wide('Verdict', el('span', { class: 'pill valid', text: '✓ valid' }), ' the answer keeps the contract');
  else wide('Verdict', el('span', { class: 'pill invalid', text: '✗ breaks the contract' }),
    el('ul', { class: 'problems' }, (v.problems || []).map((p) => el('li', { text: p }))));
  const side = (title, m) => el('section', { 'aria-label': `${title} of ${e.method} ${e.path}` },
    el('h4', { text: title }), el('pre', { text: headerText(m.headers) }), el('pre', { class: 'body', text: bodyText(m) }));
  const curl = el('pre', { class: 'curl-text', text: e.curl });
  const copy = el('button', { type: 'button', class: 'quiet', text: 'Copy as curl', 'aria-label': `Copy ${e.method} ${e.path} as curl` });
  copy.addEventListener('click', () => copyText(e.curl, curl, copy));
  return el('div', { class: 'detail' }, meta,
    el('div', { class: 'pair' }, side('Request', e.request), side('Response', e.response)),
    el('div', { class: 'curl' }, curl, copy));
}

async function copyText(text, pre, button) {
  try {
    await navigator.clipboard.writeText(text);
    button.textContent = 'Copied';
    announce('Copied as curl. The command reads the key from $INVENTORY_API_KEY.');
  } catch {
    // No clipboard (an insecure origin, or permission refused): select it.
    const range = document.createRange();
    range.selectNodeContents(pre);
    const sel = getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
    button.textContent = 'Selected: press Ctrl+C';
    announce('The command is selected; copy it with Ctrl+C.');
  }
  setTimeout(() => { button.textContent = 'Copy as curl'; }, 2500);
}

// --- chaos rules ------------------------------------------------------------

// controlQuery names the session the chaos rules and the rate limit are
// set for: the one shown, unless it is the default session, whose panel
// sets the global ones (every session without its own follows them).
function controlQuery() {
  return state.session === 'default' ? [] : [['session', state.session]];
}

// renderScope says whom the rules and the limit shown apply to.
function renderScope() {
  const own = state.chaos.scope === 'session' || (state.rateLimit || {}).scope === 'session';
  const others = state.chaos.sessions || [];
  $('controls-scope').textContent = state.session === 'default'
    ? 'Global rules: they apply to every session that has none of its own' + (others.length ? ` (${others.join(', ')} have their own).` : '.')
    : own
      ? `Rules of session ${state.session} only; the other sessions do not see them.`
      : `Session ${state.session} has no rules of its own and follows the global ones; a rule set here applies to it only.`;
}

const FAULTS = {
  reset: 'Fault: connection reset',
  empty: 'Fault: closed without an answer',
  truncate: 'Fault: body cut in half',
  slow: 'Fault: body sent slowly',
};

function buildRuleForm() {
  const ops = $('rule-op');
  ops.replaceChildren(el('option', { value: '', text: 'Every operation' }),
    ...state.contract.operations.map((o) => el('option', { value: o.name, text: o.name === `${o.method} ${o.path}` ? o.name : `${o.name} · ${o.method} ${o.path}` })));
  fillEffects();
}

$('rule-op').addEventListener('change', fillEffects);

// fillEffects lists what the chosen operation can be made to answer: its
// named examples and documented error statuses, then the faults.
function fillEffects() {
  const op = state.contract.operations.find((o) => o.name === $('rule-op').value);
  const forced = [];
  const errors = new Set();
  if (op) {
    for (const x of op.examples) forced.push(el('option', { value: 'example:' + x.name, text: `Example “${x.name}” (${x.status})` }));
    for (const s of op.statuses) {
      if (s >= 400) {
        errors.add(s);
        forced.push(el('option', { value: 'status:' + s, text: `Status ${s} (documented)` }));
      }
    }
  }
  const faults = [];
  for (const s of [500, 503]) {
    if (!errors.has(s)) faults.push(el('option', { value: 'status:' + s, text: `Fault: status ${s}` + (op && !op.documents.includes(s) ? ', undocumented' : '') }));
  }
  for (const f of state.contract.faults) if (FAULTS[f]) faults.push(el('option', { value: 'fault:' + f, text: FAULTS[f] }));
  const select = $('rule-effect');
  select.replaceChildren(el('option', { value: '', text: 'Its own answer (latency only)' }));
  if (forced.length) select.append(el('optgroup', { label: 'Forced answer' }, forced));
  select.append(el('optgroup', { label: 'Fault' }, faults));
}

$('rule-form').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const rule = {};
  const op = $('rule-op').value;
  if (op) rule.operation = op;
  const latency = $('rule-latency').value.trim();
  if (latency) rule.latency = latency;
  const [kind, value] = $('rule-effect').value.split(/:(.*)/s);
  if (kind === 'example') rule.example = value;
  if (kind === 'status') { rule.fault = 'status'; rule.status = Number(value); }
  if (kind === 'fault') rule.fault = value;
  const chance = $('rule-chance').value.trim();
  if ((rule.fault || rule.example) && chance !== '' && chance !== '1') {
    rule.probability = Number(chance);
    if (Number.isNaN(rule.probability)) {
      $('rule-error').textContent = `Chance ${chance}: give a number from 0 to 1, such as 0.5.`;
      $('rule-chance').focus();
      return;
    }
  }
  if (!rule.latency && !rule.fault && !rule.example) {
    $('rule-error').textContent = 'Give a latency, or choose an answer or a fault.';
    $('rule-latency').focus();
    return;
  }
  if (await putRules([...state.chaos.rules, rule])) {
    $('rule-latency').value = '';
    announce('Rule on: ' + describeRule(rule));
  }
});

$('rules-clear').addEventListener('click', async () => {
  try {
    await api('DELETE', '/chaos', { query: controlQuery() });
  } catch (e) {
    if (!(e instanceof SignedOut)) $('rule-error').textContent = e.message;
    return;
  }
  $('rule-error').textContent = '';
  await loadChaos();
  announce('Every rule is off');
});

// putRules replaces the rules, keeping the seed so a run stays replayable.
async function putRules(rules) {
  try {
    state.chaos = await api('PUT', '/chaos', { query: controlQuery(), body: { seed: state.chaos.seed, rules } });
  } catch (e) {
    if (!(e instanceof SignedOut)) $('rule-error').textContent = e.message;
    return false;
  }
  $('rule-error').textContent = '';
  renderRules();
  return true;
}

async function loadChaos() {
  try {
    state.chaos = await api('GET', '/chaos', { query: controlQuery() });
  } catch (e) {
    return;
  }
  renderRules();
}

function describeRule(r) {
  const parts = [];
  if (r.latency) parts.push('latency ' + r.latency);
  if (r.example) parts.push(`example “${r.example}”`);
  if (r.fault === 'status') parts.push('status ' + r.status);
  else if (r.fault) parts.push('fault ' + r.fault);
  if (r.probability !== undefined && r.probability !== null && (r.fault || r.example)) parts.push(`${Math.round(r.probability * 100)}% of calls`);
  return `${r.operation || 'Every operation'}: ${parts.join(', ')}`;
}

function renderRules() {
  renderScope();
  const list = $('rules');
  const rules = state.chaos.rules || [];
  const key = JSON.stringify(rules);
  if (list.dataset.rules === key) return;
  list.dataset.rules = key;
  list.replaceChildren(...rules.map((r, i) => {
    const text = describeRule(r);
    const off = el('button', { type: 'button', text: 'Turn off', 'aria-label': 'Turn off ' + text });
    off.addEventListener('click', async () => {
      const rest = rules.filter((_, j) => j !== i);
      if (await putRules(rest)) {
        announce('Rule off: ' + text);
        $('rule-op').focus();
      }
    });
    return el('li', {}, el('span', { text }), off);
  }));
  $('rules-clear').hidden = rules.length === 0;
}

// --- the rate limit ---------------------------------------------------------

async function loadLimit() {
  try {
    state.rateLimit = await api('GET', '/rate-limit', { query: controlQuery() });
  } catch (e) {
    return;
  }
  renderLimit();
}

function renderLimit() {
  const l = state.rateLimit || {};
  $('limit-now').textContent = l.rate
    ? `In force: ${l.rate} per API key and session, ${l.burst} at once; past it, 429 with Retry-After.`
    : 'No rate limit: every API key and session may send as fast as it likes.';
  $('limit-off').hidden = !l.rate;
  renderScope();
}

$('limit-form').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const rate = $('limit-rate').value.trim();
  const burst = $('limit-burst').value.trim();
  const body = { rate };
  if (!rate) {
    $('limit-error').textContent = 'Give a rate, such as 10/s or 600/m.';
    $('limit-rate').focus();
    return;
  }
  if (burst !== '') {
    body.burst = Number(burst);
    if (!Number.isInteger(body.burst)) {
      $('limit-error').textContent = `Burst ${burst}: give a whole number, such as 20.`;
      $('limit-burst').focus();
      return;
    }
  }
  try {
    state.rateLimit = await api('PUT', '/rate-limit', { query: controlQuery(), body });
  } catch (e) {
    if (!(e instanceof SignedOut)) $('limit-error').textContent = e.message;
    return;
  }
  $('limit-error').textContent = '';
  $('limit-rate').value = '';
  $('limit-burst').value = '';
  renderLimit();
  announce(`Rate limit on: ${state.rateLimit.rate}, ${state.rateLimit.burst} at once`);
});

$('limit-off').addEventListener('click', async () => {
  try {
    await api('DELETE', '/rate-limit', { query: controlQuery() });
  } catch (e) {
    if (!(e instanceof SignedOut)) $('limit-error').textContent = e.message;
    return;
  }
  $('limit-error').textContent = '';
  await loadLimit();
  announce('Rate limit off');
  $('limit-rate').focus();
});

// --- violations (the validating proxy's findings, where the mock has them)

async function loadViolations() {
  if (!state.violations) return;
  let findings;
  try {
    findings = await api('GET', '/violations');
  } catch (e) {
    // 404: this mock has no proxy, and will not have one until it is
    // started again: stop asking. Any other failure hides the panel rather
    // than show stale findings.
    if (e.status === 404) state.violations = false;
    $('violations').hidden = true;
    return;
  }
  if (!Array.isArray(findings)) {
    $('violations').hidden = true;
    return;
  }
  $('violations').hidden = false;
  const list = $('findings');
  const key = JSON.stringify(findings);
  if (list.dataset.findings === key) return;
  list.dataset.findings = key;
  if (findings.length === 0) {
    list.replaceChildren(el('li', { class: 'hint', text: 'No violations found so far.' }));
    return;
  }
  list.replaceChildren(...findings.map((f) => {
    const summary = el('summary', {},
      el('span', { class: 'pill invalid', text: `${f.count}×` }),
      el('span', { class: 'method', text: f.operation || '' }),
      el('span', { class: 'path', text: `${f.rule || ''}${f.where ? ' · ' + f.where : ''}${f.path ? ' ' + f.path : ''}` }),
      el('span', { class: 'when', text: f.lastSeen ? 'last ' + new Date(f.lastSeen).toLocaleTimeString('en-GB') : '' }));
    const meta = el('dl', { class: 'meta' });
    const row = (name, value) => meta.append(el('dt', { text: name }), el('dd', { text: value }));
    row('Message', f.message || '');
    row('Rule', f.rule || '');
    row('Where', `${f.where || ''} ${f.path || ''}`);
    row('Seen', `${f.count} times, first ${f.firstSeen || '?'}, last ${f.lastSeen || '?'}`);
    const ex = f.example || {};
    const detail = el('div', { class: 'detail' }, meta);
    if (ex.method) {
      const part = (title, m) => el('section', { 'aria-label': title },
        el('h4', { text: title }), el('pre', { text: headerText((m || {}).headers) }), el('pre', { text: show((m || {}).body) }));
      detail.append(el('p', { class: 'mono', text: `${ex.method} ${ex.url || ''} → ${ex.status ?? ''}` }),
        el('div', { class: 'pair' }, part('Example request', ex.request), part('Example response', ex.response)));
    }
    return el('li', {}, el('details', {}, summary, detail));
  }));
}

// --- start ------------------------------------------------------------------

if (sessionStorage.getItem(KEY)) {
  enter();
} else {
  $('key').focus();
}
