//! Each table is named by one crate, and inside the service by one module: every SQL literal of
//! every production crate names only tables its crate owns, and every one of the service's only
//! tables its module owns or a declared crossing lets it name, as docs/tables.md says; that
//! document lists every table the migrations create.

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

/// docs/tables.md's owners by crate: its `| table | crate |` rows.
fn owners() -> BTreeMap<String, String> {
    let mut owners = BTreeMap::new();
    for cells in table_rows("## By crate") {
        for t in cells[0].split(", ") {
            owners.insert(
                t.trim_matches('`').to_owned(),
                cells[1].trim_matches('`').to_owned(),
            );
        }
    }
    owners
}

/// The rows of the first table under `heading` in docs/tables.md, as trimmed cells (the header
/// and the rule skipped).
fn table_rows(heading: &str) -> Vec<Vec<String>> {
    let text =
        std::fs::read_to_string(root().join("docs").join("tables.md")).expect("docs/tables.md");
    let section = text
        .split(heading)
        .nth(1)
        .unwrap_or_else(|| panic!("a section \"{heading}\" in docs/tables.md"));
    let mut rows = Vec::new();
    for line in section.lines().skip_while(|l| !l.starts_with('|')) {
        if !line.starts_with('|') {
            break;
        }
        let cells: Vec<String> = line
            .split('|')
            .map(str::trim)
            .skip(1)
            .map(str::to_owned)
            .collect();
        if cells[0] == "table" || cells[0].starts_with('-') {
            continue;
        }
        rows.push(cells);
    }
    rows
}

/// Inside the service: each table's module, and the other modules a declared crossing lets name
/// it.
fn service_modules() -> BTreeMap<String, (String, BTreeSet<String>)> {
    let mut modules = BTreeMap::new();
    for cells in table_rows("## Inside the service, by module") {
        let also: BTreeSet<String> = cells[2]
            .split("), ")
            .filter_map(|c| c.split_whitespace().next())
            .map(|m| m.trim_matches('`').to_owned())
            .filter(|m| !m.is_empty())
            .collect();
        for t in cells[0].split(", ") {
            modules.insert(
                t.trim_matches('`').to_owned(),
                (cells[1].trim_matches('`').to_owned(), also.clone()),
            );
        }
    }
    modules
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
    // A common table expression added to a statement built in parts: `, name AS ( … )`.
    let t = match t
        .strip_prefix(',')
        .and_then(|rest| rest.split_once(" AS ("))
    {
        Some((name, body))
            if name
                .trim()
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_') =>
        {
            body.trim_start()
        }
        _ => t,
    };
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
        "docs/tables.md's owners by crate lack {unlisted:?}"
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
fn inside_the_service_every_table_is_named_by_its_module_or_a_declared_crossing() {
    let owners = owners();
    let modules = service_modules();
    let mine: BTreeSet<String> = owners
        .iter()
        .filter(|(_, krate)| *krate == "service")
        .map(|(t, _)| t.clone())
        .collect();
    let listed: BTreeSet<String> = modules.keys().cloned().collect();
    assert_eq!(
        listed, mine,
        "docs/tables.md: the service's tables by module differ from its tables by crate"
    );
    let src = root().join("service").join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut named: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut trespasses = Vec::new();
    for file in &files {
        let relative = file.strip_prefix(&src).expect("under src");
        let module = relative
            .components()
            .next()
            .and_then(|c| c.as_os_str().to_str())
            .map(|c| c.trim_end_matches(".rs").to_owned())
            .expect("a top-level module");
        let source = std::fs::read_to_string(file).expect("a source");
        for literal in string_literals(&source)
            .iter()
            .filter(|l| looks_like_sql(l))
        {
            for table in named_tables(literal, &mine) {
                let (owner, also) = &modules[&table];
                named
                    .entry(table.clone())
                    .or_default()
                    .insert(module.clone());
                if *owner != module && !also.contains(&module) {
                    trespasses.push(format!(
                        "service/src/{} names `{table}` (module {owner}'s; no crossing declared)",
                        relative.display()
                    ));
                }
            }
        }
    }
    assert!(trespasses.is_empty(), "{}", trespasses.join("\n"));
    for (table, (owner, also)) in &modules {
        let by = named.get(table).cloned().unwrap_or_default();
        for m in also {
            assert!(
                by.contains(m),
                "docs/tables.md declares that {m} names `{table}`, and it no longer does"
            );
        }
        assert!(
            by.is_empty() || by.contains(owner),
            "`{table}` is named by {by:?}, not by its module {owner}"
        );
    }
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
    assert!(literals.iter().all(|l| looks_like_sql(l)));
    assert!(looks_like_sql(
        ", answered AS ( INSERT INTO rooms (a) SELECT 1 )"
    ));
    assert!(!looks_like_sql(", as the rooms say"));
}
