// sluice's web dashboard: one page shell (index.html) that this module fills in from the JSON
// API, as the signed-in user (the session cookie) in the workspace they picked.
//
// Safe by construction: everything a log or a user carries reaches the page as a text node or
// an attribute value (`el`), never as markup; there is no innerHTML here. Changing requests
// carry `X-Requested-With: sluice` (the API's cross-site rule); keys and tokens never enter a
// URL. Each page is its own address (filters in the query string), so links, the back button
// and reloading work; a page loads its data once and renders it.

const LEVELS = ['debug', 'info', 'warn', 'error'];
const ENVIRONMENTS = ['development', 'staging', 'production'];
const WORKSPACE = 'sluice.workspace';

// ---- small helpers -------------------------------------------------------------------------

/** An element: `attrs` become attributes (`on*` functions become listeners), `children`
 *  strings become text nodes. */
function el(tag, attrs = {}, ...children) {
  const svg = ['svg', 'rect', 'g', 'title', 'text', 'line'].includes(tag);
  const node = svg ? document.createElementNS('http://www.w3.org/2000/svg', tag) : document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

const main = () => document.getElementById('main');

function show(...nodes) {
  main().replaceChildren(...nodes.flat().filter((node) => node !== null && node !== undefined && node !== false));
}

/** A time in the browser's zone, with the UTC time on hover. */
function time(ms) {
  const date = new Date(ms);
  const local = date.toLocaleString(undefined, {
    year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit',
    hour12: false,
  }) + '.' + String(date.getMilliseconds()).padStart(3, '0');
  return el('time', { datetime: date.toISOString(), title: date.toISOString().replace('T', ' ').replace('Z', ' UTC') }, local);
}

function duration(ms) {
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60000) return `${(ms / 1000).toFixed(ms < 10000 ? 2 : 1)} s`;
  const minutes = Math.floor(ms / 60000);
  return minutes < 120 ? `${minutes} min ${Math.round((ms % 60000) / 1000)} s` : `${(minutes / 60).toFixed(1)} h`;
}

const level = (name) => el('span', { class: `level level-${LEVELS.includes(name) ? name : 'other'}` }, name);

/** A page whose read the API refused: its title, the API's message and a way back. */
function refused(title, answer, back, label) {
  show(el('h1', {}, title), alertBox(problem(answer)), el('p', {}, el('a', { href: back }, label)));
}

function alertBox(message) {
  return el('p', { class: 'error', role: 'alert' }, message);
}

/** The message of an API error answer: its `error`, and its issues' messages. */
function problem(answer) {
  const body = answer.body || {};
  const issues = Array.isArray(body.issues) ? body.issues.map((issue) => `${(issue.path || []).join('.')}: ${issue.message}`) : [];
  return [body.error || `The server answered ${answer.status}`, ...issues].join(' · ');
}

// ---- the API -------------------------------------------------------------------------------

function workspace() {
  return localStorage.getItem(WORKSPACE);
}

function headers(extra = {}) {
  const all = { Accept: 'application/json', 'X-Requested-With': 'sluice', ...extra };
  const id = workspace();
  if (id) all['X-Workspace-Id'] = id;
  return all;
}

/** Calls the API; a missing or ended session goes to the sign-in page. */
async function api(path, { method = 'GET', body } = {}) {
  const init = { method, headers: headers(body === undefined ? {} : { 'Content-Type': 'application/json' }), credentials: 'same-origin' };
  if (body !== undefined) init.body = JSON.stringify(body);
  const response = await fetch(path, init);
  if (response.status === 401 && !path.startsWith('/v1/auth/')) {
    location.assign(`/login?next=${encodeURIComponent(location.pathname + location.search)}`);
    return new Promise(() => {});
  }
  const text = await response.text();
  let parsed = null;
  try { parsed = text ? JSON.parse(text) : null; } catch { parsed = null; }
  return { ok: response.ok, status: response.status, body: parsed };
}

async function get(path) {
  const answer = await api(path);
  if (!answer.ok) throw new Error(problem(answer));
  return answer.body;
}

// ---- the frame: navigation, workspace switcher, sign-out ---------------------------------

