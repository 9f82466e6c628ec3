//! Every human-facing text of the product, one data file per language (`api/texts/en.json`,
//! `api/texts/pt.json`): the game catalogue's prose, the problem documents' titles and
//! details, and the web client's texts (`client`, served to the browser as
//! `/assets/<version>/texts.<lang>.json`). Portuguese is Brazilian Portuguese ("você")
//! throughout.
//!
//! A detail is a template whose `{name}` placeholders are filled from a typed reason (the
//! `reasons` module); the data files hold the same templates, with the same placeholders, in
//! every language (checked at start-up and by the tests). The client's texts are templates too,
//! filled in the browser, and checked the same way.

use std::collections::HashMap;
use std::sync::OnceLock;

use serde::Deserialize;

use domain::games::GameId;

use crate::lang::Lang;

/// The texts of one language, as its data file (`api/texts/<lang>.json`) holds them.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Texts {
    /// Each game's texts, by its wire id: one entry per game of `GameId::ALL`.
    pub games: HashMap<String, GameTexts>,
    pub settings: SettingTexts,
    /// The questions about the product (leaving, turn limits, resigning, ranked results) that
    /// both games share; they follow each game's own questions.
    pub product_faq: Vec<(String, String)>,
    pub problems: ProblemTexts,
    /// The web client's texts by key (`"match.yourTurn"`), `{name}` placeholders filled by the
    /// browser.
    pub client: HashMap<String, String>,
}

/// The texts of one game. Glossary and FAQ entries are `(term, definition)` and
/// `(question, answer)` pairs.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GameTexts {
    pub name: String,
    pub summary: String,
    pub rules: Vec<String>,
    pub glossary: Vec<(String, String)>,
    pub faq: Vec<(String, String)>,
}

/// The descriptions of the settings.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SettingTexts {
    pub turn_seconds: String,
    pub days_per_move: String,
    pub alternate_first: String,
    pub first: String,
    pub show_legal_moves: String,
}

/// The texts of problem documents: a title per error code, a detail template per reason.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProblemTexts {
    pub titles: HashMap<String, String>,
    pub details: HashMap<String, String>,
    /// The words of serde's own messages (`a string`, `integer`…) that appear inside a detail,
    /// in this language; a word not listed is shown as serde wrote it.
    pub words: HashMap<String, String>,
    /// Why an analysis job failed, by the code it is stored under
    /// (`service::analysis::jobs::Failure`).
    pub failures: HashMap<String, String>,
    /// What the operators' calls say in words: `/readyz`'s reason, the matchmaking schedule of
    /// `/v1/admin/queue/stats`, the rules of an explained rating.
    pub notes: HashMap<String, String>,
}

/// The data files, embedded in the binary.
const FILES: [(Lang, &str); 2] = [
    (Lang::En, include_str!("../texts/en.json")),
    (Lang::Pt, include_str!("../texts/pt.json")),
];

/// The texts of `lang`, read from its data file once. A file that does not parse is refused at
/// start-up ([`check`]) and by the tests; here it is an error, never a panic.
pub fn of(lang: Lang) -> anyhow::Result<&'static Texts> {
    static TEXTS: OnceLock<Result<Vec<(Lang, Texts)>, String>> = OnceLock::new();
    let all = TEXTS.get_or_init(|| {
        FILES
            .iter()
            .map(|&(lang, file)| {
                serde_json::from_str(file)
                    .map(|t| (lang, t))
                    .map_err(|e| format!("the {} texts do not parse: {e}", lang.tag()))
            })
            .collect()
    });
    let all = all.as_ref().map_err(|e| anyhow::anyhow!("{e}"))?;
    all.iter()
        .find(|(l, _)| *l == lang)
        .map(|(_, t)| t)
        .ok_or_else(|| anyhow::anyhow!("no texts for {}", lang.tag()))
}

