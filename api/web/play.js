// The play page (`/play`): a solo game against the computer, a room to share with a friend, and
// the ranked queue with its live waiting indicator; the games and their settings from the catalogue.

import { catalogue, isAbort, path } from './api.js';
import { field, h, mmss, select } from './dom.js';
import { readSettings, settingControls, settingsFieldset } from './settings.js';
import { t } from './texts.js';
import { frame, navigate, needsName, showError } from './view.js';

/** How often a waiting ticket is asked about, in milliseconds. */
const TICKET_POLL = 1000;

export async function show(view) {
  frame(t('nav.play'));
  if (needsName()) return;
  const c = await view.load(catalogue);
  if (!c || view.left) return;
  const options = c.games.map((g) => [g.id, g.name]);
  const first = c.games[0]?.id;

  // A form whose settings follow the game chosen in it.
  const gameForm = (id, title, extra, settingNames, submitText, submit) => {
    const gameSelect = select('game', options, first);
    const levels = h('div', { class: 'slot' });
    const settings = settingsFieldset(id);
    const fill = () => {
      const game = c.byId(gameSelect.value);
      settings.replaceChildren(...settingControls(game, settingNames));
      levels.replaceChildren(...extra(game));
    };
    const form = h('form', { id }, h('h2', { text: title }), field(t('play.game'), gameSelect), levels, settings,
      h('button', { type: 'submit' }, submitText));
    view.listen(gameSelect, 'change', fill);
    view.listen(form, 'submit', (e) => {
      e.preventDefault();
      submit(c.byId(gameSelect.value), form, settings);
    });
    fill();
    return form;
  };

  const solo = gameForm('solo', t('play.solo'), (game) => [
    field(t('play.level'), select('cpu_level', game.cpu_levels.map((l) => [String(l), String(l)]), String(game.cpu_levels[Math.min(1, game.cpu_levels.length - 1)]))),
    field(t('play.first'), select('first', [['me', t('play.firstMe')], ['cpu', t('play.firstCpu')]], 'me')),
  ], ['turn_seconds', 'show_legal_moves'], t('play.startSolo'), async (game, form, settings) => {
    const f = form.elements;
    const match = await view.attempt(() => view.call('POST', '/v1/matches', {
      game: game.id, cpu_level: Number(f.cpu_level.value), first: f.first.value, settings: readSettings(game, settings),
    }, { key: true }));
    if (match) navigate(`/matches/${match.match_id}`);
  });

  const room = gameForm('room', t('play.room'), () => [], null, t('play.createRoom'), async (game, form, settings) => {
    const r = await view.attempt(() => view.call('POST', '/v1/rooms', { game: game.id, settings: readSettings(game, settings) }, { key: true }));
    if (r) navigate(`/rooms/${encodeURIComponent(r.code)}`);
  });

  const status = h('div', { id: 'queue-status', role: 'status' });
  const queue = gameForm('queue', t('play.ranked'), () => [], ['turn_seconds'], t('play.queue'), async (game, form, settings) => {
    const ticket = await view.attempt(() => view.call('POST', '/v1/queue', { game: game.id, turn_seconds: readSettings(game, settings).turn_seconds ?? null }, { key: true }));
    if (ticket) waitForOpponent(view, ticket, status);
  });
  queue.append(status);
  document.getElementById('main').append(solo, room, queue);

  const open = sessionStorage.getItem('discs.ticket');
  if (open) {
    const ticket = await view.load(() => view.call('GET', path`/v1/queue/${open}`));
    if (!ticket || ticket.status !== 'waiting') sessionStorage.removeItem('discs.ticket');
    else if (!view.left) waitForOpponent(view, ticket, status);
  }
}

/** The live waiting indicator of a ticket (time waited, rating window) until it is matched. */
function waitForOpponent(view, first, status) {
  let ticket = first;
  sessionStorage.setItem('discs.ticket', ticket.ticket_id);
  const waiting = view.child();
  const opened = Date.parse(ticket.opened_at);
  const text = h('p', { id: 'waited' });
  const windowText = h('p', { id: 'window' });
  const cancel = h('button', { type: 'button' }, t('play.cancel'));
  const stop = () => { waiting.leave(); sessionStorage.removeItem('discs.ticket'); };
  waiting.listen(cancel, 'click', async () => {
    const closed = await view.attempt(() => view.call('DELETE', path`/v1/queue/${ticket.ticket_id}`));
    if (closed) { stop(); status.replaceChildren(h('p', { text: t('play.cancelled') })); }
  });
  status.replaceChildren(h('div', { class: 'spinner', 'aria-hidden': 'true' }), text, windowText, cancel);
  status.dataset.ticket = ticket.ticket_id;
  const render = () => {
    text.textContent = t('play.waiting', { time: mmss(Date.now() - opened) });
    if (ticket.allowed_gap !== null && ticket.allowed_gap !== undefined) {
      windowText.textContent = t('play.window', { rating: Math.round(ticket.rating), gap: Math.round(ticket.allowed_gap) });
    }
  };
  render();
  waiting.every(250, render);
  (async () => {
    for (;;) {
      await waiting.sleep(TICKET_POLL);
      try {
        ticket = await waiting.call('GET', path`/v1/queue/${ticket.ticket_id}`);
      } catch (e) {
        if (isAbort(e)) return;
        showError(e);
        // A ticket that is gone or not ours will not come back: stop asking.
        if (e.status >= 400 && e.status < 500 && e.status !== 429) { stop(); return; }
        continue;
      }
      if (ticket.status === 'matched') { stop(); navigate(`/matches/${ticket.match_id}`); return; }
      if (ticket.status === 'cancelled') { stop(); status.replaceChildren(h('p', { text: t('play.cancelled') })); return; }
    }
  })().catch((e) => showError(e));
}