async function frame(current) {
  const me = await get('/v1/me');
  const workspaces = me.workspaces || [];
  if (!workspaces.some((w) => w.workspaceId === workspace())) {
    if (workspaces.length) localStorage.setItem(WORKSPACE, workspaces[0].workspaceId);
    else localStorage.removeItem(WORKSPACE);
  }
  const top = document.getElementById('top');
  const link = (href, text) => el('a', { href, 'aria-current': current === href ? 'page' : undefined }, text);
  // Switching takes a button press: a select that acted on every change would switch at each
  // arrow key of a keyboard user.
  const switcher = el('form', { class: 'switch', 'aria-label': 'Workspace' },
    el('select', { id: 'workspace', name: 'workspace', 'aria-label': 'Workspace' },
      workspaces.map((w) => el('option', { value: w.workspaceId, selected: w.workspaceId === workspace() }, `${w.name} (${w.role})`))),
    el('button', { type: 'submit', class: 'secondary' }, 'Switch'));
  switcher.addEventListener('submit', (event) => {
    event.preventDefault();
    localStorage.setItem(WORKSPACE, switcher.elements.workspace.value);
    location.reload();
  });
  const signOut = el('button', {
    type: 'button', class: 'link',
    onclick: async () => { await api('/v1/auth/logout', { method: 'POST' }); location.assign('/login'); },
  }, 'Sign out');
  top.replaceChildren(
    el('a', { class: 'brand', href: '/' }, 'sluice'),
    el('nav', { 'aria-label': 'Main' }, link('/', 'Explore'), link('/flows', 'Flows'), link('/tail', 'Live tail'), link('/settings', 'Settings')),
    el('div', { class: 'who' }, workspaces.length ? switcher : null, el('span', { class: 'muted' }, me.user.email), signOut),
  );
  top.hidden = false;
  return { me, role: (workspaces.find((w) => w.workspaceId === workspace()) || {}).role };
}

// ---- sign-in -------------------------------------------------------------------------------

function safeNext() {
  const next = new URLSearchParams(location.search).get('next') || '/';
  return next.startsWith('/') && !next.startsWith('//') && !next.startsWith('/\\') ? next : '/';
}

function loginPage() {
  document.title = 'Sign in · sluice';
  const status = el('div', { 'aria-live': 'polite' });
  const form = el('form', { class: 'card narrow', 'aria-labelledby': 'signin' },
    el('h1', { id: 'signin' }, 'Sign in to sluice'),
    el('label', { for: 'email' }, 'Email'),
    el('input', { id: 'email', name: 'email', type: 'email', autocomplete: 'username', required: true }),
    el('label', { for: 'password' }, 'Password'),
    el('input', { id: 'password', name: 'password', type: 'password', autocomplete: 'current-password', required: true }),
    status,
    el('button', { type: 'submit' }, 'Sign in'));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const answer = await api('/v1/auth/login', { method: 'POST', body: { email: form.email.value, password: form.password.value } });
    if (answer.ok) {
      const first = (answer.body.workspaces || [])[0];
      if (first && !answer.body.workspaces.some((w) => w.workspaceId === workspace())) localStorage.setItem(WORKSPACE, first.workspaceId);
      location.assign(safeNext());
    } else {
      status.replaceChildren(alertBox(answer.status === 429 ? `Too many sign-in attempts: try again in ${answer.body.retryAfter} s.` : problem(answer)));
      form.password.select();
    }
  });
  show(form);
  form.email.focus();
}

// ---- the explorer --------------------------------------------------------------------------

/** The needles a search's parsed query names, for highlighting. */
function needles(parsed) {
  if (!parsed) return [];
  return [...(parsed.required || []), ...(parsed.phrases || []), ...(parsed.optional || []).flat()]
    .filter((needle) => typeof needle === 'string' && needle.length > 0);
}

/** `text` with every case-insensitive occurrence of a needle in a <mark>. */
function highlight(text, marks) {
  if (!marks.length) return [text];
  const lower = text.toLowerCase();
  const wanted = marks.map((mark) => mark.toLowerCase());
  const parts = [];
  let at = 0;
  while (at < text.length) {
    let best = -1;
    let length = 0;
    for (const needle of wanted) {
      const found = lower.indexOf(needle, at);
      if (found >= 0 && (best < 0 || found < best || (found === best && needle.length > length))) {
        best = found;
        length = needle.length;
      }
    }
    // Case folding can change a string's length; highlight only where it did not.
    if (best < 0 || lower.length !== text.length) break;
    if (best > at) parts.push(text.slice(at, best));
    parts.push(el('mark', {}, text.slice(best, best + length)));
    at = best + length;
  }
  if (at < text.length) parts.push(text.slice(at));
  return parts;
}

/** Newer and older pages of a list at `path`, keeping the page's other parameters. */
function pager(path, params, offset, limit, pagination) {
  const at = (to) => { const next = new URLSearchParams(params); next.set('offset', String(to)); return `${path}?${next}`; };
  return el('nav', { class: 'pages', 'aria-label': 'Pages' },
    offset > 0 ? el('a', { href: at(Math.max(0, offset - limit)), rel: 'prev' }, '← Newer') : null,
    pagination && pagination.hasMore ? el('a', { href: at(offset + limit), rel: 'next' }, 'Older →') : null);
}

function field(label, control) {
  return el('div', { class: 'field' }, el('label', { for: control.id }, label), control);
}

function select(id, label, values, chosen) {
  return field(label, el('select', { id, name: id },
    el('option', { value: '' }, 'any'),
    values.map((value) => el('option', { value, selected: value === chosen }, value))));
}

function text(id, label, params, attrs = {}) {
  return field(label, el('input', { id, name: id, value: params.get(id) || '', autocomplete: 'off', ...attrs }));
}

