//! The game catalogue of `GET /v1/games`: names, rules, glossary, FAQ, board, notation, settings
//! and CPU levels, in English and Portuguese, and the limits the server holds input to.
//!
//! Every text comes from the language's data file ([`crate::texts`]: each game's name, summary,
//! rules, glossary and FAQ, the settings' descriptions, the shared product FAQ); the structure
//! around them — ids, the board's size and the move notation, settings, their values and
//! defaults, CPU levels — is built here once, from the domain, so the two languages cannot drift
//! apart and a client needs to know no game by its id.
//!
//! The limits ([`Limits`]) are read where each is defined, once: a tournament's bounds in
//! `domain::tournaments::limits`, the turn limits in `domain::matches::TurnSeconds`, a player's
//! name in `service::checks`. The OpenAPI schemas and the error texts read the same constants,
//! and the web client bounds its forms by this answer (`tests/it/catalogue_limits.rs` compares
//! them all).
//! Portuguese is Brazilian Portuguese ("você") throughout.

use domain::games::{Board, GameId, Notation};
use domain::matches::{DaysPerMove, Settings, TurnSeconds};
use domain::tournaments::limits as tournament;
use serde::Serialize;
use serde_json::{Value, json};

use crate::error::ApiError;
use crate::lang::Lang;
use crate::texts::{self, GameTexts, SettingTexts, Texts};

/// The answer of `GET /v1/games`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Catalogue {
    pub games: Vec<GameEntry>,
    /// The limits the server holds input to: a client bounds its forms by them.
    pub limits: Limits,
}

/// The limits the server holds input to, each defined once where it is a rule and read from
/// there (the request bodies' schemas and the error texts state the same numbers).
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Limits {
    /// The turn limits, in seconds, that a room, a ranked pool or a tournament's games may have
    /// (besides `null`: none), shortest first.
    pub turn_seconds: Vec<u32>,
    /// The days per move a correspondence game may have, shortest first.
    pub days_per_move: Vec<u32>,
    /// The most characters of a player's name once surrounding spaces are dropped (at least
    /// one).
    pub player_name_max: usize,
    pub tournament: TournamentLimits,
    pub challenge: ChallengeLimits,
}

/// The bounds on the challenges a player sends (`POST /v1/challenges`).
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct ChallengeLimits {
    /// The most open challenges a player may have sent at once.
    pub open_max: u32,
    /// The most challenges a player may send in a minute.
    pub per_minute: u32,
    /// How many hours a challenge waits for its answer before it lapses.
    pub lifetime_hours: i64,
}

/// The bounds of a new tournament (`POST /v1/tournaments`).
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct TournamentLimits {
    /// The most characters of its name once surrounding spaces are dropped (at least one).
    pub name_max: usize,
    /// An arena's `minutes`.
    pub arena_minutes: Bounds,
    /// A Swiss tournament's `rounds`.
    pub swiss_rounds: Bounds,
    /// `max_players`, whatever the format.
    pub players: Bounds,
    /// The most players a round robin takes (and its `max_players` when not given).
    pub round_robin_players_max: u32,
    /// How many days ahead `starts_at` may lie.
    pub scheduled_within_days: u32,
    /// Each game's turn limit, in seconds, when `settings.turn_seconds` is not given.
    pub default_turn_seconds: u32,
}

/// Inclusive bounds.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Bounds {
    pub min: u32,
    pub max: u32,
}

impl Bounds {
    fn of(range: &std::ops::RangeInclusive<u32>) -> Bounds {
        Bounds {
            min: *range.start(),
            max: *range.end(),
        }
    }
}