/// Whether every language's texts parse, describe exactly the games discs serves, and hold
/// the same problem templates and the same client texts with the same placeholders (start-up
/// refuses to serve without them).
pub fn check() -> anyhow::Result<()> {
    let en = of(Lang::En)?;
    for (lang, _) in FILES {
        let texts = of(lang)?;
        let mut games: Vec<&str> = texts.games.keys().map(String::as_str).collect();
        games.sort_unstable();
        let mut served: Vec<&str> = GameId::ALL.iter().map(|g| g.as_str()).collect();
        served.sort_unstable();
        if games != served {
            anyhow::bail!(
                "the {} texts describe the games {games:?}, not {served:?}",
                lang.tag()
            );
        }
        for (what, ours, english) in [
            ("title", &texts.problems.titles, &en.problems.titles),
            ("detail", &texts.problems.details, &en.problems.details),
            ("failure", &texts.problems.failures, &en.problems.failures),
            ("note", &texts.problems.notes, &en.problems.notes),
        ] {
            same_templates(lang, what, ours, english)?;
        }
        same_templates(lang, "client text", &texts.client, &en.client)?;
        // The catalogue fills the product questions' placeholders (`{turn_seconds}`): each
        // answer has its English one's.
        for (i, ((_, own), (_, english))) in
            texts.product_faq.iter().zip(&en.product_faq).enumerate()
        {
            if placeholders(own) != placeholders(english) {
                anyhow::bail!(
                    "the {} answer to product question {i} does not have the placeholders of the English one",
                    lang.tag()
                );
            }
        }
    }
    Ok(())
}

/// Whether `ours` (the texts of `lang`) has a template for every key of `english`, with the same
/// placeholders, and no key English lacks.
fn same_templates(
    lang: Lang,
    what: &str,
    ours: &HashMap<String, String>,
    english: &HashMap<String, String>,
) -> anyhow::Result<()> {
    for (key, template) in english {
        let Some(own) = ours.get(key) else {
            anyhow::bail!("the {} texts have no {what} `{key}`", lang.tag());
        };
        if placeholders(own) != placeholders(template) {
            anyhow::bail!(
                "the {} {what} `{key}` does not have the placeholders of the English one",
                lang.tag()
            );
        }
    }
    if let Some(key) = ours.keys().find(|k| !english.contains_key(*k)) {
        anyhow::bail!("the {} {what} `{key}` has no English text", lang.tag());
    }
    Ok(())
}

/// The `{name}` placeholders of a template, sorted.
fn placeholders(template: &str) -> Vec<&str> {
    let mut names: Vec<&str> = template
        .split('{')
        .skip(1)
        .filter_map(|rest| rest.split_once('}').map(|(name, _)| name))
        .collect();
    names.sort_unstable();
    names.dedup();
    names
}

/// A problem's title in `lang` (the code itself if the texts are missing).
pub fn title(lang: Lang, code: &'static str) -> String {
    of(lang)
        .ok()
        .and_then(|t| t.problems.titles.get(code))
        .cloned()
        .unwrap_or_else(|| code.to_owned())
}

/// The detail template `key` in `lang` with its placeholders filled from `args`.
pub fn detail(lang: Lang, key: &str, args: &[(&str, String)]) -> String {
    #[cfg(test)]
    tests::USED.with(|used| used.borrow_mut().insert(key.to_owned()));
    let Some(template) = of(lang).ok().and_then(|t| t.problems.details.get(key)) else {
        return key.to_owned();
    };
    fill(template, args)
}

/// Why a job failed (its stored code) in `lang`, with its placeholders filled from `args`; a
/// code the texts do not know is shown as stored.
pub fn failure(lang: Lang, code: &str, args: &[(&str, String)]) -> String {
    match of(lang).ok().and_then(|t| t.problems.failures.get(code)) {
        Some(template) => fill(template, args),
        None => code.to_owned(),
    }
}

/// An operator's note `key` in `lang` (the request's), with its placeholders filled from `args`.
pub fn note(key: &str, args: &[(&str, String)]) -> String {
    let lang = crate::requests::lang();
    match of(lang).ok().and_then(|t| t.problems.notes.get(key)) {
        Some(template) => fill(template, args),
        None => key.to_owned(),
    }
}

