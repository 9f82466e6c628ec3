// The opening explorer (`/explorer/<game>?moves=…`): a board to click through, the moves played
// from the position in every finished game with their results as bars, their proven outcome, the
// named opening, filters (ranked or casual, rating bands, months) and links to the games.

import { catalogue, path } from './api.js';
import { board, splitMoves } from './board.js';
import { h } from './dom.js';
import { t } from './texts.js';
import { frame, needsName } from './view.js';
import * as notFound from './notfound.js';

/** The rating bands by lower bound, as the API takes them. */
const BANDS = [0, 1200, 1400, 1600, 1800, 2000, 2200];

const bandName = (b, i) => (i === 0 ? t('explorer.band_under', { n: BANDS[1] })
  : i === BANDS.length - 1 ? t('explorer.band_over', { n: b }) : `${b}–${BANDS[i + 1]}`);

export async function show(view, gameId) {
  frame(t('nav.explorer'));
  if (needsName()) return;
  const c = await view.load(catalogue);
  if (!c || view.left) return;
  const game = c.byId(gameId);
  if (!game) { notFound.show(view); return; }
  const params = new URLSearchParams(location.search);
  let moves = splitMoves(game, params.get('moves') || '');
  const filters = {
    ranked: params.get('ranked') || '',
    ratings: (params.get('ratings') || '').split(',').filter(Boolean),
    since: params.get('since') || '',
    until: params.get('until') || '',
  };

  const tabs = h('nav', { class: 'tabs' }, c.games.map((g) => h('a', { href: `/explorer/${g.id}`, 'aria-current': g.id === game.id ? 'page' : null }, g.name)));
  const line = h('p', { id: 'explorer-line' });
  const opening = h('p', { id: 'explorer-opening' });
  const holder = h('div', { class: 'board-holder' });
  const table = h('div', { id: 'explorer-moves' }, t('loading'));
  const games = h('div', { id: 'explorer-games' });
  const form = filtersForm(filters, () => load());
  frame(`${t('nav.explorer')} · ${game.name}`, tabs, form, line, opening,
    h('div', { class: 'explorer' }, holder, h('div', {}, table, games)));

  const go = (next) => { moves = next; load(); };
  let shown = 0;

  async function load() {
    const asked = ++shown;
    const query = new URLSearchParams();
    if (moves.length) query.set('moves', moves.join(''));
    if (filters.ranked) query.set('ranked', filters.ranked);
    if (filters.ratings.length) query.set('ratings', filters.ratings.join(','));
    if (filters.since) query.set('since', filters.since);
    if (filters.until) query.set('until', filters.until);
    const url = new URL(location.href);
    url.search = query.toString();
    history.replaceState(null, '', url);
    line.replaceChildren(h('button', { type: 'button', id: 'explorer-start', disabled: !moves.length, onclick: () => go([]) }, t('explorer.start')), ' ',
      h('button', { type: 'button', id: 'explorer-back', disabled: !moves.length, onclick: () => go(moves.slice(0, -1)) }, t('explorer.back')), ' ',
      h('span', { 'data-line': moves.join(''), text: moves.length ? moves.join(' ') : t('explorer.the_start') }));
    table.replaceChildren(t('loading'));
    const answer = await view.load(() => view.call('GET', `${path`/v1/explorer/${game.id}`}?${query}`), table);
    if (!answer || view.left || asked !== shown) return;
    holder.replaceChildren(board(game, answer.board, moves.length, {
      legal: answer.legal_moves, enabled: true, play: (mv) => go([...moves, mv]),
    }));
    opening.replaceChildren(...(answer.opening ? [t('player.opening'), ': ', h('strong', { text: answer.opening.name })] : []));
    table.replaceChildren(answer.moves.length ? movesTable(answer.moves, (mv) => go([...moves, mv]))
      : h('p', { text: t('explorer.none') }));
    games.replaceChildren(gameList('recent', t('explorer.recent'), answer.recent_games),
      gameList('top', t('explorer.top'), answer.top_games));
  }
  await load();
}