impl Limits {
    /// The limits, from where each is defined.
    pub fn now() -> Limits {
        Limits {
            turn_seconds: TurnSeconds::ALLOWED.to_vec(),
            days_per_move: DaysPerMove::ALLOWED.to_vec(),
            player_name_max: service::checks::PLAYER_NAME_MAX,
            tournament: TournamentLimits {
                name_max: tournament::NAME_MAX,
                arena_minutes: Bounds::of(&tournament::ARENA_MINUTES),
                swiss_rounds: Bounds::of(&tournament::SWISS_ROUNDS),
                players: Bounds::of(&(tournament::PLAYERS_MIN..=tournament::PLAYERS_MAX)),
                round_robin_players_max: tournament::ROUND_ROBIN_MAX,
                scheduled_within_days: tournament::SCHEDULED_DAYS_MAX,
                default_turn_seconds: domain::tournaments::limits::DEFAULT_TURN_SECONDS,
            },
            challenge: ChallengeLimits {
                open_max: domain::challenges::OPEN_MAX,
                per_minute: domain::challenges::PER_MINUTE,
                lifetime_hours: domain::challenges::LIFETIME.whole_hours(),
            },
        }
    }
}

/// One game: what it is, its complete rules and notations, and what can be set for it.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct GameEntry {
    /// `"four_in_a_row"` or `"reversi"`.
    #[schemars(with = "domain::games::GameId")]
    pub id: &'static str,
    pub name: &'static str,
    pub summary: &'static str,
    /// The complete rules, one statement per entry, including the move and board notations.
    pub rules: Vec<&'static str>,
    /// The board's size: the board of a match has `rows` strings of `columns` cells.
    pub board: Board,
    /// How a move is written, and so how a client names the cells: `column`, a column number
    /// from `1` at the left (the disc drops to the lowest empty cell); `square`, a file letter
    /// from `a` at the left and a rank number from `1`, the first row of the board.
    pub notation: Notation,
    pub glossary: Vec<Term>,
    pub faq: Vec<Faq>,
    pub settings: Vec<SettingInfo>,
    /// The CPU levels a solo match may ask for, weakest first.
    pub cpu_levels: Vec<u8>,
}

/// A glossary entry.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Term {
    pub term: &'static str,
    pub definition: &'static str,
}

/// A frequently asked question and its answer.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Faq {
    pub question: &'static str,
    pub answer: String,
}

/// A room setting (house rule) of a game: its key in `settings`, the values it takes and its
/// default.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct SettingInfo {
    pub name: &'static str,
    pub values: Value,
    pub default: Value,
    pub description: &'static str,
}

/// The catalogue in one language, in the order of `GameId::ALL` (Four in a Row, then Reversi).
pub fn catalogue(lang: Lang) -> Result<Catalogue, ApiError> {
    let texts = texts::of(lang).map_err(ApiError::from)?;
    Ok(Catalogue {
        games: GameId::ALL
            .iter()
            .map(|&game| game_entry(lang, texts, game))
            .collect::<Result<_, _>>()?,
        limits: Limits::now(),
    })
}

