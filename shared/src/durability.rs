//! How a workload makes its writes durable while it runs: flushes every few writes (fio's
//! `fsync=N` / `fdatasync=N`) and writes that are durable on their own (fio's `sync=`:
//! the target opened `O_SYNC` or `O_DSYNC`). Both cost the drive a cache flush (or FUA
//! writes) and are what a database's commit or a recorder's checkpoint does.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Most writes between two flushes.
pub const MAX_FLUSH_EVERY: u32 = 1 << 30;

/// A flush after every `every` writes issued (fio's `fsync=N`; `fdatasync=N` with
/// `data_only`). Each flush takes a queue slot as an I/O of its own (io_uring's FSYNC; not
/// drained: like fio, it flushes what has completed), and is timed like one; the summary
/// counts flushes apart from reads and writes.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Flush {
    pub every: u32,
    /// fdatasync (the data and what is needed to read it back) instead of fsync.
    #[serde(default)]
    pub data_only: bool,
}

impl Flush {
    /// The system call's name: `fsync` or `fdatasync`.
    pub fn call(self) -> &'static str {
        if self.data_only {
            "fdatasync"
        } else {
            "fsync"
        }
    }

    pub fn check(self) -> Result<(), String> {
        if (1..=MAX_FLUSH_EVERY).contains(&self.every) {
            Ok(())
        } else {
            Err(format!(
                "{} every N writes: N must be 1..{MAX_FLUSH_EVERY}",
                self.call()
            ))
        }
    }
}

impl fmt::Display for Flush {
    /// `fsync/8`: a flush after every 8 writes.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.call(), self.every)
    }
}

impl FromStr for Flush {
    type Err = String;
    /// `8` or `fsync/8` (fsync after every 8 writes), `fdatasync/8`.
    fn from_str(s: &str) -> Result<Self, String> {
        let (call, n) = s.trim().split_once('/').unwrap_or(("fsync", s.trim()));
        let err = || {
            format!(
                "invalid flush '{s}': expected N, fsync/N or fdatasync/N (a flush every N writes)"
            )
        };
        let data_only = match call {
            "fsync" => false,
            "fdatasync" => true,
            _ => return Err(err()),
        };
        let every = n.parse().map_err(|_| err())?;
        Ok(Flush { every, data_only })
    }
}

/// Writes durable on their own (fio's `sync=`): the target opened with `O_SYNC` (data and
/// metadata) or `O_DSYNC` (data), so that each write returns once it is on stable media.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum WriteSync {
    #[default]
    None,
    Sync,
    Dsync,
}

impl WriteSync {
    /// The open flag, as the results name it (`""` for none).
    pub fn flag_name(self) -> &'static str {
        match self {
            WriteSync::None => "",
            WriteSync::Sync => "O_SYNC",
            WriteSync::Dsync => "O_DSYNC",
        }
    }
}

impl fmt::Display for WriteSync {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            WriteSync::None => "none",
            WriteSync::Sync => "sync",
            WriteSync::Dsync => "dsync",
        })
    }
}

impl FromStr for WriteSync {
    type Err = String;
    /// fio's values: `none`/`0`, `sync`/`1`, `dsync`.
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "none" | "0" => Ok(WriteSync::None),
            "sync" | "1" => Ok(WriteSync::Sync),
            "dsync" => Ok(WriteSync::Dsync),
            _ => Err(format!(
                "invalid sync '{s}': expected none, sync (O_SYNC) or dsync (O_DSYNC)"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flush_names_its_call_and_bounds() {
        let f = Flush {
            every: 8,
            data_only: true,
        };
        assert_eq!(f.to_string(), "fdatasync/8");
        assert!(f.check().is_ok());
        let zero = Flush {
            every: 0,
            data_only: false,
        };
        assert!(zero.check().unwrap_err().contains("fsync every N writes"));
        assert_eq!("fdatasync/8".parse(), Ok(f));
        assert_eq!(
            "16".parse::<Flush>().map(|f| (f.every, f.data_only)),
            Ok((16, false))
        );
        assert!("sync/8".parse::<Flush>().unwrap_err().contains("'sync/8'"));
    }

    #[test]
    fn write_sync_takes_fio_values() {
        assert_eq!("1".parse(), Ok(WriteSync::Sync));
        assert_eq!("dsync".parse(), Ok(WriteSync::Dsync));
        assert_eq!("0".parse(), Ok(WriteSync::None));
        assert!("fua".parse::<WriteSync>().unwrap_err().contains("'fua'"));
    }
}
