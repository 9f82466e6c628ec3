//! The game catalogue of `GET /v1/games`: names, rules, glossary, FAQ, settings and CPU levels, in English and Portuguese.
//!
//! Every text lives in one table per language (`GameTexts`, `SettingTexts`, the shared product
//! FAQ); the structure around them — ids, settings, their values and defaults, CPU levels — is
//! built once, so the two languages cannot drift apart. Portuguese is Brazilian Portuguese
//! ("você") throughout.

use domain::games::GameId;
use domain::matches::{Settings, TurnSeconds};
use serde::Serialize;
use serde_json::{Value, json};

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

/// The answer of `GET /v1/games`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Catalogue {
    pub games: Vec<GameEntry>,
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
    pub answer: &'static str,
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

/// The catalogue in one language: Four in a Row, then Reversi.
pub fn catalogue(lang: Lang) -> Catalogue {
    Catalogue {
        games: vec![
            game_entry(lang, GameId::FourInARow, four_in_a_row_texts(lang)),
            game_entry(lang, GameId::Reversi, reversi_texts(lang)),
        ],
    }
}

fn game_entry(lang: Lang, game: GameId, texts: &'static GameTexts) -> GameEntry {
    let product_faq = product_faq(lang);
    GameEntry {
        id: game.as_str(),
        name: texts.name,
        summary: texts.summary,
        rules: texts.rules.to_vec(),
        glossary: texts
            .glossary
            .iter()
            .map(|&(term, definition)| Term { term, definition })
            .collect(),
        faq: texts
            .faq
            .iter()
            .chain(product_faq)
            .map(|&(question, answer)| Faq { question, answer })
            .collect(),
        settings: settings(setting_texts(lang), Settings::can_hide_legal_moves(game)),
        cpu_levels: domain::cpu::LEVELS.collect(),
    }
}

/// SPEC §2: the house rules, in the order of its table; values and defaults from the domain's
/// [`Settings`].
fn settings(texts: &SettingTexts, has_show_legal_moves: bool) -> Vec<SettingInfo> {
    let defaults = Settings::default();
    let limits = std::iter::once(Value::Null).chain(TurnSeconds::ALLOWED.map(|s| json!(s)));
    let mut settings = vec![
        SettingInfo {
            name: "turn_seconds",
            values: Value::Array(limits.collect()),
            default: json!(defaults.turn_seconds),
            description: texts.turn_seconds,
        },
        SettingInfo {
            name: "alternate_first",
            values: json!([true, false]),
            default: json!(defaults.alternate_first),
            description: texts.alternate_first,
        },
        SettingInfo {
            name: "first",
            values: json!(["seat1", "seat2", "random"]),
            default: json!(defaults.first),
            description: texts.first,
        },
    ];
    if has_show_legal_moves {
        settings.push(SettingInfo {
            name: "show_legal_moves",
            values: json!([true, false]),
            default: json!(defaults.show_legal_moves),
            description: texts.show_legal_moves,
        });
    }
    settings
}

/// The texts of one game in one language. Glossary and FAQ entries are `(term, definition)` and
/// `(question, answer)` pairs.
struct GameTexts {
    name: &'static str,
    summary: &'static str,
    rules: &'static [&'static str],
    glossary: &'static [(&'static str, &'static str)],
    faq: &'static [(&'static str, &'static str)],
}

/// The descriptions of the settings in one language.
struct SettingTexts {
    turn_seconds: &'static str,
    alternate_first: &'static str,
    first: &'static str,
    show_legal_moves: &'static str,
}

fn four_in_a_row_texts(lang: Lang) -> &'static GameTexts {
    match lang {
        Lang::En => &FOUR_IN_A_ROW_EN,
        Lang::Pt => &FOUR_IN_A_ROW_PT,
    }
}

fn reversi_texts(lang: Lang) -> &'static GameTexts {
    match lang {
        Lang::En => &REVERSI_EN,
        Lang::Pt => &REVERSI_PT,
    }
}

