//! The probe (`diskscope probe`, the `probe` preset): one request every interval on the
//! target, as ioping makes them, instead of a queue kept full. Each request is a `pread` or
//! `pwrite` of `bs` bytes at an offset in the working set (`offset`, `size`: random and
//! aligned to `bs`, or one after another with a sequential `rw`), timed on its own; the
//! first `warmup` ones are shown (`JobMsg::Request`) and not counted, the others go into
//! the job's interval like any I/O, so samples, histograms, the store and Prometheus are
//! the engine's. Nothing accumulates per request: a probe runs for days at flat memory.

use crate::engine::buf::BufferPool;
use crate::engine::job::{JobMsg, JobSetup, RunShared, MAX_BACKLOG};
use crate::engine::timed::Timer;
use crate::engine::Dir;
use crate::workload::Plan;
use shared::probe::{ProbeSpec, Request};
use shared::RunError;
use std::os::unix::fs::FileExt;
use std::sync::atomic::Ordering;
use std::sync::mpsc::Sender;
use std::time::Duration;

/// What one request is made on: the target, the buffer, where in the working set.
struct Probe {
    file: std::fs::File,
    pool: BufferPool,
    write: bool,
    /// The working set's first byte and its requests' count (of `bs` each).
    start: u64,
    slots: u64,
    bs: u64,
    random: bool,
    rng: u64,
    next: u64,
}

impl Probe {
    fn open(plan: &Plan) -> Result<Probe, String> {
        let spec = plan.spec();
        let write = plan.writes();
        let file = plan
            .target()
            .open_with(write, spec.direct, spec.write_sync)
            .map_err(|e| e.to_string())?;
        let bs = spec.bs.max(1);
        let mut pool = BufferPool::new(bs as usize, 1, false)
            .map_err(|e| format!("a {bs}-byte buffer: {e}"))?;
        if write {
            let rng = crate::workload::rng::Rng::new(spec.seed, 0);
            crate::workload::pattern::Filler::new(spec.pattern, rng).init(pool.get_mut(0));
        }
        let (start, end) = plan.span_bytes();
        Ok(Probe {
            file,
            pool,
            write,
            start,
            slots: (end.saturating_sub(start) / bs).max(1),
            bs,
            random: spec.rw.is_random(),
            rng: spec.seed | 1,
            next: 0,
        })
    }

    /// The next request's offset.
    fn offset(&mut self) -> u64 {
        let slot = if self.random {
            self.rng ^= self.rng << 13;
            self.rng ^= self.rng >> 7;
            self.rng ^= self.rng << 17;
            self.rng % self.slots
        } else {
            let s = self.next % self.slots;
            self.next += 1;
            s
        };
        self.start + slot * self.bs
    }

    /// One request at `offset`: the bytes it moved (all of them, or an error).
    fn request(&mut self, offset: u64) -> std::io::Result<u64> {
        let buf = self.pool.get_mut(0);
        let n = if self.write {
            self.file.write_at(buf, offset)?
        } else {
            self.file.read_at(buf, offset)?
        };
        if n as u64 != self.bs {
            return Err(std::io::Error::other(format!(
                "a short {}: {n} of {} bytes",
                if self.write { "write" } else { "read" },
                self.bs
            )));
        }
        Ok(self.bs)
    }
}

fn probe_spec(plan: &Plan) -> Result<ProbeSpec, String> {
    plan.spec()
        .probe
        .clone()
        .ok_or_else(|| "not a probe".to_string())
}

/// The probe's one job: a request (or a burst of them) at each tick of the interval until
/// the count is made, the run time is up, or it is stopped.
pub fn job_thread(plan: &Plan, job: usize, shared: &RunShared, tx: &Sender<JobMsg>) {
    let (p, mut probe) = match probe_spec(plan).and_then(|p| Ok((p, Probe::open(plan)?))) {
        Ok(x) => x,
        Err(e) => {
            let _ = tx.send(JobMsg::Ready {
                job,
                result: Err(format!("job {job}: {e}")),
            });
            return;
        }
    };
    let _ = tx.send(JobMsg::Ready {
        job,
        result: Ok(JobSetup {
            backend: "sync",
            note: None,
            features: vec![format!(
                "one request at a time ({}), every {}",
                if probe.write { "pwrite" } else { "pread" },
                shared::units::format_ns(p.interval_us.saturating_mul(1000))
            )],
            buffers: (probe.pool.mapped_bytes(), probe.pool.huge_bytes()),
        }),
    });
    if shared.gate.wait().is_none() {
        return done(tx, job, 0, None);
    }
    let mut t = Timer::new(job, shared, tx);
    let mut out = Out {
        t: &mut t,
        shared,
        tx,
        n: 0,
    };
    let error = match &p.idle_sweep {
        Some(w) => sweep(&p, w, &mut probe, &mut out),
        None => ticks(&p, &mut probe, &mut out),
    }
    .err();
    let end_ns = t.elapsed();
    t.flush(end_ns);
    done(tx, job, end_ns, error);
}

