//! Access tokens: one for operators (start, stop, delete) and one for viewers (read,
//! stream). From `DISKSCOPE_OPERATOR_TOKEN` / `DISKSCOPE_VIEWER_TOKEN`, else from
//! `tokens.json` in the data directory (mode 0600), else generated (256 random bits each)
//! and stored there. Compared in constant time.

use serde::{Deserialize, Serialize};
use shared::api::Role;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use subtle::ConstantTimeEq;

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct Tokens {
    pub operator: String,
    pub viewer: String,
}

/// Where the tokens came from, so start-up can say so (and print generated ones once).
#[derive(Debug, PartialEq, Eq)]
pub enum Origin {
    Environment,
    File,
    Generated,
}

fn random_token() -> std::io::Result<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| std::io::Error::other(e.to_string()))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Shortest token accepted (a guessable token on a LAN is no token).
pub const MIN_TOKEN_LEN: usize = 16;

impl Tokens {
    /// Refuses tokens that are too short or that give viewers the operator's rights.
    pub fn check(&self, from: &str) -> std::io::Result<()> {
        let bad = |m: String| Err(std::io::Error::new(std::io::ErrorKind::InvalidData, m));
        for (role, t) in [("operator", &self.operator), ("viewer", &self.viewer)] {
            if t.len() < MIN_TOKEN_LEN {
                return bad(format!(
                    "the {role} token from {from} has {} characters: at least {MIN_TOKEN_LEN} are needed",
                    t.len()
                ));
            }
        }
        if self.operator == self.viewer {
            return bad(format!(
                "the operator and viewer tokens from {from} are the same: a viewer would be an operator"
            ));
        }
        Ok(())
    }

    /// Loads or creates the tokens for data directory `dir`. Errors say what is wrong with
    /// which file or variable.
    pub fn load(dir: &Path) -> std::io::Result<(Tokens, Origin)> {
        let env = |k| std::env::var(k).ok().filter(|v: &String| !v.is_empty());
        if let (Some(operator), Some(viewer)) = (
            env("DISKSCOPE_OPERATOR_TOKEN"),
            env("DISKSCOPE_VIEWER_TOKEN"),
        ) {
            let t = Tokens { operator, viewer };
            t.check("DISKSCOPE_OPERATOR_TOKEN / DISKSCOPE_VIEWER_TOKEN")?;
            return Ok((t, Origin::Environment));
        }
        let path = dir.join("tokens.json");
        match std::fs::read(&path) {
            Ok(bytes) => {
                let t: Tokens = serde_json::from_slice(&bytes).map_err(|e| {
                    std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        format!(
                            "{} is not a valid tokens file ({e}): expected {{\"operator\": \"...\", \"viewer\": \"...\"}}; fix it or delete it to get new tokens",
                            path.display()
                        ),
                    )
                })?;
                t.check(&path.display().to_string())?;
                return Ok((t, Origin::File));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(std::io::Error::new(
                    e.kind(),
                    format!("cannot read {}: {e}", path.display()),
                ))
            }
        }
        let t = Tokens {
            operator: random_token()?,
            viewer: random_token()?,
        };
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)?;
        f.write_all(
            serde_json::to_string_pretty(&t)
                .map_err(std::io::Error::other)?
                .as_bytes(),
        )?;
        Ok((t, Origin::Generated))
    }

    /// The role a presented token grants, if any.
    pub fn role_of(&self, presented: &str) -> Option<Role> {
        let eq = |a: &str| bool::from(a.as_bytes().ct_eq(presented.as_bytes()));
        if eq(&self.operator) {
            Some(Role::Operator)
        } else if eq(&self.viewer) {
            Some(Role::Viewer)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn generated_once_stored_private_and_matched() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (t, origin) = Tokens::load(dir.path()).expect("generate");
        if origin == Origin::Environment {
            return; // the environment overrides the file in this test process
        }
        assert_eq!(origin, Origin::Generated);
        assert_eq!(t.operator.len(), 64);
        let mode = std::fs::metadata(dir.path().join("tokens.json"))
            .expect("stat")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        let (again, origin) = Tokens::load(dir.path()).expect("load");
        assert_eq!((again, origin), (t.clone(), Origin::File));
        assert_eq!(t.role_of(&t.operator), Some(Role::Operator));
        assert_eq!(t.role_of(&t.viewer), Some(Role::Viewer));
        assert_eq!(t.role_of("nope"), None);
    }
}