fn setting_texts(lang: Lang) -> &'static SettingTexts {
    match lang {
        Lang::En => &SETTINGS_EN,
        Lang::Pt => &SETTINGS_PT,
    }
}

/// The questions about the product (leaving, turn limits, resigning, ranked results) that both
/// games share; they follow each game's own questions.
fn product_faq(lang: Lang) -> &'static [(&'static str, &'static str)] {
    match lang {
        Lang::En => PRODUCT_FAQ_EN,
        Lang::Pt => PRODUCT_FAQ_PT,
    }
}

// ---------------------------------------------------------------------------------------------
// English
// ---------------------------------------------------------------------------------------------

const FOUR_IN_A_ROW_EN: GameTexts = GameTexts {
    name: "Four in a Row",
    summary: "Two players take turns dropping discs into an upright 7×6 grid; the first to get four or more of their colour in a line wins.",
    rules: &[
        "Two players share an upright grid 7 columns wide and 6 rows high, which starts empty.",
        "The player who moves first has the red discs (R) and the other player the yellow discs (Y); they take turns, one disc per turn.",
        "A move names only a column: the disc slides down to the lowest empty cell of that column.",
        "A column holding six discs is full and takes no more; every column that is not full is a legal move.",
        "A disc stays in the cell where it landed for the rest of the game: nothing moves it and nothing captures it.",
        "Whoever makes a line of four or more consecutive discs of their own colour, horizontally, vertically or diagonally, wins on the spot.",
        "When the 42nd disc fills the grid without anyone having made such a line, the game ends in a draw.",
        "Move notation: a move is written as its column number, from \"1\" to \"7\", counting from the left.",
        "A whole game is written as its moves run together with no separator: \"4453\" means red in column 4, yellow in column 4, red in column 5, then yellow in column 3.",
        "Board notation: a list of 6 strings of 7 characters, one per row, the top row first and each row read from left to right; \".\" is an empty cell, \"R\" a red disc and \"Y\" a yellow disc.",
    ],
    glossary: &[
        (
            "Column",
            "One of the 7 vertical slots of the grid, numbered 1 to 7 from the left; each move names one.",
        ),
        (
            "Row",
            "One of the 6 horizontal lines of the grid; discs fill every column from the bottom row upwards.",
        ),
        (
            "Line",
            "Four or more consecutive discs of one colour horizontally, vertically or diagonally; the first player to make one wins.",
        ),
        (
            "Threat",
            "Three discs of one colour in a straight run whose fourth cell is still empty: one more disc there would win, so it has to be blocked.",
        ),
        (
            "Draw",
            "The end of a game in which all 42 cells are taken and nobody has a line of four.",
        ),
    ],
    faq: &[
        (
            "Can I choose the exact cell for my disc?",
            "Not directly: you choose a column and gravity does the rest, so the disc lands on top of the discs already there, or at the bottom of an empty column. A full column cannot be chosen.",
        ),
        (
            "Does a line longer than four count?",
            "Yes. What counts is having at least four of your discs in an unbroken line, so five, six or seven win just the same.",
        ),
        (
            "Who moves first, and is that an advantage?",
            "Moving first is a small advantage, so it is shared out. In a room, the \"first\" setting picks who starts the first match, and with \"alternate_first\" on (the default) every rematch hands the first move to the other player. In ranked play, the first move goes to the player who started fewer of their last 10 ranked games of this game, with a coin flip on a tie. Whoever starts plays red.",
        ),
        (
            "Can I play against the computer?",
            "Yes. A solo match puts you against the CPU at a level from 1 (weakest) to 5 (strongest), and you start unless you ask the CPU to go first. Starting a match in a room where you are the only member also gives you the CPU as your opponent.",
        ),
    ],
};

