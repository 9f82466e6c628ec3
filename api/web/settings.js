// The form controls of a game's settings (house rules), built from what the catalogue says
// each setting takes (its values and default), and read back into a `settings` object.

import { checkbox, field, h, select } from './dom.js';
import { has, t } from './texts.js';

/** A setting's label: its own text, else its name. */
const label = (name) => (has(`setting.${name}`) ? t(`setting.${name}`) : name);

/** A value's label: its own text (`setting.first.random`), a count (`setting.turn_seconds.n`), else itself. */
function valueLabel(name, value) {
  if (has(`setting.${name}.${value}`)) return t(`setting.${name}.${value}`);
  if (typeof value === 'number' && has(`setting.${name}.n`)) return t(`setting.${name}.n`, { n: value });
  return String(value);
}

/** The controls of `game`'s settings named in `names` (all of them when null), in catalogue order. */
export function settingControls(game, names = null) {
  return game.settings.filter((s) => !names || names.includes(s.name)).map((s) => {
    const control = s.values.every((v) => typeof v === 'boolean')
      ? checkbox(s.name, label(s.name), s.default === true)
      : field(label(s.name), select(s.name, s.values.map((v) => [JSON.stringify(v), valueLabel(s.name, v)]), JSON.stringify(s.default)));
    control.dataset.setting = s.name;
    control.title = s.description || '';
    return control;
  });
}

/** The settings the controls of `game` in `holder` hold (only those present there; a form's
 * other controls may share a setting's name, such as the solo form's `first`). */
export function readSettings(game, holder) {
  const settings = {};
  for (const s of game.settings) {
    const el = holder.querySelector(`[data-setting="${s.name}"] [name="${s.name}"], [data-setting="${s.name}"][name="${s.name}"]`);
    if (!el) continue;
    settings[s.name] = el.type === 'checkbox' ? el.checked : JSON.parse(el.value);
  }
  return settings;
}

/** A `<fieldset>` that holds the controls of the game chosen in `form`'s game select. */
export function settingsFieldset(className) {
  return h('fieldset', { class: `settings ${className}` });
}
