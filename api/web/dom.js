// Building the page: the element builder `h`, form fields, and the small formatters every page uses.

const SVG = new Set(['svg', 'g', 'path', 'circle', 'polyline', 'polygon', 'line', 'text', 'title']);

/**
 * An element: `h('a', {href: '/'}, 'home')`. `on*` attributes are listeners, `text` is the text
 * content, `null`/`false`/`undefined` attributes and children are left out; `svg: true` makes an
 * SVG element of a tag HTML also has (`a`).
 */
export function h(tag, attrs = {}, ...children) {
  const svg = SVG.has(tag) || (tag === 'a' && attrs.svg);
  const el = svg ? document.createElementNS('http://www.w3.org/2000/svg', tag) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false || k === 'svg') continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'text') el.textContent = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) if (c !== null && c !== undefined && c !== false) el.append(c);
  return el;
}

/** A labelled form control. */
export function field(label, control, attrs = {}) {
  return h('label', { class: 'field', ...attrs }, h('span', { text: label }), control);
}

/** A `<select name>` of `[value, text]` options with `value` selected. */
export function select(name, options, value) {
  return h('select', { name }, options.map(([v, text]) => h('option', { value: v, selected: v === value }, text)));
}

/** A checkbox with its label after it. */
export function checkbox(name, label, checked) {
  return h('label', { class: 'check' }, h('input', { type: 'checkbox', name, checked }), ' ', label);
}

/** `m:ss` of a duration in milliseconds (never negative). */
export function mmss(ms) {
  const s = Math.max(0, Math.ceil(ms / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}
