// The tournaments page (`/tournaments`): the public tournaments upcoming, running and finished;
// a form to create one (an admin a public one, any player a private one, whose invite code it
// shows), bounded by the catalogue's `limits.tournament` and offering its turn limits; and
// joining a private one by its code.

import { adminToken, catalogue, path } from './api.js';
import { checkbox, field, h, select } from './dom.js';
import { lang, t } from './texts.js';
import { frame, loadingNote, navigate, needsName } from './view.js';

/** The lists, as `GET /v1/tournaments?status=` names them. */
const LISTS = ['upcoming', 'running', 'finished'];
/** The formats, as the API names them. */
export const FORMATS = ['arena', 'swiss', 'round_robin'];
/** A new tournament starts this long from now unless its creator says otherwise (players may
 * join from an hour before the start, so at once). */
const DEFAULT_START_MINUTES = 30;
/** The proposed start is rounded up to a whole step of this many minutes. */
const DEFAULT_START_STEP = 5;
/** What the form proposes for an arena's length and a Swiss tournament's rounds, brought within
 * the catalogue's bounds. */
const DEFAULT_ARENA_MINUTES = 30;
const DEFAULT_SWISS_ROUNDS = 5;

/** `n` brought within `{min, max}`. */
const within = (n, { min, max }) => Math.min(Math.max(n, min), max);

