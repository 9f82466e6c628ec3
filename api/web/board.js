// The board: its squares named as the testing contract names them (`data-board`, `data-ply`,
// `data-cell`, `data-disc`), its coordinates, and how many discs each colour has; a game's size
// and how it writes its moves come from the catalogue (`board`, `notation`), never from its id.

import { h } from './dom.js';
import { t } from './texts.js';

const FILES = 'abcdefghijklmnopqrstuvwxyz';

/**
 * How each notation of the catalogue (`GET /v1/games`: a game's `notation`, on its `board` of
 * `rows` × `columns`) writes moves and names cells. `square`: a cell is a file letter and a rank
 * number from the first row (`a1`…`h8`), and a move names a cell. `column`: a cell is its column
 * and its row from the bottom (`41`), and a move names a column only (`4`): the disc drops, and
 * since every ply adds one disc that stays, the disc count says nothing the ply does not.
 */
const NOTATIONS = {
  square: {
    cell: (row, col) => `${FILES[col]}${row + 1}`,
    move: (sq) => sq.cell,
    split: (moves) => moves.match(/[a-z]\d+/g) || [],
    files: (cols) => [...FILES.slice(0, cols)],
    ranks: (rows) => Array.from({ length: rows }, (_, i) => String(i + 1)),
    label: (sq) => sq.cell,
    drops: false,
    countsDiscs: true,
  },
  column: {
    cell: (row, col, rows) => `${col + 1}${rows - row}`,
    move: (sq) => String(sq.col + 1),
    split: (moves) => [...moves],
    files: (cols) => Array.from({ length: cols }, (_, i) => String(i + 1)),
    ranks: () => [],
    label: (sq) => t('board.column', { c: sq.col + 1, r: sq.rows - sq.row }),
    drops: true,
    countsDiscs: false,
  },
};

/**
 * A game as the board knows it when the catalogue could not be read: its id, its size from the
 * board's rows, and no notation, so its cells are named as squares and it offers no move.
 */
export const unknownGame = (id, rows) => ({ id, name: id, board: { rows: rows.length, columns: rows[0]?.length ?? 0 }, notation: null });

/** Whether the board knows how the game writes its moves (a notation of the catalogue it reads). */
const playable = (game) => typeof game.notation === 'string' && Object.hasOwn(NOTATIONS, game.notation);

const notation = (game) => (playable(game) ? NOTATIONS[game.notation] : NOTATIONS.square);

/** Whether a move names a column (the disc drops) rather than a square. */
export const drops = (game) => playable(game) && notation(game).drops;

/** Whether the disc count is worth showing while the game is played. */
export const countsDiscs = (game) => playable(game) && notation(game).countsDiscs;

/** The moves of a game record (`"4453"`, `"f5d6"`), one string per ply. */
export const splitMoves = (game, moves) => notation(game).split(moves);

/** The squares of a board (rows as the API gives them) in display order, row by row. */
export function squares(game, rows) {
  const n = notation(game);
  const height = game.board.rows;
  return rows.flatMap((line, row) => [...line].map((ch, col) => ({
    cell: n.cell(row, col, height), disc: ch === '.' ? '' : ch, row, col, rows: height,
  })));
}

/** The cell a ply filled: the one square empty before it and taken after it, or null. */
export function landed(game, before, after) {
  const was = squares(game, before);
  const found = squares(game, after).find((sq, i) => sq.disc && !was[i].disc);
  return found ? found.cell : null;
}

/** How many discs of each colour are on the board: `{B: 2, W: 2}`. */
export function discCount(rows, colours) {
  const count = Object.fromEntries(colours.map((c) => [c, 0]));
  for (const line of rows) for (const ch of line) if (ch in count) count[ch] += 1;
  return count;
}

