// The home page (`/`): pick a name (the token is kept in this browser), a returning visitor
// recognised, and the games with their rules from the catalogue.

import { catalogue, me, path, Problem } from './api.js';
import { field, h } from './dom.js';
import { t } from './texts.js';
import { frame, loadingNote, navigate, showError } from './view.js';

export async function show(view) {
  const who = h('section', { id: 'who' }, loadingNote());
  const gamesSection = h('section', { id: 'games' });
  frame('discs', who, gamesSection);
  const id = me();
  let profile = null;
  if (id) {
    try {
      profile = await view.call('GET', path`/v1/players/${id}`);
    } catch (e) {
      showError(e);
      // A token the server no longer takes (its player is gone, its key changed): pick again.
      if (e instanceof Problem && e.status === 401) localStorage.removeItem('discs.token');
    }
  }
  if (view.left) return;
  const form = h('form', { id: 'signup' }, h('h2', { text: t('home.pickName') }),
    field(t('home.name'), h('input', { name: 'name', required: true, autocomplete: 'nickname' })),
    h('button', { type: 'submit' }, t('home.start')));
  view.listen(form, 'submit', async (e) => {
    e.preventDefault();
    const name = form.elements.name.value;
    const created = await view.attempt(() => view.call('POST', '/v1/players', { name }, { auth: null, key: true }));
    if (created) {
      localStorage.setItem('discs.token', created.token);
      navigate('/');
    }
  });
  if (profile) {
    who.replaceChildren(h('p', { id: 'welcome' }, t('home.welcome', { name: profile.name }), ' ',
      h('a', { href: `/players/${profile.player_id}` }, t('nav.profile')), ' · ', h('a', { href: '/play' }, t('nav.play'))),
    h('details', {}, h('summary', { text: t('home.notYou') }), form));
  } else {
    who.replaceChildren(form);
  }
  const c = await view.load(catalogue);
  if (!c || view.left) return;
  // The name's bound is the server's (the catalogue's limits).
  form.elements.name.maxLength = c.limits.player_name_max;
  gamesSection.replaceChildren(h('h2', { text: t('home.games') }), ...c.games.map((g) => h('article', { class: 'game', 'data-game': g.id },
    h('h3', { text: g.name }), h('p', { text: g.summary }),
    h('details', {}, h('summary', { text: t('home.rules') }), h('ol', {}, g.rules.map((r) => h('li', { text: r })))),
    h('p', {}, h('a', { href: '/play' }, t('nav.play')), ' · ', h('a', { href: `/leaderboards/${g.id}` }, t('nav.leaderboards'))))));
}