/** `date` as a `datetime-local` input's value (local time, to the minute). */
function localInput(date) {
  const p = (n) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${p(date.getMonth() + 1)}-${p(date.getDate())}T${p(date.getHours())}:${p(date.getMinutes())}`;
}

/** A tournament's start, in the page's language. */
export const when = (at) => new Date(at).toLocaleString(lang, { dateStyle: 'medium', timeStyle: 'short' });

export async function show(view) {
  frame(t('nav.tournaments'));
  if (needsName()) return;
  const c = await view.load(catalogue);
  if (!c || view.left) return;
  const sections = LISTS.map((status) => {
    const holder = h('div', { class: 'out' }, loadingNote());
    return { status, holder, section: h('section', { id: `tournaments-${status}` }, h('h2', { text: t(`tournaments.${status}`) }), holder) };
  });
  document.getElementById('main').append(...sections.map((s) => s.section), createForm(view, c), joinByCode(view));
  await Promise.all(sections.map(({ status, holder }) => view.load(async () => {
    const found = await view.call('GET', `/v1/tournaments?status=${status}`);
    holder.replaceChildren(found.tournaments.length ? listing(c, found.tournaments) : h('p', { text: t('tournaments.none') }));
  }, holder)));
}

/** A table of listed tournaments, each name a link to its page. */
function listing(c, tournaments) {
  return h('table', {},
    h('thead', {}, h('tr', {}, [t('tournament.name'), t('play.game'), t('tournament.format'), t('tournament.startsAt'), t('tournament.status'), t('tournament.players')]
      .map((col) => h('th', { scope: 'col', text: col })))),
    h('tbody', {}, tournaments.map((x) => h('tr', { 'data-tournament': x.tournament_id, 'data-status': x.status },
      h('td', {}, h('a', { href: `/tournaments/${x.tournament_id}` }, x.name)),
      h('td', { text: c.name(x.game) }),
      h('td', { text: t(`tournament.format.${x.format}`) }),
      h('td', { text: when(x.starts_at) }),
      h('td', { text: t(`tournament.status.${x.status}`) }),
      h('td', { text: x.players })))));
}

/** The form that creates a tournament: its length follows the format (an arena's minutes, a
 * Swiss tournament's rounds, neither for a round robin); only an admin may make it public. Every
 * bound and the turn limits are the catalogue's (`c.limits`). */
function createForm(view, c) {
  const admin = adminToken();
  const bounds = c.limits.tournament;
  const { arena_minutes: minutes, swiss_rounds: rounds } = bounds;
  const turnLimits = [...c.limits.turn_seconds, null];
  const format = select('format', FORMATS.map((f) => [f, t(`tournament.format.${f}`)]), 'arena');
  const length = h('div', { class: 'slot' });
  const fill = () => {
    length.replaceChildren(...{
      arena: [field(t('tournament.minutes'), h('input', { name: 'minutes', type: 'number', min: minutes.min, max: minutes.max, value: within(DEFAULT_ARENA_MINUTES, minutes), required: true }))],
      swiss: [field(t('tournament.rounds'), h('input', { name: 'rounds', type: 'number', min: rounds.min, max: rounds.max, value: within(DEFAULT_SWISS_ROUNDS, rounds), required: true }))],
      round_robin: [],
    }[format.value]);
  };
  const start = new Date(Date.now() + DEFAULT_START_MINUTES * 60000);
  start.setMinutes(Math.ceil(start.getMinutes() / DEFAULT_START_STEP) * DEFAULT_START_STEP, 0, 0);
  const latest = new Date();
  latest.setDate(latest.getDate() + bounds.scheduled_within_days);
  const result = h('div', { id: 'created', role: 'status' });
  const form = h('form', { id: 'create-tournament' }, h('h2', { text: t('tournaments.create') }),
    field(t('play.game'), select('game', c.games.map((g) => [g.id, g.name]), c.games[0]?.id)),
    field(t('tournament.format'), format),
    field(t('tournament.name'), h('input', { name: 'name', required: true, maxlength: bounds.name_max })),
    field(t('tournament.startsAt'), h('input', { name: 'starts_at', type: 'datetime-local', required: true, value: localInput(start), max: localInput(latest) })),
    length,
    field(t('setting.turn_seconds'), select('turn_seconds', turnLimits.map((s) => [JSON.stringify(s), s === null ? t('setting.turn_seconds.null') : t('setting.turn_seconds.n', { n: s })]), JSON.stringify(bounds.default_turn_seconds))),
    checkbox('rated', t('tournament.rated'), false),
    checkbox('private', t('tournament.private'), !admin),
    admin ? null : h('p', { class: 'hint', text: t('tournaments.privateOnly') }),
    h('button', { type: 'submit' }, t('tournaments.createButton')),
    result);
  // Only an admin may uncheck "private".
  form.elements.private.disabled = !admin;
  view.listen(format, 'change', fill);
  fill();
  view.listen(form, 'submit', async (e) => {
    e.preventDefault();
    const f = form.elements;
    const body = {
      game: f.game.value,
      format: f.format.value,
      name: f.name.value,
      starts_at: new Date(f.starts_at.value).toISOString(),
      rated: f.rated.checked,
      settings: { turn_seconds: JSON.parse(f.turn_seconds.value) },
      private: f.private.checked,
    };
    if (f.minutes) body.minutes = Number(f.minutes.value);
    if (f.rounds) body.rounds = Number(f.rounds.value);
    const auth = body.private ? undefined : admin;
    const created = await view.attempt(() => view.call('POST', '/v1/tournaments', body, { key: true, ...(auth ? { auth } : {}) }));
    if (!created) return;
    if (!created.code) { navigate(`/tournaments/${created.tournament_id}`); return; }
    // A private one: its code to share first.
    result.replaceChildren(h('p', {}, t('tournaments.created', { name: created.name }), ' ',
      h('a', { href: `/tournaments/${created.tournament_id}`, id: 'created-link' }, t('tournaments.open'))),
    h('p', {}, t('tournaments.code'), ' ', h('strong', { id: 'created-code', text: created.code })));
  });
  return form;
}

/** The form that joins a private tournament by its invite code, then opens it. */
function joinByCode(view) {
  const form = h('form', { id: 'join-code' }, h('h2', { text: t('tournaments.joinByCode') }),
    field(t('tournaments.codeLabel'), h('input', { name: 'code', required: true, maxlength: 32, autocomplete: 'off' })),
    h('button', { type: 'submit' }, t('tournament.join')));
  view.listen(form, 'submit', async (e) => {
    e.preventDefault();
    const code = form.elements.code.value.trim();
    const joined = await view.attempt(() => view.call('POST', path`/v1/tournaments/join/${code}`, undefined, { key: true }));
    if (joined) navigate(`/tournaments/${joined.tournament_id}`);
  });
  return form;
}