const REVERSI_EN: GameTexts = GameTexts {
    name: "Reversi",
    summary: "Two players place black and white discs on an 8×8 board, flipping every line of opposing discs they trap; when neither can move, whoever has more discs wins.",
    rules: &[
        "Two players, black (B) and white (W), play on a board of 8 by 8 squares.",
        "The game starts with four discs in the centre: white on d4 and e5, black on d5 and e4, so that each colour sits on a diagonal.",
        "Black moves first; after that the players alternate, placing one disc per move.",
        "A move puts a disc of your colour on an empty square so that, along at least one of the 8 straight directions (horizontal, vertical or diagonal), one or more consecutive opposing discs lie between the new disc and another disc of yours.",
        "Every opposing run trapped that way flips to your colour, in all directions at once.",
        "There is no chain reaction: a disc that has just changed colour traps nothing by itself; only the runs trapped by the disc just placed flip.",
        "A run must be unbroken: if an empty square interrupts it, or it reaches the edge of the board without meeting a disc of yours, nothing flips in that direction.",
        "Discs never move once placed; they only change colour when they are flipped.",
        "A player who has at least one legal move must play; a player who has none passes automatically (the pass is recorded) and the opponent moves again.",
        "The game ends as soon as neither player can move, whether or not the board is full.",
        "At the end, each player counts the discs of their colour on the board: the higher count wins, and equal counts are a draw.",
        "Each move fills one square and 4 of the 64 squares are taken from the start, so a game never exceeds 60 moves.",
        "Move notation: a square is written as a letter and a digit, from \"a1\" to \"h8\"; the letter is the column, a to h from left to right, and the digit is the row, 1 to 8 from top to bottom (standard Othello notation). From the starting position, black's legal moves are c4, d3, e6 and f5.",
        "A whole game is written as its moves run together with no separator, for example \"f5d6c3d3c4\"; passes are not written. Moves are written in lower case, and upper case is accepted too.",
        "Board notation: a list of 8 strings of 8 characters, one per row, row 1 first and each row read from column a to column h; \".\" is an empty square, \"B\" a black disc and \"W\" a white disc. At the start, rows 4 and 5 read \"...WB...\" and \"...BW...\" and every other row reads \"........\".",
    ],
    glossary: &[
        (
            "Flank",
            "To trap one or more consecutive opposing discs in a straight line between the disc you place and another disc of yours.",
        ),
        (
            "Flip",
            "What happens to a flanked opposing disc: it turns over and becomes yours.",
        ),
        (
            "Pass",
            "Missing a turn because no square is legal for you; the server does it on its own, and nobody can pass by choice.",
        ),
        (
            "Corner",
            "One of the squares a1, h1, a8 and h8; a disc there can never be flanked, so it never flips.",
        ),
        (
            "Legal move",
            "An empty square where your disc would flank at least one opposing disc.",
        ),
    ],
    faq: &[
        (
            "Can I place a disc on any empty square?",
            "No. A square is only legal when the new disc flanks at least one opposing disc in a straight line. If you have no legal square, your turn is passed for you automatically; if you have one, you have to play.",
        ),
        (
            "How many discs flip?",
            "Everything the new disc flanks: every opposing run trapped between it and a disc of yours turns over, in any of the 8 directions, in the same move. Discs that flip do not make others flip in turn.",
        ),
        (
            "Why are corners so valuable?",
            "No line runs through a corner with squares on both sides of it, so a disc there can never be trapped between opposing discs: once placed, it stays yours to the end. The disc count in the middle of a game, on the other hand, says little: the last moves often swing it a lot.",
        ),
        (
            "Can I hide the legal-move markers?",
            "Yes: switch off the room's \"show_legal_moves\" setting (it is on by default). The match view then gives an empty list of legal moves; the rules themselves do not change.",
        ),
        (
            "Who plays black?",
            "Black moves first, so whoever starts the match plays black. The room's \"first\" setting picks who starts its first match, and \"alternate_first\" (on by default) switches the starter on every rematch. In ranked play, black goes to the player who started fewer of their last 10 ranked Reversi games, with a coin flip on a tie.",
        ),
    ],
};

