// A match (`/matches/<id>`): the live view (the board, whose turn and its clock, the disc count,
// leave/return/resign, the moves arriving through the stream), then, once the match is over,
// its replay ply by ply (keyboard, buttons, slider, `?ply=<n>`) with the analysis beside each move.
// A tournament's game links to its tournament, and a player whose game ends while they watch it
// goes back there by itself (where the next pairing opens).

import { catalogue, me, path, Problem } from './api.js';
import { board, countsDiscs, discCountLine, drops, landed, splitMoves, unknownGame } from './board.js';
import { h, mmss } from './dom.js';
import { inboxChanged } from './inbox.js';
import { follow } from './stream.js';
import { lang, t } from './texts.js';
import { frame, loadingNote, navigate, showError } from './view.js';

/** How many times the analysis is asked for while the server says to retry later. */
const ANALYSIS_ATTEMPTS = 10;
/** How long the end of a tournament game stays on screen before its tournament's page opens
 * again, in milliseconds. */
const BACK_TO_TOURNAMENT = 2500;

/** The clock's line: a real-time turn's time left, or a correspondence move's deadline in the
 * reader's own time zone and language. */
function clockText(match) {
  if (!match.deadline || match.status !== 'active') return '';
  if (match.settings.days_per_move) {
    const at = new Date(match.deadline).toLocaleString(lang, { dateStyle: 'medium', timeStyle: 'short' });
    return t('match.deadline', { at });
  }
  return t('match.clock', { time: mmss(Date.parse(match.deadline) - Date.now()) });
}

export async function show(view, id) {
  frame(t('match.title'), loadingNote());
  const match = await view.load(() => view.call('GET', path`/v1/matches/${id}`));
  if (!match || view.left) return;
  let game = null;
  let trouble = null;
  try {
    game = (await catalogue()).byId(match.game);
  } catch (e) {
    trouble = e;
  }
  if (view.left) return;
  // Without the catalogue the page still shows the match, with the game's id for its name and
  // a board that offers no move (it cannot name them); it says why.
  const shown = game ?? unknownGame(match.game, match.board);
  if (match.status === 'finished') await replay(view, match, shown);
  else live(view, match, shown);
  if (trouble) showError(trouble);
}

/** The result line: who won and why, and the final disc count. */
function resultText(match) {
  const r = match.result;
  if (!r) return '';
  const why = t(`reason.${r.reason}`);
  const discs = Object.entries(r.discs || {}).map(([c, n]) => `${c} ${n}`).join(' · ');
  if (r.outcome === 'draw') return `${t('match.draw')} (${why}) ${discs}`;
  const winner = match.seats.find((s) => s.seat === r.winner_seat);
  return `${t('match.won', { name: winner ? winner.name : '?' })} (${why}) ${discs}`;
}

function seatsLine(match) {
  return h('ul', { id: 'seats', class: 'seats' }, match.seats.map((s) => h('li', { 'data-seat': s.seat, class: match.to_move === s.seat ? 'turn' : '' },
    h('span', { class: `disc small ${s.color}`, 'aria-hidden': 'true' }, s.color), ' ',
    s.player_id ? h('a', { href: `/players/${s.player_id}` }, s.name) : (s.name || t('match.cpu')),
    s.controller === 'away' ? ` — ${t('match.away')}` : '')));
}

const colours = (match) => match.seats.map((s) => s.color);

/** A tournament game's link to its tournament (none for another match); `returning`: the page
 * goes back there by itself, and says so. */
const tournamentLink = (match, returning = false) => (match.tournament_id ? h('p', { id: 'tournament-link' },
  h('a', { href: `/tournaments/${match.tournament_id}` }, t('match.tournament')),
  returning ? h('span', { id: 'tournament-return', text: ` — ${t('match.backToTournament')}` }) : null) : null);

/** The rules from the catalogue, notation included, folded under the board (none without it). */
const rulesOf = (game) => (game.rules ? h('details', { id: 'rules' }, h('summary', { text: t('match.rules') }),
  h('ol', {}, game.rules.map((r) => h('li', { text: r })))) : null);

/**
 * The live view; its part of the page (keys, clock, stream) is left when the match ends. `game`
 * is the game's catalogue entry (or what stands for it without the catalogue).
 */
