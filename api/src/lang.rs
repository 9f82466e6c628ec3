//! The languages the API speaks (English, Brazilian Portuguese) and how a request picks one
//! from `Accept-Language` (RFC 9110 weights).

/// A language the product speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Lang {
    #[default]
    En,
    Pt,
}

impl Lang {
    /// Picks the best language from an `Accept-Language` header value (RFC 9110 weights `q=`; `pt`, `pt-BR`, `pt-PT` → Pt; anything else or nothing → En; q=0 means "not acceptable").
    ///
    /// A language's weight is the highest weight of the ranges naming it (by primary subtag,
    /// case-insensitively); `*` gives its weight to a language no range names. The highest
    /// weight above 0 wins, ties going to the range listed first, then to English. Malformed
    /// entries (bad tag, bad `q`) are skipped; when nothing acceptable remains, English.
    pub fn from_accept_language(header: Option<&str>) -> Lang {
        const LANGS: [Lang; 2] = [Lang::En, Lang::Pt];
        let Some(header) = header else {
            return Lang::default();
        };
        // (weight in thousandths, position of the range in the header)
        let mut named: [Option<(u16, usize)>; 2] = [None, None];
        let mut wildcard: Option<(u16, usize)> = None;
        for (position, item) in header.split(',').enumerate() {
            let Some((range, weight)) = parse_language_range(item) else {
                continue;
            };
            let slot = match range {
                LanguageRange::Any => &mut wildcard,
                LanguageRange::Known(lang) => &mut named[lang.index()],
                LanguageRange::Other => continue,
            };
            if slot.is_none_or(|(best, _)| weight > best) {
                *slot = Some((weight, position));
            }
        }
        let mut chosen: Option<(Lang, u16, usize)> = None;
        for lang in LANGS {
            let Some((weight, position)) = named[lang.index()].or(wildcard) else {
                continue;
            };
            if weight == 0 {
                continue;
            }
            let better = match chosen {
                None => true,
                Some((_, best_weight, best_position)) => {
                    weight > best_weight || (weight == best_weight && position < best_position)
                }
            };
            if better {
                chosen = Some((lang, weight, position));
            }
        }
        chosen.map_or_else(Lang::default, |(lang, _, _)| lang)
    }

    /// The tag for `Content-Language` ("en" / "pt-BR").
    pub fn tag(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::Pt => "pt-BR",
        }
    }

    fn index(self) -> usize {
        match self {
            Lang::En => 0,
            Lang::Pt => 1,
        }
    }
}

/// What one `Accept-Language` entry asks for.
enum LanguageRange {
    Any,
    Known(Lang),
    Other,
}

/// One `language-range [; q=weight]` entry: the range and its weight in thousandths (1000 when
/// no weight is given). `None` for an empty or malformed entry.
fn parse_language_range(item: &str) -> Option<(LanguageRange, u16)> {
    let mut parts = item.split(';');
    let range = parts.next()?.trim_matches(is_ows);
    if range.is_empty() {
        return None;
    }
    let mut weight = 1000;
    for parameter in parts {
        let (name, value) = parameter.split_once('=')?;
        if name.trim_matches(is_ows).eq_ignore_ascii_case("q") {
            weight = parse_qvalue(value.trim_matches(is_ows))?;
        }
    }
    if range == "*" {
        return Some((LanguageRange::Any, weight));
    }
    let mut subtags = range.split('-');
    let primary = subtags.next()?;
    let well_formed = (1..=8).contains(&primary.len())
        && primary.bytes().all(|b| b.is_ascii_alphabetic())
        && subtags
            .all(|s| (1..=8).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_alphanumeric()));
    if !well_formed {
        return None;
    }
    let range = if primary.eq_ignore_ascii_case("pt") {
        LanguageRange::Known(Lang::Pt)
    } else if primary.eq_ignore_ascii_case("en") {
        LanguageRange::Known(Lang::En)
    } else {
        LanguageRange::Other
    };
    Some((range, weight))
}

