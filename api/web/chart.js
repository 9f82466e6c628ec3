// The rating chart: an SVG of a player's rating after each rated match of one game, its
// deviation as a band, one point per match linking to it (`svg[data-chart="rating"]`, `[data-match]`).
// A chart with points is a labelled group, not an image: an image cannot hold links (axe-core's
// nested-interactive); each link is named by its point's rating and date.

import { h } from './dom.js';
import { lang, t } from './texts.js';

const W = 640;
const H = 220;
const PAD = 36;

/** The chart of `points` (oldest first) for the game `game` named `name`. */
export function ratingChart(game, name, points) {
  const svg = h('svg', {
    'data-chart': 'rating', 'data-game': game, viewBox: `0 0 ${W} ${H}`, role: points.length ? 'group' : 'img',
    'aria-label': t('player.chart', { game: name }), class: 'chart',
  });
  if (!points.length) {
    svg.setAttribute('viewBox', `0 0 ${W} 40`);
    svg.append(h('text', { x: W / 2, y: 25, 'text-anchor': 'middle', text: t('player.noRated') }));
    return svg;
  }
  const lo = Math.min(...points.map((p) => p.rating - p.deviation));
  const hi = Math.max(...points.map((p) => p.rating + p.deviation));
  const x = (i) => PAD + (points.length === 1 ? (W - 2 * PAD) / 2 : (i * (W - 2 * PAD)) / (points.length - 1));
  const y = (v) => H - PAD - ((v - lo) * (H - 2 * PAD)) / Math.max(hi - lo, 1);
  const band = [
    ...points.map((p, i) => `${x(i)},${y(p.rating + p.deviation)}`),
    ...points.map((p, i) => `${x(i)},${y(p.rating - p.deviation)}`).reverse(),
  ];
  svg.append(
    h('polygon', { class: 'band', points: band.join(' ') }),
    h('polyline', { class: 'line', points: points.map((p, i) => `${x(i)},${y(p.rating)}`).join(' ') }),
    h('text', { x: 4, y: y(hi) + 4, class: 'axis', text: Math.round(hi) }),
    h('text', { x: 4, y: y(lo), class: 'axis', text: Math.round(lo) }),
  );
  points.forEach((p, i) => {
    const said = `${Math.round(p.rating)} ±${Math.round(p.deviation)} · ${new Date(p.at).toLocaleString(lang)}`;
    svg.append(h('a', { svg: true, href: `/matches/${p.match_id}`, 'data-match': p.match_id, 'aria-label': said },
      h('circle', { cx: x(i), cy: y(p.rating), r: 5, class: 'point' }, h('title', { text: said }))));
  });
  return svg;
}
