//! No module cycle (issue 43): in every production crate, the top-level modules (a file or a
//! folder under `src/`) import one another along a graph without a cycle, so each can be read
//! knowing only those below it. Test modules (`#[cfg(test)] mod …`) are left out: they may use
//! anything, as dev-dependencies may.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::ownership::{CRATES, root, rust_files};

/// The source of a Rust file with its comments, string and char literals blanked out (their
/// text can name no module).
pub(crate) fn code_only(source: &str) -> String {
    let chars: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            out.push(' ');
        } else if c == 'r' && (next == Some('"') || next == Some('#')) && is_raw_string(&chars, i) {
            let hashes = chars[i + 1..].iter().take_while(|&&h| h == '#').count();
            let closing: String = std::iter::once('"')
                .chain("#".repeat(hashes).chars())
                .collect();
            let body = i + 2 + hashes;
            let rest: String = chars[body..].iter().collect();
            let end = rest
                .find(&closing)
                .map_or(rest.len(), |e| e + closing.len());
            i = body + rest[..end].chars().count();
            out.push_str("\"\"");
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if c == '\'' {
            // A char literal is skipped whole; a lifetime is kept.
            if next == Some('\\') {
                i += 2;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
                i += 1;
                out.push_str("' '");
            } else if chars.get(i + 2) == Some(&'\'') {
                i += 3;
                out.push_str("' '");
            } else {
                out.push(c);
                i += 1;
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// Whether `r` at `i` opens a raw string (`r"…"`, `r#"…"#`), not ends an identifier.
fn is_raw_string(chars: &[char], i: usize) -> bool {
    let starts_token = i == 0 || !(chars[i - 1].is_alphanumeric() || chars[i - 1] == '_');
    let after_hashes = chars[i + 1..].iter().find(|&&h| h != '#');
    starts_token && after_hashes == Some(&'"')
}

/// `code` without its `#[cfg(test)]` inline modules, and the names of its `#[cfg(test)]` file
/// modules (`mod tests;`).
fn without_tests(code: &str) -> (String, Vec<String>) {
    let mut kept = String::with_capacity(code.len());
    let mut test_files = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        kept.push_str(&rest[..at]);
        let mut after = rest[at + "#[cfg(test)]".len()..].trim_start();
        // Other attributes between it and the item.
        while let Some(attribute) = after.strip_prefix("#[") {
            after = attribute
                .split_once(']')
                .map_or("", |(_, r)| r)
                .trim_start();
        }
        let Some(item) = after
            .strip_prefix("pub(crate) mod ")
            .or_else(|| after.strip_prefix("pub mod "))
            .or_else(|| after.strip_prefix("mod "))
        else {
            // A test-only item other than a module: its code stays.
            rest = &rest[at + 1..];
            kept.push('#');
            continue;
        };
        let name: String = item
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let item = item[name.len()..].trim_start();
        if let Some(body) = item.strip_prefix('{') {
            let mut depth = 1;
            let end = body
                .char_indices()
                .find_map(|(j, c)| {
                    match c {
                        '{' => depth += 1,
                        '}' => depth -= 1,
                        _ => {}
                    }
                    (depth == 0).then_some(j + 1)
                })
                .unwrap_or(body.len());
            rest = &body[end..];
        } else {
            test_files.push(name);
            rest = item.strip_prefix(';').unwrap_or(item);
        }
    }
    kept.push_str(rest);
    (kept, test_files)
}

/// The first segment of every path that starts with `prefix` (`crate::`, `super::`) in `code`,
/// groups included: `crate::{a::b, c}` names `a` and `c`.
fn first_segments(code: &str, prefix: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for (at, _) in code.match_indices(prefix) {
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        let rest = code[at + prefix.len()..].trim_start();
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 0;
            let mut item_start = true;
            for (j, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => item_start = true,
                    c if item_start && (c.is_alphabetic() || c == '_') => {
                        item_start = false;
                        names.insert(ident(&group[j..]));
                    }
                    c if !c.is_whitespace() => item_start = false,
                    _ => {}
                }
            }
        } else {
            names.insert(ident(rest));
        }
    }
    names
}

