//! The map stays true: every path ARCHITECTURE.md names exists, every source
//! file is on the map, and every route and error code of the API is in docs/api.md. (`cargo
//! doc` with warnings denied runs in `scripts/test.sh`.)

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// Every file and directory of the repository (relative, `/`-separated), without build
/// output and dependencies.
fn tree() -> BTreeSet<String> {
    fn walk(dir: &Path, rel: &str, out: &mut BTreeSet<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let top = rel.is_empty();
            if matches!(name.as_str(), "node_modules" | ".git") || (top && name == "target") {
                continue;
            }
            let path = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                walk(&e.path(), &path, out);
                out.insert(format!("{path}/"));
            } else {
                out.insert(path);
            }
        }
    }
    let mut out = BTreeSet::new();
    walk(&root(), "", &mut out);
    out
}

/// The code map section of ARCHITECTURE.md.
fn code_map() -> String {
    let a = read("ARCHITECTURE.md");
    let start = a.find("## Code map").expect("a code map section");
    let end = a[start..]
        .find("\n## Invariants")
        .map_or(a.len(), |e| start + e);
    a[start..end].to_string()
}

/// The backticked words of `text` that look like repository paths.
fn paths_named(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .filter(|t| {
            !t.contains(['*', ' ', '{', '(', ':', '='])
                && !t.starts_with(['/', '-', '$', '~'])
                && (t.contains('/')
                    || [
                        ".rs", ".sh", ".py", ".mjs", ".sql", ".md", ".toml", ".html", ".css",
                    ]
                    .iter()
                    .any(|ext| t.ends_with(ext)))
        })
        .map(str::to_string)
        .collect()
}

/// `name` is a path of the tree, or the end of one (the map names files within their
/// directory's bullet: `cli/outputs.rs`, `fine.rs`), or build output git ignores.
fn exists(tree: &BTreeSet<String>, name: &str) -> bool {
    let dir = format!("{}/", name.trim_end_matches('/'));
    let ignored = read(".gitignore")
        .lines()
        .any(|l| l.trim().trim_matches('/') == name.trim_matches('/'));
    ignored
        || tree.contains(name)
        || tree.contains(&dir)
        || tree
            .iter()
            .any(|p| p.ends_with(&format!("/{name}")) || p.ends_with(&format!("/{dir}")))
}

#[test]
fn every_path_architecture_md_names_exists() {
    let tree = tree();
    let missing: Vec<String> = paths_named(&read("ARCHITECTURE.md"))
        .into_iter()
        .filter(|p| !exists(&tree, p))
        .collect();
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md names paths that do not exist: {missing:?}"
    );
}

/// The folders the code map names: backticked repository paths ending in `/`.
fn folders_on_map() -> BTreeSet<String> {
    paths_named(&code_map())
        .into_iter()
        .filter(|p| p.ends_with('/'))
        .map(|p| p.trim_end_matches('/').to_string())
        .collect()
}

#[test]
fn every_folder_on_the_code_map_exists_and_every_source_folder_is_on_it() {
    let tree = tree();
    let named = folders_on_map();
    let missing: Vec<&String> = named
        .iter()
        .filter(|p| !tree.contains(*p) && !tree.contains(&format!("{p}/")))
        .filter(|p| {
            !read(".gitignore")
                .lines()
                .any(|l| l.trim().trim_matches('/') == p.as_str())
        })
        .collect();
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md's code map names folders that do not exist: {missing:?}"
    );
    let dirs: BTreeSet<String> = tree
        .iter()
        .filter(|p| {
            ["agent/src", "shared/src", "frontend/src"]
                .iter()
                .any(|root| *p == root || p.starts_with(&format!("{root}/")))
        })
        .filter(|p| std::fs::metadata(root().join(p)).is_ok_and(|m| m.is_dir()))
        .map(|p| p.trim_end_matches('/').to_string())
        .collect();
    let unlisted: Vec<&String> = dirs.iter().filter(|d| !named.contains(*d)).collect();
    assert!(
        unlisted.is_empty(),
        "folders missing from ARCHITECTURE.md's code map: {unlisted:?}"
    );
    assert!(dirs.len() >= 15, "{} source folders seen", dirs.len());
}

/// Per-file detail lives with the file: every source file of the three crates opens with
/// its own `//!` comment.
#[test]
fn every_source_file_says_what_it_holds() {
    let bare: Vec<String> = tree()
        .into_iter()
        .filter(|p| {
            (p.starts_with("agent/src/") || p.starts_with("shared/src/"))
                || p.starts_with("frontend/src/")
        })
        .filter(|p| p.ends_with(".rs"))
        .filter(|p| !read(p).trim_start().starts_with("//!"))
        .collect();
    assert!(
        bare.is_empty(),
        "source files without a //! comment saying what they hold: {bare:?}"
    );
}

