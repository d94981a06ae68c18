//! fio's job-file syntax: `[global]` and job sections, `key=value` and bare `key` options,
//! `;` and `#` comments (whole lines, and after a value when preceded by white space),
//! `include FILE` (relative to the including file), and `${VAR}` from the environment.
//! What the options mean is `options.rs`'s business; this module only knows where each
//! one was written.

use super::{At, JobFileError};
use std::path::{Path, PathBuf};

/// Deepest chain of `include`s followed (a file including itself is refused by name first).
const MAX_INCLUDE_DEPTH: usize = 16;
/// Largest job file read (fio's own examples are under 4 KiB).
pub const MAX_JOB_FILE_BYTES: usize = 1 << 20;

/// One `key[=value]` line, where it was written.
#[derive(Debug, Clone, PartialEq)]
pub struct RawOption {
    pub key: String,
    pub value: Option<String>,
    pub at: At,
}

/// A `[name]` section with its own options, in file order.
#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    pub name: String,
    pub at: At,
    pub options: Vec<RawOption>,
}

/// Reads the text of an included file.
pub trait Source {
    fn read(&self, path: &Path) -> std::io::Result<String>;
}

/// Included files come from the file system.
pub struct Files;

impl Source for Files {
    fn read(&self, path: &Path) -> std::io::Result<String> {
        let meta = std::fs::metadata(path)?;
        if !meta.is_file() {
            // A device would be read whole (its size is not the file's length).
            return Err(std::io::Error::other(
                "not a regular file, so not a fio job file: a device or file to measure \
                 is named with --target",
            ));
        }
        if meta.len() > MAX_JOB_FILE_BYTES as u64 {
            return Err(std::io::Error::other(format!(
                "{} bytes: larger than a job file ({MAX_JOB_FILE_BYTES} bytes at most)",
                meta.len()
            )));
        }
        std::fs::read_to_string(path)
    }
}

/// A job sent to the agent (the API's `fio_job`): its `include`s are refused, since the agent
/// would otherwise read any file it can for whoever may start a run.
pub struct NoIncludes;

impl Source for NoIncludes {
    fn read(&self, _path: &Path) -> std::io::Result<String> {
        Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            "the agent follows no include in a job sent to it: put the included text in its place",
        ))
    }
}