const PRODUCT_FAQ_EN: &[(&str, &str)] = &[
    (
        "What happens if I leave in the middle of a game?",
        "Your seat stays yours. You count as away when you leave on purpose or when none of your clients has been in touch with the match for 30 seconds (by default). Come back on the same device at any moment and you are back in your seat. If you are not back within 60 seconds (by default), the CPU plays for you at level 2 until you return; in ranked play the result still counts as yours, so leaving never pays.",
    ),
    (
        "Is there a time limit per move?",
        "Not by default. A room can allow 30 or 60 seconds per turn, and the ranked queue keeps each limit in a pool of its own. When the time of the player to move runs out, the CPU makes that one move for them and the game goes on.",
    ),
    (
        "Can I resign, and how do results count for my rating?",
        "You can resign at any point of your game; your opponent then wins. In ranked play a win counts as 1, a loss as 0 and a draw as half, halfway between the two. A result counts for the seat's owner even when the CPU stood in for them.",
    ),
];

const SETTINGS_EN: SettingTexts = SettingTexts {
    turn_seconds: "Time allowed per turn, in seconds; null means no limit. When it runs out, the CPU makes that one move for the player to move.",
    alternate_first: "If true, each rematch in the room hands the first move to the other player; if false, the same seat starts every match.",
    first: "Who starts the room's first match: \"seat1\" (the first seat), \"seat2\" (the second seat) or \"random\" (drawn by lot).",
    show_legal_moves: "If true, the match view lists the legal moves of the player to move; if false, that list stays empty.",
};

// ---------------------------------------------------------------------------------------------
// Português (Brasil)
// ---------------------------------------------------------------------------------------------

const FOUR_IN_A_ROW_PT: GameTexts = GameTexts {
    name: "Quatro em Linha",
    summary: "Duas pessoas se revezam soltando peças em uma grade vertical de 7×6; vence quem primeiro alinhar quatro ou mais peças da sua cor.",
    rules: &[
        "Duas pessoas jogam em uma grade vertical de 7 colunas por 6 linhas, que começa vazia.",
        "Quem joga primeiro usa as peças vermelhas (R) e o outro jogador, as amarelas (Y); cada um coloca uma peça por vez, alternadamente.",
        "Uma jogada indica apenas uma coluna: a peça desliza até a casa vazia mais baixa dessa coluna.",
        "Uma coluna com seis peças está cheia e não recebe mais nenhuma; toda coluna que ainda não está cheia é uma jogada válida.",
        "A peça fica na casa onde parou até o fim da partida: nada a move e nada a captura.",
        "Quem formar uma sequência de quatro ou mais peças seguidas da própria cor, na horizontal, na vertical ou na diagonal, vence na mesma hora.",
        "Quando a 42ª peça completa a grade sem que ninguém tenha formado uma sequência assim, a partida termina empatada.",
        "Notação de jogada: cada jogada é escrita como o número da coluna, de \"1\" a \"7\", contando a partir da esquerda.",
        "Uma partida inteira é escrita com as jogadas emendadas, sem separador: \"4453\" significa vermelho na coluna 4, amarelo na coluna 4, vermelho na coluna 5 e, por fim, amarelo na coluna 3.",
        "Notação do tabuleiro: uma lista de 6 textos de 7 caracteres, um por linha, começando pela linha de cima, cada um lido da esquerda para a direita; \".\" é uma casa vazia, \"R\" (do inglês red) uma peça vermelha e \"Y\" (yellow) uma peça amarela.",
    ],
    glossary: &[
        (
            "Coluna",
            "Uma das 7 divisões verticais da grade, numeradas de 1 a 7 a partir da esquerda; cada jogada indica uma delas.",
        ),
        (
            "Linha",
            "Uma das 6 fileiras horizontais da grade; as peças preenchem cada coluna de baixo para cima.",
        ),
        (
            "Sequência",
            "Quatro ou mais peças seguidas da mesma cor na horizontal, na vertical ou na diagonal; quem forma uma primeiro vence.",
        ),
        (
            "Ameaça",
            "Uma fileira de três peças da mesma cor com a quarta casa ainda vazia: mais uma peça ali venceria, por isso ela precisa ser bloqueada.",
        ),
        (
            "Empate",
            "Fim de uma partida em que as 42 casas estão ocupadas e ninguém formou uma sequência de quatro.",
        ),
    ],
    faq: &[
        (
            "Posso escolher a casa exata da minha peça?",
            "Não diretamente: você escolhe a coluna e a gravidade faz o resto, então a peça pousa em cima das que já estão lá, ou no fundo de uma coluna vazia. Uma coluna cheia não pode ser escolhida.",
        ),
        (
            "Uma sequência com mais de quatro peças também vale?",
            "Sim. O que conta é ter pelo menos quatro peças seguidas da sua cor, então cinco, seis ou sete também dão a vitória.",
        ),
        (
            "Quem começa? Isso é uma vantagem?",
            "Começar dá uma pequena vantagem, por isso ela é dividida. Em uma sala, a configuração \"first\" define quem começa a primeira partida e, com \"alternate_first\" ligada (o padrão), cada revanche passa a primeira jogada para o outro jogador. Nas ranqueadas, começa quem iniciou menos das suas últimas 10 partidas ranqueadas deste jogo, com cara ou coroa em caso de empate. Quem começa joga com as vermelhas.",
        ),
        (
            "Posso jogar contra o computador?",
            "Sim. Em uma partida solo você enfrenta a CPU em um nível de 1 (o mais fraco) a 5 (o mais forte), e você começa, a não ser que peça para a CPU começar. Iniciar uma partida em uma sala onde você é o único membro também coloca a CPU como sua adversária.",
        ),
    ],
};

