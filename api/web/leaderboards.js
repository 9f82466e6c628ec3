// A leaderboard (`/leaderboards/<game>?board=`): the established players of one game by rating,
// with a tab per game of the catalogue and one per board: real time (the default),
// correspondence (a ladder of its own), and the declared bots (rated apart from the humans).

import { catalogue, path } from './api.js';
import { h } from './dom.js';
import { t } from './texts.js';
import { frame, needsName } from './view.js';
import * as notFound from './notfound.js';

/** The boards, as the address names them, and the query each asks the API with. */
const BOARDS = [['live', ''], ['correspondence', '?correspondence=true'], ['bots', '?bots=true']];

export async function show(view, gameId) {
  frame(t('nav.leaderboards'));
  if (needsName()) return;
  const c = await view.load(catalogue);
  if (!c || view.left) return;
  const game = c.byId(gameId);
  if (!game) { notFound.show(view); return; }
  const wanted = new URLSearchParams(location.search).get('board');
  const [kind, query] = BOARDS.find(([k]) => k === wanted) || BOARDS[0];
  const suffix = kind === 'live' ? '' : `?board=${kind}`;
  const tabs = h('nav', { class: 'tabs', 'aria-label': t('play.game') }, c.games.map((g) => h('a', { href: `/leaderboards/${g.id}${suffix}`, 'aria-current': g.id === game.id ? 'page' : null }, g.name)));
  const boards = h('nav', { class: 'tabs', id: 'boards', 'aria-label': t('leaderboard.boards') }, BOARDS.map(([k]) => h('a', { href: `/leaderboards/${game.id}${k === 'live' ? '' : `?board=${k}`}`, 'data-board-kind': k, 'aria-current': k === kind ? 'page' : null }, t(`leaderboard.board.${k}`))));
  const holder = h('div', { id: 'leaderboard-holder' }, t('loading'));
  frame(`${t('nav.leaderboards')} · ${game.name}`, tabs, boards, holder);
  const board = await view.load(() => view.call('GET', `${path`/v1/leaderboards/${game.id}`}${query}`), holder);
  if (!board || view.left) return;
  holder.replaceChildren(board.entries.length ? h('table', { id: 'leaderboard' },
    h('thead', {}, h('tr', {}, [t('leaderboard.rank'), t('leaderboard.player'), t('player.rating'), t('leaderboard.deviation'), t('leaderboard.games')].map((col) => h('th', { text: col })))),
    h('tbody', {}, board.entries.map((e) => h('tr', {}, h('td', { text: e.rank }),
      h('td', {}, h('a', { href: `/players/${e.player_id}` }, e.name)), h('td', { text: Math.round(e.rating) }),
      h('td', { text: Math.round(e.deviation) }), h('td', { text: e.games })))))
    : h('p', { text: t('leaderboard.none') }));
}
