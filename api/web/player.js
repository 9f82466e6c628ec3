// A player's page (`/players/<id>`): their rating in each game of the catalogue (provisional
// marked) with its chart, real time and correspondence apart, and their match history linking
// to the replays; on another player's page, a challenge (the form takes its clocks and bounds
// from the catalogue); on one's own page, closing one's account (two steps: what it does, then
// the confirmation).

import { catalogue, me, path } from './api.js';
import { ratingChart } from './chart.js';
import { checkbox, field, h, select } from './dom.js';
import { lang, t } from './texts.js';
import { frame, loadingNote } from './view.js';

/** Who moves first in a challenged game, as the API names it. */
const FIRST = ['random', 'challenger', 'challenged'];

export async function show(view, id) {
  frame(t('nav.profile'), loadingNote());
  const profile = await view.load(() => view.call('GET', path`/v1/players/${id}`));
  if (!profile || view.left) return;
  const c = await view.load(catalogue);
  if (!c || view.left) return;
  const ratings = h('section', { id: 'ratings' }, h('h2', { text: t('player.ratings') }));
  const history = h('section', { id: 'history' }, h('h2', { text: t('player.history') }));
  const own = id === me();
  frame(profile.name, own || !me() ? null : challengeForm(view, c, id), ratings, history, own ? closing(view) : null);
  // The charts' points, every ladder at once (real time, then correspondence where played); a
  // ladder whose points fail says so in its place.
  const ladders = [
    ...c.games.map((game) => [game, false, profile.ratings[game.id]]),
    ...c.games.map((game) => [game, true, profile.correspondence?.[game.id]]).filter(([, , r]) => r?.games),
  ];
  const articles = ladders.map(([game, slow, r]) => {
    const chart = h('div', { class: 'chart-holder' }, t('loading'));
    const title = slow ? t('player.correspondence', { game: game.name }) : game.name;
    ratings.append(h('article', { class: 'rating', 'data-game': game.id, 'data-correspondence': String(slow) }, h('h3', { text: title }),
      r ? h('p', {}, h('strong', { text: Math.round(r.rating) }), ` ±${Math.round(r.deviation)} · ${t('player.games', { n: r.games })}`,
        r.provisional ? h('span', { class: 'provisional' }, ` (${t('player.provisional')})`) : '') : null,
      chart));
    return view.load(async () => {
      const points = await view.call('GET', `${path`/v1/players/${id}/ratings/${game.id}`}${slow ? '?correspondence=true' : ''}`);
      chart.replaceChildren(ratingChart(game.id, title, points.points));
    }, chart);
  });
  const matches = await view.load(() => view.call('GET', path`/v1/players/${id}/matches`), history);
  await Promise.all(articles);
  if (!matches || view.left) return;
  const resultName = { win: t('result.win'), loss: t('result.loss'), draw: t('result.draw') };
  history.append(h('table', {},
    h('thead', {}, h('tr', {}, [t('player.when'), t('play.game'), t('player.opening'), t('player.opponent'), t('player.result'), t('player.rating')].map((col) => h('th', { text: col })))),
    h('tbody', {}, matches.matches.map((m) => h('tr', {},
      h('td', {}, h('a', { href: `/matches/${m.match_id}` }, new Date(m.ended_at).toLocaleString(lang))),
      h('td', { 'data-correspondence': String(m.correspondence), text: `${c.name(m.game)} (${[m.ranked ? t('player.ranked') : t('player.casual'), m.correspondence ? t('leaderboard.board.correspondence').toLowerCase() : null].filter(Boolean).join(', ')})` }),
      h('td', { 'data-opening': m.opening ? m.opening.line : '', text: m.opening ? m.opening.name : '' }),
      h('td', {}, m.opponent.player_id ? h('a', { href: `/players/${m.opponent.player_id}` }, m.opponent.name ?? '?') : t('match.cpu')),
      h('td', { text: resultName[m.result] || m.result }),
      h('td', { text: m.rating_after === null ? '' : `${Math.round(m.rating_before)} → ${Math.round(m.rating_after)}` }))))));
}