/** A datetime-local value (the browser's zone) for Unix ms, and back. */
const toLocalInput = (ms) => {
  const date = new Date(ms - new Date(ms).getTimezoneOffset() * 60000);
  return date.toISOString().slice(0, 16);
};

/** The explorer's filters folded under "More filters" until one is set. */
const MORE = ['dataset', 'userId', 'sessionId', 'flowId', 'from', 'to'];

function filterForm(params) {
  const range = (name) => el('input', {
    id: `${name}-at`, type: 'datetime-local', value: params.get(name) ? toLocalInput(Number(params.get(name))) : '',
  });
  const form = el('form', { class: 'filters', role: 'search', 'aria-label': 'Filter logs' },
    field('Search', el('input', { id: 'q', name: 'q', type: 'search', value: params.get('q') || '', placeholder: 'timeout "db-1" -retry', autocomplete: 'off' })),
    select('level', 'Level', LEVELS, params.get('level')),
    text('source', 'Source', params),
    select('environment', 'Environment', ENVIRONMENTS, params.get('environment')),
    el('details', { class: 'more', open: MORE.some((name) => params.get(name)) },
      el('summary', {}, 'More filters'),
      el('div', { class: 'filters' },
        text('dataset', 'Dataset', params),
        text('userId', 'User', params),
        text('sessionId', 'Session', params),
        text('flowId', 'Flow', params),
        field('From', range('from')),
        field('To', range('to')))),
    el('div', { class: 'actions' }, el('button', { type: 'submit' }, 'Apply'), el('a', { href: '/', class: 'button secondary' }, 'Clear')));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const next = new URLSearchParams();
    for (const name of ['q', 'level', 'source', 'environment', 'dataset', 'userId', 'sessionId', 'flowId']) {
      const value = form.elements[name].value.trim();
      if (value) next.set(name, value);
    }
    for (const name of ['from', 'to']) {
      const value = form.elements[`${name}-at`].value;
      if (value) next.set(name, String(new Date(value).getTime()));
    }
    location.assign(`/?${next}`);
  });
  return form;
}

/** Counts by level over time, from `/v1/stats`: hours for a period of up to 3 days, else days. */
function chart(stats) {
  const rows = stats.stats || [];
  const width = 720;
  const height = 140;
  const max = Math.max(1, ...rows.map((row) => row.total));
  const step = width / Math.max(1, rows.length);
  const bars = rows.map((row, index) => {
    let y = height;
    const label = row.hour === undefined ? row.date : `${row.date} ${String(row.hour).padStart(2, '0')}:00 UTC`;
    return el('g', {},
      el('title', {}, `${label}: ${row.total} (${LEVELS.map((name) => `${name} ${row[name]}`).join(', ')})`),
      LEVELS.map((name) => {
        const h = (row[name] / max) * (height - 4);
        y -= h;
        return h > 0 ? el('rect', { x: (index * step + 0.5).toFixed(1), y: y.toFixed(1), width: Math.max(1, step - 1).toFixed(1), height: h.toFixed(1), class: `bar-${name}` }) : null;
      }));
  });
  // The time axis: every sixth hour (the date at midnight), or about eight days. Placed with
  // the CSS object model (the policy allows no style attribute in markup).
  const every = rows.length && rows[0].hour !== undefined ? 6 : Math.max(1, Math.ceil(rows.length / 8));
  const ticks = rows.flatMap((row, index) => {
    const hourly = row.hour !== undefined;
    if (hourly ? row.hour % every !== 0 : index % every !== 0) return [];
    const tick = el('span', { class: 'tick' }, hourly && row.hour !== 0 ? `${String(row.hour).padStart(2, '0')}:00` : row.date.slice(5));
    tick.style.left = `${((index + 0.5) / rows.length) * 100}%`;
    return [tick];
  });
  const period = stats.period || {};
  const totals = stats.totals || {};
  return el('figure', { class: 'chart' },
    el('div', { class: 'plot' },
      el('svg', { viewBox: `0 0 ${width} ${height}`, preserveAspectRatio: 'none', role: 'img', 'aria-label': `Logs by level per ${period.groupBy}, ${period.from} to ${period.to}: ${totals.total || 0} in all` }, bars),
      el('span', { class: 'ymax', 'aria-hidden': 'true' }, max.toLocaleString())),
    el('div', { class: 'axis', 'aria-hidden': 'true' }, ticks),
    el('figcaption', {}, `Logs per ${period.groupBy} (UTC), ${period.from} to ${period.to}: `,
      LEVELS.map((name) => el('span', { class: `key key-${name}` }, `${name} ${totals[name] || 0}`)), ` · total ${totals.total || 0}`));
}

function summaryLine(summary) {
  const today = summary.today || {};
  const comparison = summary.comparison || {};
  const sign = comparison.changePercent > 0 ? '+' : '';
  return el('p', { class: 'summary' },
    el('strong', {}, `${today.total || 0} logs today (UTC)`),
    ` · ${today.error || 0} errors, ${today.warn || 0} warnings · yesterday ${comparison.yesterdayTotal || 0} (${sign}${comparison.changePercent}%, ${comparison.trend})`);
}