/// A word of serde's messages in `lang`, or the word itself.
pub fn word(lang: Lang, word: &str) -> String {
    of(lang)
        .ok()
        .and_then(|t| t.problems.words.get(word))
        .cloned()
        .unwrap_or_else(|| word.to_owned())
}

/// `template` with each `{name}` replaced by its value in `args` (a name `args` lacks is left
/// as it is).
pub(crate) fn fill(template: &str, args: &[(&str, String)]) -> String {
    let mut out = String::with_capacity(template.len() + 32);
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after.find('}') {
            Some(close) => {
                let name = &after[..close];
                match args.iter().find(|(n, _)| *n == name) {
                    Some((_, value)) => out.push_str(value),
                    None => out.push_str(&rest[open..open + close + 2]),
                }
                rest = &after[close + 1..];
            }
            None => {
                out.push_str(&rest[open..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    thread_local! {
        /// The detail templates rendered on this thread (the tests check that every one is).
        pub(crate) static USED: std::cell::RefCell<std::collections::BTreeSet<String>> =
            Default::default();
    }

    /// The detail templates of the English texts.
    pub(crate) fn all_details() -> std::collections::BTreeSet<String> {
        of(Lang::En)
            .expect("the texts parse")
            .problems
            .details
            .keys()
            .cloned()
            .collect()
    }

    #[test]
    fn every_language_has_every_template_with_the_same_placeholders() {
        check().expect("the texts agree");
    }

    #[test]
    fn every_job_failure_reads_in_both_languages() {
        use service::analysis::jobs::Failure;
        for failure in Failure::ALL {
            let args = [("attempts", "3".to_owned())];
            let (en, pt) = (
                super::failure(Lang::En, failure.code(), &args),
                super::failure(Lang::Pt, failure.code(), &args),
            );
            assert_ne!(en, failure.code(), "{failure:?} has an English text");
            assert_ne!(pt, en, "{failure:?} has a Portuguese text");
            assert!(!en.contains('{') && !pt.contains('{'), "{en} / {pt}");
        }
        let en = of(Lang::En).expect("the texts parse");
        assert_eq!(
            en.problems.failures.len(),
            Failure::ALL.len(),
            "no other failure"
        );
    }

    #[test]
    fn a_missing_extra_or_different_translation_is_refused() {
        let texts = |pairs: &[(&str, &str)]| -> HashMap<String, String> {
            pairs
                .iter()
                .map(|&(k, v)| (k.to_owned(), v.to_owned()))
                .collect()
        };
        let english = texts(&[("match.ply", "Ply {n} of {total}"), ("match.live", "Live")]);
        let same = texts(&[
            ("match.ply", "Lance {n} de {total}"),
            ("match.live", "Ao vivo"),
        ]);
        assert!(same_templates(Lang::Pt, "client text", &same, &english).is_ok());
        for wrong in [
            texts(&[("match.ply", "Lance {n} de {total}")]),
            texts(&[("match.ply", "Lance {n}"), ("match.live", "Ao vivo")]),
            texts(&[
                ("match.ply", "Lance {n} de {total}"),
                ("match.live", "Ao vivo"),
                ("match.extra", "?"),
            ]),
        ] {
            assert!(same_templates(Lang::Pt, "client text", &wrong, &english).is_err());
        }
    }

    #[test]
    fn templates_fill_their_placeholders() {
        assert_eq!(
            fill(
                "limit must be {min} to {max}",
                &[("min", "1".into()), ("max", "500".into())]
            ),
            "limit must be 1 to 500"
        );
        assert_eq!(fill("{a}{a} {b", &[("a", "x".into())]), "xx {b");
        assert_eq!(fill("keeps {unknown}", &[]), "keeps {unknown}");
        assert_eq!(placeholders("{b} and {a} and {b}"), ["a", "b"]);
    }
}