function live(view, initial, game) {
  const part = view.child();
  let match = initial;
  const mine = () => match.seats.find((s) => s.player_id && s.player_id === me());
  const status = h('p', { id: 'match-status', role: 'status' });
  const clock = h('p', { id: 'clock', class: 'clock' });
  const conn = h('p', { id: 'connection', class: 'connection' });
  const streamProblem = h('div', { id: 'stream-problem' });
  const count = h('div', { id: 'count-holder' });
  const holder = h('div', { id: 'board-holder' });
  const controls = h('div', { class: 'controls' });
  let sending = false;

  const send = async (action, body) => {
    sending = true;
    render();
    const next = await view.attempt(() => view.call('POST', path`/v1/matches/${match.match_id}/${action}`, body, { key: true }));
    sending = false;
    if (!part.left) update(next || match);
  };
  const playMove = (move) => { if (!sending) send('moves', { move, expected_version: match.version }); };
  const command = (name) => () => {
    if (name === 'resign' && !window.confirm(t('match.confirmResign'))) return;
    send(name, { expected_version: match.version });
  };

  const render = () => {
    const seat = mine();
    const myTurn = match.status === 'active' && seat && match.to_move === seat.seat && seat.controller === 'human';
    // One move per ply in the record (passes are not written); the board module splits it.
    const ply = splitMoves(game, match.moves || '').length;
    holder.replaceChildren(board(game, match.board, ply, {
      legal: match.legal_moves, enabled: myTurn && !sending, play: playMove,
    }));
    if (countsDiscs(game)) count.replaceChildren(discCountLine(match.board, colours(match)));
    const turn = match.seats.find((s) => s.seat === match.to_move);
    status.textContent = match.status === 'finished' ? `${t('match.finished')}: ${resultText(match)}`
      : myTurn ? t('match.yourTurn') : turn ? t('match.toMove', { name: turn.name }) : '';
    status.dataset.status = match.status;
    const active = seat && match.status === 'active';
    controls.replaceChildren(...[
      active && seat.controller !== 'away' && h('button', { type: 'button', id: 'leave', onclick: command('leave') }, t('match.leave')),
      active && seat.controller === 'away' && h('button', { type: 'button', id: 'return', onclick: command('return') }, t('match.back')),
      active && h('button', { type: 'button', id: 'resign', onclick: command('resign') }, t('match.resign')),
    ].filter(Boolean));
    document.getElementById('seats')?.replaceWith(seatsLine(match));
  };

  // A newer view of the match: a command's answer or a frame of the stream, in any order.
  const update = (next) => {
    if (part.left) return;
    if (next.version > match.version) match = next;
    // A move in a correspondence game changes whose turn it is: the header's count follows.
    if (match.settings?.days_per_move) inboxChanged();
    render();
    if (match.status === 'finished') {
      part.leave();
      // A player's tournament game: back to the tournament, where the next pairing opens.
      const returning = Boolean(match.tournament_id && mine());
      replay(view, match, game, returning).catch((e) => showError(e));
      if (returning) {
        view.sleep(BACK_TO_TOURNAMENT).then(() => navigate(`/tournaments/${match.tournament_id}`), () => {});
      }
    }
  };

  frame(`${game.name} · ${t(match.settings?.days_per_move ? 'match.correspondence' : 'match.live')}`, tournamentLink(match), seatsLine(match), status, clock, conn, streamProblem, count, holder, controls, rulesOf(game));
  render();
  part.every(250, () => {
    clock.textContent = clockText(match);
  });
  // A dropping game: the key of a column's name plays it (1–7 in Four in a Row).
  part.listen(document, 'keydown', (e) => {
    if (!drops(game) || e.altKey || e.ctrlKey || e.metaKey || ['INPUT', 'SELECT', 'TEXTAREA'].includes(e.target.tagName)) return;
    const target = holder.querySelector(`[data-move="${CSS.escape(e.key)}"]:not([disabled])`);
    if (target) target.click();
  });
  follow(match.match_id, match.version, {
    signal: part.signal,
    onFrame: (f) => update(f.match),
    onConnection: (up) => {
      conn.textContent = up ? '' : t('match.reconnecting');
      conn.dataset.connected = up ? 'yes' : 'no';
    },
    onProblem: (p) => (p ? showError(new Problem(p), streamProblem) : streamProblem.replaceChildren()),
  });
}

/** The replay of a finished match, with its analysis (`game` as for the live view; `returning`:
 * the page goes back to the match's tournament by itself). */