fn ident(text: &str) -> String {
    text.chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}

/// The top-level module of a file under `src` (`a.rs`, `a/mod.rs`, `a/b.rs` are all `a`), and
/// whether the file is that module's own (so that its `super::` is the crate's root).
fn top_level(src: &Path, file: &Path) -> Option<(String, bool)> {
    let relative = file.strip_prefix(src).ok()?;
    let parts: Vec<String> = relative
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let first = parts.first()?.trim_end_matches(".rs").to_owned();
    if first == "lib" || first == "main" {
        return None;
    }
    let own = parts.len() == 1 || (parts.len() == 2 && parts[1] == "mod.rs");
    Some((first, own))
}

/// What the crate's root re-exports (`pub use error::{Error, unexpected};`): name → module.
fn root_reexports(root_code: &str, modules: &BTreeSet<String>) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for statement in root_code.split(';') {
        let statement = statement.trim();
        let Some(path) = statement
            .strip_prefix("pub use ")
            .or_else(|| statement.strip_prefix("pub(crate) use "))
        else {
            continue;
        };
        let module = ident(path);
        if !modules.contains(&module) {
            continue;
        }
        for name in first_segments(&format!(" x::{}", &path[module.len() + 2..]), "x::") {
            out.insert(name, module.clone());
        }
    }
    out
}

/// The crate's top-level modules and, for each, the others it names.
fn graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut code: BTreeMap<PathBuf, String> = BTreeMap::new();
    let mut test_files = BTreeSet::new();
    for file in &files {
        let (kept, tests) = without_tests(&code_only(&std::fs::read_to_string(file).expect("src")));
        let dir = if file.ends_with("mod.rs") || file.ends_with("lib.rs") {
            file.parent().expect("a folder").to_owned()
        } else {
            file.with_extension("")
        };
        for name in tests {
            test_files.insert(dir.join(format!("{name}.rs")));
            test_files.insert(dir.join(&name).join("mod.rs"));
        }
        code.insert(file.clone(), kept);
    }
    let modules: BTreeSet<String> = files
        .iter()
        .filter_map(|f| top_level(src, f))
        .map(|(m, _)| m)
        .collect();
    let root_code = ["lib.rs", "main.rs"]
        .iter()
        .filter_map(|f| code.get(&src.join(f)))
        .cloned()
        .collect::<String>();
    let reexports = root_reexports(&root_code, &modules);
    let resolve = |name: &String| {
        modules
            .get(name)
            .cloned()
            .or_else(|| reexports.get(name).cloned())
    };
    let mut edges: BTreeMap<String, BTreeSet<String>> = modules
        .iter()
        .map(|m| (m.clone(), BTreeSet::new()))
        .collect();
    for (file, text) in &code {
        if test_files.contains(file) {
            continue;
        }
        let Some((module, own)) = top_level(src, file) else {
            continue;
        };
        let mut named = first_segments(text, "crate::");
        if own {
            named.extend(first_segments(text, "super::"));
        }
        let targets = named.iter().filter_map(resolve).filter(|m| *m != module);
        edges.get_mut(&module).expect("a module").extend(targets);
    }
    edges
}

