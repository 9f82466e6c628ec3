// The client's texts: the "client" part of api/texts/<lang>.json, which the server serves beside
// this module as texts.<lang>.json (hashed with the other assets); `t(key, vars)` fills `{name}`.

const root = document.documentElement;

/** The languages the server speaks (the shell lists them), the first one the default. */
export const LANGUAGES = (root.dataset.languages || 'en').split(' ').filter(Boolean);

/** The page's language: the visitor's choice, else the server's pick from Accept-Language. */
export const lang = [localStorage.getItem('discs.lang'), root.dataset.serverLang]
  .find((l) => l && LANGUAGES.includes(l)) || LANGUAGES[0];
root.lang = lang;

const TEXTS = await load(lang);

async function load(tag) {
  const res = await fetch(new URL(`./texts.${tag}.json`, import.meta.url));
  if (!res.ok) {
    // No texts, so nothing to say it with but the status itself.
    const main = document.getElementById('main');
    if (main) main.textContent = `discs: texts.${tag}.json — HTTP ${res.status}`;
    throw new Error(`the ${tag} texts did not load: HTTP ${res.status}`);
  }
  return res.json();
}

/** The text `key` in the page's language with each `{name}` replaced from `vars`. */
export function t(key, vars = {}) {
  const text = TEXTS[key];
  if (text === undefined) return key;
  return text.replace(/\{(\w+)\}/g, (whole, name) => (name in vars ? String(vars[name]) : whole));
}

/** Whether the texts have `key` (for texts named after API values, such as a setting). */
export const has = (key) => key in TEXTS;