function logTable(logs, marks, caption) {
  return el('table', { class: 'logs' },
    el('caption', { class: 'sr-only' }, caption),
    el('thead', {}, el('tr', {}, ['Time', 'Level', 'Source', 'Message'].map((name) => el('th', { scope: 'col' }, name)))),
    el('tbody', {}, logs.map((log) => logRow(log, marks))));
}

function logRow(log, marks = []) {
  return el('tr', {},
    el('td', { class: 'time' }, time(log.timestamp)),
    el('td', {}, level(log.level)),
    el('td', { class: 'source' }, log.source),
    el('td', { class: 'message' }, el('a', { href: `/logs/${encodeURIComponent(log.id)}` }, highlight(log.message, marks))));
}

function statsRange(params) {
  const day = (ms) => new Date(ms).toISOString().slice(0, 10);
  const to = params.get('to') ? Number(params.get('to')) : Date.now();
  const from = params.get('from') ? Number(params.get('from')) : to - 86400000;
  const days = (to - from) / 86400000;
  const stats = new URLSearchParams({ from: day(from), to: day(to), groupBy: days <= 3 ? 'hour' : 'day' });
  for (const name of ['source', 'environment', 'dataset']) if (params.get(name)) stats.set(name, params.get(name));
  return stats;
}

async function explorePage() {
  document.title = 'Explore · sluice';
  await frame('/');
  const params = new URLSearchParams(location.search);
  const limit = 50;
  const offset = Math.max(0, Number(params.get('offset')) || 0);
  const query = new URLSearchParams({ limit: String(limit), offset: String(offset) });
  const searching = Boolean(params.get('q'));
  const names = searching ? ['q', 'level', 'source', 'environment', 'dataset', 'from', 'to'] : ['level', 'source', 'environment', 'dataset', 'userId', 'sessionId', 'flowId', 'from', 'to'];
  for (const name of names) if (params.get(name)) query.set(name, params.get(name));
  if (searching) query.set('fields', 'message,errorName,errorStack,data');
  const ignored = searching ? ['userId', 'sessionId', 'flowId'].filter((name) => params.get(name)) : [];

  const [found, stats, summary] = await Promise.all([
    api(`/v1/logs${searching ? '/search' : ''}?${query}`),
    api(`/v1/stats?${statsRange(params)}`),
    api('/v1/stats/summary'),
  ]);
  let results;
  if (!found.ok) {
    results = el('section', { 'aria-labelledby': 'results' }, el('h2', { id: 'results' }, 'Logs'), alertBox(problem(found)));
  } else {
    const logs = found.body.logs || [];
    const marks = searching ? needles(found.body.query && found.body.query.parsed) : [];
    results = el('section', { 'aria-labelledby': 'results' },
      el('h2', { id: 'results' }, searching ? 'Matches' : 'Logs', el('span', { class: 'muted' }, logs.length ? ` ${offset + 1}–${offset + logs.length}, newest first` : '')),
      ignored.length ? el('p', { class: 'note' }, `A search filters by level, source, environment, dataset and time; the ${ignored.join(', ')} filter is not applied to it.`) : null,
      logs.length ? logTable(logs, marks, searching ? 'Logs matching the search' : 'Logs') : el('p', { class: 'muted', role: 'status' }, 'No logs match.'),
      pager('/', params, offset, limit, found.body.pagination));
  }
  show(
    el('h1', {}, 'Explore'),
    filterForm(params),
    el('section', { class: 'overview', 'aria-label': 'Counts' },
      summary.ok ? summaryLine(summary.body) : null,
      stats.ok ? chart(stats.body) : alertBox(problem(stats))),
    results);
}

// ---- a log's detail ------------------------------------------------------------------------

/** JSON as a tree of <details>, folded below the first level. */
function jsonTree(value, depth = 0) {
  if (value === null || typeof value !== 'object') {
    return el('span', { class: `json-${value === null ? 'null' : typeof value}` }, JSON.stringify(value));
  }
  const entries = Array.isArray(value) ? value.map((item, index) => [index, item]) : Object.entries(value);
  const [open, close] = Array.isArray(value) ? ['[', ']'] : ['{', '}'];
  if (!entries.length) return el('span', {}, open + close);
  return el('details', { open: depth < 1 },
    el('summary', {}, `${open} ${entries.length} ${Array.isArray(value) ? 'items' : 'fields'} ${close}`),
    el('ul', { class: 'json' }, entries.map(([key, item]) => el('li', {}, el('span', { class: 'json-key' }, Array.isArray(value) ? `${key}: ` : `${JSON.stringify(key)}: `), jsonTree(item, depth + 1)))));
}