/// An RFC 9110 `qvalue` (`0`, `0.5`, `1.000`, ...) in thousandths; digits past the third decimal
/// are tolerated and ignored. `None` when it is not a number from 0 to 1.
fn parse_qvalue(text: &str) -> Option<u16> {
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    if !fraction.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    match whole {
        "0" => Some(
            fraction
                .bytes()
                .chain(std::iter::repeat(b'0'))
                .take(3)
                .fold(0, |acc, digit| acc * 10 + u16::from(digit - b'0')),
        ),
        "1" if fraction.bytes().all(|b| b == b'0') => Some(1000),
        _ => None,
    }
}

/// Optional whitespace (RFC 9110 `OWS`).
fn is_ows(c: char) -> bool {
    c == ' ' || c == '\t'
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_language_picks_the_best_language() {
        let cases: &[(Option<&str>, Lang)] = &[
            (None, Lang::En),
            (Some(""), Lang::En),
            (Some("pt-BR,pt;q=0.9,en;q=0.8"), Lang::Pt),
            (Some("en-US,pt;q=0.5"), Lang::En),
            (Some("fr, pt;q=0.3"), Lang::Pt),
            (Some("pt;q=0, en"), Lang::En),
            (Some("pt;q=0"), Lang::En),
            (Some("garbage"), Lang::En),
            (Some("!!!;;;q=x,,,"), Lang::En),
            (Some("\u{0}\u{ff}ção"), Lang::En),
            (Some("pt"), Lang::Pt),
            (Some("pt-PT"), Lang::Pt),
            (Some("PT-br"), Lang::Pt),
            (Some("pt-BR;q=1.000"), Lang::Pt),
            (Some("en;q=0.8, pt;q=0.8"), Lang::En),
            (Some("pt;q=0.8, en;q=0.8"), Lang::Pt),
            (Some("en;q=0.2, pt-BR;q=0.25"), Lang::Pt),
            (Some("de, fr;q=0.9"), Lang::En),
            (Some("*"), Lang::En),
            (Some("en;q=0, *;q=0.5"), Lang::Pt),
            (Some("*;q=0.5, pt;q=0"), Lang::En),
            (Some("pt;q=1.5, en;q=0.1"), Lang::En),
            (Some("pt;q=abc"), Lang::En),
            (Some("pt;q=-1"), Lang::En),
            (Some("pt ; q=0.7 ,\ten;q=0.6"), Lang::Pt),
            (Some("pt;Q=0.9, en;q=0.95"), Lang::En),
            (Some("portuguese, pt_BR"), Lang::En),
        ];
        for &(header, expected) in cases {
            assert_eq!(Lang::from_accept_language(header), expected, "{header:?}");
        }
    }

    #[test]
    fn qvalues_parse_in_thousandths() {
        assert_eq!(parse_qvalue("0"), Some(0));
        assert_eq!(parse_qvalue("0."), Some(0));
        assert_eq!(parse_qvalue("0.5"), Some(500));
        assert_eq!(parse_qvalue("0.25"), Some(250));
        assert_eq!(parse_qvalue("0.125"), Some(125));
        assert_eq!(parse_qvalue("1"), Some(1000));
        assert_eq!(parse_qvalue("1.000"), Some(1000));
        assert_eq!(parse_qvalue("1.001"), None);
        assert_eq!(parse_qvalue("2"), None);
        assert_eq!(parse_qvalue(""), None);
        assert_eq!(parse_qvalue(".5"), None);
        assert_eq!(parse_qvalue("0.5x"), None);
    }

    #[test]
    fn tags_name_the_served_languages() {
        assert_eq!(Lang::En.tag(), "en");
        assert_eq!(Lang::Pt.tag(), "pt-BR");
        assert_eq!(Lang::default(), Lang::En);
        for lang in [Lang::En, Lang::Pt] {
            assert_eq!(Lang::from_accept_language(Some(lang.tag())), lang);
        }
    }
}
