//! Which targets the service may touch: the default scratch file, and what the operator
//! allowed at start-up (`--allow`: directories, files, block devices). Paths are resolved
//! (symlinks, `..`) before they are compared, so a link cannot lead out of the list. Writes
//! to a block device are refused when it is in use or carries a partition table or
//! filesystem signature, unless the operator armed that device (`--allow-destructive`).

use crate::target::{TargetInfo, TargetKind};
use std::path::{Component, Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum AccessError {
    #[error("target '{0}' must be an absolute path")]
    NotAbsolute(String),
    #[error("target '{requested}' is not allowed: it is not the scratch file and not under an --allow path ({allowed})")]
    NotAllowed { requested: String, allowed: String },
    #[error("target '{requested}' resolves to {resolved}, outside the allowed paths ({allowed})")]
    Escapes {
        requested: String,
        resolved: String,
        allowed: String,
    },
    #[error("target '{0}': its folder does not exist")]
    NoParent(String),
    #[error("refusing to write to {path}: {}", .reasons.join("; "))]
    InUse { path: String, reasons: Vec<String> },
    #[error("refusing to write to {path}: it carries {}; start the agent with --allow-destructive {path} to overwrite it", .what.join(" and "))]
    Signature {
        path: String,
        what: Vec<&'static str>,
    },
}

#[derive(Debug, Clone)]
pub struct AccessPolicy {
    scratch: PathBuf,
    allowed: Vec<PathBuf>,
    armed: Vec<PathBuf>,
}

/// Resolves a path that may not exist yet: the parent must exist; the name is kept.
fn resolve(path: &Path) -> Option<PathBuf> {
    if let Ok(p) = path.canonicalize() {
        return Some(p);
    }
    let name = path.file_name()?;
    if path.components().any(|c| c == Component::ParentDir) {
        return None;
    }
    Some(path.parent()?.canonicalize().ok()?.join(name))
}

impl AccessPolicy {
    /// `scratch` is always allowed; `allowed` and `armed` are resolved now (entries that do
    /// not exist are kept as given so that a later mount or device can match).
    pub fn new(scratch: PathBuf, allowed: &[PathBuf], armed: &[PathBuf]) -> Self {
        let norm = |v: &[PathBuf]| {
            v.iter()
                .map(|p| resolve(p).unwrap_or_else(|| p.clone()))
                .collect()
        };
        AccessPolicy {
            scratch: resolve(&scratch).unwrap_or(scratch),
            allowed: norm(allowed),
            armed: norm(armed),
        }
    }

    pub fn scratch(&self) -> &Path {
        &self.scratch
    }

    pub fn allowed(&self) -> &[PathBuf] {
        &self.allowed
    }

    fn allowed_list(&self) -> String {
        std::iter::once(&self.scratch)
            .chain(&self.allowed)
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn permits(&self, resolved: &Path) -> bool {
        resolved == self.scratch
            || self
                .allowed
                .iter()
                .any(|a| resolved == a || (a.is_dir() && resolved.starts_with(a)))
    }

    /// Resolves `requested` and checks it against the lists.
    pub fn resolve_target(&self, requested: &str) -> Result<PathBuf, AccessError> {
        let path = Path::new(requested);
        if !path.is_absolute() {
            return Err(AccessError::NotAbsolute(requested.to_string()));
        }
        let resolved = resolve(path).ok_or_else(|| AccessError::NoParent(requested.to_string()))?;
        if self.permits(&resolved) {
            return Ok(resolved);
        }
        // Say "escapes" when the path as written looks allowed but resolves elsewhere.
        let lexical = self.permits(path);
        let allowed = self.allowed_list();
        if lexical {
            Err(AccessError::Escapes {
                requested: requested.to_string(),
                resolved: resolved.display().to_string(),
                allowed,
            })
        } else {
            Err(AccessError::NotAllowed {
                requested: requested.to_string(),
                allowed,
            })
        }
    }

    /// Checks that writing to a probed target is safe.
    pub fn check_write(&self, target: &TargetInfo) -> Result<(), AccessError> {
        if target.kind != TargetKind::Block {
            return Ok(());
        }
        let path = target.path.display().to_string();
        let reasons = target.in_use();
        if !reasons.is_empty() {
            return Err(AccessError::InUse { path, reasons });
        }
        if self.armed.iter().any(|a| a == &target.path) {
            return Ok(());
        }
        let what = target.signatures().unwrap_or_default();
        if what.is_empty() {
            Ok(())
        } else {
            Err(AccessError::Signature { path, what })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allow_list_resolves_links_and_dots() {
        let root = tempfile::tempdir().expect("tempdir");
        let allowed = root.path().join("allowed");
        let outside = root.path().join("outside");
        std::fs::create_dir_all(&allowed).expect("mkdir");
        std::fs::create_dir_all(&outside).expect("mkdir");
        std::os::unix::fs::symlink(&outside, allowed.join("link")).expect("symlink");
        let scratch = root.path().join("scratch.bin");
        let p = AccessPolicy::new(scratch.clone(), std::slice::from_ref(&allowed), &[]);
        let s = |p: &Path| p.display().to_string();

        assert!(
            p.resolve_target(&s(&allowed.join("new.bin"))).is_ok(),
            "new file in an allowed dir"
        );
        assert!(
            p.resolve_target(&s(&scratch)).is_ok(),
            "the scratch file is always allowed"
        );
        let e = p.resolve_target(&s(&outside.join("x.bin"))).unwrap_err();
        assert!(e.to_string().contains("is not allowed"), "{e}");
        let e = p
            .resolve_target(&s(&allowed.join("link/x.bin")))
            .unwrap_err();
        assert!(
            e.to_string().contains("resolves to") && e.to_string().contains("outside"),
            "{e}"
        );
        let e = p
            .resolve_target(&s(&allowed.join("../outside/y.bin")))
            .unwrap_err();
        assert!(
            matches!(
                e,
                AccessError::NoParent(_)
                    | AccessError::NotAllowed { .. }
                    | AccessError::Escapes { .. }
            ),
            "{e}"
        );
        let e = p.resolve_target("relative.bin").unwrap_err();
        assert!(e.to_string().contains("absolute"), "{e}");
    }
}