async function logPage(id) {
  document.title = 'Log · sluice';
  await frame('');
  const answer = await api(`/v1/logs/${encodeURIComponent(id)}`);
  if (!answer.ok) return refused('Log', answer, '/', 'Back to the explorer');
  const log = answer.body.log;
  const rows = [
    ['Time', time(log.timestamp)], ['Level', level(log.level)], ['Message', el('span', { class: 'message' }, log.message)],
    ['Source', log.source], ['Environment', log.environment], ['Dataset', log.dataset], ['Id', el('code', {}, log.id)],
  ];
  const optional = [['userId', 'User'], ['sessionId', 'Session'], ['version', 'Version'], ['stepIndex', 'Step'],
    ['errorName', 'Error'], ['ipAddress', 'Client address'], ['country', 'Country']];
  for (const [name, label] of optional) if (log[name] !== undefined) rows.push([label, String(log[name])]);
  if (log.flowId !== undefined) rows.push(['Flow', el('a', { href: `/flows/${encodeURIComponent(log.flowId)}` }, log.flowId)]);
  const known = new Set(['id', 'timestamp', 'level', 'message', 'source', 'environment', 'dataset', 'flowId', 'errorStack', 'data', ...optional.map(([name]) => name)]);
  for (const [name, value] of Object.entries(log)) if (!known.has(name)) rows.push([name, typeof value === 'string' ? value : JSON.stringify(value)]);
  show(
    el('p', {}, el('a', { href: '/', onclick: (event) => { if (document.referrer.startsWith(location.origin) && history.length > 1) { event.preventDefault(); history.back(); } } }, '← Back')),
    el('h1', {}, 'Log'),
    el('dl', { class: 'detail' }, rows.map(([label, value]) => [el('dt', {}, label), el('dd', {}, value)])),
    log.errorStack !== undefined ? el('section', {}, el('h2', {}, 'Stack'), el('pre', { class: 'stack' }, log.errorStack)) : null,
    log.data !== undefined ? el('section', {}, el('h2', {}, 'Data'), el('div', { class: 'json-root' }, jsonTree(log.data))) : null);
}

// ---- flows ---------------------------------------------------------------------------------

async function flowsPage() {
  document.title = 'Flows · sluice';
  await frame('/flows');
  const params = new URLSearchParams(location.search);
  const offset = Math.max(0, Number(params.get('offset')) || 0);
  const query = new URLSearchParams({ limit: '50', offset: String(offset) });
  if (params.get('hasErrors') === 'true') query.set('hasErrors', 'true');
  const answer = await api(`/v1/flows?${query}`);
  const form = el('form', { class: 'filters', 'aria-label': 'Filter flows' },
    el('div', { class: 'field check' }, el('input', { id: 'hasErrors', name: 'hasErrors', type: 'checkbox', value: 'true', checked: params.get('hasErrors') === 'true' }), el('label', { for: 'hasErrors' }, 'Only flows with errors')),
    el('div', { class: 'actions' }, el('button', { type: 'submit' }, 'Apply')));
  if (!answer.ok) {
    show(el('h1', {}, 'Flows'), alertBox(problem(answer)));
    return;
  }
  const flows = answer.body.flows || [];
  show(
    el('h1', {}, 'Flows'),
    form,
    flows.length ? el('table', { class: 'logs' },
      el('caption', { class: 'sr-only' }, 'Flows, latest activity first'),
      el('thead', {}, el('tr', {}, ['Last activity', 'Flow', 'Steps', 'Logs', 'Errors', 'Duration', 'Sources'].map((name) => el('th', { scope: 'col' }, name)))),
      el('tbody', {}, flows.map((flow) => el('tr', {},
        el('td', { class: 'time' }, time(flow.lastTimestamp)),
        el('td', {}, el('a', { href: `/flows/${encodeURIComponent(flow.flowId)}` }, flow.name ? `${flow.name} (${flow.flowId})` : flow.flowId)),
        el('td', { class: 'number' }, flow.steps),
        el('td', { class: 'number' }, flow.logs),
        el('td', { class: 'number' }, flow.levels.error ? level('error') : null, flow.levels.error ? ` ${flow.levels.error}` : '0'),
        el('td', { class: 'number' }, duration(flow.durationMs)),
        el('td', {}, (flow.sources || []).join(', ')))))) : el('p', { class: 'muted', role: 'status' }, 'No flows yet. Logs with a flowId make one.'),
    pager('/flows', params, offset, 50, answer.body.pagination));
}

