//! The emulated SSD's timing: a device clock that every I/O advances by its size over the
//! current rate. The rate follows a model with known parameters, so tests can check that
//! the analyses recover them:
//!
//! - an SLC cache of `cache_bytes` written at `cache_mbps`; past it, `native_mbps`; idle
//!   time drains the cache at `drain_mbps` (cache recovery);
//! - random writes settle from the sequential rate to `random_floor` × of it over
//!   `random_scale_bytes` written at random (the garbage-collection transient), with a
//!   `gc_pause_ms` stall every `gc_period_ms` once settled;
//! - temperature rises by `heat_c_per_gb` per GB written and cools toward `ambient_c` with
//!   time constant `tau_s`; at `trip_c` writes throttle to `throttle_mbps` until it falls
//!   `hysteresis_c` below (a sawtooth locked to the trip point);
//! - reads run at `read_mbps`;
//! - every request costs `per_io_us` on top of its transfer (command overhead: what makes
//!   small blocks slow and gives a sweep its saturation block size);
//! - power states: once the device has been idle `after_ms`, the next request first waits
//!   `wake_us` (the deepest state reached applies), as a drive leaving APST's or a link's
//!   power-saving state (`power_states`);
//! - `noise` jitters each request's rate uniformly by ± that fraction (seeded by `seed`),
//!   and `gc_all_writes` applies the GC stalls to sequential writes too (a drive with no
//!   cache whose rate still dips).
//!
//! The device has an internal queue: an I/O arriving less than [`QUEUE_SLACK`] after the
//! previous one finished starts where it finished, as if it had been queued. The FUSE path
//! hands I/Os to the daemon one at a time per file (io_uring serializes writes to one
//! inode), so without this the daemon's own per-request cost would count as device idle
//! time and the measured rate would fall short of the model.
//!
//! Data is kept only when the model's `faults` ask for it ([`super::media`]); otherwise
//! writes are timed and discarded and reads return zeros.

use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct SsdModel {
    pub capacity: u64,
    pub cache_bytes: u64,
    pub cache_mbps: f64,
    pub native_mbps: f64,
    pub read_mbps: f64,
    pub drain_mbps: f64,
    pub random_floor: f64,
    pub random_scale_bytes: u64,
    pub gc_period_ms: u64,
    pub gc_pause_ms: u64,
    pub ambient_c: f64,
    pub heat_c_per_gb: f64,
    pub tau_s: f64,
    pub trip_c: f64,
    pub hysteresis_c: f64,
    pub throttle_mbps: f64,
    pub per_io_us: f64,
    pub noise: f64,
    pub gc_all_writes: bool,
    pub seed: u64,
    /// The link's cap on every transfer, MB/s (0: none): a fast drive behind a slow link.
    pub link_mbps: f64,
    /// Kept data and seeded faults (bit flips, lost or misplaced writes, a wrapping fake
    /// capacity, bad and slow regions): see [`super::media`].
    pub faults: super::media::Faults,
    /// Power states entered after idle time: the first request after them pays a wake.
    pub power_states: Vec<PowerState>,
}

/// A power state: entered after `after_ms` of idle, left in `wake_us` by the next request.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PowerState {
    pub after_ms: f64,
    pub wake_us: f64,
}

impl Default for SsdModel {
    /// A small TLC drive in the spirit of the reviews' BX200: 400 MB/s into a 1 GiB cache,
    /// 80 MB/s after; no thermal trip.
    fn default() -> Self {
        SsdModel {
            capacity: 4 << 30,
            cache_bytes: 1 << 30,
            cache_mbps: 400.0,
            native_mbps: 80.0,
            read_mbps: 500.0,
            drain_mbps: 100.0,
            random_floor: 0.5,
            random_scale_bytes: 256 << 20,
            gc_period_ms: 0,
            gc_pause_ms: 0,
            ambient_c: 40.0,
            heat_c_per_gb: 2.0,
            tau_s: 30.0,
            trip_c: 1000.0,
            hysteresis_c: 4.0,
            throttle_mbps: 60.0,
            per_io_us: 0.0,
            noise: 0.0,
            gc_all_writes: false,
            seed: 1,
            link_mbps: 0.0,
            faults: Default::default(),
            power_states: Vec::new(),
        }
    }
}

/// Gaps shorter than this between I/Os are host overhead, not idle time.
pub const QUEUE_SLACK: Duration = Duration::from_millis(2);

/// The device's state as the I/Os change it.
#[derive(Debug)]
pub struct Device {
    pub model: SsdModel,
    busy_until: Instant,
    last: Instant,
    cache_used: f64,
    random_written: f64,
    next_offset: u64,
    temp_c: f64,
    throttled: bool,
    next_gc: Option<Instant>,
    /// xorshift state for `noise`.
    rng: u64,
}

