// A leaderboard (`/leaderboards/<game>`): the established players of one game by rating, with a
// tab per game of the catalogue.

import { catalogue, path } from './api.js';
import { h } from './dom.js';
import { t } from './texts.js';
import { frame, needsName } from './view.js';
import * as notFound from './notfound.js';

export async function show(view, gameId) {
  frame(t('nav.leaderboards'));
  if (needsName()) return;
  const c = await view.load(catalogue);
  if (!c || view.left) return;
  const game = c.byId(gameId);
  if (!game) { notFound.show(view); return; }
  const tabs = h('nav', { class: 'tabs' }, c.games.map((g) => h('a', { href: `/leaderboards/${g.id}`, 'aria-current': g.id === game.id ? 'page' : null }, g.name)));
  const holder = h('div', { id: 'leaderboard-holder' }, t('loading'));
  frame(`${t('nav.leaderboards')} · ${game.name}`, tabs, holder);
  const board = await view.load(() => view.call('GET', path`/v1/leaderboards/${game.id}`), holder);
  if (!board || view.left) return;
  holder.replaceChildren(board.entries.length ? h('table', { id: 'leaderboard' },
    h('thead', {}, h('tr', {}, [t('leaderboard.rank'), t('leaderboard.player'), t('player.rating'), t('leaderboard.deviation'), t('leaderboard.games')].map((col) => h('th', { text: col })))),
    h('tbody', {}, board.entries.map((e) => h('tr', {}, h('td', { text: e.rank }),
      h('td', {}, h('a', { href: `/players/${e.player_id}` }, e.name)), h('td', { text: Math.round(e.rating) }),
      h('td', { text: Math.round(e.deviation) }), h('td', { text: e.games })))))
    : h('p', { text: t('leaderboard.none') }));
}