/// The values of the placeholders a catalogue's text may hold, in `lang`: the turn limits
/// (`{turn_seconds}`: `30 or 60`).
fn limit_words(lang: Lang) -> [(&'static str, String); 1] {
    [(
        "turn_seconds",
        crate::reasons::alternatives(lang, &TurnSeconds::ALLOWED),
    )]
}

fn game_entry(lang: Lang, all: &'static Texts, game: GameId) -> Result<GameEntry, ApiError> {
    // Present for every game: checked at start-up (`texts::check`).
    let texts: &'static GameTexts = all
        .games
        .get(game.as_str())
        .ok_or_else(|| anyhow::anyhow!("no texts for {game}"))?;
    Ok(GameEntry {
        id: game.as_str(),
        name: &texts.name,
        summary: &texts.summary,
        rules: texts.rules.iter().map(String::as_str).collect(),
        board: game.board(),
        notation: game.notation(),
        glossary: texts
            .glossary
            .iter()
            .map(|(term, definition)| Term { term, definition })
            .collect(),
        faq: texts
            .faq
            .iter()
            .chain(&all.product_faq)
            .map(|(question, answer)| Faq {
                question,
                answer: texts::fill(answer, &limit_words(lang)),
            })
            .collect(),
        settings: settings(&all.settings, Settings::can_hide_legal_moves(game)),
        cpu_levels: domain::cpu::LEVELS.collect(),
    })
}

/// The house rules, in the order of the rooms' settings; values and defaults from the domain's
/// [`Settings`].
fn settings(texts: &'static SettingTexts, has_show_legal_moves: bool) -> Vec<SettingInfo> {
    let defaults = Settings::default();
    let limits = std::iter::once(Value::Null).chain(TurnSeconds::ALLOWED.map(|s| json!(s)));
    let mut settings = vec![
        SettingInfo {
            name: "turn_seconds",
            values: Value::Array(limits.collect()),
            default: json!(defaults.turn_seconds),
            description: &texts.turn_seconds,
        },
        SettingInfo {
            name: "days_per_move",
            values: Value::Array(
                std::iter::once(Value::Null)
                    .chain(DaysPerMove::ALLOWED.map(|d| json!(d)))
                    .collect(),
            ),
            default: json!(defaults.days_per_move),
            description: &texts.days_per_move,
        },
        SettingInfo {
            name: "alternate_first",
            values: json!([true, false]),
            default: json!(defaults.alternate_first),
            description: &texts.alternate_first,
        },
        SettingInfo {
            name: "first",
            values: json!(["seat1", "seat2", "random"]),
            default: json!(defaults.first),
            description: &texts.first,
        },
    ];
    if has_show_legal_moves {
        settings.push(SettingInfo {
            name: "show_legal_moves",
            values: json!([true, false]),
            default: json!(defaults.show_legal_moves),
            description: &texts.show_legal_moves,
        });
    }
    settings
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The catalogue of `lang`, whose texts must parse.
    fn of(lang: Lang) -> Catalogue {
        catalogue(lang).expect("the texts parse")
    }

    const BOTH: [Lang; 2] = [Lang::En, Lang::Pt];

    fn ids(catalogue: &Catalogue) -> Vec<&'static str> {
        catalogue.games.iter().map(|game| game.id).collect()
    }

    /// Every text of a catalogue, with a label saying where it is.
    fn texts(catalogue: &Catalogue) -> Vec<(String, &str)> {
        let mut all = Vec::new();
        for game in &catalogue.games {
            let id = game.id;
            all.push((format!("{id}.id"), game.id));
            all.push((format!("{id}.name"), game.name));
            all.push((format!("{id}.summary"), game.summary));
            for (i, rule) in game.rules.iter().enumerate() {
                all.push((format!("{id}.rules[{i}]"), *rule));
            }
            for (i, term) in game.glossary.iter().enumerate() {
                all.push((format!("{id}.glossary[{i}].term"), term.term));
                all.push((format!("{id}.glossary[{i}].definition"), term.definition));
            }
            for (i, faq) in game.faq.iter().enumerate() {
                all.push((format!("{id}.faq[{i}].question"), faq.question));
                all.push((format!("{id}.faq[{i}].answer"), &faq.answer));
            }
            for setting in &game.settings {
                all.push((format!("{id}.settings.{}.name", setting.name), setting.name));
                all.push((
                    format!("{id}.settings.{}.description", setting.name),
                    setting.description,
                ));
            }
        }
        all
    }

    #[test]
    fn both_languages_list_both_games_with_the_same_ids() {
        for lang in BOTH {
            assert_eq!(ids(&of(lang)), ["four_in_a_row", "reversi"], "{lang:?}");
        }
        assert_eq!(ids(&of(Lang::En)), ids(&of(Lang::Pt)));
    }

    #[test]
    fn settings_match_spec_and_are_identical_across_languages() {
        let common = vec![
            ("turn_seconds", json!([null, 30, 60]), json!(null)),
            (
                "days_per_move",
                json!([null, 1, 2, 3, 5, 7, 14]),
                json!(null),
            ),
            ("alternate_first", json!([true, false]), json!(true)),
            ("first", json!(["seat1", "seat2", "random"]), json!("seat1")),
        ];
        let mut reversi = common.clone();
        reversi.push(("show_legal_moves", json!([true, false]), json!(true)));
        for lang in BOTH {
            let catalogue = of(lang);
            for (game, expected) in catalogue.games.iter().zip([&common, &reversi]) {
                let actual: Vec<_> = game
                    .settings
                    .iter()
                    .map(|s| (s.name, s.values.clone(), s.default.clone()))
                    .collect();
                assert_eq!(&actual, expected, "{lang:?} {}", game.id);
                for setting in &game.settings {
                    let values = setting.values.as_array().expect("values is an array");
                    assert!(
                        values.contains(&setting.default),
                        "{lang:?} {}: default of {} not among its values",
                        game.id,
                        setting.name
                    );
                }
            }
        }
    }

    #[test]
    fn board_and_notation_are_the_domains() {
        for lang in BOTH {
            let value = serde_json::to_value(of(lang)).expect("catalogue serialises");
            assert_eq!(value["games"][0]["board"], json!({"columns": 7, "rows": 6}));
            assert_eq!(value["games"][0]["notation"], "column");
            assert_eq!(value["games"][1]["board"], json!({"columns": 8, "rows": 8}));
            assert_eq!(value["games"][1]["notation"], "square");
        }
    }

    #[test]
    fn cpu_levels_are_one_to_five() {
        for lang in BOTH {
            for game in of(lang).games {
                assert_eq!(game.cpu_levels, [1, 2, 3, 4, 5], "{lang:?} {}", game.id);
            }
        }
    }

    #[test]
    fn no_text_is_empty_and_sizes_are_within_bounds() {
        for lang in BOTH {
            let catalogue = of(lang);
            for (place, text) in texts(&catalogue) {
                assert!(!text.trim().is_empty(), "{lang:?}: {place} is empty");
                assert_eq!(text, text.trim(), "{lang:?}: {place} has stray whitespace");
                assert!(
                    !text.contains('{'),
                    "{lang:?}: {place} has a placeholder left"
                );
            }
            for game in &catalogue.games {
                assert!(
                    (4..=6).contains(&game.glossary.len()),
                    "{lang:?} {}: {} glossary terms",
                    game.id,
                    game.glossary.len()
                );
                // Each game's own questions and the product's (leaving, time, rating, fair play).
                assert!(
                    (5..=9).contains(&game.faq.len()),
                    "{lang:?} {}: {} questions",
                    game.id,
                    game.faq.len()
                );
                assert!(game.rules.len() >= 8, "{lang:?} {}", game.id);
            }
        }
    }

    #[test]
    fn languages_have_parallel_structure() {
        let (en, pt) = (of(Lang::En), of(Lang::Pt));
        for (en, pt) in en.games.iter().zip(&pt.games) {
            assert_eq!(en.rules.len(), pt.rules.len(), "{}", en.id);
            assert_eq!(en.glossary.len(), pt.glossary.len(), "{}", en.id);
            assert_eq!(en.faq.len(), pt.faq.len(), "{}", en.id);
            assert_eq!(en.settings.len(), pt.settings.len(), "{}", en.id);
        }
        // The two languages are really translated, not the same text twice.
        let en_texts = texts(&en);
        let pt_texts = texts(&pt);
        for ((place, en_text), (_, pt_text)) in en_texts.iter().zip(&pt_texts) {
            if place.ends_with(".description") || place.contains(".rules[") {
                assert_ne!(en_text, pt_text, "{place} is not translated");
            }
        }
    }

    #[test]
    fn rules_state_the_notations_and_key_facts() {
        for lang in BOTH {
            let catalogue = of(lang);
            let rules = |id: &str| -> String {
                catalogue
                    .games
                    .iter()
                    .find(|game| game.id == id)
                    .map(|game| game.rules.join("\n"))
                    .unwrap_or_default()
            };
            let four = rules("four_in_a_row");
            for needle in [
                "\"1\"", "\"7\"", "\"4453\"", "42", "\"R\"", "\"Y\"", "\".\"",
            ] {
                assert!(four.contains(needle), "{lang:?} four_in_a_row: {needle}");
            }
            let reversi = rules("reversi");
            for needle in [
                "d4",
                "e5",
                "d5",
                "e4",
                "\"a1\"",
                "\"h8\"",
                "c4, d3, e6",
                "f5",
                "\"f5d6c3d3c4\"",
                "60",
                "\"B\"",
                "\"W\"",
                "\"...WB...\"",
                "\"...BW...\"",
                "\"........\"",
            ] {
                assert!(reversi.contains(needle), "{lang:?} reversi: {needle}");
            }
        }
    }

    #[test]
    fn portuguese_is_consistently_brazilian() {
        let european = [
            "registo",
            "definições",
            "predefinições",
            "podes",
            "deves",
            "cercares",
            "lembra-te",
            "ecrã",
            "utilizador",
            "connosco",
            "facto",
            " tu ",
            " teu ",
            " tua ",
            " tuas ",
            " teus ",
            "porque são",
            "equipa",
            "telemóvel",
            " numa ",
            " num ",
        ];
        for (place, text) in texts(&of(Lang::Pt)) {
            let lower = format!(" {} ", text.to_lowercase());
            for word in european {
                assert!(!lower.contains(word), "{place}: European form {word:?}");
            }
        }
    }

    #[test]
    fn the_limits_are_the_rules_and_the_answers_state_the_turn_limits() {
        let said = [(Lang::En, "30 or 60"), (Lang::Pt, "30 ou 60")];
        for (lang, turn_limits) in said {
            let catalogue = of(lang);
            let limits = &catalogue.limits;
            assert_eq!(limits.turn_seconds, TurnSeconds::ALLOWED);
            assert_eq!(limits.player_name_max, service::checks::PLAYER_NAME_MAX);
            let t = &limits.tournament;
            assert_eq!(
                t.arena_minutes.min..=t.arena_minutes.max,
                tournament::ARENA_MINUTES
            );
            assert_eq!(
                t.swiss_rounds.min..=t.swiss_rounds.max,
                tournament::SWISS_ROUNDS
            );
            assert_eq!(
                (t.players.min, t.players.max, t.round_robin_players_max),
                (
                    tournament::PLAYERS_MIN,
                    tournament::PLAYERS_MAX,
                    tournament::ROUND_ROBIN_MAX
                )
            );
            assert_eq!(t.name_max, tournament::NAME_MAX);
            assert!(TurnSeconds::try_from(t.default_turn_seconds).is_ok());
            for game in &catalogue.games {
                assert!(
                    game.faq.iter().any(|f| f.answer.contains(turn_limits)),
                    "{lang:?} {}: no answer says {turn_limits}",
                    game.id
                );
            }
        }
    }

    #[test]
    fn serialises_to_the_documented_shape() {
        for lang in BOTH {
            let value = serde_json::to_value(of(lang)).expect("catalogue serialises");
            assert!(value["limits"]["tournament"]["arena_minutes"]["max"].is_u64());
            let games = value["games"].as_array().expect("games is an array");
            assert_eq!(games.len(), 2);
            for game in games {
                for key in [
                    "id",
                    "name",
                    "summary",
                    "rules",
                    "board",
                    "notation",
                    "glossary",
                    "faq",
                    "settings",
                    "cpu_levels",
                ] {
                    assert!(game.get(key).is_some(), "{lang:?}: missing {key}");
                }
                assert!(game["glossary"][0]["term"].is_string());
                assert!(game["glossary"][0]["definition"].is_string());
                assert!(game["faq"][0]["question"].is_string());
                assert!(game["faq"][0]["answer"].is_string());
                for key in ["name", "values", "default", "description"] {
                    assert!(game["settings"][0].get(key).is_some(), "{lang:?}: {key}");
                }
                assert_eq!(game["settings"][0]["default"], Value::Null);
            }
        }
    }
}