const REVERSI_PT: GameTexts = GameTexts {
    name: "Reversi",
    summary: "Duas pessoas colocam peças pretas e brancas em um tabuleiro 8×8 e viram todas as fileiras adversárias que cercam; quando ninguém mais pode jogar, vence quem tiver mais peças.",
    rules: &[
        "Duas pessoas, as pretas (B) e as brancas (W), jogam em um tabuleiro de 8 por 8 casas.",
        "A partida começa com quatro peças no centro: brancas em d4 e e5, pretas em d5 e e4, de modo que cada cor fica em uma diagonal.",
        "As pretas jogam primeiro; depois os jogadores se alternam, colocando uma peça por jogada.",
        "Uma jogada coloca uma peça da sua cor em uma casa vazia de modo que, em pelo menos uma das 8 direções em linha reta (horizontal, vertical ou diagonal), uma ou mais peças adversárias seguidas fiquem entre a peça nova e outra peça sua.",
        "Todas as fileiras adversárias presas desse jeito passam para a sua cor, em todas as direções ao mesmo tempo.",
        "Não há reação em cadeia: uma peça que acabou de mudar de cor não cerca nada por conta própria; só viram as fileiras cercadas pela peça recém-colocada.",
        "O cerco precisa ser contínuo: se uma casa vazia interromper a fileira, ou se ela chegar à borda do tabuleiro sem encontrar uma peça sua, nada vira nessa direção.",
        "As peças nunca saem do lugar depois de colocadas; elas só mudam de cor quando são viradas.",
        "Quem tem pelo menos uma jogada válida precisa jogar; quem não tem nenhuma passa a vez automaticamente (a passagem fica registrada) e o adversário joga de novo.",
        "A partida termina assim que nenhum dos dois consegue jogar, com o tabuleiro cheio ou não.",
        "No final, cada jogador conta as peças da sua cor no tabuleiro: quem tiver mais vence, e contagens iguais dão empate.",
        "Como cada jogada ocupa uma casa e 4 das 64 casas já começam ocupadas, uma partida nunca passa de 60 jogadas.",
        "Notação de jogada: cada casa é escrita com uma letra e um número, de \"a1\" a \"h8\"; a letra é a coluna, de a até h da esquerda para a direita, e o número é a linha, de 1 a 8 de cima para baixo (a notação padrão do Othello). Na posição inicial, as jogadas válidas das pretas são c4, d3, e6 e f5.",
        "Uma partida inteira é escrita com as jogadas emendadas, sem separador, por exemplo \"f5d6c3d3c4\"; as passagens não aparecem. As jogadas são escritas em letras minúsculas, e maiúsculas também são aceitas.",
        "Notação do tabuleiro: uma lista de 8 textos de 8 caracteres, um por linha, começando pela linha 1, cada um lido da coluna a até a coluna h; \".\" é uma casa vazia, \"B\" (do inglês black) uma peça preta e \"W\" (white) uma peça branca. No início, as linhas 4 e 5 são \"...WB...\" e \"...BW...\", e todas as outras são \"........\".",
    ],
    glossary: &[
        (
            "Cercar",
            "Prender uma ou mais peças adversárias seguidas, em linha reta, entre a peça que você coloca e outra peça sua.",
        ),
        (
            "Virar",
            "O que acontece com uma peça adversária cercada: ela troca de cor e passa a ser sua.",
        ),
        (
            "Passar",
            "Ficar uma vez sem jogar porque nenhuma casa é válida para você; o servidor faz isso sozinho, e ninguém passa por escolha.",
        ),
        (
            "Canto",
            "Uma das casas a1, h1, a8 e h8; uma peça ali nunca pode ser cercada, então nunca vira.",
        ),
        (
            "Jogada válida",
            "Uma casa vazia onde a sua peça cercaria pelo menos uma peça adversária.",
        ),
    ],
    faq: &[
        (
            "Posso colocar uma peça em qualquer casa vazia?",
            "Não. Uma casa só é válida se a peça nova cercar pelo menos uma peça adversária em linha reta. Se você não tiver nenhuma casa válida, sua vez passa automaticamente; se tiver, você precisa jogar.",
        ),
        (
            "Quantas peças viram?",
            "Tudo o que a peça nova cerca: cada fileira adversária presa entre ela e uma peça sua vira, em qualquer uma das 8 direções, na mesma jogada. As peças viradas não fazem nenhuma outra virar em seguida.",
        ),
        (
            "Por que os cantos são tão valiosos?",
            "Nenhuma linha passa por um canto com casas dos dois lados dele, então uma peça ali nunca fica presa entre peças adversárias: depois de colocada, ela é sua até o fim. Já a contagem de peças no meio da partida diz pouco: as últimas jogadas costumam mudar muito o placar.",
        ),
        (
            "Posso esconder as marcações de jogadas válidas?",
            "Sim: desligue a configuração \"show_legal_moves\" da sala (ela vem ligada). A visão da partida passa a trazer a lista de jogadas válidas vazia; as regras continuam as mesmas.",
        ),
        (
            "Quem joga com as pretas?",
            "As pretas começam, então quem inicia a partida joga com elas. A configuração \"first\" da sala define quem começa a primeira partida, e \"alternate_first\" (ligada por padrão) troca quem começa a cada revanche. Nas ranqueadas, as pretas ficam com quem iniciou menos das suas últimas 10 partidas ranqueadas de Reversi, com cara ou coroa em caso de empate.",
        ),
    ],
};

