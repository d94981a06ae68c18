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
    let error = ticks(&p, &mut probe, &mut t, shared, tx).err();
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

/// The requests, tick by tick: each tick starts `interval` after the one before it (a tick
/// whose requests overran starts the next at once).
fn ticks(
    p: &ProbeSpec,
    probe: &mut Probe,
    t: &mut Timer<'_>,
    shared: &RunShared,
    tx: &Sender<JobMsg>,
) -> Result<(), RunError> {
    let interval = p.interval_us.saturating_mul(1000);
    let deadline = shared.runtime_ns.unwrap_or(u64::MAX);
    let dir = if probe.write { Dir::Write } else { Dir::Read };
    let mut n = 0u64;
    let over = |n: u64, t: &Timer<'_>| {
        t.stopped() || p.count.is_some_and(|c| n >= c) || t.elapsed() >= deadline
    };
    for tick in 0u64.. {
        if over(n, t) {
            return Ok(());
        }
        // Sleep to the tick, seeing a stop within 50 ms.
        let due = tick.saturating_mul(interval).min(deadline);
        while !t.stopped() {
            let now = t.elapsed();
            if now >= due {
                break;
            }
            std::thread::sleep(Duration::from_nanos((due - now).min(50_000_000)));
        }
        for _ in 0..p.burst.max(1) {
            if over(n, t) {
                return Ok(());
            }
            let offset = probe.offset();
            let (bytes, lat_ns, at_ns) = t
                .time(|| probe.request(offset))
                .map_err(|e| request_error(probe.write, offset, &e))?;
            n += 1;
            let warmup = n <= u64::from(p.warmup);
            if !warmup {
                t.count(dir, bytes, lat_ns, at_ns, offset);
            }
            // Requests made faster than they are shown wait here, not in the channel.
            while shared.backlog.load(Ordering::Relaxed) >= MAX_BACKLOG && !t.stopped() {
                std::thread::sleep(Duration::from_micros(100));
            }
            shared.backlog.fetch_add(1, Ordering::Relaxed);
            let _ = tx.send(JobMsg::Request(Request {
                n,
                at_ns,
                lat_ns,
                offset,
                bytes,
                write: probe.write,
                warmup,
            }));
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
