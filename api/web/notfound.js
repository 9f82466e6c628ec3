// The page for an address the site does not have.

import { h } from './dom.js';
import { t } from './texts.js';
import { frame } from './view.js';

export function show() {
  frame(t('notFound.title'), h('p', {}, t('notFound.text'), ' ', h('a', { href: '/' }, t('nav.home'))));
}