async function flowPage(id) {
  document.title = 'Flow · sluice';
  await frame('/flows');
  const answer = await api(`/v1/flows/${encodeURIComponent(id)}`);
  if (!answer.ok) return refused('Flow', answer, '/flows', 'All flows');
  const { flow, logs } = answer.body;
  const duplicates = new Set(flow.duplicateSteps || []);
  const missing = flow.missingSteps || [];
  const items = [];
  let previous = null;
  let nextMissing = 0;
  for (const log of logs) {
    while (log.stepIndex !== undefined && nextMissing < missing.length && missing[nextMissing] < log.stepIndex) {
      items.push(el('li', { class: 'step gap' }, el('span', { class: 'step-index' }, `step ${missing[nextMissing]}`), ' missing'));
      nextMissing += 1;
    }
    const since = previous === null ? null : log.timestamp - previous;
    items.push(el('li', { class: `step${duplicates.has(log.stepIndex) ? ' duplicate' : ''}` },
      el('span', { class: 'step-index' }, log.stepIndex === undefined ? 'no step' : `step ${log.stepIndex}`),
      duplicates.has(log.stepIndex) ? el('span', { class: 'tag' }, 'duplicate') : null,
      since === null ? null : el('span', { class: 'muted since' }, `+${duration(since)}`),
      time(log.timestamp), level(log.level), el('span', { class: 'source' }, log.source),
      el('a', { href: `/logs/${encodeURIComponent(log.id)}`, class: 'message' }, log.message)));
    previous = log.timestamp;
  }
  show(
    el('p', {}, el('a', { href: '/flows' }, '← All flows')),
    el('h1', {}, flow.name ? `Flow ${flow.name}` : 'Flow', el('code', { class: 'flow-id' }, flow.flowId)),
    el('p', { class: 'summary' }, `${flow.steps} steps, ${flow.logs} logs over ${duration(flow.durationMs)} · `,
      LEVELS.map((name) => el('span', { class: `key key-${name}` }, `${name} ${flow.levels[name]}`)),
      missing.length ? ` · missing steps ${missing.join(', ')}` : '', duplicates.size ? ` · duplicated steps ${[...duplicates].join(', ')}` : ''),
    answer.body.truncated ? el('p', { class: 'note' }, 'This flow holds more than 2,000 logs; the first 2,000 are shown.') : null,
    el('ol', { class: 'timeline', 'aria-label': 'Timeline' }, items));
}

// ---- live tail -----------------------------------------------------------------------------

async function tailPage() {
  document.title = 'Live tail · sluice';
  await frame('/tail');
  const params = new URLSearchParams(location.search);
  const rows = el('tbody', {});
  const state = el('span', { role: 'status', 'aria-live': 'polite' }, 'Connecting…');
  let paused = false;
  let held = [];
  let heldTotal = 0;
  const pause = el('button', { type: 'button', 'aria-pressed': 'false', onclick: () => {
    paused = !paused;
    pause.setAttribute('aria-pressed', String(paused));
    pause.textContent = paused ? 'Resume' : 'Pause';
    if (!paused) { held.forEach(add); held = []; heldTotal = 0; }
    state.textContent = paused ? 'Paused: new logs are held' : 'Following';
  } }, 'Pause');
  const add = (log) => {
    rows.prepend(logRow(log));
    while (rows.children.length > 500) rows.lastElementChild.remove();
  };
  const query = new URLSearchParams();
  for (const name of ['q', 'level', 'source', 'environment']) if (params.get(name)) query.set(name, params.get(name));
  const form = el('form', { class: 'filters', method: 'get', action: '/tail', 'aria-label': 'Filter the tail' },
    field('Search', el('input', { id: 'q', name: 'q', type: 'search', value: params.get('q') || '', autocomplete: 'off' })),
    select('level', 'Level', LEVELS, params.get('level')),
    text('source', 'Source', params),
    el('div', { class: 'actions' }, el('button', { type: 'submit' }, 'Apply'), pause));
  show(el('h1', {}, 'Live tail'), form, el('p', {}, state),
    el('table', { class: 'logs' }, el('caption', { class: 'sr-only' }, 'Logs as they arrive, newest first'),
      el('thead', {}, el('tr', {}, ['Time', 'Level', 'Source', 'Message'].map((name) => el('th', { scope: 'col' }, name)))), rows));
  follow(`/v1/logs/tail?${query}`, {
    open: () => { state.textContent = paused ? 'Paused: new logs are held' : 'Following'; },
    log: (log) => {
      if (!paused) { add(log); return; }
      held.push(log);
      heldTotal += 1;
      // The page shows at most 500 rows, so it holds no more than that while paused.
      if (held.length > 500) held.shift();
      state.textContent = `Paused: ${heldTotal} new ${heldTotal === 1 ? 'log' : 'logs'} held${heldTotal > 500 ? ' (the newest 500 will be shown)' : ''}`;
    },
    dropped: (count) => { state.textContent = `${count} logs were skipped because the page fell behind`; },
    error: (message) => { state.replaceChildren(alertBox(message)); },
  });
}

/** Reads Server-Sent Events with the session cookie and the workspace header (EventSource
 *  cannot send a header), reconnecting after the last event it saw. */
async function follow(path, on) {
  let lastId = null;
  for (;;) {
    try {
      const response = await fetch(path, { headers: headers(lastId ? { 'Last-Event-ID': lastId, Accept: 'text/event-stream' } : { Accept: 'text/event-stream' }), credentials: 'same-origin' });
      if (response.status === 401) { location.assign(`/login?next=${encodeURIComponent(location.pathname + location.search)}`); return; }
      if (!response.ok) {
        let body = null;
        try { body = await response.json(); } catch { body = null; }
        on.error(problem({ status: response.status, body }));
        if (response.status !== 503) return;
      } else {
        on.open();
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += value;
          let end;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const event = { event: 'message', data: '' };
            for (const line of block.split('\n')) {
              const colon = line.indexOf(':');
              if (colon === 0) continue;
              const [name, rest] = colon < 0 ? [line, ''] : [line.slice(0, colon), line.slice(colon + 1).replace(/^ /, '')];
              if (name === 'data') event.data += rest;
              else if (name === 'event') event.event = rest;
              else if (name === 'id') event.id = rest;
            }
            if (event.event === 'log') { lastId = event.id; on.log(JSON.parse(event.data)); }
            else if (event.event === 'dropped') on.dropped(JSON.parse(event.data).count);
          }
        }
      }
    } catch (error) {
      on.error(`The tail was interrupted (${error.message}); reconnecting…`);
    }
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
}