/** The disc count line: each colour's disc, then its count in `[data-count=<colour>]`. */
export function discCountLine(rows, colours) {
  const count = discCount(rows, colours);
  return h('p', { id: 'disc-count', class: 'disc-count' }, colours.map((c) => h('span', { title: t('board.count', { colour: t(`disc.${c}`), n: count[c] }) },
    h('span', { class: `disc small ${c}`, 'aria-hidden': 'true' }, c), ' ',
    h('span', { class: 'count', 'data-count': c, 'aria-label': t('board.count', { colour: t(`disc.${c}`), n: count[c] }) }, String(count[c])))));
}

/**
 * The board of `game` (its catalogue entry: `id`, `name`, `board`, `notation`) with its
 * coordinates. `play(move)` is called when a square offering a move is clicked; `legal` lists
 * the moves the player to move may play (marked when `hints`; empty when the match hides them);
 * `enabled` says whether a click plays; `last` is the cell of the last move.
 */
export function board(game, rows, ply, { legal = [], enabled = false, play = null, hints = true, last = null } = {}) {
  const n = notation(game);
  const cols = game.board.columns;
  const kind = playable(game) ? game.notation : 'square';
  const el = h('div', { class: `board ${game.id} ${kind}`, 'data-board': game.id, 'data-ply': ply, role: 'group', 'aria-label': game.name ?? game.id });
  el.style.setProperty('--cols', cols);
  const on = enabled && playable(game);
  const moves = new Set(on ? legal : []);
  // Legal moves hidden by the match's settings: any empty square may be tried (the server judges).
  const open = on && !legal.length;
  // A dropping game: a click anywhere in a column plays it, but only the cell where the disc
  // would land is marked and takes the keyboard focus (one stop per column).
  const landing = new Set();
  if (drops(game)) {
    for (let col = 0; col < cols; col += 1) {
      for (let row = rows.length - 1; row >= 0; row -= 1) {
        if (rows[row][col] === '.') { landing.add(`${row}:${col}`); break; }
      }
    }
  }
  for (const sq of squares(game, rows)) {
    const move = moves.has(n.move(sq)) || (open && !sq.disc) ? n.move(sq) : null;
    const target = move !== null && (!drops(game) || landing.has(`${sq.row}:${sq.col}`));
    const hint = hints && !drops(game) && legal.includes(sq.cell);
    el.append(h('button', {
      type: 'button',
      class: ['sq', hint && 'hint', target && 'target', last === sq.cell && 'last'].filter(Boolean).join(' '),
      'data-cell': sq.cell,
      'data-disc': sq.disc,
      'data-move': move,
      tabindex: move !== null && !target ? -1 : null,
      'aria-label': t('board.square', { cell: n.label(sq), disc: sq.disc ? t(`disc.${sq.disc}`) : t('board.empty') }),
      disabled: move === null,
      onclick: move === null ? null : () => play(move),
    }, sq.disc ? h('span', { class: `disc ${sq.disc}`, 'aria-hidden': 'true' }, sq.disc) : null));
  }
  return withCoordinates(el, n.files(cols), n.ranks(game.board.rows), `${game.id} ${kind}`);
}

/** The board framed by its coordinates: files along the top (or below the columns), ranks left. */
function withCoordinates(el, files, ranks, kind) {
  const frame = h('div', { class: `board-frame ${kind}${ranks.length ? ' ranked' : ''}` });
  const fileLine = h('div', { class: 'coords files', 'data-coords': 'files', 'aria-hidden': 'true' },
    files.map((f) => h('span', { text: f })));
  fileLine.style.setProperty('--cols', files.length);
  if (ranks.length) {
    const rankLine = h('div', { class: 'coords ranks', 'data-coords': 'ranks', 'aria-hidden': 'true' },
      ranks.map((r) => h('span', { text: r })));
    rankLine.style.setProperty('--rows', ranks.length);
    frame.append(fileLine, rankLine, el);
  } else {
    frame.append(el, fileLine);
  }
  return frame;
}