/// The string literal right after each `StatusCode::X,` / `S::X,` in `src`: the error codes.
fn error_codes(src: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for marker in ["StatusCode::", "S::"] {
        for (i, _) in src.match_indices(marker) {
            let rest = &src[i + marker.len()..];
            let ident = rest
                .find(|c: char| !(c.is_ascii_uppercase() || c == '_'))
                .unwrap_or(0);
            if ident == 0 {
                continue;
            }
            let after = rest[ident..].trim_start();
            let Some(after) = after.strip_prefix(',') else {
                continue;
            };
            let Some(lit) = after.trim_start().strip_prefix('"') else {
                continue;
            };
            if let Some(end) = lit.find('"') {
                let code = &lit[..end];
                if !code.is_empty() && code.chars().all(|c| c.is_ascii_lowercase() || c == '_') {
                    out.insert(code.to_string());
                }
            }
        }
    }
    out
}

#[test]
fn every_route_and_error_code_is_in_the_api_doc() {
    let doc = read("docs/api.md");
    let api_dir = root().join("agent/src/api");
    // The routes, from the table the router and the OpenAPI document are built from.
    let routes: BTreeSet<String> = agent::api::routes::table()
        .iter()
        .map(|r| r.path.to_string())
        .collect();
    let mut codes = BTreeSet::new();
    for e in std::fs::read_dir(&api_dir)
        .expect("agent/src/api")
        .flatten()
    {
        let src = std::fs::read_to_string(e.path()).expect("source");
        codes.extend(error_codes(&src));
    }
    assert!(
        routes.len() >= 10 && codes.len() >= 10,
        "{routes:?} {codes:?}"
    );
    let undocumented: Vec<&String> = routes
        .iter()
        .filter(|r| !doc.contains(r.as_str()))
        .chain(codes.iter().filter(|c| !doc.contains(&format!("`{c}`"))))
        .collect();
    assert!(
        undocumented.is_empty(),
        "docs/api.md does not mention: {undocumented:?}"
    );
}

/// The functions of `src` (code before its `#[cfg(test)]` module) longer than `max` lines:
/// (name, first line, lines). A function ends at the first `}` at its own indentation.
fn long_functions(src: &str, max: usize) -> Vec<(String, usize, usize)> {
    let lines: Vec<&str> = src.lines().collect();
    let end = lines
        .iter()
        .position(|l| l.starts_with("#[cfg(test)]"))
        .unwrap_or(lines.len());
    let mut out = Vec::new();
    for (i, line) in lines[..end].iter().enumerate() {
        let indent = line.len() - line.trim_start().len();
        let code = line.trim_start();
        let words: Vec<&str> = code.split_whitespace().collect();
        let Some(at) = words.iter().position(|w| *w == "fn") else {
            continue;
        };
        let qualifiers = [
            "pub",
            "pub(crate)",
            "pub(super)",
            "async",
            "const",
            "unsafe",
        ];
        if !words[..at].iter().all(|w| qualifiers.contains(w)) {
            continue;
        }
        let name: String = words
            .get(at + 1)
            .map(|w| {
                w.chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect()
            })
            .unwrap_or_default();
        let close = " ".repeat(indent) + "}";
        let last = lines[i + 1..end]
            .iter()
            .position(|l| l.starts_with(&close) && !l[indent..].starts_with("})"));
        // A declaration without a body (a trait's) ends with `;`; a one-line function
        // closes on its own line.
        if code.trim_end().ends_with(';') || (code.contains('{') && code.trim_end().ends_with('}'))
        {
            continue;
        }
        if let Some(n) = last.map(|k| k + 2).filter(|n| *n > max) {
            out.push((name, i + 1, n));
        }
    }
    out
}

#[test]
fn no_function_outside_tests_is_longer_than_120_lines() {
    let long: Vec<String> = tree()
        .into_iter()
        .filter(|p| {
            ["agent/src/", "shared/src/", "frontend/src/"]
                .iter()
                .any(|d| p.starts_with(d))
                && p.ends_with(".rs")
                && !p.ends_with("/tests.rs")
        })
        .flat_map(|p| {
            long_functions(&read(&p), 120)
                .into_iter()
                .map(move |(f, line, n)| format!("{p}:{line} {f} ({n} lines)"))
        })
        .collect();
    assert!(long.is_empty(), "functions over 120 lines: {long:?}");
}

#[test]
fn the_length_check_sees_a_long_function() {
    let body = "    let x = 1;\n".repeat(130);
    let src = format!("pub fn short() {{\n}}\n\nfn long() {{\n{body}}}\n");
    let found = long_functions(&src, 120);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(
        (found[0].0.as_str(), found[0].1, found[0].2),
        ("long", 4, 132)
    );
}