// ---- settings ------------------------------------------------------------------------------

function keyRow(key, onRevoke) {
  const revoked = key.state && key.state !== 'active';
  return el('tr', {},
    el('td', {}, key.name || el('span', { class: 'muted' }, 'unnamed')),
    el('td', {}, el('code', {}, key.prefix || key.keyId)),
    el('td', {}, key.env || ''), el('td', {}, (key.scopes || []).join(', ')),
    el('td', {}, key.state || ''),
    el('td', {}, key.expiresAt ? time(key.expiresAt) : 'never'),
    el('td', {}, revoked ? null : el('button', { type: 'button', class: 'danger', onclick: onRevoke, 'aria-label': `Revoke key ${key.name || key.keyId}` }, 'Revoke')));
}

/** A member's role, changed with its own Save button (not on every change of the select). */
function roleForm(member, change) {
  const form = el('form', { class: 'switch', 'aria-label': `Role of ${member.email}` },
    el('select', { name: 'role', 'aria-label': `Role of ${member.email}` },
      ['owner', 'member', 'viewer'].map((name) => el('option', { value: name, selected: name === member.role }, name))),
    el('button', { type: 'submit', class: 'secondary', 'aria-label': `Save the role of ${member.email}` }, 'Save'));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    change(`/v1/members/${encodeURIComponent(member.userId)}`, { method: 'PATCH', body: { role: form.elements.role.value } });
  });
  return form;
}