/// A cycle of `edges` (its modules in order, the first repeated at the end), if any.
fn a_cycle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        at: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(start) = path.iter().position(|p| p == at) {
            let mut cycle = path[start..].to_vec();
            cycle.push(at.to_owned());
            return Some(cycle);
        }
        if done.contains(at) {
            return None;
        }
        path.push(at.to_owned());
        for next in edges.get(at).into_iter().flatten() {
            if let Some(cycle) = visit(next, edges, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(at.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    edges
        .keys()
        .find_map(|m| visit(m, edges, &mut Vec::new(), &mut done))
}

#[test]
fn no_crate_has_a_cycle_between_its_top_level_modules() {
    for krate in CRATES {
        let edges = graph(&root().join(krate).join("src"));
        assert!(!edges.is_empty(), "{krate}: no modules found");
        if let Some(cycle) = a_cycle(&edges) {
            panic!(
                "{krate} has a module cycle: {}. Its graph: {edges:#?}",
                cycle.join(" → ")
            );
        }
    }
}

#[test]
fn the_service_layers_stand_as_documented() {
    let edges = graph(&root().join("service").join("src"));
    // Nothing below the application state imports it; the core imports no service.
    for (module, names) in &edges {
        assert!(
            !names.contains("state") || module == "workers",
            "{module} imports state"
        );
    }
    for below in [
        "core", "error", "reasons", "clock", "chance", "config", "metrics", "replicas",
    ] {
        for service in ["live", "analysis", "ranked", "rooms", "players", "standing"] {
            assert!(
                !edges[below].contains(service),
                "{below} imports {service}: {edges:#?}"
            );
        }
    }
}

#[test]
fn the_reader_sees_groups_reexports_and_skips_tests_strings_and_comments() {
    let source = r#"
        //! Uses crate::commented in a doc.
        use crate::{alpha::Thing, beta, gamma::{self, deep}};
        use super::delta;
        pub use crate::Error;
        fn f() -> &'static str { let c = '"'; "crate::quoted" }
        /* crate::blocked */
        let r = r"crate::raw";
        #[cfg(test)]
        mod tests {
            use crate::tested;
            fn g() { if true { crate::also_tested(); } }
        }
        #[cfg(test)]
        #[allow(dead_code)]
        mod more;
        fn after() { crate::after_tests::go(); }
    "#;
    let (kept, test_files) = without_tests(&code_only(source));
    assert_eq!(test_files, ["more"]);
    let named = first_segments(&kept, "crate::");
    let expected: BTreeSet<String> = ["alpha", "beta", "gamma", "Error", "after_tests"]
        .map(String::from)
        .into();
    assert_eq!(named, expected);
    assert_eq!(
        first_segments(&kept, "super::"),
        BTreeSet::from(["delta".to_owned()])
    );
    let modules = BTreeSet::from(["error".to_owned()]);
    let reexports = root_reexports(
        "pub use error::{Error, unexpected}; pub(crate) use error::Hidden;",
        &modules,
    );
    assert_eq!(reexports.get("Hidden").map(String::as_str), Some("error"));
    assert_eq!(
        reexports.get("unexpected").map(String::as_str),
        Some("error")
    );
    assert_eq!(reexports.get("Error").map(String::as_str), Some("error"));
}

#[test]
fn a_cycle_is_found_and_named() {
    let edges: BTreeMap<String, BTreeSet<String>> = [
        ("a", vec!["b"]),
        ("b", vec!["c"]),
        ("c", vec!["a"]),
        ("d", vec![]),
    ]
    .into_iter()
    .map(|(m, to)| (m.to_owned(), to.into_iter().map(String::from).collect()))
    .collect();
    assert_eq!(
        a_cycle(&edges),
        Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
    );
    let mut acyclic = edges.clone();
    acyclic.insert("c".into(), BTreeSet::new());
    assert_eq!(a_cycle(&acyclic), None);
}

/// What a route may not name: a route parses, calls one use case of `service` and renders its
/// answer; the projections, the log, the database and its pool are reached through the service.
const NOT_IN_ROUTES: [&str; 10] = [
    "projections::",
    "eventlog::",
    "database::",
    "deadpool",
    "tokio_postgres",
    "GenericClient",
    "EventLog",
    ".pool",
    "pool()",
    ".log",
];

/// The names of [`NOT_IN_ROUTES`] that `code` (comments and strings blanked) holds, with the
/// line of each; `.log` only as a field (not `.logs`, `.log_check`, …).
fn forbidden_in_route(code: &str) -> Vec<(usize, &'static str)> {
    let mut found = Vec::new();
    for (n, line) in code.lines().enumerate() {
        for name in NOT_IN_ROUTES {
            let hit = line.match_indices(name).any(|(at, _)| {
                let after = line[at + name.len()..].chars().next();
                let word = name.chars().last().is_some_and(char::is_alphanumeric);
                !word || !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
            });
            if hit {
                found.push((n + 1, name));
            }
        }
    }
    found
}

#[test]
fn routes_only_parse_call_a_use_case_and_render() {
    let routes = root().join("api").join("src").join("routes");
    let mut files = Vec::new();
    rust_files(&routes, &mut files);
    assert!(files.len() > 10, "the routes: {files:?}");
    let mut offences = Vec::new();
    for file in &files {
        let source = std::fs::read_to_string(file).expect("a route's source");
        let (code, _tests) = without_tests(&code_only(&source));
        for (line, name) in forbidden_in_route(&code) {
            offences.push(format!("{}:{line} names `{name}`", file.display()));
        }
    }
    assert!(
        offences.is_empty(),
        "routes reach below the service:\n{}",
        offences.join("\n")
    );
}

#[test]
fn the_route_reader_sees_what_a_route_must_not_name() {
    let code = code_only(
        "let c = app.pool.get().await?; // app.log in a comment\n\
         let rows = projections::queries::leaderboard(&c, g, 5, false);\n\
         let e = app.log.read_stream_after(\"app.log\", 0);\n\
         let x = report.log_check; let y = self.logs;\n",
    );
    assert_eq!(
        forbidden_in_route(&code),
        vec![(1, ".pool"), (2, "projections::"), (3, ".log")]
    );
}

/// Whether a doc comment's code block opening with this fence's tag is a doc test (rustdoc runs
/// an untagged block, or one tagged `rust` or with a doc test's attribute).
fn is_doc_test(tag: &str) -> bool {
    tag.split(',').map(str::trim).all(|word| {
        word.is_empty()
            || word == "rust"
            || word.starts_with("edition")
            || [
                "ignore",
                "no_run",
                "should_panic",
                "compile_fail",
                "test_harness",
            ]
            .contains(&word)
    })
}

/// `cargo test` runs no doc tests (`doctest = false` in every library) and builds no unit-test
/// harness for the projections' library, the `discs` binary or the `tests` crate's library
/// (`test = false`): a test written there would never run, so none may be.
#[test]
fn no_test_is_written_where_cargo_test_does_not_look() {
    let root = root();
    let mut files = Vec::new();
    for krate in CRATES {
        rust_files(&root.join(krate).join("src"), &mut files);
    }
    files.push(root.join("tests").join("lib.rs"));
    let without_harness = [
        root.join("projections").join("src"),
        root.join("discs").join("src").join("main.rs"),
        root.join("tests").join("lib.rs"),
    ];
    let mut found = Vec::new();
    for file in &files {
        let source = std::fs::read_to_string(file).expect("a readable file");
        let name = file
            .strip_prefix(&root)
            .unwrap_or(file)
            .display()
            .to_string();
        let mut in_block = false;
        for (n, line) in source.lines().enumerate() {
            let line = line.trim_start();
            let Some(doc) = line
                .strip_prefix("//!")
                .or_else(|| line.strip_prefix("///"))
            else {
                continue;
            };
            if let Some(tag) = doc.trim().strip_prefix("```") {
                if !in_block && is_doc_test(tag) {
                    found.push(format!("{name}:{}: a doc test", n + 1));
                }
                in_block = !in_block;
            }
        }
        if without_harness.iter().any(|place| file.starts_with(place)) {
            let code = code_only(&source);
            if ["#[cfg(test)]", "#[test]", "#[tokio::test"]
                .iter()
                .any(|mark| code.contains(mark))
            {
                found.push(format!("{name}: a unit test where no harness is built"));
            }
        }
    }
    assert!(found.is_empty(), "{found:#?}");
    assert!(is_doc_test("") && is_doc_test("rust,no_run") && !is_doc_test("text"));
}
