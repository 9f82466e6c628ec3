// The room page (`/rooms/<code>`): join a room by its code, share its link, see its members and
// its current match, start a match; the room has no event stream, so the page polls its view
// with back-off (the interval grows while nothing changes and is reset by a change) and stops
// when the page is left.

import { catalogue, isAbort, path } from './api.js';
import { h } from './dom.js';
import { t } from './texts.js';
import { clearErrors, frame, loadingNote, navigate, needsName, showError } from './view.js';

/** The first and the longest interval between two looks at the room, in milliseconds. */
export const FIRST_POLL = 1000;
export const LONGEST_POLL = 15000;

export async function show(view, code) {
  const body = h('section', { id: 'room-view' }, loadingNote(t('room.joining')));
  frame(t('room.title'), body);
  if (needsName()) return;
  const joined = await view.load(() => view.call('POST', path`/v1/rooms/${code}/join`, undefined, { key: true }));
  if (!joined || view.left) return;
  const c = await view.load(catalogue);
  if (view.left) return;
  let room = joined;
  const render = () => {
    const link = `${location.origin}/rooms/${room.code}`;
    const alone = room.members.length < 2;
    const start = h('button', { type: 'button', id: 'start-match', onclick: async () => {
      const match = await view.attempt(() => view.call('POST', path`/v1/rooms/${room.room_id}/matches`, {}, { key: true }));
      if (match) navigate(`/matches/${match.match_id}`);
    } }, alone ? t('room.startAlone') : t('room.start'));
    body.replaceChildren(...[
      h('p', { text: t('room.code', { code: room.code }) }),
      h('p', {}, t('room.share'), ' ', h('a', { href: link, id: 'room-link' }, link)),
      h('h2', { text: `${c ? c.name(room.game) : room.game} · ${t('room.members')}` }),
      h('ul', { id: 'members' }, room.members.map((m) => h('li', { 'data-seat': m.seat },
        h('a', { href: `/players/${m.player_id}` }, m.name), ` (${t('room.seat', { n: m.seat })})`))),
      alone ? h('p', { text: t('room.waitingGuest') }) : null,
      room.match_id ? h('p', { id: 'room-match' }, h('a', { href: `/matches/${room.match_id}` }, t('room.current'))) : null,
      start,
    ].filter(Boolean));
  };
  render();
  follow(view, joined, (next) => {
    // A match started by the other member: open it.
    if (next.match_id && next.match_id !== room.match_id) { navigate(`/matches/${next.match_id}`); return; }
    room = next;
    render();
  });
}

/** What a look at the room can tell: who is in it, its match, its settings. */
const digest = (room) => JSON.stringify([room.members, room.match_id, room.settings]);

/**
 * Polls the room's view, `onChange(room)` on each change: every FIRST_POLL at first, half as
 * long again after each look that finds nothing new, up to LONGEST_POLL; a change (or a failed
 * look that will not last: 4xx) resets or stops it. Ends when the view is left.
 */
function follow(view, first, onChange) {
  const body = document.getElementById('room-view');
  let seen = digest(first);
  let delay = FIRST_POLL;
  let failed = false;
  (async () => {
    for (;;) {
      body.dataset.pollMs = delay;
      await view.sleep(delay);
      let next;
      try {
        next = await view.call('GET', path`/v1/rooms/${first.room_id}`);
      } catch (e) {
        if (isAbort(e)) return;
        showError(e);
        failed = true;
        if (e.status >= 400 && e.status < 500 && e.status !== 429) return;
        delay = Math.min(delay * 2, LONGEST_POLL);
        continue;
      }
      if (failed) { clearErrors(); failed = false; }
      if (digest(next) !== seen) {
        seen = digest(next);
        delay = FIRST_POLL;
        onChange(next);
      } else {
        delay = Math.min(Math.round(delay * 1.5), LONGEST_POLL);
      }
    }
  })().catch((e) => showError(e));
}
