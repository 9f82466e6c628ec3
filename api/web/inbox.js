// The inbox (`/inbox`): your correspondence games where it is your turn (the nearest deadline
// first), your others, and your open challenges (received: accept, or decline with a reason;
// sent: cancel). The header's inbox link carries the count of games where it is your turn, kept
// live by the player's own stream (`GET /v1/players/me/stream`), which this module follows once
// per page load: each frame asks the inbox again, and an open inbox page shows it again.

import { api, catalogue, me } from './api.js';
import { h, select } from './dom.js';
import { followStream } from './stream.js';
import { lang, t } from './texts.js';
import { frame, loadingNote, navigate, needsName } from './view.js';

/** The reasons a challenge may be declined with, as the API names them. */
const REASONS = ['generic', 'later', 'too_fast', 'too_slow', 'rated', 'casual', 'game'];

/** The last inbox read, and who wants to hear of a new one (the header, an open inbox page). */
let last = null;
const listeners = new Set();
let following = false;

/** Reads the inbox again and tells every listener: what a page calls when it knows the inbox
 * changed (a move of the player's own in a correspondence game, which their stream does not
 * tell them). */
export const inboxChanged = () => { if (following) refresh(); };

/** Reads the inbox again and tells every listener. */
async function refresh() {
  try {
    last = await api('GET', '/v1/players/me/inbox');
  } catch {
    return;
  }
  for (const listener of listeners) listener(last);
}

/** Starts following the player's stream (once per page load, while a token is kept): every
 * frame that concerns the player (a challenge, a match started or ended, their turn) reads the
 * inbox again. */
function follow() {
  if (following || !me()) return;
  following = true;
  refresh();
  followStream('/v1/players/me/stream', null, {
    onFrame: () => refresh(),
    // After a lost connection the frames missed come first; a refusal leaves the count as read.
    onConnection: (open) => { if (open) refresh(); },
    signal: new AbortController().signal,
  });
}

/** The header's inbox link, its count of your turns painted now and on every new read; the
 * listener goes when the view is left. */
export function headerLink(view) {
  const count = h('span', { id: 'inbox-count', class: 'count', 'aria-live': 'polite' });
  const link = h('a', { href: '/inbox', id: 'inbox-link' }, t('nav.inbox'), ' ', count);
  const paint = (inbox) => {
    const n = inbox.your_turn.length;
    count.textContent = n ? String(n) : '';
    count.dataset.turns = String(n);
    link.setAttribute('aria-label', n ? t('inbox.linkTurns', { n }) : t('nav.inbox'));
  };
  if (last) paint(last);
  listeners.add(paint);
  view.onLeave(() => listeners.delete(paint));
  follow();
  return link;
}

/** When a deadline falls, in the reader's time zone and language. */
const when = (at) => new Date(at).toLocaleString(lang, { dateStyle: 'medium', timeStyle: 'short' });

/** A challenge's or a game's terms in words: the game, rated or casual, its clock. */
function terms(c, x) {
  const clock = x.days_per_move
    ? t(x.days_per_move === 1 ? 'setting.days_per_move.1' : 'setting.days_per_move.n', { n: x.days_per_move })
    : (x.turn_seconds ? t('setting.turn_seconds.n', { n: x.turn_seconds }) : t('setting.turn_seconds.null'));
  return `${c.name(x.game)} · ${x.rated || x.ranked ? t('player.ranked') : t('player.casual')} · ${clock}`;
}

export async function show(view) {
  frame(t('nav.inbox'));
  if (needsName()) return;
  const c = await view.load(catalogue);
  if (!c || view.left) return;
  const holder = h('div', { id: 'inbox' }, loadingNote());
  document.getElementById('main').append(holder);
  const paint = (inbox) => holder.replaceChildren(
    games('inbox-your-turn', t('inbox.yourTurn'), inbox.your_turn, c, true),
    games('inbox-their-turn', t('inbox.theirTurn'), inbox.their_turn, c, false),
    received(view, c, inbox.challenges.received),
    sent(view, c, inbox.challenges.sent));
  listeners.add(paint);
  view.onLeave(() => listeners.delete(paint));
  const inbox = await view.load(() => view.call('GET', '/v1/players/me/inbox'), holder);
  if (!inbox || view.left) return;
  last = inbox;
  paint(inbox);
  follow();
}

/** A list of correspondence games, each a link to its match with the opponent and deadline. */
function games(id, title, list, c, mine) {
  return h('section', { id },
    h('h2', { text: title }),
    list.length
      ? h('ul', { class: 'games' }, list.map((g) => h('li', { 'data-match': g.match_id },
        h('a', { href: `/matches/${g.match_id}` }, t('inbox.against', { name: g.opponent.name })),
        ` · ${terms(c, g)} · `,
        h('span', { class: mine ? 'deadline mine' : 'deadline', text: t(mine ? 'match.deadline' : 'inbox.theirDeadline', { at: when(g.deadline) }) }))))
      : h('p', { text: mine ? t('inbox.noTurn') : t('inbox.none') }));
}

/** The challenges received: accept (the match opens), or decline with a reason. */
function received(view, c, list) {
  const out = h('div', { class: 'out', role: 'status' });
  return h('section', { id: 'inbox-received' },
    h('h2', { text: t('inbox.received') }),
    list.length ? h('ul', {}, list.map((x) => {
      const reason = select('reason', REASONS.map((r) => [r, t(`inbox.reason.${r}`)]), 'generic');
      reason.setAttribute('aria-label', t('inbox.reason'));
      const accept = h('button', { type: 'button', 'data-accept': x.challenge_id, onclick: async () => {
        const done = await view.attempt(() => view.call('POST', `/v1/challenges/${x.challenge_id}/accept`, {}, { key: true }), out);
        if (done?.match_id) navigate(`/matches/${done.match_id}`);
      } }, t('inbox.accept'));
      const decline = h('button', { type: 'button', 'data-decline': x.challenge_id, onclick: async () => {
        const done = await view.attempt(() => view.call('POST', `/v1/challenges/${x.challenge_id}/decline`, { reason: reason.value }, { key: true }), out);
        if (done) refresh();
      } }, t('inbox.decline'));
      return h('li', { 'data-challenge': x.challenge_id },
        h('a', { href: `/players/${x.challenger.player_id}` }, x.challenger.name), ` · ${terms(c, x)} `,
        accept, ' ', reason, ' ', decline);
    })) : h('p', { text: t('inbox.none') }),
    out);
}

/** The challenges sent, each with its cancel button. */
function sent(view, c, list) {
  const out = h('div', { class: 'out', role: 'status' });
  return h('section', { id: 'inbox-sent' },
    h('h2', { text: t('inbox.sent') }),
    list.length ? h('ul', {}, list.map((x) => h('li', { 'data-challenge': x.challenge_id },
      h('a', { href: `/players/${x.challenged.player_id}` }, x.challenged.name), ` · ${terms(c, x)} `,
      h('button', { type: 'button', 'data-cancel': x.challenge_id, onclick: async () => {
        const done = await view.attempt(() => view.call('POST', `/v1/challenges/${x.challenge_id}/cancel`, {}, { key: true }), out);
        if (done) refresh();
      } }, t('inbox.cancel'))))) : h('p', { text: t('inbox.none') }),
    out);
}