const PRODUCT_FAQ_PT: &[(&str, &str)] = &[
    (
        "O que acontece se eu sair no meio da partida?",
        "O seu lugar continua sendo seu. Você passa a contar como ausente quando sai de propósito ou quando nenhum aplicativo seu se comunica com a partida por 30 segundos (padrão). Volte pelo mesmo dispositivo, a qualquer momento, e você retoma o seu lugar. Se você não voltar em 60 segundos (padrão), a CPU joga por você no nível 2 até a sua volta; nas ranqueadas o resultado continua sendo seu, então sair nunca compensa.",
    ),
    (
        "Existe limite de tempo por jogada?",
        "Não por padrão. Uma sala pode definir 30 ou 60 segundos por vez, e a fila ranqueada separa cada limite em um grupo próprio. Quando acaba o tempo de quem deve jogar, a CPU faz essa única jogada no lugar dele e a partida continua.",
    ),
    (
        "Posso desistir? E como os resultados contam para o meu rating?",
        "Você pode desistir a qualquer momento da partida; o adversário vence. Nas ranqueadas, a vitória vale 1, a derrota vale 0 e o empate vale meio ponto, no meio do caminho entre as duas. O resultado conta para o dono do lugar mesmo quando a CPU jogou por ele.",
    ),
];