/// The sections of `text` (read from `file`) in order, `[global]` ones included, with every
/// `include` followed and every `${VAR}` replaced by `vars`.
pub fn sections(
    text: &str,
    file: &Path,
    source: &dyn Source,
    vars: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<Section>, JobFileError> {
    let mut out = Vec::new();
    let mut chain = vec![file.to_path_buf()];
    parse_into(text, file, source, vars, &mut out, &mut chain)?;
    Ok(out)
}

fn parse_into(
    text: &str,
    file: &Path,
    source: &dyn Source,
    vars: &dyn Fn(&str) -> Option<String>,
    out: &mut Vec<Section>,
    chain: &mut Vec<PathBuf>,
) -> Result<(), JobFileError> {
    let name = file.display().to_string();
    for (i, raw) in text.lines().enumerate() {
        let at = At {
            file: name.clone(),
            line: i as u32 + 1,
        };
        let line = strip_comment(raw).trim();
        if line.is_empty() {
            continue;
        }
        if let Some(rest) = line.strip_prefix("include ").map(str::trim) {
            let path = file.parent().unwrap_or(Path::new(".")).join(rest);
            if chain.contains(&path) || chain.len() >= MAX_INCLUDE_DEPTH {
                return Err(JobFileError::Syntax {
                    at,
                    message: format!(
                        "include {rest}: includes itself (through {})",
                        chain
                            .iter()
                            .map(|p| p.display().to_string())
                            .collect::<Vec<_>>()
                            .join(" -> ")
                    ),
                });
            }
            let text = source.read(&path).map_err(|e| JobFileError::Syntax {
                at: at.clone(),
                message: format!("include {}: {e}", path.display()),
            })?;
            chain.push(path.clone());
            parse_into(&text, &path, source, vars, out, chain)?;
            chain.pop();
            continue;
        }
        if let Some(inner) = line.strip_prefix('[') {
            let Some(name) = inner.strip_suffix(']').map(str::trim) else {
                return Err(JobFileError::Syntax {
                    at,
                    message: format!("'{line}': a section header is [name]"),
                });
            };
            if name.is_empty() {
                return Err(JobFileError::Syntax {
                    at,
                    message: "'[]': a section needs a name".into(),
                });
            }
            out.push(Section {
                name: name.to_string(),
                at,
                options: Vec::new(),
            });
            continue;
        }
        let line = substitute(line, &at, vars)?;
        let (key, value) = match line.split_once('=') {
            Some((k, v)) => (k.trim().to_string(), Some(v.trim().to_string())),
            None => (line.trim().to_string(), None),
        };
        if key.is_empty() || key.contains(char::is_whitespace) {
            return Err(JobFileError::Syntax {
                at,
                message: format!("'{line}': expected key=value or a bare option"),
            });
        }
        let Some(section) = out.last_mut() else {
            return Err(JobFileError::Syntax {
                at,
                message: format!("'{line}': an option before any [section]"),
            });
        };
        section.options.push(RawOption { key, value, at });
    }
    Ok(())
}

/// The line without its comment: one starting the line, or `;`/`#` after white space (fio's
/// examples write `numjobs=4\t; 4 threads`).
fn strip_comment(line: &str) -> &str {
    let t = line.trim_start();
    if t.starts_with(';') || t.starts_with('#') {
        return "";
    }
    let bytes = line.as_bytes();
    for i in 1..bytes.len() {
        if (bytes[i] == b';' || bytes[i] == b'#') && bytes[i - 1].is_ascii_whitespace() {
            return &line[..i];
        }
    }
    line
}

/// `${NAME}` replaced by the variable's value; an unset one is an error naming it.
fn substitute(
    line: &str,
    at: &At,
    vars: &dyn Fn(&str) -> Option<String>,
) -> Result<String, JobFileError> {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            return Err(JobFileError::Syntax {
                at: at.clone(),
                message: format!("'{line}': '${{' without its '}}'"),
            });
        };
        let name = &after[..end];
        let value = vars(name).ok_or_else(|| JobFileError::Syntax {
            at: at.clone(),
            message: format!("${{{name}}}: no such environment variable"),
        })?;
        out.push_str(&value);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    struct Map(HashMap<PathBuf, String>);
    impl Source for Map {
        fn read(&self, path: &Path) -> std::io::Result<String> {
            self.0
                .get(path)
                .cloned()
                .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::NotFound))
        }
    }

    fn parse(text: &str, files: &[(&str, &str)]) -> Result<Vec<Section>, JobFileError> {
        let map = Map(files
            .iter()
            .map(|(p, t)| (PathBuf::from(p), t.to_string()))
            .collect());
        let vars = |n: &str| (n == "SIZE").then(|| "64m".to_string());
        sections(text, Path::new("dir/job.fio"), &map, &vars)
    }

    #[test]
    fn sections_options_comments_and_variables() {
        let s = parse(
            "; a comment\n[global]\nbs=4k\nnumjobs=4\t; four threads\n# another\n\n[f1]\nsize=${SIZE}\ntime_based\n",
            &[],
        )
        .unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].name, "global");
        assert_eq!(s[0].options[1].key, "numjobs");
        assert_eq!(s[0].options[1].value.as_deref(), Some("4"));
        assert_eq!(s[1].options[0].value.as_deref(), Some("64m"));
        assert_eq!(s[1].options[0].at.line, 8);
        assert_eq!(s[1].options[1].key, "time_based");
        assert_eq!(s[1].options[1].value, None);
    }

    #[test]
    fn includes_are_read_relative_to_the_including_file_and_cycles_refused() {
        let s = parse(
            "include common.fio\n[job]\nrw=read\n",
            &[("dir/common.fio", "[global]\nbs=1m\n")],
        )
        .unwrap();
        assert_eq!(s[0].name, "global");
        assert_eq!(s[0].options[0].at.file, "dir/common.fio");
        assert_eq!(s[1].name, "job");
        let e = parse("include job.fio\n", &[("dir/job.fio", "include job.fio\n")]).unwrap_err();
        assert!(e.to_string().contains("includes itself"), "{e}");
        let e = parse("include missing.fio\n", &[]).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("dir/job.fio:1: include dir/missing.fio"),
            "{e}"
        );
    }

    #[test]
    fn errors_name_the_file_line_and_text() {
        let e = parse("bs=4k\n", &[]).unwrap_err().to_string();
        assert!(
            e.starts_with("dir/job.fio:1:") && e.contains("before any [section]"),
            "{e}"
        );
        let e = parse("[job]\nsize=${NOPE}\n", &[]).unwrap_err().to_string();
        assert!(
            e.starts_with("dir/job.fio:2:") && e.contains("${NOPE}"),
            "{e}"
        );
        let e = parse("[job\n", &[]).unwrap_err().to_string();
        assert!(e.contains("'[job'"), "{e}");
    }
}
