// The plugin prelude: evaluated before the plugin's script, it receives the host's native
// functions in `host` and keeps them in this closure only. What the plugin sees is a frozen
// `joplin` object, `console`, `setTimeout` and `clearTimeout`, all non-writable and
// non-configurable globals.
(function (host, info) {
  'use strict';
  const freeze = Object.freeze;
  const define = (name, value) =>
    Object.defineProperty(globalThis, name, { value, writable: false, enumerable: false, configurable: false });

  function deepFreeze(o) {
    for (const k of Object.getOwnPropertyNames(o)) {
      const v = o[k];
      if (v && (typeof v === 'object' || typeof v === 'function') && !Object.isFrozen(v)) deepFreeze(v);
    }
    return freeze(o);
  }

  function fmt(args) {
    return args
      .map((a) => {
        if (typeof a === 'string') return a;
        if (a instanceof Error) return `${a.name}: ${a.message}`;
        try {
          const s = JSON.stringify(a);
          return s === undefined ? String(a) : s;
        } catch (_e) {
          return String(a);
        }
      })
      .join(' ');
  }

  function toJson(what, v) {
    let s;
    try {
      s = JSON.stringify(v === undefined ? {} : v);
    } catch (e) {
      throw new TypeError(`${what} must be JSON-serialisable: ${e.message}`);
    }
    return s;
  }

  function wrapResponse(r) {
    const body = r.bodyBase64;
    return freeze({
      ok: r.ok,
      status: r.status,
      url: r.url,
      contentType: r.contentType,
      size: r.size,
      base64: () => Promise.resolve(body),
      text: () => Promise.resolve(host.utf8(body)),
      json: () => Promise.resolve(host.utf8(body)).then((t) => JSON.parse(t)),
      dataUrl: () => Promise.resolve(`data:${(r.contentType || 'application/octet-stream').split(';')[0]};base64,${body}`),
    });
  }

  const tools = {
    register(spec) {
      if (spec === null || typeof spec !== 'object') {
        throw new TypeError('joplin.ai.tools.register expects an object { id, description, inputSchema, handler, render? }');
      }
      const { id, description, inputSchema, handler, render } = spec;
      if (typeof id !== 'string' || id === '') throw new TypeError('tool id must be a non-empty string');
      if (typeof description !== 'string' || description.trim() === '') {
        throw new TypeError(`tool '${id}': description must be a non-empty string`);
      }
      if (inputSchema === null || typeof inputSchema !== 'object' || Array.isArray(inputSchema)) {
        throw new TypeError(`tool '${id}': inputSchema must be a JSON Schema object`);
      }
      if (typeof handler !== 'function') throw new TypeError(`tool '${id}': handler must be a function`);
      if (render !== undefined && typeof render !== 'function') {
        throw new TypeError(`tool '${id}': render must be a function when given`);
      }
      host.register(id, description, toJson(`tool '${id}': inputSchema`, inputSchema), handler, render);
    },
  };

  const net = {
    fetch(url, options) {
      return host.op('fetch', toJson('fetch options', { url: String(url), options: options || {} })).then(wrapResponse);
    },
  };

  const data = {
    searchNotes(query, options) {
      const args = { query: String(query) };
      if (options && options.limit !== undefined) args.limit = options.limit;
      return host.op('data', toJson('arguments', { tool: 'search_notes', args }));
    },
    readNote(id, options) {
      return host.op('data', toJson('arguments', { tool: 'read_note', args: Object.assign({}, options || {}, { id: String(id) }) }));
    },
    createNote(props) {
      return host.op('data', toJson('arguments', { tool: 'create_note', args: props || {} }));
    },
    updateNote(id, props) {
      return host.op('data', toJson('arguments', { tool: 'update_note', args: Object.assign({}, props || {}, { id: String(id) }) }));
    },
  };

  const settings = {
    value(key) {
      return Promise.resolve(host.setting(String(key)));
    },
  };

  const joplin = deepFreeze({
    plugin: { id: info.id, name: info.name, version: info.version },
    ai: { tools },
    net,
    data,
    settings,
  });
  define('joplin', joplin);

  const log = (level) => (...args) => host.log(level, fmt(args));
  define('console', deepFreeze({ log: log('info'), info: log('info'), debug: log('debug'), warn: log('warn'), error: log('error') }));
  define('setTimeout', function setTimeout(fn, ms, ...args) {
    if (typeof fn !== 'function') throw new TypeError('setTimeout expects a function');
    return host.setTimeout(args.length ? () => fn(...args) : fn, Number(ms) || 0);
  });
  define('clearTimeout', function clearTimeout(id) {
    host.clearTimeout(Number(id) || 0);
  });
})
