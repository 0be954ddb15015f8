// End-to-end tests of the sidenote panel in a real headless Chromium (Debian's
// /usr/bin/chromium driven by playwright-core) against `sidenote serve` and the repo's
// scripted fake provider server (`fake-provider`).
//
// scripts/test.d/50-e2e-browser.sh starts both and passes:
//   SIDENOTE_URL   http://127.0.0.1:PORT of `sidenote serve`
//   SIDENOTE_TOKEN the workspace API token
//   FAKE_URL       the fake provider's base URL (http://127.0.0.1:PORT/v1)
//   ARTIFACTS      where screenshots go
// The fake model is scripted per test through POST /_fake/script; every test pushes exactly
// the steps its turn consumes and checks the fake saw no protocol violation.

import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const URL_ = need('SIDENOTE_URL');
const TOKEN = need('SIDENOTE_TOKEN');
const FAKE = need('FAKE_URL');
const FAKE_ROOT = FAKE.replace(/\/v1$/, '');
const ARTIFACTS = process.env.ARTIFACTS || 'test-artifacts';
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

function need(name) {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set (run through scripts/test.d/50-e2e-browser.sh)`);
  return v;
}

let context;
let page;
let profile;
const foreign = [];

async function api(method, path, body, headers = {}) {
  const res = await fetch(URL_ + '/api' + path, {
    method,
    headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  const data = text ? JSON.parse(text) : null;
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return data;
}

async function script(steps) {
  const res = await fetch(FAKE_ROOT + '/_fake/script', {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(steps),
  });
  assert.equal(res.status, 200, await res.text());
}

async function violations() {
  const res = await fetch(FAKE_ROOT + '/_fake/violations');
  return res.json();
}

const toolCall = (name, args) => ({ type: 'reply', text: '', tool_calls: [{ name, arguments: args }] });
const text = (t) => ({ type: 'reply', text: t });

async function noteByTitle(title) {
  const { notes } = await api('GET', '/notes?limit=1000');
  const n = notes.find((x) => x.title === title);
  assert.ok(n, `note ${title} exists`);
  return api('GET', `/notes/${n.id}`);
}

async function openNote(title) {
  await page.locator('#notes li', { hasText: title }).first().click();
  await page.locator('#note-title').waitFor();
  await page.waitForFunction((t) => document.getElementById('note-title').value === t, title);
}

async function selectInEditor(substring) {
  await page.evaluate((s) => {
    const ta = document.getElementById('body');
    const i = ta.value.indexOf(s);
    if (i < 0) throw new Error(`${s} not in the note`);
    ta.focus();
    ta.setSelectionRange(i, i + s.length);
    ta.dispatchEvent(new Event('select'));
  }, substring);
}

let doneBefore = 0;
async function sendMessage(msg) {
  doneBefore = await page.locator('.msg.assistant[data-done="1"]').count();
  await page.locator('#prompt').fill(msg);
  await page.locator('#prompt').press('Enter');
}

// Wait until the turn sent last has ended (its reply is marked done) and Send is back.
async function turnDone(timeout = 20000) {
  await page.waitForFunction((n) => document.querySelectorAll('.msg.assistant[data-done="1"]').length > n, doneBefore, { timeout });
  await page.locator('#send').waitFor({ state: 'visible' });
}

before(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  profile = mkdtempSync(join(tmpdir(), 'sidenote-chromium-'));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 800 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  // The page must never talk to another host (checked by the last test).
  context.on('request', (req) => {
    const u = new URL(req.url());
    if (u.protocol === 'data:') return;
    if (u.origin !== new URL(URL_).origin) foreign.push(req.url());
  });
  page = context.pages()[0] || (await context.newPage());
  page.setDefaultTimeout(10000);
  page.on('pageerror', (e) => { console.error('page error:', e); });

  // the workspace: three packing lists in different notebooks (Lake District is the newest)
  const nb = async (title) => (await api('POST', '/notebooks', { title })).id;
  const travel = await nb('Travel');
  const camping = await nb('Camping');
  const archive = await nb('Archive');
  await api('POST', '/notes', { title: 'Packing list — Paris 2023', body: '# Packing list\n- [x] passport\n', parent_id: archive });
  await api('POST', '/notes', { title: 'Packing list — Rome', body: '# Packing list\n- [x] sunscreen\n', parent_id: travel });
  await api('POST', '/notes', { title: 'Recipes', body: 'Pasta and more', parent_id: travel });
  await new Promise((r) => setTimeout(r, 20));
  await api('POST', '/notes', { title: 'Packing list — Lake District', body: '# Packing list\n- [ ] tent\n- [ ] boots', parent_id: camping });
  await api('POST', '/notes', { title: 'Trip diary', body: '# Day one\nThe weather was really very extremely nice and warm all day.\nWe walked to the lake.\n', parent_id: travel });
  await api('POST', '/notes', { title: 'Shopping', body: 'Milk\nBread and some quite unnecessary extra butter\nEggs\n', parent_id: travel });
});

// a failed test must not leave the settings dialog over the page
beforeEach(async () => {
  if (page) await page.evaluate(() => { const d = document.getElementById('settings'); if (d && d.open) d.close(); }).catch(() => {});
});

after(async () => {
  if (context) await context.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

test('the page needs the token; the API refuses missing tokens and foreign origins', async () => {
  let res = await fetch(URL_ + '/');
  assert.equal(res.status, 401);
  assert.ok(!(await res.text()).includes(TOKEN));
  res = await fetch(URL_ + '/api/notebooks');
  assert.equal(res.status, 401);
  res = await fetch(URL_ + '/api/notebooks', { headers: { Authorization: `Bearer ${TOKEN}`, Origin: 'http://evil.example' } });
  assert.equal(res.status, 403);
  res = await fetch(URL_ + '/api/notebooks', { headers: { Authorization: `Bearer ${TOKEN}` } });
  assert.equal(res.status, 200);

  await page.goto(`${URL_}/?token=${TOKEN}`);
  assert.equal(new URL(page.url()).search, '', 'the token is dropped from the address bar');
  await page.waitForSelector('body[data-ready="1"]');
  assert.ok(!(await page.content()).includes(TOKEN), 'the token is not in the page');
  await page.locator('#notes li', { hasText: 'Packing list — Lake District' }).waitFor();
  await page.locator('#chat-empty').waitFor();
});

test('settings: configure the provider and Test it', async () => {
  await page.locator('#open-settings').click();
  await page.locator('#settings[data-loaded="1"]').waitFor();
  await page.locator('#s-base').fill(FAKE);
  await page.locator('#s-model').fill('fake-model');
  await page.locator('#s-type').selectOption('openai-compatible');
  await script([
    text('OK'),
    toolCall('get_secret_word', { topic: 'sidenote' }),
    text('pomegranate'),
  ]);
  await page.locator('#s-test').click();
  await page.locator('#s-test-out', { hasText: 'PASS' }).waitFor({ timeout: 15000 });
  const s = await api('GET', '/settings');
  assert.equal(s.base_url, FAKE);
  assert.equal(s.model, 'fake-model');
  assert.equal(s.mcp_token, TOKEN);
  // the tool switches are listed
  await page.locator('#tools-body tr', { hasText: 'update_note' }).first().waitFor();
  await page.locator('#plugins li', { hasText: 'Vacation packing' }).waitFor();
  await page.locator('#settings .settings-head button').click();
  assert.deepEqual(await violations(), []);
});

test('(a) "find my last packing list and add socks to it" with no note focused', async () => {
  const target = await noteByTitle('Packing list — Lake District');
  const others = await Promise.all(['Packing list — Paris 2023', 'Packing list — Rome', 'Recipes'].map(noteByTitle));
  await script([
    toolCall('search_notes', { query: 'packing list' }),
    toolCall('read_note', { id: target.id }),
    toolCall('update_note', { id: target.id, append: '\n- [ ] socks' }),
    text(`Added socks to [Packing list — Lake District](:/${target.id}).`),
  ]);
  assert.equal(await page.locator('#editor').isHidden(), true, 'no note is focused');
  await sendMessage('Find my last packing list and add socks to it');
  await turnDone();
  const lines = page.locator('.msg.assistant').last().locator('.activity li');
  assert.equal(await lines.count(), 3);
  const starts = await lines.evaluateAll((ls) => ls.map((l) => l.dataset.start));
  const ends = await lines.locator('.text').allTextContents();
  assert.match(starts[0], /^Searching notes for .packing list./);
  assert.match(ends[0], /^Found 3 notes/);
  assert.equal(ends[1], 'Read note: Packing list — Lake District');
  assert.match(ends[2], /Lake District/);
  assert.equal(await lines.locator('.mark').count(), 3);
  assert.equal(await page.locator('.msg.assistant li.done').count() >= 3, true);
  await page.locator('.msg.assistant .bubble', { hasText: 'Added socks to' }).waitFor();
  await page.locator('.msg.assistant button.revert').last().waitFor();
  await page.screenshot({ path: join(ARTIFACTS, 'a-packing-list.png') });

  // the reply's internal link opens the right note, which shows the new line; the others
  // did not change
  await page.locator('.msg.assistant .bubble a.note-link', { hasText: 'Packing list — Lake District' }).click();
  await page.waitForFunction(() => document.getElementById('note-title').value === 'Packing list — Lake District');
  const body = await page.locator('#body').inputValue();
  assert.equal(body, '# Packing list\n- [ ] tent\n- [ ] boots\n- [ ] socks');
  for (const o of others) assert.equal((await api('GET', `/notes/${o.id}`)).body, o.body, `${o.title} unchanged`);
  // reopen: the workspace conversation was persisted
  await page.locator('#close-note').click();
  await page.locator('.msg.user', { hasText: 'Find my last packing list' }).waitFor();
  await page.locator('.msg.assistant .activity li', { hasText: 'Read note: Packing list — Lake District' }).waitFor();
  assert.deepEqual(await violations(), []);
});

test('(b) with text selected, a turn edits the selection: diff, accept, one undo restores', async () => {
  const note = await noteByTitle('Trip diary');
  const original = note.body;
  await openNote('Trip diary');
  await selectInEditor('really very extremely nice');
  await script([
    toolCall('edit_selection', { text: 'lovely' }),
    // the reply comes late: the diff must already be on screen while the turn runs
    { type: 'delay', delay_ms: 1500, step: text('Shortened the selection.') },
  ]);
  await sendMessage('Make the selected words concise');
  const proposal = page.locator('#pending .proposal').first();
  await proposal.waitFor({ timeout: 10000 });
  assert.equal(await page.locator('#stop').isVisible(), true, 'the diff appears while the turn is still running');
  assert.equal(await proposal.locator('.del').first().textContent(), '-The weather was really very extremely nice and warm all day.');
  assert.equal(await proposal.locator('.add').first().textContent(), '+The weather was lovely and warm all day.');
  await turnDone();
  assert.equal(await page.locator('#body').inputValue(), original, 'nothing applied before accept');
  await page.screenshot({ path: join(ARTIFACTS, 'b-diff-review.png') });

  await proposal.locator('button.accept').click();
  const edited = original.replace('really very extremely nice', 'lovely');
  await page.waitForFunction((t) => document.getElementById('body').value === t, edited);
  assert.equal(await page.locator('#pending').isHidden(), true);
  assert.equal((await api('GET', `/notes/${note.id}`)).body, edited, 'saved');

  // one undo (Ctrl+Z in the editor) restores the original
  await page.locator('#body').focus();
  await page.keyboard.press('Control+z');
  await page.waitForFunction((t) => document.getElementById('body').value === t, original);
  assert.equal((await api('GET', `/notes/${note.id}`)).body, original, 'the undo is saved');
  // and redo brings the accepted batch back
  await page.locator('#redo').click();
  await page.waitForFunction((t) => document.getElementById('body').value === t, edited);
  assert.deepEqual(await violations(), []);
});

test('(c) reject leaves the note unchanged', async () => {
  const note = await noteByTitle('Shopping');
  await openNote('Shopping');
  await selectInEditor('Bread and some quite unnecessary extra butter');
  await script([toolCall('edit_selection', { text: 'Bread and butter' }), text('Done.')]);
  await sendMessage('tidy this line');
  await turnDone();
  const proposal = page.locator('#pending .proposal').first();
  await proposal.waitFor();
  await proposal.locator('button.reject').click();
  await page.locator('#pending').waitFor({ state: 'hidden' });
  assert.equal(await page.locator('#body').inputValue(), note.body);
  assert.equal((await api('GET', `/notes/${note.id}`)).body, note.body);
  const st = await api('GET', `/editor/${note.id}`);
  assert.equal(st.state.pending.length, 0);
  assert.deepEqual(await violations(), []);
});

test('(d) Stop cancels a slow turn', async () => {
  const note = await noteByTitle('Shopping');
  await script([{ type: 'delay', delay_ms: 30000, step: toolCall('edit_selection', { text: 'x' }) }]);
  await sendMessage('rewrite everything, slowly');
  await page.locator('#stop').waitFor({ state: 'visible' });
  const t0 = Date.now();
  await page.locator('#stop').click();
  await page.locator('.msg.assistant .msg-error', { hasText: 'Stopped.' }).waitFor({ timeout: 10000 });
  await turnDone();
  assert.ok(Date.now() - t0 < 10000, 'stopped well before the slow reply');
  assert.equal(await page.locator('#pending').isHidden(), true);
  assert.equal((await api('GET', `/notes/${note.id}`)).body, note.body);
  // the conversation is usable again right away
  const conv = await api('GET', `/conversations/${note.id}`);
  assert.equal(conv.running, null);
});

test('(e) a plugin list with thumbnails renders natively', async () => {
  await page.locator('#close-note').click();
  await script([
    toolCall('plan_trip_packing', { destination: 'Lake District', days: 5, companions: ['dog'] }),
    text('Here is a list for five days in the Lake District with your dog.'),
  ]);
  await sendMessage('What should I pack for 5 days in the Lake District with my dog?');
  await turnDone();
  const render = page.locator('.msg.assistant').last().locator('.render');
  await render.waitFor();
  const thumbs = render.locator('ul.r-list img.thumb');
  assert.ok((await thumbs.count()) >= 5, 'a thumbnail per item');
  const src = await thumbs.first().getAttribute('src');
  assert.match(src, /^data:image\//);
  await render.locator('ul.r-list li', { hasText: 'Dog food' }).waitFor();
  const loaded = await thumbs.first().evaluate((img) => img.complete && img.naturalWidth > 0);
  assert.ok(loaded, 'the thumbnail is drawn');
  await page.screenshot({ path: join(ARTIFACTS, 'e-plugin-render.png') });
  assert.deepEqual(await violations(), []);
});

test('errors are explained: provider unreachable', async () => {
  await api('PUT', '/settings', { base_url: 'http://127.0.0.1:9/v1' });
  try {
    await sendMessage('hello?');
    await page.locator('#chat-error', { hasText: 'could not be used' }).waitFor({ timeout: 30000 });
    assert.match(await page.locator('#chat-error').textContent(), /Settings/);
    await turnDone();
  } finally {
    await api('PUT', '/settings', { base_url: FAKE });
  }
});

test('narrow widths: the panes stay usable', async () => {
  await page.setViewportSize({ width: 600, height: 800 });
  await page.locator('#toggle-ai').click();
  await page.locator('#prompt').waitFor({ state: 'visible' });
  await page.locator('#toggle-nav').click();
  await page.locator('#notes li').first().waitFor({ state: 'visible' });
  await page.setViewportSize({ width: 1280, height: 800 });
});

test('the page fetched nothing from another host', () => {
  assert.deepEqual(foreign, []);
});