impl Device {
    pub fn new(model: SsdModel, now: Instant) -> Self {
        let temp_c = model.ambient_c;
        let seed = model.seed;
        Device {
            model,
            busy_until: now,
            last: now,
            cache_used: 0.0,
            random_written: 0.0,
            next_offset: u64::MAX,
            temp_c,
            throttled: false,
            next_gc: None,
            rng: seed.max(1),
        }
    }

    /// Cooling and (while idle) cache draining up to `now`.
    fn advance(&mut self, now: Instant) {
        if now <= self.last {
            return;
        }
        let dt = (now - self.last).as_secs_f64();
        let m = &self.model;
        self.temp_c = m.ambient_c + (self.temp_c - m.ambient_c) * (-dt / m.tau_s).exp();
        let idle_from = (self.busy_until + QUEUE_SLACK).max(self.last);
        if now > idle_from {
            let idle = (now - idle_from).as_secs_f64();
            self.cache_used = (self.cache_used - idle * m.drain_mbps * 1e6).max(0.0);
        }
        if self.throttled && self.temp_c <= m.trip_c - m.hysteresis_c {
            self.throttled = false;
        }
        self.last = now;
    }

    /// A write of `len` bytes at `offset` arriving at `now`: when the device completes it.
    pub fn write(&mut self, offset: u64, len: u64, now: Instant) -> Instant {
        self.advance(now);
        let m = self.model.clone();
        let sequential = offset == self.next_offset;
        self.next_offset = offset + len;
        let mut rate = if self.cache_used < m.cache_bytes as f64 {
            m.cache_mbps
        } else {
            m.native_mbps
        };
        if !sequential {
            let settle = (-self.random_written / m.random_scale_bytes.max(1) as f64).exp();
            rate *= m.random_floor + (1.0 - m.random_floor) * settle;
            self.random_written += len as f64;
        }
        if self.throttled {
            rate = rate.min(m.throttle_mbps);
        }
        rate *= self.jitter();
        let mut start = self.start(now);
        // Periodic garbage-collection stalls once random writes have settled (or always).
        if m.gc_period_ms > 0
            && (m.gc_all_writes
                || (!sequential && self.random_written > 3.0 * m.random_scale_bytes as f64))
        {
            let due = *self
                .next_gc
                .get_or_insert(start + Duration::from_millis(m.gc_period_ms));
            if start >= due {
                start += Duration::from_millis(m.gc_pause_ms);
                self.next_gc = Some(start + Duration::from_millis(m.gc_period_ms));
            }
        }
        let done = start + self.service(len, rate);
        self.busy_until = done;
        if self.cache_used < m.cache_bytes as f64 {
            self.cache_used += len as f64;
        }
        self.temp_c += m.heat_c_per_gb * len as f64 / 1e9;
        if self.temp_c >= m.trip_c {
            self.throttled = true;
        }
        done
    }

    /// A read of `len` bytes arriving at `now`: when the device completes it.
    pub fn read(&mut self, len: u64, now: Instant) -> Instant {
        self.advance(now);
        let start = self.start(now);
        let rate = self.model.read_mbps * self.jitter();
        let done = start + self.service(len, rate);
        self.busy_until = done;
        done
    }

    /// Time the device spends on one request of `len` bytes at `rate` MB/s (at most the
    /// link's).
    fn service(&self, len: u64, rate: f64) -> Duration {
        let rate = if self.model.link_mbps > 0.0 {
            rate.min(self.model.link_mbps)
        } else {
            rate
        };
        Duration::from_secs_f64(self.model.per_io_us.max(0.0) / 1e6 + len as f64 / (rate * 1e6))
    }

    /// A rate multiplier in [1 − noise, 1 + noise].
    fn jitter(&mut self) -> f64 {
        if self.model.noise <= 0.0 {
            return 1.0;
        }
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        let u = (self.rng >> 11) as f64 / (1u64 << 53) as f64;
        1.0 + self.model.noise.min(0.9) * (2.0 * u - 1.0)
    }

    /// When an I/O arriving at `now` starts: at once on an idle device, after the previous
    /// one on a busy device or one that finished less than [`QUEUE_SLACK`] ago.
    fn start(&self, now: Instant) -> Instant {
        if now <= self.busy_until + QUEUE_SLACK {
            self.busy_until
        } else {
            now + self.wake(now - self.busy_until)
        }
    }

