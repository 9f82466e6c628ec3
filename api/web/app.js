// The entry module: the header, the router that picks a page module from the address, and
// navigation without reloads, each page's view left (its listeners, timers and streams removed)
// before the next one is shown.
// Testing contract (README): the board is [data-board][data-ply] holding [data-cell][data-disc];
// the rating chart is svg[data-chart="rating"] with one [data-match] per point; the token is
// localStorage["discs.token"]; <html lang> is the language in use.

import { catalogue, me } from './api.js';
import { h } from './dom.js';
import { LANGUAGES, lang, t } from './texts.js';
import { navigate, onNavigate, showError, View } from './view.js';
import * as admin from './admin.js';
import * as explorer from './explorer.js';
import * as home from './home.js';
import * as inbox from './inbox.js';
import * as leaderboards from './leaderboards.js';
import * as match from './match.js';
import * as notFound from './notfound.js';
import * as play from './play.js';
import * as player from './player.js';
import * as room from './room.js';
import * as tournament from './tournament.js';
import * as tournaments from './tournaments.js';

/** The pages: an address pattern (its `:name` parts are the page's arguments) and its module. */
const PAGES = [
  ['/', home],
  ['/play', play],
  ['/matches/:id', match],
  ['/players/:id', player],
  ['/leaderboards/:game', leaderboards],
  ['/admin', admin],
  ['/rooms/:code', room],
  ['/explorer/:game', explorer],
  ['/tournaments', tournaments],
  ['/tournaments/:id', tournament],
  ['/inbox', inbox],
];

/** The page module for `path` and its arguments, or the not-found page. */
function pageFor(path) {
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  for (const [pattern, module] of PAGES) {
    const want = pattern.split('/').filter(Boolean);
    if (want.length !== parts.length) continue;
    const args = [];
    if (want.every((w, i) => (w.startsWith(':') ? (args.push(parts[i]), true) : w === parts[i]))) return [module, args];
  }
  return [notFound, []];
}

/** Whether the site shows `url` itself (same origin, one of its pages). */
const ours = (url) => url.origin === location.origin && pageFor(url.pathname)[0] !== notFound;

let current = null;

/** Leaves the current view and shows the page of the current address. */
async function route({ moved = false } = {}) {
  current?.leave();
  const view = new View();
  current = view;
  header(view);
  const [module, args] = pageFor(location.pathname);
  if (moved) window.scrollTo(0, 0);
  try {
    await module.show(view, ...args);
  } catch (e) {
    if (!view.left) showError(e);
  }
  if (moved && !view.left) document.querySelector('main h1')?.focus({ preventScroll: true });
}

/** The header: the site's links and the language switch. */
function header(view) {
  const id = me();
  const games = h('a', { href: '/leaderboards', hidden: true }, t('nav.leaderboards'));
  const explore = h('a', { href: '/explorer', hidden: true }, t('nav.explorer'));
  const select = h('select', { id: 'lang', 'aria-label': t('language') },
    LANGUAGES.map((l) => h('option', { value: l, selected: l === lang }, t(`language.${l}`))));
  select.addEventListener('change', () => {
    localStorage.setItem('discs.lang', select.value);
    location.reload();
  });
  document.getElementById('top').replaceChildren(
    h('nav', { 'aria-label': 'discs' }, h('a', { href: '/', class: 'brand' }, '● discs'),
      h('a', { href: '/' }, t('nav.home')), h('a', { href: '/play' }, t('nav.play')), h('a', { href: '/tournaments' }, t('nav.tournaments')), games, explore,
      id && inbox.headerLink(view), id && h('a', { href: `/players/${id}` }, t('nav.profile')), h('a', { href: '/admin' }, t('nav.admin'))),
    h('label', { class: 'lang' }, t('language'), ' ', select));
  // The leaderboards and the explorer open on the catalogue's first game; the page says it if the catalogue fails.
  catalogue().then((c) => {
    if (view.left) return;
    if (!c.games.length) return;
    games.setAttribute('href', `/leaderboards/${c.games[0].id}`);
    games.hidden = false;
    explore.setAttribute('href', `/explorer/${c.games[0].id}`);
    explore.hidden = false;
  }, (e) => { if (!view.left) showError(e); });
}

// Links to the site's pages open without a reload.
document.addEventListener('click', (e) => {
  if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  const a = e.target.closest?.('a[href]');
  if (!a || a.target || a.hasAttribute('download')) return;
  const url = new URL(a.getAttribute('href'), location.href);
  if (!ours(url) || (url.pathname === location.pathname && url.search === location.search && url.hash)) return;
  e.preventDefault();
  navigate(url.pathname + url.search + url.hash);
});
window.addEventListener('popstate', () => route({ moved: true }));
onNavigate(route);
route();