/** The filters: ranked or casual, rating bands, months; `changed` reloads. */
function filtersForm(filters, changed) {
  const ranked = h('select', { name: 'ranked' }, [['', t('explorer.all_games')], ['true', t('player.ranked')], ['false', t('player.casual')]]
    .map(([value, label]) => h('option', { value, selected: filters.ranked === value }, label)));
  ranked.addEventListener('change', () => { filters.ranked = ranked.value; changed(); });
  const bands = BANDS.map((b, i) => {
    const box = h('input', { type: 'checkbox', name: 'ratings', value: String(b), checked: filters.ratings.includes(String(b)) });
    box.addEventListener('change', () => {
      filters.ratings = BANDS.map(String).filter((v) => document.querySelector(`input[name=ratings][value="${v}"]`)?.checked);
      changed();
    });
    return h('label', { class: 'band' }, box, ' ', bandName(b, i));
  });
  const month = (name) => {
    const input = h('input', { type: 'month', name, value: filters[name] });
    input.addEventListener('change', () => { filters[name] = input.value; changed(); });
    return h('label', {}, t(`explorer.${name}`), ' ', input);
  };
  return h('form', { id: 'explorer-filters', class: 'filters', onsubmit: (e) => e.preventDefault() },
    h('label', {}, t('explorer.games_of'), ' ', ranked), h('fieldset', {}, h('legend', { text: t('explorer.bands') }), bands),
    month('since'), month('until'));
}

const OUTCOME = { win: 'result.win', draw: 'result.draw', loss: 'result.loss' };

/** The move table: each move with its games, a win/draw/loss bar, average rating and outcome. */
function movesTable(moves, open) {
  const pct = (n, of) => (of ? Math.round((100 * n) / of) : 0);
  return h('table', { id: 'explorer-table' },
    h('thead', {}, h('tr', {}, [t('explorer.move'), t('explorer.games'), t('explorer.results'), t('player.rating'), t('explorer.value')].map((col) => h('th', { text: col })))),
    h('tbody', {}, moves.map((m) => {
      const bar = h('div', { class: 'wdl', role: 'img', 'aria-label': t('explorer.wdl', { w: pct(m.wins, m.games), d: pct(m.draws, m.games), l: pct(m.losses, m.games) }) },
        [['win', m.wins], ['draw', m.draws], ['loss', m.losses]].map(([k, n]) => {
          const part = h('span', { class: k, 'data-count': n, text: n ? `${pct(n, m.games)}%` : '' });
          part.style.flexGrow = n;
          return part;
        }));
      // A position within a live ranked game's reach: its value is withheld until that game ends.
      const outcome = m.withheld ? t('explorer.withheld')
        : m.outcome ? t(OUTCOME[m.outcome]) + (m.value === null ? '' : ` (${m.value > 0 ? '+' : ''}${m.value})`) : '';
      return h('tr', { 'data-move': m.move },
        h('td', {}, h('button', { type: 'button', class: 'link', onclick: () => open(m.move) }, m.move)),
        h('td', { 'data-games': m.games, text: `${m.games} (${Math.round(100 * m.share)}%)` }),
        h('td', {}, bar),
        h('td', { text: m.average_rating === null ? '' : Math.round(m.average_rating) }),
        h('td', { 'data-outcome': m.outcome || '', 'data-withheld': m.withheld || '', text: outcome }));
    })));
}

function gameList(kind, title, list) {
  return h('section', { 'data-games': kind }, h('h2', { text: title }),
    list.length ? h('ul', {}, list.map((g) => h('li', {}, h('a', { href: `/matches/${g.match_id}` }, `${g.month} · ${Math.round(g.rating)}`))))
      : h('p', { text: t('explorer.no_games') }));
}
