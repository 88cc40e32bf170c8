// The dashboard in a real browser: Playwright's library (playwright-core) driving Debian's
// Chromium against the real `sluice serve`, as a person would use it. Run by `cargo xtask
// browser` (and `cargo xtask ci`), which starts the server on a fresh SQLite file and passes:
//   SLUICE_URL, SLUICE_KEY (the first start's key), SLUICE_PASSWORD (admin@localhost's),
//   SLUICE_BIN (the binary, for `sluice login` and `sluice admin`), SLUICE_DATABASE_URL,
//   SLUICE_SCREENSHOTS (a folder for a PNG of every page), SLUICE_FIGURES (a JSON file for the
//   timings this run measured; they are written down, never asserted).
// Every step asserts what the page shows; axe-core checks every page for serious or critical
// accessibility violations, in the light and the dark theme.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const require = createRequire(import.meta.url);
const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const env = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run this through cargo xtask browser`);
  return value;
};
const BASE = env('SLUICE_URL');
const KEY = env('SLUICE_KEY');
const PASSWORD = env('SLUICE_PASSWORD');
const BIN = env('SLUICE_BIN');
const SHOTS = env('SLUICE_SCREENSHOTS');
mkdirSync(SHOTS, { recursive: true });
const figures = {};

// ---- the API, as a shipper would use it -----------------------------------------------------

async function ingest(logs, key = KEY) {
  const response = await fetch(`${BASE}/v1/logs`, {
    method: 'POST', headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ logs }),
  });
  return response.status;
}

const now = Date.now();
const XSS = ['<script>window.__xss = 1</script>', '"><img src=x onerror="window.__xss = 2">', "'><svg onload=window.__xss=3>"];

async function seed() {
  const logs = [];
  for (let i = 0; i < 60; i += 1) {
    logs.push({ level: ['debug', 'info', 'warn', 'error'][i % 4], message: `request ${i} served in ${i * 3} ms`, source: i % 2 ? 'api' : 'worker', environment: 'production', timestamp: new Date(now - (60 - i) * 60000).toISOString() });
  }
  logs.push({
    level: 'error', message: 'payment declined for order ORD-4242', source: 'checkout', environment: 'production', userId: 'u-77',
    errorName: 'CardError', errorStack: 'CardError: declined\n    at charge (pay.js:10:5)',
    data: { order: { id: 'ORD-4242', total: 129.5, items: [{ sku: 'A-1', qty: 2 }] }, retry: false, note: '<b>not bold</b>' },
  });
  for (const message of XSS) logs.push({ level: 'warn', message, source: '<i>src</i>', environment: 'production', data: { html: message } });
  assert.equal(await ingest(logs), 200);
  const flow = [0, 1, 3, 3, 4].map((step, index) => ({
    level: step === 4 ? 'error' : 'info', message: `checkout step ${step}${index === 3 ? ' again' : ''}`, source: 'checkout', environment: 'production',
    flowId: 'order-4242', stepIndex: step, timestamp: new Date(now - (5 - index) * 1500).toISOString(),
  }));
  assert.equal(await ingest(flow), 200);
}

// ---- the browser ------------------------------------------------------------------------------

const profile = mkdtempSync(join(tmpdir(), 'sluice-chromium-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.SLUICE_CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  viewport: { width: 1280, height: 860 },
});
const page = context.pages()[0] || await context.newPage();
const problems = [];
const urls = [];
// Console errors, but for the browser's note on each 4xx the pages expect (401 before signing
// in, a wrong password, a revoked key); a CSP refusal or a script error is a problem.
page.on('console', (message) => {
  if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) problems.push(message.text());
});
page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
page.on('request', (request) => urls.push(request.url()));
page.on('dialog', (dialog) => { problems.push(`a dialog opened: ${dialog.message()}`); dialog.dismiss(); });

async function axe(name) {
  const found = await page.evaluate(`${AXE}; axe.run(document, { resultTypes: ['violations'] })`);
  const bad = found.violations.filter((violation) => ['serious', 'critical'].includes(violation.impact));
  assert.deepEqual(bad.map((violation) => `${violation.id}: ${violation.help} (${violation.nodes.map((node) => node.target.join(' ')).slice(0, 3).join('; ')})`), [], `axe on ${name}`);
}

async function shoot(name) {
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  await axe(name);
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.screenshot({ path: join(SHOTS, `${name}-dark.png`), fullPage: true });
  await axe(`${name} (dark)`);
  await page.emulateMedia({ colorScheme: 'light' });
}

const step = async (name, body) => {
  process.stdout.write(`browser: ${name}\n`);
  await body();
};

try {
  await seed();

  await step('a visitor is sent to sign in, and signs in with the keyboard alone', async () => {
    await page.goto(`${BASE}/`);
    await page.waitForURL(/\/login\?next=/);
    await page.locator('#email').waitFor();
    assert.equal(await page.evaluate(() => document.activeElement.id), 'email', 'the email field has the focus');
    await shoot('sign-in');
    await page.keyboard.type('admin@localhost');
    await page.keyboard.press('Tab');
    await page.keyboard.type('not the password');
    await page.keyboard.press('Enter');
    await page.getByRole('alert').filter({ hasText: 'Invalid email or password' }).waitFor();
    await page.keyboard.type(PASSWORD);
    await page.keyboard.press('Enter');
    await page.waitForURL(`${BASE}/`);
    await page.locator('table.logs tbody tr').first().waitFor();
  });

  await step('the explorer shows the newest logs, levels, the chart and today against yesterday', async () => {
    const started = Date.now();
    await page.goto(`${BASE}/`);
    await page.locator('table.logs tbody tr').first().waitFor();
    figures.explorerFirstLogsMs = Date.now() - started;
    const first = page.locator('table.logs tbody tr').first();
    assert.ok((await first.innerText()).includes(XSS[2]), 'newest first: the last log sent, at its receive time');
    assert.equal(await page.locator('table.logs tbody tr').count(), 50, 'a page of 50');
    assert.ok(await page.locator('.chart svg rect').count() > 0, 'bars in the chart');
    assert.match(await page.locator('.chart figcaption').innerText(), /total 69/);
    assert.match(await page.locator('.summary').innerText(), /69 logs today|logs today/);
    const time = first.locator('time');
    assert.match(await time.getAttribute('title'), /UTC$/, 'UTC on hover');
    await shoot('explorer');
    // The top of the explorer, as README shows it (docs/dashboard.png).
    await page.screenshot({ path: join(SHOTS, 'readme.png'), clip: { x: 0, y: 0, width: 1280, height: 720 } });
  });

  await step('logs carrying markup show as text and run nothing', async () => {
    for (const message of XSS) {
      await page.getByRole('link', { name: message, exact: true }).first().waitFor();
    }
    assert.equal(await page.locator('img[src="x"]').count(), 0);
    assert.equal(await page.evaluate(() => window.__xss), undefined);
    assert.equal(await page.getByText('<i>src</i>', { exact: true }).count(), 3);
  });

  await step('the explorer with the keyboard alone: skip link, search, a log opened', async () => {
    await page.goto(`${BASE}/`);
    await page.locator('table.logs tbody tr').first().waitFor();
    const focused = () => page.evaluate(() => {
      const active = document.activeElement;
      return { id: active.id, tag: active.tagName, text: active.textContent.trim(), inLogs: Boolean(active.closest('table.logs')) };
    });
    await page.keyboard.press('Tab');
    assert.equal((await focused()).text, 'Skip to content', 'the first stop is the skip link');
    await page.keyboard.press('Enter');
    assert.equal((await focused()).id, 'main');
    await page.keyboard.press('Tab');
    assert.equal((await focused()).id, 'q', 'then the search box');
    await page.keyboard.type('declined');
    await page.keyboard.press('Enter');
    await page.waitForURL(/q=declined/);
    await page.locator('table.logs mark').first().waitFor();
    let presses = 0;
    while (!(await focused()).inLogs) {
      await page.keyboard.press('Tab');
      presses += 1;
      assert.ok(presses < 40, 'a log is reached with Tab');
    }
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/logs\//);
    await page.locator('dl.detail').waitFor();
  });

  await step('pages: older, then newer', async () => {
    await page.goto(`${BASE}/`);
    await page.locator('table.logs tbody tr').first().waitFor();
    await page.getByRole('link', { name: 'Older →' }).click();
    await page.waitForURL(/offset=50/);
    await page.locator('table.logs tbody tr').first().waitFor();
    assert.equal(await page.locator('table.logs tbody tr').count(), 19);
    await page.getByRole('link', { name: '← Newer' }).click();
    await page.waitForURL(/offset=0/);
  });

  await step('filter by level and source', async () => {
    await page.goto(`${BASE}/`);
    await page.getByLabel('Level', { exact: true }).selectOption('error');
    await page.getByLabel('Source', { exact: true }).fill('api');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL(/level=error/);
    await page.locator('table.logs tbody tr').first().waitFor();
    const levels = await page.locator('table.logs tbody .level').allInnerTexts();
    assert.ok(levels.length > 0 && levels.every((text) => text.toLowerCase() === 'error'), levels.join());
    const sources = await page.locator('table.logs tbody td.source').allInnerTexts();
    assert.ok(sources.every((text) => text === 'api'), sources.join());
  });

  await step('a time range, in the browser\'s zone', async () => {
    await page.goto(`${BASE}/`);
    await page.getByText('More filters').click();
    // Up to 30 minutes ago: the older half of the seeded requests, nothing sent since.
    const to = now - 30 * 60000;
    const local = new Date(to - new Date(to).getTimezoneOffset() * 60000).toISOString().slice(0, 16);
    await page.getByLabel('To', { exact: true }).fill(local);
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL(/to=\d+/);
    await page.locator('table.logs tbody tr').first().waitFor();
    const stamps = await page.locator('table.logs tbody time').evaluateAll((times) => times.map((time) => Date.parse(time.getAttribute('datetime'))));
    assert.ok(stamps.length >= 25 && stamps.every((stamp) => stamp <= to + 60000), `${stamps.length} logs up to ${to}`);
    assert.equal(await page.locator('details.more').getAttribute('open'), '', 'a set filter keeps them unfolded');
  });

  await step('search with the query language, matches highlighted', async () => {
    await page.goto(`${BASE}/`);
    await page.getByLabel('Search', { exact: true }).fill('declined "ORD-4242" -nothing');
    await page.keyboard.press('Enter');
    await page.waitForURL(/q=declined/);
    await page.locator('table.logs tbody tr').first().waitFor();
    assert.equal(await page.locator('table.logs tbody tr').count(), 1);
    assert.deepEqual(await page.locator('table.logs mark').allInnerTexts(), ['declined', 'ORD-4242']);
    await shoot('search');
  });

  await step("a log's detail: every field, data as folded JSON, its stack", async () => {
    await page.getByRole('link', { name: /payment declined/ }).click();
    await page.waitForURL(/\/logs\//);
    await page.locator('dl.detail').waitFor();
    const detail = await page.locator('dl.detail').innerText();
    for (const text of ['CardError', 'u-77', 'checkout', 'production']) assert.ok(detail.includes(text), `${text} in ${detail}`);
    assert.match(await page.locator('pre.stack').innerText(), /at charge \(pay\.js:10:5\)/);
    const json = page.locator('.json-root');
    assert.match(await json.innerText(), /"note": "<b>not bold<\/b>"/);
    assert.equal(await page.locator('.json-root b').count(), 0, 'markup in data stays text');
    const folded = json.locator('details details').first();
    assert.equal(await folded.getAttribute('open'), null, 'nested objects start folded');
    await folded.locator('summary').first().click();
    assert.match(await folded.innerText(), /"id": "ORD-4242"/);
    await shoot('log-detail');
  });

  await step("a flow's timeline: steps in order, the gap and the duplicate marked, durations", async () => {
    await page.goto(`${BASE}/flows`);
    await page.getByRole('link', { name: 'order-4242' }).waitFor();
    await shoot('flows');
    await page.getByRole('link', { name: 'order-4242' }).click();
    await page.waitForURL(/\/flows\/order-4242/);
    const steps = page.locator('.timeline li');
    await steps.first().waitFor();
    const texts = await steps.allInnerTexts();
    assert.deepEqual(texts.map((text) => text.split(/\s/)[0] + ' ' + text.split(/\s/)[1]), ['step 0', 'step 1', 'step 2', 'step 3', 'step 3', 'step 4']);
    assert.match(texts[2], /missing/);
    assert.equal(await page.locator('.timeline li.duplicate').count(), 2);
    assert.match(texts[1], /\+1\.50 s/);
    await shoot('flow');
  });

  await step('the live tail shows a new log, and holds logs while paused', async () => {
    await page.goto(`${BASE}/tail`);
    await page.getByRole('status').filter({ hasText: 'Following' }).waitFor();
    const sent = Date.now();
    assert.equal(await ingest([{ level: 'error', message: 'tail sees this one', source: 'live', environment: 'production' }]), 200);
    await page.getByRole('link', { name: 'tail sees this one' }).waitFor();
    figures.tailShowsNewLogMs = Date.now() - sent;
    await page.getByRole('button', { name: 'Pause' }).click();
    assert.equal(await ingest([{ level: 'info', message: 'held while paused', source: 'live', environment: 'production' }]), 200);
    assert.equal(await ingest([{ level: 'info', message: 'after the held one', source: 'live', environment: 'production' }]), 200);
    await page.getByRole('status').filter({ hasText: 'Paused: 2 new logs held' }).waitFor();
    assert.equal(await page.locator('tbody tr').count(), 1, 'held, not shown');
    await shoot('tail');
    await page.getByRole('button', { name: 'Resume' }).click();
    await page.getByRole('link', { name: 'after the held one' }).waitFor();
    assert.equal(await page.getByRole('link', { name: 'held while paused' }).count(), 1);
  });

  await step('settings: a key created is shown once, works, and stops working when revoked', async () => {
    await page.goto(`${BASE}/settings`);
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    await page.getByLabel('Name').fill('browser key');
    await page.getByLabel('Environment').selectOption('test');
    await page.getByLabel('read', { exact: true }).uncheck();
    await page.getByLabel('Expires').selectOption({ label: 'in 30 days' });
    await page.getByRole('button', { name: 'Create key' }).click();
    const secret = page.locator('#new-key');
    await secret.waitFor();
    const key = await secret.inputValue();
    assert.match(key, /^slc_test_/);
    await page.getByRole('button', { name: 'Copy' }).waitFor();
    await shoot('settings-key-created');
    assert.equal(await ingest([{ level: 'info', message: 'sent with the new key', source: 'keys', environment: 'production' }], key), 200);
    await page.reload();
    await page.getByRole('cell', { name: 'browser key', exact: true }).waitFor();
    assert.ok(!(await page.content()).includes(key), 'the key is not shown again');
    await page.getByRole('button', { name: 'Revoke key browser key' }).click();
    await page.waitForFunction(() => [...document.querySelectorAll('td')].some((cell) => cell.textContent === 'revoked'));
    assert.equal(await ingest([{ level: 'info', message: 'refused', source: 'keys', environment: 'production' }], key), 401);
  });

  await step('settings: plan, limits and usage; a member added', async () => {
    const made = await run(BIN, ['admin', 'user', 'create', '--email', 'grace@example.com', '--name', 'Grace', '--json']);
    assert.match(made, /grace@example.com/);
    await page.goto(`${BASE}/settings`);
    await page.locator('#usage-text').waitFor();
    assert.match(await page.locator('#usage-text').innerText(), /This month: \d+ logs \(no monthly quota\)/, 'the first workspace is on enterprise');
    // An instance admin moves it to the free plan (through the API, as the page's session).
    const moved = await page.evaluate(() => fetch('/v1/workspace/plan', {
      method: 'PUT', headers: { 'Content-Type': 'application/json', 'X-Requested-With': 'sluice' }, body: JSON.stringify({ plan: 'free' }),
    }).then((response) => response.status));
    assert.equal(moved, 200);
    await page.reload();
    await page.locator('progress#usage').waitFor();
    assert.match(await page.locator('#usage-text').innerText(), /This month: \d+ of [\d,]+ logs \(\d+ %\)/);
    assert.equal(Number(await page.locator('progress#usage').getAttribute('value')), 73, '69 seeded, 3 through the tail, 1 with the new key');
    await page.getByLabel('Email').fill('grace@example.com');
    await page.getByLabel('Role', { exact: true }).selectOption('viewer');
    await page.getByRole('button', { name: 'Add member' }).click();
    await page.getByRole('cell', { name: 'grace@example.com', exact: true }).waitFor();
    const role = page.locator('select[aria-label="Role of grace@example.com"]');
    assert.equal(await role.inputValue(), 'viewer');
    await role.selectOption('member');
    // Saved, the page loads again by itself.
    const [patched] = await Promise.all([
      page.waitForResponse((response) => response.request().method() === 'PATCH' && response.url().includes('/v1/members/')),
      page.waitForEvent('load'),
      page.getByRole('button', { name: 'Save the role of grace@example.com' }).click(),
    ]);
    assert.equal(patched.status(), 200);
    await page.getByRole('cell', { name: 'grace@example.com', exact: true }).waitFor();
    assert.equal(await page.locator('select[aria-label="Role of grace@example.com"]').inputValue(), 'member', 'the role was saved');
    await shoot('settings');
  });

  await step('a device sign-in that `sluice login` waits on is approved in the browser', async () => {
    const home = mkdtempSync(join(tmpdir(), 'sluice-login-'));
    const login = spawn(BIN, ['login', '--server', BASE, '--json'], { env: { ...process.env, XDG_CONFIG_HOME: home }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const code = await new Promise((resolve, reject) => {
      login.stdout.on('data', (chunk) => {
        out += chunk;
        const line = out.split('\n')[0];
        if (out.includes('\n')) resolve(JSON.parse(line).userCode);
      });
      login.on('exit', (status) => reject(new Error(`sluice login exited ${status}: ${out}`)));
    });
    const ended = new Promise((resolve) => login.on('exit', resolve));
    await page.goto(`${BASE}/device?code=${encodeURIComponent(code)}`);
    await page.getByRole('button', { name: 'Approve' }).waitFor();
    await shoot('device');
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.getByRole('status').filter({ hasText: 'Approved' }).waitFor();
    assert.equal(await ended, 0, `sluice login: ${out}`);
    assert.match(out, /admin@localhost/);
  });

  await step('the workspace switcher shows another workspace\'s logs', async () => {
    await page.goto(`${BASE}/`);
    const made = await page.evaluate(() => fetch('/v1/workspaces', {
      method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Requested-With': 'sluice' }, body: JSON.stringify({ name: 'second team' }),
    }).then((response) => response.status));
    assert.equal(made, 201);
    await page.goto(`${BASE}/`);
    await page.locator('table.logs tbody tr').first().waitFor();
    const switcher = page.locator('select#workspace');
    await switcher.selectOption({ label: 'second team (owner)' });
    await page.getByRole('button', { name: 'Switch' }).click();
    await page.getByText('No logs match.').waitFor();
    await page.locator('select#workspace').selectOption({ label: 'default (owner)' });
    await page.getByRole('button', { name: 'Switch' }).click();
    await page.locator('table.logs tbody tr').first().waitFor();
  });

  await step('a log in a flow links to its timeline', async () => {
    await page.goto(`${BASE}/?flowId=order-4242`);
    await page.getByRole('link', { name: 'checkout step 1' }).click();
    await page.getByRole('link', { name: 'order-4242' }).click();
    await page.waitForURL(/\/flows\/order-4242$/);
    await page.locator('.timeline li').first().waitFor();
  });

  await step('readable at 360 px wide', async () => {
    await page.setViewportSize({ width: 360, height: 740 });
    for (const path of ['/', '/settings', '/flows/order-4242']) {
      await page.goto(`${BASE}${path}`);
      await page.locator('main h1').waitFor();
      await page.waitForLoadState('networkidle');
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(overflow <= 0, `${path} scrolls sideways by ${overflow} px at 360 px`);
    }
    await page.goto(`${BASE}/`);
    await page.locator('table.logs tbody tr').first().waitFor();
    await page.screenshot({ path: join(SHOTS, 'explorer-360.png'), fullPage: false });
    await page.setViewportSize({ width: 1280, height: 860 });
  });

  await step('signing out ends the session', async () => {
    await page.goto(`${BASE}/`);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/login/);
    await page.goto(`${BASE}/settings`);
    await page.waitForURL(/\/login\?next=%2Fsettings/);
  });

  assert.deepEqual(problems, [], 'no console errors, CSP refusals or dialogs');
  const leaked = urls.filter((url) => /slc_(live|test|sess)_/.test(url));
  assert.deepEqual(leaked, [], 'no key or token in a URL');
  if (process.env.SLUICE_FIGURES) writeFileSync(process.env.SLUICE_FIGURES, JSON.stringify(figures, null, 2));
  process.stdout.write(`browser: all passed; ${JSON.stringify(figures)}\n`);
} finally {
  await context.close();
}

function run(program, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk) => { out += chunk; });
    child.stderr.on('data', (chunk) => { err += chunk; });
    child.on('exit', (status) => (status === 0 ? resolve(out) : reject(new Error(`${program} ${args.join(' ')}: ${status} ${err}`))));
  });
}
