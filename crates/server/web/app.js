// sidenote panel — plain JavaScript, no dependencies, nothing loaded from another host.
// Talks to the same-origin JSON API under /api (authenticated by the HttpOnly cookie the
// server set when the page was opened with ?token=...). Chat turns stream as SSE over a
// POST response read with fetch().
'use strict';

(() => {
  const $ = (id) => document.getElementById(id);
  const el = (tag, props = {}, ...children) => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(props)) {
      if (v == null || v === false) continue;
      if (k === 'class') e.className = v;
      else if (k === 'text') e.textContent = v;
      else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
      else if (k === 'dataset') Object.assign(e.dataset, v);
      else e.setAttribute(k, v === true ? '' : v);
    }
    for (const c of children.flat()) {
      if (c == null || c === false) continue;
      e.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return e;
  };

  // ---------------------------------------------------------------- API
  class ApiError extends Error {
    constructor(status, body) {
      super((body && body.error) || `HTTP ${status}`);
      this.status = status;
      this.code = body && body.code;
      this.body = body;
    }
  }
  async function api(method, path, body) {
    const opts = { method, headers: {}, credentials: 'same-origin' };
    if (body !== undefined) {
      opts.headers['Content-Type'] = 'application/json';
      opts.body = JSON.stringify(body);
    }
    let res;
    try {
      res = await fetch('/api' + path, opts);
    } catch (e) {
      throw new ApiError(0, { error: 'The sidenote server is not reachable. Is `sidenote serve` still running?' });
    }
    const text = await res.text();
    let data = null;
    try { data = text ? JSON.parse(text) : null; } catch (_) { data = { error: text }; }
    if (!res.ok) {
      if (res.status === 401) showAuthProblem();
      throw new ApiError(res.status, data);
    }
    return data;
  }

  function showAuthProblem() {
    toast('Not signed in to this server: open the link printed by `sidenote serve` (it carries ?token=...).', 8000);
  }

  let toastTimer = null;
  function toast(msg, ms = 3000) {
    const t = $('toast');
    t.textContent = msg;
    t.hidden = false;
    clearTimeout(toastTimer);
    toastTimer = setTimeout(() => { t.hidden = true; }, ms);
  }

  // ---------------------------------------------------------------- state
  const state = {
    notebooks: [],
    notebook: null,         // selected notebook id (null = all notes)
    query: '',
    notes: [],
    note: null,             // the open note {id, title, parent_id, ...}
    editor: null,           // last editor state from the server
    text: '',               // what the server has as the note text
    dirtyTimer: null,
    saving: null,           // promise of an in-flight save
    turn: null,             // the running turn {id, controller}
    convKey: 'workspace',
  };

  // ---------------------------------------------------------------- notebooks and notes
  async function loadNotebooks() {
    state.notebooks = await api('GET', '/notebooks');
    const ul = $('notebooks');
    ul.replaceChildren();
    const all = el('li', { class: state.notebook ? '' : 'active', onclick: () => selectNotebook(null) },
      el('span', { text: 'All notes' }));
    ul.append(all);
    const byParent = new Map();
    for (const nb of state.notebooks) {
      const p = nb.parent_id || '';
      if (!byParent.has(p)) byParent.set(p, []);
      byParent.get(p).push(nb);
    }
    const walk = (parent, depth) => {
      for (const nb of (byParent.get(parent) || []).sort((a, b) => a.title.localeCompare(b.title))) {
        const li = el('li', {
          class: state.notebook === nb.id ? 'active' : '',
          dataset: { id: nb.id },
          onclick: () => selectNotebook(nb.id),
        }, el('span', { text: nb.title }), el('span', { class: 'count', text: nb.note_count }));
        li.firstChild.style.paddingLeft = `${depth * 12}px`;
        ul.append(li);
        walk(nb.id, depth + 1);
      }
    };
    walk('', 0);
  }

  function notebookTitle(id) {
    const nb = state.notebooks.find((n) => n.id === id);
    return nb ? nb.title : '';
  }

  async function selectNotebook(id) {
    state.notebook = id;
    state.query = '';
    $('search').value = '';
    await loadNotebooks();
    await loadNotes();
    document.body.classList.remove('show-nav');
  }

  async function loadNotes() {
    const params = new URLSearchParams();
    if (state.query) params.set('q', state.query);
    else if (state.notebook) params.set('notebook', state.notebook);
    const ul = $('notes');
    const empty = $('notes-empty');
    let data;
    try {
      data = await api('GET', '/notes?' + params.toString());
    } catch (e) {
      ul.replaceChildren();
      empty.hidden = false;
      empty.textContent = e.status === 400 ? `Search: ${e.message}` : e.message;
      return;
    }
    state.notes = data.notes;
    $('notes-title').textContent = state.query ? `Results for “${state.query}” (${data.total})`
      : state.notebook ? notebookTitle(state.notebook) : 'All notes';
    ul.replaceChildren(...data.notes.map((n) => el('li', {
      class: state.note && state.note.id === n.id ? 'active' : '',
      dataset: { id: n.id },
      title: n.title,
      onclick: () => openNote(n.id),
    }, el('span', { class: 'n-title', text: n.title || '(untitled)' }),
    el('span', { class: 'n-meta', text: n.snippet ? n.snippet : `${notebookTitle(n.parent_id)} · ${fmtTime(n.updated_time)}` }))));
    empty.hidden = data.notes.length > 0;
    empty.textContent = state.query ? 'No note matches this search.' : 'No notes here yet. Create one with “New note”.';
  }

  function fmtTime(ms) {
    if (!ms) return '';
    const d = new Date(ms);
    return d.toLocaleDateString(undefined, { year: 'numeric', month: 'short', day: 'numeric' });
  }

  // ---------------------------------------------------------------- editor
  const body = $('body');

  async function openNote(id) {
    await flushEdit();
    let data;
    try {
      data = await api('POST', `/editor/${encodeURIComponent(id)}/open`);
    } catch (e) {
      toast(e.message, 5000);
      return;
    }
    state.note = data.note;
    state.text = data.text;
    state.editor = data.state;
    $('editor-empty').hidden = true;
    $('editor').hidden = false;
    $('note-title').value = data.note.title;
    $('note-notebook').textContent = notebookTitle(data.note.parent_id);
    $('note-tags').replaceChildren(...(data.tags || []).map((t) => el('span', { class: 'tag', text: t })));
    body.value = data.text;
    body.setSelectionRange(0, 0);
    setSaveState('');
    updateUndo();
    for (const li of $('notes').children) li.classList.toggle('active', li.dataset.id === id);
    document.body.classList.remove('show-nav');
    await switchConversation(id);
    renderPending();
    updateContextInfo();
  }

  async function closeNote() {
    await flushEdit();
    state.note = null;
    state.editor = null;
    $('editor').hidden = true;
    $('editor-empty').hidden = false;
    for (const li of $('notes').children) li.classList.remove('active');
    await switchConversation('workspace');
    renderPending();
    updateContextInfo();
  }

  function setSaveState(s) { $('save-state').textContent = s; }

  function updateUndo() {
    const s = state.editor;
    $('undo').disabled = !(s && s.can_undo);
    $('redo').disabled = !(s && s.can_redo);
  }

  function selectionUtf16() {
    if (!state.note) return null;
    const start = body.selectionStart, end = body.selectionEnd;
    return start < end ? { start, end } : null;
  }

  body.addEventListener('input', () => {
    setSaveState('Editing…');
    clearTimeout(state.dirtyTimer);
    state.dirtyTimer = setTimeout(() => { flushEdit(); }, 400);
  });

  // Send the textarea's text to the server (one undo step per flush) if it changed.
  async function flushEdit() {
    clearTimeout(state.dirtyTimer);
    state.dirtyTimer = null;
    if (state.saving) await state.saving;
    if (!state.note || body.value === state.text) return;
    const noteId = state.note.id;
    const text = body.value;
    state.saving = (async () => {
      try {
        setSaveState('Saving…');
        const data = await api('POST', `/editor/${encodeURIComponent(noteId)}/edit`, { text, selection: selectionUtf16() });
        if (state.note && state.note.id === noteId) {
          state.text = text;
          state.editor = data.state;
          setSaveState('Saved');
          updateUndo();
          renderPending();
          if (data.conflicts && data.conflicts.length) {
            toast(`Your edit touched text a pending AI edit wanted to change: ${data.conflicts.length} edit(s) can no longer be applied.`, 6000);
          }
        }
      } catch (e) {
        setSaveState('Not saved');
        toast(`Could not save: ${e.message}`, 6000);
      } finally {
        state.saving = null;
      }
    })();
    await state.saving;
  }

  let selTimer = null;
  function onSelection() {
    updateContextInfo();
    if (!state.note) return;
    clearTimeout(selTimer);
    selTimer = setTimeout(() => {
      if (!state.note || body.value !== state.text) return; // sent with the next edit instead
      api('POST', `/editor/${encodeURIComponent(state.note.id)}/selection`, {
        selection: selectionUtf16(), cursor: body.selectionEnd,
      }).catch(() => {});
    }, 250);
  }
  document.addEventListener('selectionchange', () => { if (document.activeElement === body) onSelection(); });
  body.addEventListener('select', onSelection);
  body.addEventListener('keyup', onSelection);
  body.addEventListener('mouseup', onSelection);

  function applyServerText(data) {
    state.text = data.text;
    state.editor = data.state;
    const start = Math.min(body.selectionStart, data.text.length);
    body.value = data.text;
    body.setSelectionRange(start, start);
    updateUndo();
    renderPending();
    setSaveState('Saved');
    updateContextInfo();
  }

  async function editorAction(action, payload) {
    if (!state.note) return null;
    await flushEdit();
    try {
      const data = await api('POST', `/editor/${encodeURIComponent(state.note.id)}/${action}`, payload);
      applyServerText(data);
      return data;
    } catch (e) {
      showChatError(e);
      return null;
    }
  }

  $('undo').addEventListener('click', () => editorAction('undo'));
  $('redo').addEventListener('click', () => editorAction('redo'));
  body.addEventListener('keydown', (ev) => {
    const mod = ev.ctrlKey || ev.metaKey;
    if (!mod) return;
    const k = ev.key.toLowerCase();
    if (k === 'z' && !ev.shiftKey) { ev.preventDefault(); editorAction('undo'); }
    else if ((k === 'z' && ev.shiftKey) || k === 'y') { ev.preventDefault(); editorAction('redo'); }
    else if (k === 's') { ev.preventDefault(); flushEdit(); }
  });

  $('note-title').addEventListener('change', async () => {
    if (!state.note) return;
    const title = $('note-title').value.trim();
    if (!title) { $('note-title').value = state.note.title; return; }
    try {
      state.note = await api('PUT', `/notes/${encodeURIComponent(state.note.id)}`, { title });
      await loadNotes();
    } catch (e) { toast(e.message, 5000); }
  });
  $('close-note').addEventListener('click', closeNote);
  $('delete-note').addEventListener('click', async () => {
    if (!state.note) return;
    if (!confirm(`Move “${state.note.title}” to the trash?`)) return;
    try {
      await api('DELETE', `/notes/${encodeURIComponent(state.note.id)}`);
      await closeNote();
      await Promise.all([loadNotebooks(), loadNotes()]);
    } catch (e) { toast(e.message, 5000); }
  });
  $('new-note').addEventListener('click', async () => {
    try {
      const n = await api('POST', '/notes', { title: 'Untitled', body: '', parent_id: state.notebook });
      await Promise.all([loadNotebooks(), loadNotes()]);
      await openNote(n.id);
      $('note-title').select();
    } catch (e) { toast(e.message, 5000); }
  });

  $('search-form').addEventListener('submit', (ev) => { ev.preventDefault(); });
  let searchTimer = null;
  $('search').addEventListener('input', () => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(() => {
      state.query = $('search').value.trim();
      loadNotes();
    }, 250);
  });

  // ---------------------------------------------------------------- pending edits (diffs)
  function renderPending() {
    const pending = (state.note && state.editor && state.editor.pending) || [];
    const box = $('pending');
    box.hidden = pending.length === 0;
    $('pending-count').textContent = pending.length === 1 ? '1 pending edit' : `${pending.length} pending edits`;
    $('accept-all').hidden = pending.length < 2;
    $('reject-all').hidden = pending.length < 2;
    $('pending-list').replaceChildren(...pending.map(renderProposal));
  }

  function renderProposal(p) {
    const diff = el('div', { class: 'diff' });
    for (const h of p.hunks || []) {
      diff.append(el('div', { class: 'hunk', text: `@@ -${h.old_start},${h.old_lines} +${h.new_start},${h.new_lines} @@` }));
      for (const l of h.lines) {
        const cls = l.op === '+' ? 'add' : l.op === '-' ? 'del' : 'ctx';
        diff.append(el('div', { class: cls, text: `${l.op}${l.text}` }));
      }
    }
    return el('div', { class: 'proposal', dataset: { id: p.id } },
      el('div', { class: 'proposal-head' },
        el('span', { class: 'summary', title: p.summary, text: `#${p.id} ${p.tool}: ${String(p.summary || '').replace(/^proposed #\d+:\s*/, '')}` }),
        el('span', { class: 'proposal-actions' },
          el('button', { class: 'btn small primary accept', onclick: () => resolve('accept', [p.id]) }, 'Accept'),
          el('button', { class: 'btn small reject', onclick: () => resolve('reject', [p.id]) }, 'Reject'))),
      diff);
  }

  async function resolve(action, ids) {
    const data = await editorAction(action, ids ? { ids } : {});
    if (!data) return;
    const o = data.outcome;
    if (o && o.conflicts && o.conflicts.length) {
      showChatError({ code: 'conflict', message: `${o.conflicts.length} edit(s) could not be applied: the text they would change was edited since. Ask again to get a fresh edit.` });
    }
  }
  $('accept-all').addEventListener('click', () => resolve('accept', null));
  $('reject-all').addEventListener('click', () => resolve('reject', null));

  async function refreshEditorState() {
    if (!state.note) return;
    try {
      const data = await api('GET', `/editor/${encodeURIComponent(state.note.id)}`);
      state.editor = data.state;
      if (data.text !== state.text && body.value === state.text) {
        applyServerText(data);
      }
      renderPending();
      updateUndo();
    } catch (_) { /* shown elsewhere */ }
  }

  // ---------------------------------------------------------------- chat
  const messages = $('messages');
  const prompt = $('prompt');
  const chatEmpty = $('chat-empty');

  function nearBottom() {
    return messages.scrollHeight - messages.scrollTop - messages.clientHeight < 60;
  }
  // Follow the stream while the list is scrolled to the bottom; stop following when the
  // user scrolls up to read (and resume when they scroll back down).
  let follow = true;
  messages.addEventListener('scroll', () => { follow = nearBottom(); });
  function scrollDown(force) {
    if (force) follow = true;
    if (follow) messages.scrollTop = messages.scrollHeight;
  }

  async function switchConversation(key) {
    state.convKey = key;
    $('ai-scope').textContent = key === 'workspace' ? 'Workspace conversation' : `Note: ${state.note ? state.note.title : ''}`;
    $('ai-scope').title = $('ai-scope').textContent;
    hideChatError();
    messages.replaceChildren(chatEmpty);
    try {
      const data = await api('GET', `/conversations/${encodeURIComponent(key)}`);
      renderConversation(data.items || []);
    } catch (e) {
      showChatError(e);
    }
  }
  function renderConversation(items) {
    messages.replaceChildren();
    if (!items.length) { messages.append(chatEmpty); return; }
    for (const it of items) {
      if (it.role === 'user') messages.append(userMsg(it.text));
      else {
        const m = assistantMsg();
        for (const a of it.activity || []) addActivity(m, a.call_id, a.text, a.error ? 'failed' : 'done', a.error);
        for (const r of it.renders || []) m.renders.append(renderSpec(r));
        setMarkdown(m.bubble, it.text || '');
        if (it.error) m.node.append(el('div', { class: 'msg-error', text: errorText(it.error).title }));
        if (it.writes) addRevert(m, it.turn_id, it.writes);
        messages.append(m.node);
      }
    }
    scrollDown(true);
  }

  function userMsg(text) {
    return el('div', { class: 'msg user' }, el('div', { class: 'who', text: 'You' }), el('div', { class: 'bubble', text }));
  }
  function assistantMsg() {
    const activity = el('ul', { class: 'activity' });
    const renders = el('div', { class: 'renders' });
    const bubble = el('div', { class: 'bubble' });
    const actions = el('div', { class: 'msg-actions' });
    const node = el('div', { class: 'msg assistant' }, el('div', { class: 'who', text: 'AI' }), activity, renders, bubble, actions);
    return { node, activity, renders, bubble, actions, calls: new Map(), raw: '' };
  }
  function addActivity(m, callId, text, status, error) {
    const li = el('li', { class: status, dataset: { call: callId || '' } }, el('span', { class: 'mark' }), el('span', { class: 'text', text: text + (status === 'running' ? '…' : '') }));
    if (error) li.title = error;
    if (status === 'running') li.dataset.start = text;
    m.activity.append(li);
    if (callId) m.calls.set(callId, li);
    return li;
  }
  function addRevert(m, turnId, writes) {
    const b = el('button', { class: 'btn small revert', title: 'Undo every note change this turn made' }, `Revert this turn (${writes} change${writes === 1 ? '' : 's'})`);
    b.addEventListener('click', async () => {
      b.disabled = true;
      try {
        const r = await api('POST', `/turns/${encodeURIComponent(turnId)}/revert`);
        const parts = [`Reverted ${r.reverted.length} item(s).`];
        if (r.conflicts.length) parts.push(`${r.conflicts.length} changed since by someone else — left alone.`);
        toast(parts.join(' '), 6000);
        b.textContent = 'Reverted';
        await Promise.all([loadNotebooks(), loadNotes()]);
        if (state.note) await reloadOpenNote();
      } catch (e) { b.disabled = false; showChatError(e); }
    });
    m.actions.append(b);
  }

  async function reloadOpenNote() {
    if (!state.note) return;
    const data = await api('POST', `/editor/${encodeURIComponent(state.note.id)}/open`);
    if (data.text !== body.value) applyServerText(data);
  }

  // Minimal safe Markdown: paragraphs, code blocks, inline code, bold, italics, links (http(s),
  // mailto and internal :/id note links). Everything is text nodes; no HTML is parsed.
  function setMarkdown(target, src) {
    target.replaceChildren();
    const blocks = src.split(/\n{2,}/);
    for (const block of blocks) {
      if (/^```/.test(block)) {
        target.append(el('pre', {}, el('code', { text: block.replace(/^```[^\n]*\n?/, '').replace(/\n?```$/, '') })));
        continue;
      }
      const p = el('p');
      const lines = block.split('\n');
      lines.forEach((line, i) => { inline(p, line); if (i < lines.length - 1) p.append(el('br')); });
      target.append(p);
    }
  }
  function inline(target, text) {
    const re = /\[([^\]]+)\]\((:\/[0-9a-f]{32}|https?:\/\/[^\s)]+|mailto:[^\s)]+)\)|`([^`]+)`|\*\*([^*]+)\*\*|(:\/[0-9a-f]{32})/g;
    let last = 0, m;
    while ((m = re.exec(text))) {
      if (m.index > last) target.append(text.slice(last, m.index));
      if (m[1]) target.append(link(m[1], m[2]));
      else if (m[3]) target.append(el('code', { text: m[3] }));
      else if (m[4]) target.append(el('strong', { text: m[4] }));
      else if (m[5]) target.append(link(m[5], m[5]));
      last = re.lastIndex;
    }
    if (last < text.length) target.append(text.slice(last));
  }
  function link(label, href) {
    if (href.startsWith(':/')) {
      const id = href.slice(2);
      return el('a', { class: 'note-link', href: '#', dataset: { note: id }, onclick: (ev) => { ev.preventDefault(); openNote(id); } }, label);
    }
    return el('a', { href, target: '_blank', rel: 'noopener noreferrer' }, label);
  }

  // RenderSpec v1 drawn natively; anything unknown as collapsed JSON.
  function renderSpec(spec) {
    const wrap = el('div', { class: 'render' });
    try {
      wrap.append(node(spec, 0));
    } catch (_) {
      wrap.replaceChildren(jsonDetails(spec));
    }
    return wrap;
  }
  function img(src, cls, alt) {
    if (typeof src !== 'string' || !src.startsWith('data:image/')) return null;
    return el('img', { class: cls, src, alt: alt || '', loading: 'lazy' });
  }
  function node(n, depth) {
    if (!n || typeof n !== 'object' || depth > 8) throw new Error('bad node');
    switch (n.type) {
      case 'text': { const d = el('div', { class: 'r-text' }); setMarkdown(d, String(n.text || '')); return d; }
      case 'list': return el('div', { class: 'r-listwrap' },
        n.title ? el('div', { class: 'r-title', text: n.title }) : null,
        el('ul', { class: 'r-list' }, (n.items || []).map((it) => el('li', {},
          img(it.thumbnail, 'thumb', it.label),
          typeof it.checkbox === 'boolean' ? el('input', { type: 'checkbox', disabled: true, checked: it.checkbox }) : null,
          el('div', {}, el('div', { text: it.label }), it.description ? el('div', { class: 'r-desc', text: it.description }) : null),
          it.badge ? el('span', { class: 'badge', text: it.badge }) : null))));
      case 'table': return el('table', {},
        el('thead', {}, el('tr', {}, (n.columns || []).map((c) => el('th', { text: c })))),
        el('tbody', {}, (n.rows || []).map((r) => el('tr', {}, r.map((c) => el('td', { text: c == null ? '' : String(c) }))))));
      case 'keyValue': return el('div', {},
        n.title ? el('div', { class: 'r-title', text: n.title }) : null,
        el('table', {}, el('tbody', {}, (n.entries || []).map((e) => el('tr', {}, el('th', { text: e.key }), el('td', { text: e.value == null ? '' : String(e.value) }))))));
      case 'image': return el('figure', {}, img(n.src, 'r-image', n.alt), n.caption ? el('figcaption', { text: n.caption }) : null);
      case 'card': return el('div', { class: 'r-card' },
        el('div', { class: 'r-title', text: n.title }),
        n.subtitle ? el('div', { class: 'r-desc', text: n.subtitle }) : null,
        img(n.image, 'r-image', n.title),
        n.text ? (() => { const d = el('div'); setMarkdown(d, n.text); return d; })() : null,
        (n.children || []).map((c) => node(c, depth + 1)));
      case 'stack': return el('div', { class: `r-stack ${n.direction === 'horizontal' ? 'horizontal' : 'vertical'}` },
        (n.children || []).map((c) => node(c, depth + 1)));
      default: throw new Error('unknown type');
    }
  }
  function jsonDetails(v) {
    return el('details', { class: 'json-details' }, el('summary', {}, 'Result (JSON)'), el('pre', { text: JSON.stringify(v, null, 2) }));
  }

  // What to tell the user for each failure.
  function errorText(err) {
    const code = err.code || '';
    const msg = err.message || String(err);
    if (code === 'cancelled') return { title: 'Stopped.', hint: 'The turn was cancelled; no pending edit was applied.' };
    if (code === 'max_steps_exceeded') return { title: 'The AI gave up after too many steps.', hint: 'Try a narrower request, or open the note you mean first.' };
    if (code === 'not_configured') return { title: 'No AI provider is set up.', hint: `${msg} Open Settings (⚙) → AI provider, fill in the base URL and model, then press Test.` };
    if (code === 'remote_blocked' || /allowRemote|remote/i.test(msg) && /refus|block|not allowed/i.test(msg)) return { title: 'The provider is on another machine and remote AI is off.', hint: `${msg} To send notes there, tick “Allow remote providers” in Settings; otherwise use a local model.` };
    if (code === 'provider_error') return { title: 'The AI provider could not be used.', hint: `${msg} Check that the model server is running and the base URL in Settings is right (Settings → Test).` };
    if (code === 'conflict') return { title: 'Edit not applied.', hint: msg };
    if (code === 'busy') return { title: 'A turn is already running for this conversation.', hint: 'Wait for it to finish or press Stop.' };
    return { title: 'Something went wrong.', hint: msg };
  }
  function showChatError(err) {
    const t = errorText(err);
    const box = $('chat-error');
    box.replaceChildren(el('strong', { text: t.title }), el('span', { text: t.hint }));
    box.hidden = false;
  }
  function hideChatError() { $('chat-error').hidden = true; }

  function updateContextInfo() {
    let s;
    if (!state.note) s = 'Context: whole workspace';
    else {
      const sel = selectionUtf16();
      s = sel ? `Context: “${state.note.title}”, ${sel.end - sel.start} characters selected` : `Context: “${state.note.title}”`;
    }
    $('context-info').textContent = s;
    $('sel-info').textContent = state.note && selectionUtf16() ? `${body.selectionEnd - body.selectionStart} characters selected — the AI edits the selection` : '';
  }

  function setRunning(running) {
    $('send').disabled = running;
    $('stop').hidden = !running;
    $('send').hidden = running;
  }

  async function send() {
    const text = prompt.value.trim();
    if (!text || state.turn) return;
    hideChatError();
    await flushEdit();
    const payload = { message: text, conversation: state.convKey };
    if (state.note) {
      payload.note_id = state.note.id;
      payload.selection = selectionUtf16();
      payload.cursor = body.selectionEnd;
    }
    prompt.value = '';
    if (chatEmpty.parentNode) chatEmpty.remove();
    messages.append(userMsg(text));
    const m = assistantMsg();
    m.bubble.classList.add('streaming');
    messages.append(m.node);
    scrollDown(true);
    const controller = new AbortController();
    state.turn = { id: null, controller, m };
    setRunning(true);
    let finished = false;
    try {
      const res = await fetch('/api/chat', {
        method: 'POST', credentials: 'same-origin', signal: controller.signal,
        headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' },
        body: JSON.stringify(payload),
      });
      if (!res.ok) {
        let data = null;
        try { data = await res.json(); } catch (_) { /* not json */ }
        throw Object.assign(new ApiError(res.status, data), { code: data && data.code });
      }
      const reader = res.body.getReader();
      const dec = new TextDecoder();
      let buf = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += dec.decode(value, { stream: true });
        let i;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const raw = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const data = raw.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).replace(/^ /, '')).join('\n');
          if (!data) continue;
          let ev;
          try { ev = JSON.parse(data); } catch (_) { continue; }
          if (onEvent(ev, m)) finished = true;
        }
      }
    } catch (e) {
      if (e.name !== 'AbortError') {
        showChatError(e);
        m.node.append(el('div', { class: 'msg-error', text: errorText(e).title }));
      }
    } finally {
      m.bubble.classList.remove('streaming');
      m.node.dataset.done = '1';
      for (const li of m.calls.values()) if (li.classList.contains('running')) { li.className = 'failed'; }
      if (!finished && !m.raw && !m.node.querySelector('.msg-error')) m.node.append(el('div', { class: 'msg-error', text: 'The reply stopped before it finished.' }));
      state.turn = null;
      setRunning(false);
      scrollDown(false);
      prompt.focus();
    }
  }

  // Returns true when the turn is over.
  function onEvent(ev, m) {
    switch (ev.type) {
      case 'started':
        if (state.turn) state.turn.id = ev.turn_id;
        m.turnId = ev.turn_id;
        break;
      case 'text_delta':
        m.raw += ev.text;
        setMarkdown(m.bubble, m.raw);
        scrollDown(false);
        break;
      case 'tool_start':
        addActivity(m, ev.call_id, ev.activity, 'running');
        scrollDown(false);
        break;
      case 'tool_end': {
        const li = m.calls.get(ev.call_id) || addActivity(m, ev.call_id, ev.activity, 'running');
        li.className = ev.error ? 'failed' : 'done';
        li.querySelector('.text').textContent = ev.error ? `${ev.activity} — ${ev.error}` : ev.activity;
        if (ev.render) m.renders.append(renderSpec(ev.render));
        if (ev.tool && /^(create|update|delete|manage|move)_/.test(ev.tool) && !ev.error) m.wrote = true;
        scrollDown(false);
        break;
      }
      case 'edit_proposed':
        if (state.note && ev.proposal) refreshEditorState();
        break;
      case 'finished':
        m.raw = ev.reply || m.raw;
        setMarkdown(m.bubble, m.raw);
        break;
      case 'failed': {
        const t = errorText(ev.error || {});
        m.node.append(el('div', { class: 'msg-error', text: t.title }));
        if (!(ev.error && ev.error.code === 'cancelled')) showChatError(ev.error || {});
        break;
      }
      case 'saved':
        // the server stored the turn in the conversation; tells what it wrote
        if (ev.writes) {
          addRevert(m, ev.turn_id, ev.writes);
          loadNotebooks().catch(() => {});
          loadNotes().catch(() => {});
          if (state.note) reloadOpenNote().catch(() => {});
        }
        if (state.note) refreshEditorState();
        return true;
      case 'error':
        showChatError(ev);
        m.node.append(el('div', { class: 'msg-error', text: errorText(ev).title }));
        return true;
      default:
        break;
    }
    return false;
  }

  async function stop() {
    const t = state.turn;
    if (!t) return;
    $('stop').disabled = true;
    try {
      if (t.id) await api('POST', `/chat/${encodeURIComponent(t.id)}/stop`);
      else t.controller.abort();
    } catch (_) {
      t.controller.abort();
    } finally {
      $('stop').disabled = false;
    }
  }

  $('composer').addEventListener('submit', (ev) => { ev.preventDefault(); send(); });
  prompt.addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter' && !ev.shiftKey && !ev.isComposing) { ev.preventDefault(); send(); }
    if (ev.key === 'Escape' && state.turn) { ev.preventDefault(); stop(); }
  });
  $('stop').addEventListener('click', stop);
  $('reset-chat').addEventListener('click', async () => {
    if (state.turn) return;
    try {
      await api('DELETE', `/conversations/${encodeURIComponent(state.convKey)}`);
      renderConversation([]);
      hideChatError();
    } catch (e) { showChatError(e); }
  });

  // ---------------------------------------------------------------- settings
  const dlg = $('settings');
  $('open-settings').addEventListener('click', async () => {
    dlg.showModal();
    await loadSettings();
  });

  async function loadSettings() {
    delete dlg.dataset.loaded;
    $('s-status').textContent = '';
    $('s-test-out').hidden = true;
    try {
      const [s, tools, plugins, turns] = await Promise.all([
        api('GET', '/settings'), api('GET', '/tools'), api('GET', '/plugins'), api('GET', '/turns'),
      ]);
      $('s-type').value = s.provider_type || 'openai-compatible';
      $('s-base').value = s.base_url || '';
      $('s-model').value = s.model || '';
      $('s-key').value = '';
      $('s-key').placeholder = s.api_key_set ? '•••••••• (set — type to replace, leave empty to keep)' : '(not set)';
      $('s-remote').checked = !!s.allow_remote;
      $('mcp-url').textContent = s.mcp_url;
      $('mcp-token').value = s.mcp_token;
      $('mcp-token').type = 'password';
      renderTools(tools);
      renderPlugins(plugins);
      renderTurns(turns);
    } catch (e) {
      $('s-status').textContent = e.message;
    } finally {
      dlg.dataset.loaded = '1';
    }
  }

  $('show-token').addEventListener('click', () => {
    const t = $('mcp-token');
    t.type = t.type === 'password' ? 'text' : 'password';
    $('show-token').textContent = t.type === 'password' ? 'Show' : 'Hide';
  });
  $('copy-token').addEventListener('click', async () => {
    try { await navigator.clipboard.writeText($('mcp-token').value); toast('Token copied.'); } catch (_) { toast('Copy failed: select the token and copy it by hand.'); }
  });

  $('provider-form').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    await saveProvider();
  });
  async function saveProvider() {
    const payload = {
      provider_type: $('s-type').value,
      base_url: $('s-base').value.trim(),
      model: $('s-model').value.trim(),
      allow_remote: $('s-remote').checked,
    };
    const key = $('s-key').value;
    if (key) payload.api_key = key;
    try {
      await api('PUT', '/settings', payload);
      $('s-status').textContent = 'Saved.';
      $('s-key').value = '';
      return true;
    } catch (e) {
      $('s-status').textContent = e.message;
      return false;
    }
  }
  $('s-test').addEventListener('click', async () => {
    if (!(await saveProvider())) return;
    const out = $('s-test-out');
    out.hidden = false;
    out.classList.remove('bad');
    out.textContent = 'Testing… (a one-word reply, then a tool call)';
    try {
      const r = await api('POST', '/settings/test');
      out.textContent = `${r.verdict}\nPlain reply: ${r.hello_ok ? 'ok' : 'unexpected'} (${JSON.stringify((r.hello_reply || '').trim())})\nTokens: ${r.usage.input_tokens} in, ${r.usage.output_tokens} out`;
      if (r.tools && r.tools.status === 'none') out.classList.add('bad');
    } catch (e) {
      out.classList.add('bad');
      const t = errorText(e);
      out.textContent = `${t.title}\n${t.hint}`;
    }
  });

  function renderTools(tools) {
    $('tools-body').replaceChildren(...tools.map((t) => el('tr', {},
      el('td', {}, el('div', { class: 'mono', text: t.id }), el('div', { class: 'desc', text: `${t.access}${t.plugin ? ' · plugin ' + t.plugin : ''}` })),
      el('td', {}, toggle(t.id, 'ai', t.ai_enabled)),
      el('td', {}, toggle(t.id, 'mcp', t.mcp_enabled)))));
  }
  function toggle(id, surface, on) {
    const cb = el('input', { type: 'checkbox', checked: on, 'aria-label': `${id} on ${surface}` });
    cb.addEventListener('change', async () => {
      try { await api('PUT', `/tools/${encodeURIComponent(id)}`, { surface, enabled: cb.checked }); }
      catch (e) { cb.checked = !cb.checked; toast(e.message, 5000); }
    });
    return cb;
  }
  function renderPlugins(list) {
    const ul = $('plugins');
    if (!list.length) { ul.replaceChildren(el('li', { class: 'hint', text: 'No plugins installed. Install one with `sidenote plugin install DIR`.' })); return; }
    ul.replaceChildren(...list.map((p) => {
      const b = el('button', { class: 'btn small' }, p.enabled ? 'Disable' : 'Enable');
      b.addEventListener('click', async () => {
        b.disabled = true;
        try { renderPlugins(await api('POST', `/plugins/${encodeURIComponent(p.id)}/${p.enabled ? 'disable' : 'enable'}`)); renderTools(await api('GET', '/tools')); }
        catch (e) { b.disabled = false; toast(e.message, 6000); }
      });
      return el('li', {},
        el('div', {}, el('div', {}, el('strong', { text: p.name }), ` ${p.version}`),
          el('div', { class: 'hint', text: p.error ? `Error: ${p.error}` : p.disabled_reason ? `Disabled: ${p.disabled_reason}` : (p.tools || []).join(', ') || p.description })),
        b);
    }));
  }
  function renderTurns(turns) {
    const ul = $('turns');
    if (!turns.length) { ul.replaceChildren(el('li', { class: 'hint', text: 'No AI turn has changed a note yet.' })); return; }
    ul.replaceChildren(...turns.map((t) => {
      const b = el('button', { class: 'btn small' }, 'Revert');
      b.addEventListener('click', async () => {
        b.disabled = true;
        try {
          const r = await api('POST', `/turns/${encodeURIComponent(t.turn_id)}/revert`);
          toast(`Reverted ${r.reverted.length} item(s)${r.conflicts.length ? `; ${r.conflicts.length} conflict(s) left alone` : ''}.`, 5000);
          renderTurns(await api('GET', '/turns'));
          await Promise.all([loadNotebooks(), loadNotes()]);
          if (state.note) await reloadOpenNote();
        } catch (e) { b.disabled = false; toast(e.message, 6000); }
      });
      const what = t.writes.map((w) => `${w.kind} ${w.title || w.item_id}`).join(', ');
      return el('li', {}, el('div', {}, el('div', { text: new Date(t.last_time).toLocaleString() }), el('div', { class: 'hint', text: what })), b);
    }));
  }

  // ---------------------------------------------------------------- narrow layout
  $('toggle-nav').addEventListener('click', () => { document.body.classList.toggle('show-nav'); document.body.classList.remove('show-ai'); });
  $('toggle-ai').addEventListener('click', () => { document.body.classList.toggle('show-ai'); document.body.classList.remove('show-nav'); });

  window.addEventListener('beforeunload', () => { if (state.note && body.value !== state.text) flushEdit(); });

  // ---------------------------------------------------------------- start
  (async () => {
    try {
      await loadNotebooks();
      await loadNotes();
      await switchConversation('workspace');
      updateContextInfo();
      document.body.dataset.ready = '1';
    } catch (e) {
      showChatError(e);
    }
  })();
})();
