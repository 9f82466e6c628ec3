// A player's page (`/players/<id>`): their rating in each game of the catalogue (provisional
// marked) with its chart, and their match history linking to the replays; on one's own page,
// closing one's account (two steps: what it does, then the confirmation).

import { catalogue, me, path } from './api.js';
import { ratingChart } from './chart.js';
import { h } from './dom.js';
import { lang, t } from './texts.js';
import { frame, loadingNote } from './view.js';

export async function show(view, id) {
  frame(t('nav.profile'), loadingNote());
  const profile = await view.load(() => view.call('GET', path`/v1/players/${id}`));
  if (!profile || view.left) return;
  const c = await view.load(catalogue);
  if (!c || view.left) return;
  const ratings = h('section', { id: 'ratings' }, h('h2', { text: t('player.ratings') }));
  const history = h('section', { id: 'history' }, h('h2', { text: t('player.history') }));
  frame(profile.name, ratings, history, id === me() ? closing(view) : null);
  // The charts' points, every game at once; a game whose points fail says so in its place.
  const articles = c.games.map((game) => {
    const r = profile.ratings[game.id];
    const chart = h('div', { class: 'chart-holder' }, t('loading'));
    ratings.append(h('article', { class: 'rating', 'data-game': game.id }, h('h3', { text: game.name }),
      r ? h('p', {}, h('strong', { text: Math.round(r.rating) }), ` ±${Math.round(r.deviation)} · ${t('player.games', { n: r.games })}`,
        r.provisional ? h('span', { class: 'provisional' }, ` (${t('player.provisional')})`) : '') : null,
      chart));
    return view.load(async () => {
      const points = await view.call('GET', path`/v1/players/${id}/ratings/${game.id}`);
      chart.replaceChildren(ratingChart(game.id, game.name, points.points));
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
      h('td', { text: `${c.name(m.game)} (${m.ranked ? t('player.ranked') : t('player.casual')})` }),
      h('td', { 'data-opening': m.opening ? m.opening.line : '', text: m.opening ? m.opening.name : '' }),
      h('td', {}, m.opponent.player_id ? h('a', { href: `/players/${m.opponent.player_id}` }, m.opponent.name ?? '?') : t('match.cpu')),
      h('td', { text: resultName[m.result] || m.result }),
      h('td', { text: m.rating_after === null ? '' : `${Math.round(m.rating_before)} → ${Math.round(m.rating_after)}` }))))));
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
