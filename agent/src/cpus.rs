//! The CPUs a run's jobs may run on (fio's `cpus_allowed`): the list a spec names as text,
//! read and checked against the host by the plan (which CPUs exist is the host's business,
//! as a target's size is), and a job thread pinned to its share of them.

use shared::spec::CpuPolicy;
use std::fmt;
use std::io;
use std::str::FromStr;

/// CPU numbers stop below this (the kernel's `cpu_set_t`, as glibc sizes it).
pub const MAX_CPUS: u16 = 1024;

/// A set of CPUs, written as fio writes it: `0-3,6`. Sorted, no repeats, never empty.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuList(Vec<u16>);

impl CpuList {
    /// The set of `cpus`, or `None` when it is empty or one is not below [`MAX_CPUS`].
    pub fn of(mut cpus: Vec<u16>) -> Option<Self> {
        cpus.sort_unstable();
        cpus.dedup();
        (!cpus.is_empty() && cpus.iter().all(|&c| c < MAX_CPUS)).then_some(CpuList(cpus))
    }

    pub fn cpus(&self) -> &[u16] {
        &self.0
    }

    /// The CPUs job `job` may run on: all of them (`shared`), or one each in turn
    /// (`split`, round robin when there are more jobs than CPUs, as fio does).
    pub fn for_job(&self, job: usize, policy: CpuPolicy) -> &[u16] {
        match policy {
            CpuPolicy::Shared => &self.0,
            CpuPolicy::Split => {
                let i = job % self.0.len();
                &self.0[i..=i]
            }
        }
    }
}

impl FromStr for CpuList {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        // A set, not a list: "0-1023" repeated over a 64 KiB request is still 1024 flags.
        let mut on = [false; MAX_CPUS as usize];
        for item in s.split(',').map(str::trim) {
            let cpu = |v: &str| match v.parse::<u16>() {
                Ok(c) if c < MAX_CPUS => Ok(c),
                _ => Err(format!(
                    "'{item}' in '{s}': expected CPU numbers 0..{MAX_CPUS} as N or N-M"
                )),
            };
            let (lo, hi) = match item.split_once('-') {
                Some((a, b)) => (cpu(a)?, cpu(b)?),
                None => (cpu(item)?, cpu(item)?),
            };
            if lo > hi {
                return Err(format!("'{item}' in '{s}': a range runs upwards"));
            }
            on[usize::from(lo)..=usize::from(hi)].fill(true);
        }
        Ok(CpuList(
            (0..MAX_CPUS).filter(|&c| on[usize::from(c)]).collect(),
        ))
    }
}

impl fmt::Display for CpuList {
    /// Runs of consecutive CPUs as ranges: `0-3,6`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut i = 0;
        while i < self.0.len() {
            let mut j = i;
            while j + 1 < self.0.len() && self.0[j + 1] == self.0[j] + 1 {
                j += 1;
            }
            if i > 0 {
                f.write_str(",")?;
            }
            if i == j {
                write!(f, "{}", self.0[i])?;
            } else {
                write!(f, "{}-{}", self.0[i], self.0[j])?;
            }
            i = j + 1;
        }
        Ok(())
    }
}

/// The calling thread may run only on `cpus` (numbers below [`MAX_CPUS`]).
pub fn pin(cpus: &[u16]) -> io::Result<()> {
    // SAFETY: a zeroed cpu_set_t is the empty set; CPU_SET writes inside it for numbers
    // below CPU_SETSIZE (1024), which a CpuList's are.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus {
        unsafe { libc::CPU_SET(usize::from(c), &mut set) };
    }
    // SAFETY: pid 0 is the calling thread; the size is the set's.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// The CPUs the calling thread may run on.
pub fn allowed() -> io::Result<Vec<u16>> {
    // SAFETY: as in `pin`; sched_getaffinity fills the set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let rc =
        unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((0..MAX_CPUS)
        .filter(|&c| unsafe { libc::CPU_ISSET(usize::from(c), &set) })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_read_and_print_as_fio_writes_them() {
        for (text, cpus, printed) in [
            ("0", vec![0], "0"),
            ("0-3,6", vec![0, 1, 2, 3, 6], "0-3,6"),
            ("6,0-1,1", vec![0, 1, 6], "0-1,6"),
            ("2,3,4", vec![2, 3, 4], "2-4"),
            ("1023", vec![1023], "1023"),
        ] {
            let l: CpuList = text.parse().expect(text);
            assert_eq!(l.cpus(), &cpus[..], "{text}");
            assert_eq!(l.to_string(), printed, "{text}");
        }
        for (text, why) in [
            ("", "'' in '': expected CPU numbers"),
            ("3-1", "'3-1' in '3-1': a range runs upwards"),
            ("0,1024", "'1024' in '0,1024': expected CPU numbers 0..1024"),
            ("x", "'x' in 'x'"),
            ("1-", "'1-' in '1-'"),
        ] {
            let e = text.parse::<CpuList>().expect_err(text);
            assert!(e.contains(why), "{text}: {e}");
        }
    }

    #[test]
    fn split_gives_each_job_one_cpu_in_turn() {
        let l: CpuList = "0-1,4".parse().expect("list");
        let got: Vec<&[u16]> = (0..4).map(|j| l.for_job(j, CpuPolicy::Split)).collect();
        assert_eq!(got, vec![&[0][..], &[1], &[4], &[0]]);
        assert_eq!(l.for_job(3, CpuPolicy::Shared), &[0, 1, 4]);
    }

    #[test]
    fn a_thread_pinned_to_one_cpu_reports_only_it() {
        let mine = allowed().expect("affinity");
        let first = mine[0];
        std::thread::spawn(move || {
            pin(&[first]).expect("pin");
            assert_eq!(allowed().expect("affinity"), vec![first]);
        })
        .join()
        .expect("thread");
        // The pin was the other thread's alone.
        assert_eq!(allowed().expect("affinity"), mine);
    }
}