    /// What leaving the power state that `idle` reached costs (the deepest one's wake).
    fn wake(&self, idle: Duration) -> Duration {
        let ms = idle.as_secs_f64() * 1e3;
        let us = self
            .model
            .power_states
            .iter()
            .filter(|p| ms >= p.after_ms)
            .map(|p| p.wake_us)
            .fold(0.0, f64::max);
        Duration::from_secs_f64(us.max(0.0) / 1e6)
    }

    pub fn temperature(&mut self, now: Instant) -> f64 {
        self.advance(now);
        self.temp_c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes `total` bytes sequentially in 1 MiB blocks back to back; returns the seconds
    /// each 64 MiB took.
    fn seq(d: &mut Device, t0: Instant, total: u64) -> (Instant, Vec<f64>) {
        let mut t = t0;
        let mut marks = Vec::new();
        let mut last = t0;
        for i in 0..total >> 20 {
            t = d.write(i << 20, 1 << 20, t);
            if (i + 1) % 64 == 0 {
                marks.push((t - last).as_secs_f64());
                last = t;
            }
        }
        (t, marks)
    }

    #[test]
    fn the_cache_runs_out_and_recovers_when_idle() {
        let m = SsdModel::default();
        let t0 = Instant::now();
        let mut d = Device::new(m, t0);
        let (t, marks) = seq(&mut d, t0, 2 << 30);
        let mbps = |s: f64| 64.0 * 1048576.0 / s / 1e6;
        assert!((mbps(marks[0]) - 400.0).abs() < 1.0, "{}", mbps(marks[0]));
        assert!((mbps(*marks.last().unwrap()) - 80.0).abs() < 1.0);
        // 10 s idle drains 1000 MB of cache: fast again.
        let later = t + Duration::from_secs(10);
        let done = d.write(0, 1 << 20, later);
        assert!(((1 << 20) as f64 / (done - later).as_secs_f64() / 1e6 - 400.0).abs() < 1.0);
    }

    #[test]
    fn heat_trips_the_throttle_and_it_releases_below_the_hysteresis() {
        let m = SsdModel {
            cache_bytes: u64::MAX,
            heat_c_per_gb: 25.0,
            trip_c: 60.0,
            ..SsdModel::default()
        };
        let t0 = Instant::now();
        let mut d = Device::new(m, t0);
        let (t, _) = seq(&mut d, t0, 1 << 30);
        assert!(d.throttled, "{} °C", d.temp_c);
        let slow = d.write(1 << 30, 1 << 20, t);
        assert!(((1 << 20) as f64 / (slow - t).as_secs_f64() / 1e6 - 60.0).abs() < 1.0);
        let cool = slow + Duration::from_secs(60);
        assert!(d.temperature(cool) < 56.0);
        assert!(!d.throttled);
    }

    #[test]
    fn a_request_after_idle_pays_the_deepest_state_s_wake() {
        let m = SsdModel {
            read_mbps: 4096.0,
            power_states: vec![
                PowerState {
                    after_ms: 50.0,
                    wake_us: 2_000.0,
                },
                PowerState {
                    after_ms: 500.0,
                    wake_us: 9_000.0,
                },
            ],
            ..SsdModel::default()
        };
        let t0 = Instant::now();
        let mut d = Device::new(m, t0);
        let lat = |d: &mut Device, at: Instant| (d.read(4096, at) - at).as_secs_f64() * 1e6;
        let base = lat(&mut d, t0);
        let mut t = t0 + Duration::from_millis(10);
        let mut after = |d: &mut Device, idle_ms: u64| {
            t += Duration::from_millis(idle_ms);
            let l = lat(d, t) - base;
            t += Duration::from_millis(20);
            lat(d, t); // back to active, 20 ms later
            l
        };
        assert!(after(&mut d, 10).abs() < 1.0);
        assert!((after(&mut d, 100) - 2_000.0).abs() < 1.0);
        assert!((after(&mut d, 1_000) - 9_000.0).abs() < 1.0);
    }

    #[test]
    fn random_writes_settle_to_the_floor() {
        let m = SsdModel {
            cache_bytes: 0,
            ..SsdModel::default()
        };
        let t0 = Instant::now();
        let mut d = Device::new(m, t0);
        let mut t = t0;
        let rate = |d: &mut Device, t: &mut Instant, off: u64| {
            let done = d.write(off, 4096, *t);
            let r = 4096.0 / (done - *t).as_secs_f64() / 1e6;
            *t = done;
            r
        };
        let first = rate(&mut d, &mut t, 12345 * 4096);
        for i in 0..400_000u64 {
            rate(&mut d, &mut t, (i * 7919 % 100_000) * 4096);
        }
        let settled = rate(&mut d, &mut t, 777 * 4096);
        assert!(
            (first - 80.0).abs() < 1.0 && (settled - 40.0).abs() < 1.0,
            "{first} {settled}"
        );
    }
}
