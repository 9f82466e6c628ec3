// The admin page (`/admin`): with an admin token kept for this browser session only
// (sessionStorage: gone when the tab closes), players found by name (never an id typed by
// hand) with their standing, a rating explained, the ratings without them (the what-if) and a
// decision (cleared, or banned with a reason); the rating audit; the tournaments' standings
// recounted from the log; the flags, an engine-assistance
// flag reviewed where the admin works (the name, the score, the games, the critical positions
// with the move played and the best ones); the queue statistics; and a projection's status or
// rebuild followed to its end.

import { catalogue, path, token } from './api.js';
import { checkbox, field, h, select } from './dom.js';
import { t } from './texts.js';
import { frame, showError } from './view.js';

/** The projections the API can rebuild. */
const PROJECTIONS = ['ratings', 'history', 'leaderboards', 'queue', 'explorer', 'tournaments'];
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
  const call = (method, url, body, opts = {}) => view.call(method, url, body, { auth: adminToken(), ...opts });
  const section = (id, title, controls, run) => {
    const result = h('div', { id: `${id}-result`, class: 'out' });
    const form = h('form', {}, ...controls, h('button', { type: 'submit' }, t('admin.run')));
    const go = async () => {
      result.replaceChildren(t('loading'));
      try {
        result.replaceChildren(...[].concat(await run(form.elements, result)));
      } catch (err) {
        showError(err, result);
      }
    };
    form.addEventListener('submit', (e) => { e.preventDefault(); go(); });
    return Object.assign(h('section', { id }, h('h2', { text: title }), form, result), { go, result });
  };
  const games = c ? c.games.map((g) => [g.id, g.name]) : [];
  const gameName = (id) => (games.find(([g]) => g === id) || [id, id])[1];
  const tokenForm = h('form', { id: 'admin-token' },
    field(t('admin.token'), h('input', { name: 'token', type: 'password', value: sessionStorage.getItem('discs.admin_token') || '' })),
    h('button', { type: 'submit' }, t('admin.save')));
  tokenForm.addEventListener('submit', (e) => {
    e.preventDefault();
    const v = tokenForm.elements.token.value.trim();
    if (v) sessionStorage.setItem('discs.admin_token', v);
    else sessionStorage.removeItem('discs.admin_token');
  });

  // The players the audit leaves out (the what-if), by name.
  let excluded = [];
  const audit = section('audit', t('admin.audit'), [], async () => {
    const q = excluded.length ? `?exclude_players=${encodeURIComponent(excluded.map((p) => p.id).join(','))}` : '';
    const out = await call('GET', `/v1/admin/audits/ratings${q}`);
    return [excluded.length ? h('p', { id: 'audit-excluded', text: t('admin.excluded', { names: excluded.map((p) => p.name).join(', ') }) }) : '', display(out)];
  });
  const whatIf = (id, name) => { excluded = [{ id, name }]; audit.go(); audit.scrollIntoView({ block: 'nearest' }); };
  const explain = h('section', { id: 'explain' }, h('h2', { text: t('admin.explain') }),
    h('div', { id: 'explain-result', class: 'out' }, h('p', { class: 'hint', text: t('admin.explainHint') })));
  const explainFor = async (id, game) => {
    const out = explain.querySelector('#explain-result');
    out.replaceChildren(t('loading'));
    try {
      out.replaceChildren(display(await call('GET', path`/v1/admin/players/${id}/ratings/${game}/explain`)));
    } catch (err) {
      showError(err, out);
    }
  };
  // A decision on a player, with its reason; `done` gets the answer.
  const decide = async (id, decision, reason, where, done) => {
    try {
      done(await call('POST', path`/v1/admin/players/${id}/decisions`, { decision, reason }, { key: true, notice: where }));
    } catch (err) {
      showError(err, where);
    }
  };
  // The actions on one player: explain per game, the what-if, clear, ban with a reason.
  const actions = (id, name, standing) => {
    const state = h('span', { class: 'standing', 'data-banned': String(standing.banned), text: standing.banned ? t('admin.banned') : '' });
    const reason = h('input', { name: 'reason', placeholder: t('admin.reason') });
    const out = h('span', { class: 'decided' });
    const after = (d) => {
      state.dataset.banned = String(d.banned);
      state.textContent = d.banned ? t('admin.banned') : '';
      out.textContent = t('admin.decided', { decision: t(`admin.decision.${d.decision}`), reason: d.reason || '—' });
    };
    return h('div', { class: 'actions' }, state,
      games.map(([g, gname]) => h('button', { type: 'button', 'data-explain': g, onclick: () => explainFor(id, g) }, t('admin.explainIn', { game: gname }))),
      h('button', { type: 'button', 'data-what-if': id, onclick: () => whatIf(id, name) }, t('admin.whatIf')),
      h('button', { type: 'button', 'data-decision': 'cleared', onclick: () => decide(id, 'cleared', reason.value, out, after) }, t('admin.clear')),
      reason,
      h('button', { type: 'button', 'data-decision': 'banned', onclick: () => decide(id, 'banned', reason.value, out, after) }, t('admin.ban')),
      out);
  };
  const players = section('players', t('admin.findPlayer'), [field(t('admin.name'), h('input', { name: 'name', required: true, maxlength: c?.limits.player_name_max }))], async (f) => {
    const found = await call('GET', `/v1/admin/players?name=${encodeURIComponent(f.name.value)}`);
    if (!found.players.length) return h('p', { text: t('admin.noPlayer') });
    return h('ul', {}, found.players.map((p) => h('li', { 'data-player': p.player_id },
      h('a', { href: `/players/${p.player_id}`, text: p.name }), ' ', actions(p.player_id, p.name, p))));
  });

  // An engine-assistance flag as an admin reviews it; the other flags as they come.
  const review = (f) => h('article', { class: 'review', 'data-flag': f.player },
    h('h3', {}, h('a', { href: `/players/${f.player}`, text: f.name }), ` · ${gameName(f.game)}`),
    h('p', { class: 'evidence', text: t('admin.evidence', { z: round(f.z), o: f.optimal, c: f.critical, share: pct(f.optimal_share), expected: pct(f.expected_share) }) }),
    f.decision ? h('p', { class: 'decision', text: t('admin.decided', { decision: t(`admin.decision.${f.decision.decision}`), reason: f.decision.reason || '—' }) }) : '',
    h('p', {}, `${t('admin.games')}: `, f.matches.map((m) => [h('a', { href: `/matches/${m}`, class: f.suspect_matches.includes(m) ? 'suspect' : '', text: m.slice(0, 8) }), ' '])),
    h('table', { class: 'positions' },
      h('thead', {}, h('tr', {}, [t('admin.game'), t('admin.ply'), t('admin.played'), t('admin.best')].map((k) => h('th', { text: k })))),
      h('tbody', {}, f.positions.map((p) => h('tr', { class: p.optimal ? 'optimal' : '' },
        h('td', {}, h('a', { href: `/matches/${p.match_id}?ply=${p.ply - 1}`, text: p.match_id.slice(0, 8) })),
        h('td', { text: p.ply }), h('td', { text: p.move }), h('td', { text: p.best_moves.join(', ') }))))),
    actions(f.player, f.name, { banned: f.decision?.decision === 'banned' }));
  const flags = section('flags', t('admin.flags'), [], async () => {
    const out = await call('GET', '/v1/admin/flags');
    const engine = out.flags.filter((f) => f.kind === 'engine_assistance');
    const others = out.flags.filter((f) => f.kind !== 'engine_assistance');
    if (!out.flags.length) return h('p', { text: t('admin.noFlags') });
    return [...engine.map(review), others.length ? display(others) : ''];
  });
  document.getElementById('main').append(
    tokenForm, players, explain, audit,
    section('tournament-audit', t('admin.tournamentAudit'), [], async () => display(await call('GET', '/v1/admin/audits/tournaments'))),
    flags,
    section('queue-stats', t('admin.queueStats'), [], async () => display(await call('GET', '/v1/admin/queue/stats'))),
    section('projections', t('admin.projections'), [field(t('admin.projections'), select('name', PROJECTIONS.map((n) => [n, n]), PROJECTIONS[0])),
      checkbox('rebuild', t('admin.rebuild'), false)], async (f, result) => {
      const name = f.name.value;
      if (!f.rebuild.checked) return display(await call('GET', path`/v1/admin/projections/${name}`));
      const started = await call('POST', path`/v1/admin/projections/${name}/rebuild`, undefined, { key: true, notice: result });
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

const round = (x) => Math.round(x * 100) / 100;
const pct = (x) => `${Math.round(x * 1000) / 10}%`;
