//! Each table is named by one crate (issue 43): every SQL literal of every production crate
//! names only tables its crate owns, as ARCHITECTURE.md's table of owners says, and that table
//! lists every table the migrations create.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The workspace's root.
pub(crate) fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace")
        .to_owned()
}

/// The production crates whose SQL is checked (tests and benches read any table to check).
pub(crate) const CRATES: [&str; 7] = [
    "domain",
    "database",
    "eventlog",
    "projections",
    "service",
    "api",
    "discs",
];

/// Every table the migrations create.
fn created_tables() -> BTreeSet<String> {
    let mut tables = BTreeSet::new();
    for entry in std::fs::read_dir(root().join("migrations")).expect("migrations") {
        let text = std::fs::read_to_string(entry.expect("entry").path()).expect("a migration");
        for part in text.split("CREATE TABLE ").skip(1) {
            let name: String = part
                .trim_start_matches("IF NOT EXISTS ")
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            tables.insert(name);
        }
    }
    tables
}

/// ARCHITECTURE.md's table of owners: `| table | crate |` rows under "### Who owns which table".
fn owners() -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let section = text
        .split("### Who owns which table")
        .nth(1)
        .expect("a section \"Who owns which table\"");
    let mut owners = BTreeMap::new();
    for line in section.lines().skip_while(|l| !l.starts_with('|')) {
        if !line.starts_with('|') {
            break;
        }
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let (table, owner) = (cells[1].trim_matches('`'), cells[2].trim_matches('`'));
        if table == "table" || table.starts_with('-') {
            continue;
        }
        for t in table.split(", ") {
            owners.insert(t.trim_matches('`').to_owned(), owner.to_owned());
        }
    }
    owners
}

pub(crate) fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a folder").flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The string literals of a Rust source, joined across `\` line continuations; the code of
/// `#[cfg(test)] mod tests` at the end of a file is left out.
fn string_literals(source: &str) -> Vec<String> {
    let source = source
        .split("#[cfg(test)]\nmod tests")
        .next()
        .unwrap_or(source);
    let mut out = Vec::new();
    let mut chars = source.chars().peekable();
    let mut in_comment = false;
    let mut previous = ' ';
    while let Some(c) = chars.next() {
        if in_comment {
            if c == '\n' {
                in_comment = false;
            }
            continue;
        }
        if c == '/' && chars.peek() == Some(&'/') {
            in_comment = true;
            continue;
        }
        if c == '\'' && previous != '\\' {
            // A char literal ('"' included) or a lifetime: skip a char literal whole.
            let ahead: String = chars.clone().take(3).collect();
            if ahead.starts_with("\\") {
                let end = ahead.find('\'').map_or(0, |i| i + 1).max(3);
                for _ in 0..end.min(ahead.len()) {
                    chars.next();
                }
            } else if ahead.chars().nth(1) == Some('\'') {
                chars.next();
                chars.next();
            }
            previous = c;
            continue;
        }
        if c == '"' {
            let mut literal = String::new();
            while let Some(d) = chars.next() {
                match d {
                    '\\' => match chars.next() {
                        Some('\n') => {
                            while chars.peek().is_some_and(|w| w.is_whitespace()) {
                                chars.next();
                            }
                        }
                        Some(e) => {
                            literal.push('\\');
                            literal.push(e);
                        }
                        None => break,
                    },
                    '"' => break,
                    other => literal.push(other),
                }
            }
            out.push(literal);
            previous = '"';
            continue;
        }
        previous = c;
    }
    out
}

/// The tables a SQL text names after FROM, JOIN, INTO, UPDATE, TABLE or USING.
fn named_tables(sql: &str, known: &BTreeSet<String>) -> BTreeSet<String> {
    let words: Vec<&str> = sql
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect();
    let mut out = BTreeSet::new();
    for pair in words.windows(2) {
        if matches!(
            pair[0],
            "FROM" | "JOIN" | "INTO" | "UPDATE" | "TABLE" | "USING"
        ) && known.contains(pair[1])
        {
            out.insert(pair[1].to_owned());
        }
    }
    out
}

fn looks_like_sql(text: &str) -> bool {
    let t = text.trim_start();
    [
        "SELECT ",
        "INSERT ",
        "UPDATE ",
        "DELETE ",
        "WITH ",
        "CREATE ",
        "ALTER ",
        "DROP ",
        "COPY ",
        "TRUNCATE ",
        "LOCK ",
    ]
    .iter()
    .any(|k| t.starts_with(k))
}

#[test]
fn every_sql_literal_names_only_the_tables_of_its_own_crate() {
    let known = created_tables();
    let owners = owners();
    let unlisted: Vec<&String> = known.iter().filter(|t| !owners.contains_key(*t)).collect();
    assert!(
        unlisted.is_empty(),
        "ARCHITECTURE.md's table of owners lacks {unlisted:?}"
    );
    let gone: Vec<&String> = owners.keys().filter(|t| !known.contains(*t)).collect();
    assert!(gone.is_empty(), "no migration creates {gone:?}");
    let mut trespasses = Vec::new();
    let mut literals = 0;
    for krate in CRATES {
        let mut files = Vec::new();
        rust_files(&root().join(krate).join("src"), &mut files);
        for file in files {
            let source = std::fs::read_to_string(&file).expect("a source");
            for literal in string_literals(&source)
                .iter()
                .filter(|l| looks_like_sql(l))
            {
                literals += 1;
                for table in named_tables(literal, &known) {
                    if owners[&table] != krate {
                        trespasses.push(format!(
                            "{} names `{table}` (owned by {}): {}",
                            file.strip_prefix(root()).unwrap_or(&file).display(),
                            owners[&table],
                            literal.chars().take(100).collect::<String>()
                        ));
                    }
                }
            }
        }
    }
    assert!(
        literals > 100,
        "only {literals} SQL literals found: the reader is broken"
    );
    assert!(trespasses.is_empty(), "{}", trespasses.join("\n"));
}

#[test]
fn the_literal_reader_finds_sql_across_line_continuations_and_skips_comments() {
    let source = "let a = \"SELECT x FROM players p \\\n    JOIN rooms r ON true\";\n\
                  // \"SELECT 1 FROM events\"\nlet c = '\"'; let d = \"DELETE FROM rooms\";";
    let literals = string_literals(source);
    let known: BTreeSet<String> = ["players", "rooms", "events"].map(String::from).into();
    assert_eq!(literals.len(), 2, "{literals:?}");
    assert_eq!(
        named_tables(&literals[0], &known),
        ["players", "rooms"].map(String::from).into()
    );
    assert_eq!(
        named_tables(&literals[1], &known),
        ["rooms"].map(String::from).into()
    );
}
