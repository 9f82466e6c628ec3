// The admin page (`/admin`): with an admin token kept for this browser session only
// (sessionStorage: gone when the tab closes), the rating audit (with a what-if), a rating
// explained step by step, the flags, the queue statistics, and a projection's status or rebuild
// followed to its end.

import { catalogue, path, token } from './api.js';
import { checkbox, field, h, select } from './dom.js';
import { t } from './texts.js';
import { frame, showError } from './view.js';

/** The projections the API can rebuild. */
const PROJECTIONS = ['ratings', 'history', 'leaderboards', 'queue'];
/** How often a rebuild's progress is asked for, in milliseconds. */
const PROGRESS_POLL = 1000;

/** Any JSON value as nested tables, lists and definition lists. */
function display(value) {
  if (Array.isArray(value)) {
    if (value.length && value.every((v) => v && typeof v === 'object' && !Array.isArray(v))) {
      const keys = [...new Set(value.flatMap(Object.keys))];
      return h('table', {}, h('thead', {}, h('tr', {}, keys.map((k) => h('th', { text: k })))),
        h('tbody', {}, value.map((row) => h('tr', {}, keys.map((k) => h('td', {}, display(row[k])))))));
    }
    return h('ul', {}, value.map((v) => h('li', {}, display(v))));
  }
  if (value && typeof value === 'object') {
    return h('dl', {}, Object.entries(value).flatMap(([k, v]) => [h('dt', { text: k }), h('dd', {}, display(v))]));
  }
  // A replay's address (an engine-assistance flag's evidence) is a link to it.
  if (typeof value === 'string' && /^\/matches\/[0-9a-f-]{36}$/.test(value)) return h('a', { href: value, text: value });
  return document.createTextNode(value === null ? '—' : typeof value === 'number' ? String(Math.round(value * 1000) / 1000) : String(value));
}

export async function show(view) {
  frame(t('nav.admin'));
  const c = await view.load(catalogue);
  if (view.left) return;
  const adminToken = () => sessionStorage.getItem('discs.admin_token') || token();
  const call = (method, url, opts = {}) => view.call(method, url, undefined, { auth: adminToken(), ...opts });
  const section = (id, title, controls, run) => {
    const result = h('div', { id: `${id}-result`, class: 'out' });
    const form = h('form', {}, ...controls, h('button', { type: 'submit' }, t('admin.run')));
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      result.replaceChildren(t('loading'));
      try {
        result.replaceChildren(...[].concat(await run(form.elements, result)));
      } catch (err) {
        showError(err, result);
      }
    });
    return h('section', { id }, h('h2', { text: title }), form, result);
  };
  const games = c ? c.games.map((g) => [g.id, g.name]) : [];
  const tokenForm = h('form', { id: 'admin-token' },
    field(t('admin.token'), h('input', { name: 'token', type: 'password', value: sessionStorage.getItem('discs.admin_token') || '' })),
    h('button', { type: 'submit' }, t('admin.save')));
  tokenForm.addEventListener('submit', (e) => {
    e.preventDefault();
    const v = tokenForm.elements.token.value.trim();
    if (v) sessionStorage.setItem('discs.admin_token', v);
    else sessionStorage.removeItem('discs.admin_token');
  });
  document.getElementById('main').append(
    tokenForm,
    section('audit', t('admin.audit'), [field(t('admin.exclude'), h('input', { name: 'exclude' }))], async (f) => {
      const q = f.exclude.value.trim() ? `?exclude_players=${encodeURIComponent(f.exclude.value.trim())}` : '';
      return display(await call('GET', `/v1/admin/audits/ratings${q}`));
    }),
    section('explain', t('admin.explain'), [field(t('admin.playerId'), h('input', { name: 'player', required: true })),
      field(t('play.game'), select('game', games, games[0]?.[0]))],
    async (f) => display(await call('GET', path`/v1/admin/players/${f.player.value.trim()}/ratings/${f.game.value}/explain`))),
    section('flags', t('admin.flags'), [], async () => display(await call('GET', '/v1/admin/flags'))),
    section('queue-stats', t('admin.queueStats'), [], async () => display(await call('GET', '/v1/admin/queue/stats'))),
    section('projections', t('admin.projections'), [field(t('admin.projections'), select('name', PROJECTIONS.map((n) => [n, n]), PROJECTIONS[0])),
      checkbox('rebuild', t('admin.rebuild'), false)], async (f, result) => {
      const name = f.name.value;
      if (!f.rebuild.checked) return display(await call('GET', path`/v1/admin/projections/${name}`));
      const started = await call('POST', path`/v1/admin/projections/${name}/rebuild`, { key: true, notice: result });
      for (;;) {
        const s = await call('GET', path`/v1/admin/projections/${name}`);
        const r = s.rebuild && s.rebuild.rebuild_id === started.rebuild_id ? s.rebuild : null;
        const done = r && r.status !== 'running';
        result.replaceChildren(h('p', { id: 'rebuild-progress' }, t('admin.progress', { p: `${r ? r.events : 0} / ${s.log_position}` }), ' ',
          h('progress', { max: Math.max(s.log_position, 1), value: done ? s.log_position : (r ? r.events : 0) })), display(s));
        if (done) return [...result.childNodes];
        await view.sleep(PROGRESS_POLL);
      }
    }));
}