fn done(tx: &Sender<JobMsg>, job: usize, end_ns: u64, error: Option<RunError>) {
    let _ = tx.send(JobMsg::Done {
        job,
        end_ns,
        error,
        fsync_ns: None,
    });
}

/// Where the job's requests go: its timer and the runner.
struct Out<'a, 't> {
    t: &'a mut Timer<'t>,
    shared: &'a RunShared,
    tx: &'a Sender<JobMsg>,
    /// Requests made so far.
    n: u64,
}

/// What a request is besides its figures.
#[derive(Clone, Copy, Default)]
struct Role {
    warmup: bool,
    idle_ns: u64,
    prime: bool,
}

impl Out<'_, '_> {
    /// One request: timed, counted unless a warm-up, shown (sent to the runner, which
    /// waits for it at most [`MAX_BACKLOG`] requests behind).
    fn request(&mut self, probe: &mut Probe, role: Role) -> Result<(), RunError> {
        let offset = probe.offset();
        let (bytes, lat_ns, at_ns) = self
            .t
            .time(|| probe.request(offset))
            .map_err(|e| request_error(probe.write, offset, &e))?;
        self.n += 1;
        if !role.warmup {
            let dir = if probe.write { Dir::Write } else { Dir::Read };
            self.t.count(dir, bytes, lat_ns, at_ns, offset);
        }
        while self.shared.backlog.load(Ordering::Relaxed) >= MAX_BACKLOG && !self.t.stopped() {
            std::thread::sleep(Duration::from_micros(100));
        }
        self.shared.backlog.fetch_add(1, Ordering::Relaxed);
        let _ = self.tx.send(JobMsg::Request(Request {
            n: self.n,
            at_ns,
            lat_ns,
            offset,
            bytes,
            write: probe.write,
            warmup: role.warmup,
            idle_ns: role.idle_ns,
            prime: role.prime,
        }));
        Ok(())
    }

    /// Sleeps until `due` (ns of the job's clock), seeing a stop within 50 ms.
    fn sleep_until(&self, due: u64) {
        while !self.t.stopped() {
            let now = self.t.elapsed();
            if now >= due {
                break;
            }
            std::thread::sleep(Duration::from_nanos((due - now).min(50_000_000)));
        }
    }

    fn over(&self, p: &ProbeSpec) -> bool {
        let deadline = self.shared.runtime_ns.unwrap_or(u64::MAX);
        self.t.stopped() || p.count.is_some_and(|c| self.n >= c) || self.t.elapsed() >= deadline
    }
}

/// The requests, tick by tick: each tick starts `interval` after the one before it (a tick
/// whose requests overran starts the next at once).
fn ticks(p: &ProbeSpec, probe: &mut Probe, out: &mut Out<'_, '_>) -> Result<(), RunError> {
    let interval = p.interval_us.saturating_mul(1000);
    let deadline = out.shared.runtime_ns.unwrap_or(u64::MAX);
    for tick in 0u64.. {
        if out.over(p) {
            return Ok(());
        }
        out.sleep_until(tick.saturating_mul(interval).min(deadline));
        for _ in 0..p.burst.max(1) {
            if out.over(p) {
                return Ok(());
            }
            let warmup = out.n < u64::from(p.warmup);
            out.request(
                probe,
                Role {
                    warmup,
                    ..Role::default()
                },
            )?;
        }
    }
    Ok(())
}

/// The idle-wake curve: after the warm-up, for each quiet time (each `repeat` times) a
/// request that finds the drive awake (right after the one before), the quiet time, and
/// the first request after it.
fn sweep(
    p: &ProbeSpec,
    w: &shared::probe::IdleSweep,
    probe: &mut Probe,
    out: &mut Out<'_, '_>,
) -> Result<(), RunError> {
    for _ in 0..p.warmup {
        out.request(
            probe,
            Role {
                warmup: true,
                ..Role::default()
            },
        )?;
    }
    for &idle_us in &w.idle_us {
        for _ in 0..w.repeat {
            if out.over(p) {
                return Ok(());
            }
            out.request(
                probe,
                Role {
                    prime: true,
                    ..Role::default()
                },
            )?;
            let idle_ns = idle_us.saturating_mul(1000);
            out.sleep_until(out.t.elapsed() + idle_ns);
            if out.over(p) {
                return Ok(());
            }
            out.request(
                probe,
                Role {
                    idle_ns,
                    ..Role::default()
                },
            )?;
        }
    }
    Ok(())
}

fn request_error(write: bool, offset: u64, e: &std::io::Error) -> RunError {
    let op = if write { "write" } else { "read" };
    RunError {
        message: format!("{op} at offset {offset}: {e}"),
        op: Some(op.to_string()),
        offset: Some(offset),
        errno: e.raw_os_error(),
    }
}