async function replay(view, match, game, returning = false) {
  frame(`${game.name} · ${t('match.replay')}`, tournamentLink(match, returning), loadingNote());
  const data = await view.load(() => view.call('GET', path`/v1/matches/${match.match_id}/replay`));
  if (!data || view.left) return;
  const plies = data.plies;
  const total = plies.length - 1;
  const params = new URLSearchParams(location.search);
  const asked = Number(params.get('ply'));
  let at = params.has('ply') && Number.isInteger(asked) ? Math.min(Math.max(asked, 0), total) : total;
  const holder = h('div', { id: 'board-holder' });
  const count = h('div', { id: 'count-holder' });
  const where = h('p', { id: 'ply-label', role: 'status' });
  const slider = h('input', { type: 'range', id: 'ply-slider', min: 0, max: total, value: at, 'aria-label': t('match.replay') });
  const list = h('ol', { id: 'move-list', class: 'moves', start: 0 });
  const judged = {};

  const showPly = (n) => {
    at = Math.min(Math.max(n, 0), total);
    const p = plies[at];
    const last = at > 0 ? landed(game, plies[at - 1].board, p.board) : null;
    holder.replaceChildren(board(game, p.board, at, { last }));
    if (countsDiscs(game)) count.replaceChildren(discCountLine(p.board, colours(match)));
    where.textContent = t('match.ply', { n: at, total });
    slider.value = at;
    for (const li of list.querySelectorAll('li')) {
      const current = Number(li.dataset.ply) === at;
      li.classList.toggle('current', current);
      if (current) li.scrollIntoView({ block: 'nearest' });
    }
    const url = new URL(location.href);
    url.searchParams.set('ply', at);
    history.replaceState(null, '', url);
  };
  const renderList = () => {
    list.replaceChildren(...plies.map((p) => {
      const a = judged[p.ply];
      // The solver's verdict on the move (exact values only): best, inaccuracy or error; an
      // estimate that dropped is still marked as a possible mistake.
      const quality = a && (a.quality || (a.score_after < a.score_before ? 'mistake' : null));
      const flagged = quality && quality !== 'best';
      return h('li', { 'data-ply': p.ply, 'data-quality': (a && a.quality) || '', class: flagged ? 'mistake' : '' },
        h('button', { type: 'button', onclick: () => showPly(p.ply) }, p.ply === 0 ? t('match.startPos') : `${p.ply}. ${p.move}`),
        a && a.withheld ? h('span', { class: 'judged', 'data-withheld': a.withheld, text: ` ${t('match.withheld')}` })
        : a ? h('span', { class: 'judged', 'data-exact': String(Boolean(a.exact)) }, ` ${t('match.scoreBeforeAfter', { before: a.score_before, after: a.score_after })}`,
          a.best_moves.length ? ` · ${t('match.best', { moves: a.best_moves.join(', ') })}` : '',
          quality ? h('strong', { class: `flag quality-${quality}` }, ` ${quality === 'best' ? '✓' : '✗'} ${t(`match.quality.${quality}`)}`) : '',
          a.critical ? ` · ${t('match.critical')}` : '',
          ` · ${a.exact ? t('match.exact') : a.outcome ? t('match.provenOutcome', { outcome: t(`result.${a.outcome}`) }) : t('match.estimate')}`) : null);
    }));
    showPly(at);
  };
  const btn = (id, text, to) => h('button', { type: 'button', id, onclick: () => showPly(to()) }, text);
  const analysisNote = h('div', { id: 'analysis-status' }, t('match.analysing'));
  frame(`${game.name} · ${t('match.replay')}`,
    tournamentLink(match, returning), seatsLine(match), h('p', { id: 'match-status', 'data-status': 'finished', text: `${t('match.finished')}: ${resultText(match)}` }),
    // The opening the game followed: Reversi's published names (not translated), Four in a Row's first columns.
    data.opening ? h('p', { id: 'opening', text: t('match.opening', { name: data.opening.name, plies: data.opening.plies }) }) : null,
    h('div', { class: 'replay' }, h('div', {}, count, holder, where,
      h('div', { class: 'controls' }, btn('first', `« ${t('match.firstPly')}`, () => 0), btn('prev', `◀ ${t('match.prev')}`, () => at - 1),
        btn('next', `${t('match.next')} ▶`, () => at + 1), btn('last', `${t('match.lastPly')} »`, () => total)), slider),
    h('section', {}, h('h2', { text: `${t('match.moves')} · ${t('match.analysis')}` }), analysisNote, list)),
    rulesOf(game));
  slider.addEventListener('input', () => showPly(Number(slider.value)));
  view.listen(document, 'keydown', (e) => {
    if (e.target === slider || ['INPUT', 'SELECT', 'TEXTAREA'].includes(e.target.tagName)) return;
    const to = { ArrowLeft: at - 1, ArrowRight: at + 1, Home: 0, End: total }[e.key];
    if (to === undefined) return;
    e.preventDefault();
    showPly(to);
  });
  renderList();
  // The analysis may be refused for a moment (429, the search slots are busy): it is asked
  // again when the server says, the wait shown in its place.
  try {
    const analysis = await view.call('GET', path`/v1/matches/${match.match_id}/analysis`, undefined, { notice: analysisNote, attempts: ANALYSIS_ATTEMPTS });
    for (const a of analysis.plies) judged[a.ply] = a;
    analysisNote.replaceChildren();
    renderList();
  } catch (e) {
    showError(e, analysisNote);
  }
}