async function settingsPage() {
  document.title = 'Settings · sluice';
  const { role } = await frame('/settings');
  const [space, keys, members] = await Promise.all([api('/v1/workspace'), role === 'viewer' ? null : api('/v1/keys'), api('/v1/members')]);
  const sections = [el('h1', {}, 'Settings')];

  if (space.ok) {
    const w = space.body;
    const used = w.usage.logs;
    const quota = w.usage.quota;
    const limits = w.limits || {};
    const figure = (value, unit) => (value === null || value === undefined ? 'unlimited' : `${value.toLocaleString()} ${unit}`);
    sections.push(el('section', { 'aria-labelledby': 'plan' },
      el('h2', { id: 'plan' }, `Workspace ${w.name}`),
      el('dl', { class: 'detail' },
        el('dt', {}, 'Plan'), el('dd', {}, w.plan),
        el('dt', {}, 'Rate limit'), el('dd', {}, figure(limits.requestsPerMinute, 'requests a minute')),
        el('dt', {}, 'Monthly quota'), el('dd', {}, figure(limits.logsPerMonth, 'logs')),
        el('dt', {}, 'Retention'), el('dd', {}, `${w.retentionDays} days`),
        el('dt', {}, 'Your role'), el('dd', {}, w.role)),
      quota === null || quota === undefined
        ? el('p', { id: 'usage-text' }, `This month: ${used.toLocaleString()} logs (no monthly quota)`)
        : [el('label', { for: 'usage', id: 'usage-text' }, `This month: ${used.toLocaleString()} of ${quota.toLocaleString()} logs (${Math.floor((used / Math.max(1, quota)) * 100)} %)`),
          el('progress', { id: 'usage', max: quota, value: Math.min(used, quota) }, `${used} of ${quota}`)]));
  } else sections.push(alertBox(problem(space)));

  if (keys) {
    const status = el('div', { 'aria-live': 'polite' });
    const body = el('tbody', {});
    const revoke = (key) => async () => {
      const answer = await api(`/v1/keys/${encodeURIComponent(key.keyId)}`, { method: 'DELETE' });
      if (answer.ok) location.reload(); else status.replaceChildren(alertBox(problem(answer)));
    };
    if (keys.ok) body.append(...keys.body.keys.map((key) => keyRow(key, revoke(key))));
    const form = el('form', { class: 'filters', 'aria-label': 'Create a key' },
      field('Name', el('input', { id: 'key-name', name: 'name', autocomplete: 'off' })),
      field('Environment', el('select', { id: 'key-env', name: 'env' }, el('option', { value: 'live' }, 'live'), el('option', { value: 'test' }, 'test'))),
      el('fieldset', {}, el('legend', {}, 'Scopes'),
        el('input', { id: 'scope-ingest', type: 'checkbox', name: 'ingest', checked: true }), el('label', { for: 'scope-ingest' }, 'ingest'),
        el('input', { id: 'scope-read', type: 'checkbox', name: 'read', checked: true }), el('label', { for: 'scope-read' }, 'read')),
      field('Expires', el('select', { id: 'key-expiry', name: 'expiry' },
        el('option', { value: '' }, 'never'), el('option', { value: String(30 * 86400) }, 'in 30 days'),
        el('option', { value: String(90 * 86400) }, 'in 90 days'), el('option', { value: String(365 * 86400) }, 'in a year'))),
      el('div', { class: 'actions' }, el('button', { type: 'submit' }, 'Create key')));
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      const scopes = ['ingest', 'read'].filter((name) => form.elements[name].checked);
      const request = { env: form.elements.env.value, scopes };
      if (form.elements.name.value.trim()) request.name = form.elements.name.value.trim();
      if (form.elements.expiry.value) request.expiresIn = Number(form.elements.expiry.value);
      const answer = await api('/v1/keys', { method: 'POST', body: request });
      if (!answer.ok) { status.replaceChildren(alertBox(problem(answer))); return; }
      const created = answer.body;
      const secret = el('input', { id: 'new-key', readonly: true, value: created.apiKey, class: 'secret' });
      const copy = el('button', { type: 'button', onclick: async () => {
        try { await navigator.clipboard.writeText(created.apiKey); copy.textContent = 'Copied'; } catch { secret.select(); copy.textContent = 'Press Ctrl+C'; }
      } }, 'Copy');
      status.replaceChildren(el('div', { class: 'created', role: 'status' },
        el('label', { for: 'new-key' }, 'Your new key. It is shown this once: copy it now.'), el('div', { class: 'row' }, secret, copy)));
      body.append(keyRow({ ...created, state: 'active' }, revoke(created)));
      form.reset();
      secret.focus();
      secret.select();
    });
    sections.push(el('section', { 'aria-labelledby': 'keys' },
      el('h2', { id: 'keys' }, 'API keys'),
      keys.ok ? el('table', { class: 'logs' }, el('caption', { class: 'sr-only' }, 'API keys'),
        el('thead', {}, el('tr', {}, ['Name', 'Key', 'Environment', 'Scopes', 'State', 'Expires', 'Action'].map((name) => el('th', { scope: 'col' }, name)))), body) : alertBox(problem(keys)),
      form, status));
  }

  if (members.ok) {
    const status = el('div', { 'aria-live': 'polite' });
    const owner = role === 'owner';
    const change = async (path, init) => {
      const answer = await api(path, init);
      if (answer.ok) location.reload(); else status.replaceChildren(alertBox(problem(answer)));
    };
    const rows = members.body.members.map((member) => el('tr', {},
      el('td', {}, member.email), el('td', {}, member.name || ''),
      el('td', {}, owner ? roleForm(member, change) : member.role),
      el('td', {}, owner ? el('button', { type: 'button', class: 'danger', 'aria-label': `Remove ${member.email}`, onclick: () => change(`/v1/members/${encodeURIComponent(member.userId)}`, { method: 'DELETE' }) }, 'Remove') : null)));
    const add = owner ? el('form', { class: 'filters', 'aria-label': 'Add a member' },
      field('Email', el('input', { id: 'member-email', name: 'email', type: 'email', required: true, autocomplete: 'off' })),
      field('Role', el('select', { id: 'member-role', name: 'role' }, ['member', 'viewer', 'owner'].map((name) => el('option', { value: name }, name)))),
      el('div', { class: 'actions' }, el('button', { type: 'submit' }, 'Add member'))) : null;
    if (add) add.addEventListener('submit', (event) => {
      event.preventDefault();
      change('/v1/members', { method: 'POST', body: { email: add.elements.email.value.trim(), role: add.elements.role.value } });
    });
    sections.push(el('section', { 'aria-labelledby': 'members' },
      el('h2', { id: 'members' }, 'Members'),
      el('table', { class: 'logs' }, el('caption', { class: 'sr-only' }, 'Members'),
        el('thead', {}, el('tr', {}, ['Email', 'Name', 'Role', 'Action'].map((name) => el('th', { scope: 'col' }, name)))), el('tbody', {}, rows)),
      add, status));
  }
  show(...sections);
}

// ---- routing -------------------------------------------------------------------------------

async function route() {
  const path = location.pathname;
  const tail = (prefix) => decodeURIComponent(path.slice(prefix.length));
  if (path === '/login') return loginPage();
  if (path === '/') return explorePage();
  if (path.startsWith('/logs/')) return logPage(tail('/logs/'));
  if (path === '/flows') return flowsPage();
  if (path.startsWith('/flows/')) return flowPage(tail('/flows/'));
  if (path === '/tail') return tailPage();
  if (path === '/settings') return settingsPage();
  show(el('h1', {}, 'Not found'), el('p', {}, el('a', { href: '/' }, 'To the explorer')));
}

route().catch((error) => show(el('h1', {}, 'Something went wrong'), alertBox(error.message), el('p', {}, el('a', { href: '/' }, 'To the explorer'))));