/** The challenge form: the game, rated or not, the clock (a turn limit, or days per move for a
 * correspondence game; the catalogue's), who moves first. A sent challenge waits in the inbox. */
function challengeForm(view, c, opponent) {
  const option = ([value, text]) => h('option', { value, selected: value === `d:${c.limits.days_per_move[0]}` }, text);
  const clock = h('select', { name: 'clock' },
    h('optgroup', { label: t('leaderboard.board.live') }, [null, ...c.limits.turn_seconds]
      .map((s) => option([`t:${s}`, s === null ? t('setting.turn_seconds.null') : t('setting.turn_seconds.n', { n: s })]))),
    h('optgroup', { label: t('leaderboard.board.correspondence') }, c.limits.days_per_move
      .map((d) => option([`d:${d}`, t(d === 1 ? 'setting.days_per_move.1' : 'setting.days_per_move.n', { n: d })]))));
  const out = h('div', { id: 'challenge-sent', role: 'status' });
  const form = h('form', { id: 'challenge' }, h('h2', { text: t('challenge.heading') }),
    field(t('play.game'), select('game', c.games.map((g) => [g.id, g.name]), c.games[0]?.id)),
    field(t('challenge.clock'), clock),
    field(t('challenge.first'), select('first', FIRST.map((f) => [f, t(`challenge.first.${f}`)]), 'random')),
    checkbox('rated', t('challenge.rated'), false),
    h('button', { type: 'submit' }, t('challenge.send')),
    out);
  view.listen(form, 'submit', async (e) => {
    e.preventDefault();
    const f = form.elements;
    const [kind, n] = f.clock.value.split(':');
    const body = { opponent, game: f.game.value, rated: f.rated.checked, first: f.first.value };
    if (kind === 'd') body.days_per_move = Number(n);
    else if (n !== 'null') body.turn_seconds = Number(n);
    const sent = await view.attempt(() => view.call('POST', '/v1/challenges', body, { key: true }), out);
    if (sent) out.replaceChildren(h('p', {}, t('challenge.sentTo', { name: sent.challenged.name }), ' ', h('a', { href: '/inbox' }, t('nav.inbox'))));
  });
  return form;
}

/** Closing one's account: step one asks the server what it does and for a confirmation (valid
 * ten minutes), shown with a second button; step two sends it. The token is then forgotten. */
function closing(view) {
  const area = h('div', { id: 'closing-steps' });
  const ask = h('button', { type: 'button', id: 'close-account', onclick: async () => {
    const asked = await view.attempt(() => view.call('POST', '/v1/players/me/closing'), area);
    if (!asked) return;
    const confirm = h('button', { type: 'button', id: 'confirm-close', onclick: async () => {
      const closed = await view.attempt(() => view.call('POST', '/v1/players/me/close', { confirmation: asked.confirmation }), area);
      if (!closed) return;
      localStorage.removeItem('discs.token');
      // The page, and the header's link to it, no longer show the name: the label now.
      document.querySelector('#main h1').textContent = closed.label;
      document.title = `${closed.label} · discs`;
      document.querySelector('#top a[href^="/players/"]')?.remove();
      area.replaceChildren(h('p', { id: 'account-closed', role: 'status', text: t('account.closed', { label: closed.label }) }),
        h('p', {}, h('a', { href: '/' }, t('account.home'))));
      ask.remove();
    } }, t('account.confirm'));
    const cancel = h('button', { type: 'button', onclick: () => area.replaceChildren() }, t('account.cancel'));
    area.replaceChildren(h('p', { id: 'closing-what', text: asked.what_happens }),
      h('p', { text: t('account.label', { label: asked.label }) }), confirm, ' ', cancel);
  } }, t('account.close'));
  return h('section', { id: 'account' }, h('h2', { text: t('account.heading') }), ask, area);
}
