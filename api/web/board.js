// The board: its squares named as the testing contract names them (`data-board`, `data-ply`,
// `data-cell`, `data-disc`), its coordinates, and how many discs each colour has.

import { h } from './dom.js';
import { t } from './texts.js';

const FILES = 'abcdefghijklmnopqrstuvwxyz';

/**
 * How a board's squares and moves are written. `squares`: a square is a file letter and a rank
 * number from the top row (`a1`…`h8`), and a move names a square. `columns`: a cell is its
 * column and its row from the bottom (`41`), and a move names a column only (`4`); the disc drops.
 */
const NOTATIONS = {
  squares: {
    cell: (row, col) => `${FILES[col]}${row + 1}`,
    move: (sq) => sq.cell,
    split: (moves) => moves.match(/[a-z]\d+/g) || [],
    files: (cols) => [...FILES.slice(0, cols)],
    ranks: (rows) => Array.from({ length: rows }, (_, i) => String(i + 1)),
    label: (sq) => sq.cell,
  },
  columns: {
    cell: (row, col, rows) => `${col + 1}${rows - row}`,
    move: (sq) => String(sq.col + 1),
    split: (moves) => [...moves],
    files: (cols) => Array.from({ length: cols }, (_, i) => String(i + 1)),
    ranks: () => [],
    label: (sq) => t('board.column', { c: sq.col + 1, r: sq.rows - sq.row }),
  },
};

/**
 * The notation of each game (SPEC §8 names the cells per game) and whether its disc count
 * matters while it is played; a game not listed is written in squares.
 */
const GAMES = {
  four_in_a_row: { notation: 'columns', drops: true, countDiscs: false },
  reversi: { notation: 'squares', drops: false, countDiscs: true },
};
const style = (game) => GAMES[game] || { notation: 'squares', drops: false, countDiscs: false };
const notation = (game) => NOTATIONS[style(game).notation];

/** Whether a move names a column (the disc drops) rather than a square. */
export const drops = (game) => style(game).drops;

/** Whether the disc count is worth showing while the game is played. */
export const countsDiscs = (game) => style(game).countDiscs;

/** The moves of a game record (`"4453"`, `"f5d6"`), one string per ply. */
export const splitMoves = (game, moves) => notation(game).split(moves);

/** The squares of a board (rows as the API gives them) in display order, row by row. */
export function squares(game, rows) {
  const n = notation(game);
  return rows.flatMap((line, row) => [...line].map((ch, col) => ({
    cell: n.cell(row, col, rows.length), disc: ch === '.' ? '' : ch, row, col, rows: rows.length,
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
 * The board with its coordinates (`name`: the game's name, for assistive technology). `play(move)` is called when a square offering a move is
 * clicked; `legal` lists the moves the player to move may play (marked when `hints`; empty
 * when the match hides them); `enabled` says whether a click plays; `last` is the cell of the
 * last move.
 */
export function board(game, rows, ply, { name = game, legal = [], enabled = false, play = null, hints = true, last = null } = {}) {
  const n = notation(game);
  const cols = rows[0]?.length ?? 0;
  const el = h('div', { class: `board ${game}`, 'data-board': game, 'data-ply': ply, role: 'group', 'aria-label': name });
  el.style.setProperty('--cols', cols);
  const moves = new Set(enabled ? legal : []);
  // Legal moves hidden by the match's settings: any empty square may be tried (the server judges).
  const open = enabled && !legal.length;
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
  return withCoordinates(el, n.files(cols), n.ranks(rows.length), game);
}

/** The board framed by its coordinates: files along the top (or below the columns), ranks left. */
function withCoordinates(el, files, ranks, game) {
  const frame = h('div', { class: `board-frame ${game}${ranks.length ? ' ranked' : ''}` });
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