const SETTINGS_PT: SettingTexts = SettingTexts {
    turn_seconds: "Tempo por vez, em segundos; null significa sem limite. Quando o tempo acaba, a CPU faz essa jogada por quem deveria jogar.",
    alternate_first: "Se true, cada revanche na sala passa a primeira jogada para o outro jogador; se false, o mesmo lugar começa todas as partidas.",
    first: "Quem começa a primeira partida da sala: \"seat1\" (o primeiro lugar), \"seat2\" (o segundo lugar) ou \"random\" (por sorteio).",
    show_legal_moves: "Se true, a visão da partida lista as jogadas válidas de quem deve jogar; se false, essa lista fica vazia.",
};

#[cfg(test)]
mod tests {
    use super::*;

    const BOTH: [Lang; 2] = [Lang::En, Lang::Pt];

    fn ids(catalogue: &Catalogue) -> Vec<&'static str> {
        catalogue.games.iter().map(|game| game.id).collect()
    }

    /// Every text of a catalogue, with a label saying where it is.
    fn texts(catalogue: &Catalogue) -> Vec<(String, &'static str)> {
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
                all.push((format!("{id}.faq[{i}].answer"), faq.answer));
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
            assert_eq!(
                ids(&catalogue(lang)),
                ["four_in_a_row", "reversi"],
                "{lang:?}"
            );
        }
        assert_eq!(ids(&catalogue(Lang::En)), ids(&catalogue(Lang::Pt)));
    }

    #[test]
    fn settings_match_spec_and_are_identical_across_languages() {
        let common = vec![
            ("turn_seconds", json!([null, 30, 60]), json!(null)),
            ("alternate_first", json!([true, false]), json!(true)),
            ("first", json!(["seat1", "seat2", "random"]), json!("seat1")),
        ];
        let mut reversi = common.clone();
        reversi.push(("show_legal_moves", json!([true, false]), json!(true)));
        for lang in BOTH {
            let catalogue = catalogue(lang);
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
    fn cpu_levels_are_one_to_five() {
        for lang in BOTH {
            for game in catalogue(lang).games {
                assert_eq!(game.cpu_levels, [1, 2, 3, 4, 5], "{lang:?} {}", game.id);
            }
        }
    }

    #[test]
    fn no_text_is_empty_and_sizes_are_within_bounds() {
        for lang in BOTH {
            let catalogue = catalogue(lang);
            for (place, text) in texts(&catalogue) {
                assert!(!text.trim().is_empty(), "{lang:?}: {place} is empty");
                assert_eq!(text, text.trim(), "{lang:?}: {place} has stray whitespace");
            }
            for game in &catalogue.games {
                assert!(
                    (4..=6).contains(&game.glossary.len()),
                    "{lang:?} {}: {} glossary terms",
                    game.id,
                    game.glossary.len()
                );
                assert!(
                    (5..=8).contains(&game.faq.len()),
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
        let (en, pt) = (catalogue(Lang::En), catalogue(Lang::Pt));
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
            let catalogue = catalogue(lang);
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
        for (place, text) in texts(&catalogue(Lang::Pt)) {
            let lower = format!(" {} ", text.to_lowercase());
            for word in european {
                assert!(!lower.contains(word), "{place}: European form {word:?}");
            }
        }
    }

    #[test]
    fn serialises_to_the_documented_shape() {
        for lang in BOTH {
            let value = serde_json::to_value(catalogue(lang)).expect("catalogue serialises");
            let games = value["games"].as_array().expect("games is an array");
            assert_eq!(games.len(), 2);
            for game in games {
                for key in [
                    "id",
                    "name",
                    "summary",
                    "rules",
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
        for lang in BOTH {
            assert_eq!(Lang::from_accept_language(Some(lang.tag())), lang);
        }
    }
}
