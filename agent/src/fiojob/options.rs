//! What each fio option means for diskscope: the options this engine runs as fio does, the
//! ones it takes with a stated difference (`notes`), and a refusal naming every other one.
//! fio's units: sizes take k/m/g/t/p (with or without `b`) as powers of 1024 and `kib`/`mib`/…
//! as powers of 1000 (fio's default `kb_base=1024`, checked against fio 3.33's `io_bytes`);
//! times without a unit are seconds.

use super::{At, Job, JobFileError};
use shared::spec::{Backend, DataPattern, Rate, RwMode};

/// Applies `key[=value]` (written at `at`) to `job`.
pub(super) fn apply(
    job: &mut Job,
    key: &str,
    value: Option<&str>,
    at: &At,
) -> Result<(), JobFileError> {
    let bad = |message: String| JobFileError::Option {
        at: at.clone(),
        option: match value {
            Some(v) => format!("{key}={v}"),
            None => key.to_string(),
        },
        message,
    };
    let val = || value.ok_or_else(|| bad("needs a value".into()));

    match key {
        "name" => job.name = val()?.to_string(),
        "description" => job.description = Some(val()?.to_string()),
        "filename" => job.filename = Some(filename(val()?).map_err(bad)?),
        "directory" => job.directory = Some(val()?.to_string()),
        "size" | "offset" | "offset_increment" | "io_size" | "io_limit" => {
            span_option(job, key, size(val()?).map_err(bad)?)
        }
        "runtime" | "timeout" => job.runtime_ms = Some(time_ms(val()?).map_err(bad)?),
        "time_based" => job.time_based = flag(value).map_err(bad)?,
        "startdelay" => job.startdelay_ms = time_ms(val()?).map_err(bad)?,
        "rw" | "readwrite" => match meta_engine(val()?) {
            // Newer fio's examples name the metadata engine's mode too.
            Some(p) => job.meta_rw = Some(p),
            None => job.spec.rw = rw_mode(val()?).map_err(bad)?,
        },
        "rwmixwrite" => job.spec.read_pct = 100 - percent(val()?).map_err(bad)?,
        "bs" | "blocksize" | "bsrange" | "blocksize_range" => {
            sizes_option(job, key, val()?).map_err(bad)?
        }
        "latency_target" | "latency_window" | "latency_percentile" => {
            latency_option(job, key, val()?).map_err(bad)?
        }
        "steadystate" | "ss" | "ss_dur" | "ss_ramp" => {
            steady_option(job, key, val()?).map_err(bad)?
        }
        "cpus_allowed" => {
            let list: crate::cpus::CpuList = val()?.parse().map_err(bad)?;
            job.spec.cpus_allowed = Some(list.to_string());
        }
        "iodepth_batch"
        | "iodepth_batch_submit"
        | "iodepth_batch_complete_min"
        | "iodepth_batch_complete"
        | "iodepth_batch_complete_max" => batch_option(job, key, val()?).map_err(bad)?,
        "stonewall" | "wait_for_previous" => job.stonewall = flag(value).map_err(bad)?,
        // Reporting: diskscope reports each step's jobs together (and fio's JSON output
        // merges them as group_reporting does).
        "group_reporting" | "new_group" => job.group_reporting = flag(value).map_err(bad)?,
        "buffered" => job.spec.direct = !flag(value).map_err(bad)?,
        "fsync" | "fdatasync" => job.spec.flush = flush(key, val()?).map_err(bad)?,
        "ioengine" => {
            let v = val()?;
            job.meta = meta_engine(v);
            job.spec.backend = match job.meta {
                Some(_) => Backend::Sync,
                None => engine(v).map_err(bad)?,
            };
            job.engine = Some((v.to_string(), at.clone()));
        }
        "nrfiles" | "filesize" | "openfiles" | "create_on_open" | "fallocate" | "unlink" => {
            files_option(job, key, value).map_err(bad)?
        }
        // io_uring's registrations, as fio's engine takes them (off unless set).
        "fixedbufs" => job.registrations.0 = Some(flag(value).map_err(bad)?),
        "registerfiles" => job.registrations.1 = Some(flag(value).map_err(bad)?),
        // Taken as they are what diskscope does anyway: its jobs are threads (fio 3.33 also
        // takes `threads`: its steadystate.fio example uses it), its offsets and data follow
        // the seed (the same seed repeats them), and every write gets fresh data.
        "thread" | "threads" | "randrepeat" | "refill_buffers" => {
            flag(value).map_err(bad)?;
        }
        "random_distribution" => {
            let (reads, writes) =
                shared::access::Distribution::parse_per_direction(val()?, size).map_err(bad)?;
            job.spec.random_distribution = reads;
            job.spec.write_random_distribution = writes;
        }
        "random_generator" => {
            let note = generator_note(val()?).map_err(bad)?;
            job.notes.push(format!("{at}: {note}"));
        }
        "percentage_random" => job.spec.seq_pct = 100 - percent(val()?).map_err(bad)?,
        "norandommap" => job.norandommap = flag(value).map_err(bad)?,
        "rate" | "rate_iops" | "rate_min" | "rate_iops_min" => {
            rate_option(job, key, val()?).map_err(bad)?
        }
        "bssplit" => split_option(job, val()?).map_err(bad)?,
        "thinktime" | "thinktime_spin" | "thinktime_blocks" | "thinktime_blocks_type" => {
            think_option(job, key, val()?).map_err(bad)?
        }
        "buffer_compress_percentage" | "zero_buffers" => {
            pattern_option(job, key, value).map_err(bad)?
        }
        "verify" => {
            let (on, note) = verify_mode(val()?).map_err(bad)?;
            job.spec.verify = on;
            job.notes.extend(note.map(|n| format!("{at}: {n}")));
        }
        "do_verify" => job.do_verify = flag(value).map_err(bad)?,
        "write_bw_log" | "write_iops_log" | "write_lat_log" | "log_avg_msec" | "per_job_logs" => {
            log_option(job, key, value).map_err(bad)?
        }
        _ => match shared::options::by_fio(key) {
            Some(o) => from_table(job, o, value).map_err(bad)?,
            None => return Err(bad("not supported by diskscope".into())),
        },
    }
    Ok(())
}

/// An option of the one table of workload options (`shared::options`) that fio spells as
/// diskscope does: fio's value read in fio's units first (sizes, seconds by default, µs for
/// short times), then the option's own reader.
fn from_table(
    job: &mut Job,
    o: &shared::options::WorkloadOption,
    value: Option<&str>,
) -> Result<(), String> {
    use shared::options::Kind;
    let v = || value.ok_or_else(|| "needs a value".to_string());
    let text = match o.kind {
        Kind::Check => flag(value)?.to_string(),
        Kind::Size(_) => one_size(v()?)?.to_string(),
        Kind::Count(_) => one_number(v()?)?.to_string(),
        Kind::Time(_) => format!("{}ms", time_ms(v()?)?),
        Kind::Micros(_) => format!("{}us", time_us(v()?)?),
        Kind::Text(_) | Kind::Select(_) | Kind::Trace => v()?.trim().to_string(),
    };
    (o.set)(&mut job.spec, &text)
}

/// The data written: compressible to a share (`buffer_compress_percentage`) or zeros.
fn pattern_option(job: &mut Job, key: &str, value: Option<&str>) -> Result<(), String> {
    if key == "zero_buffers" {
        if flag(value)? {
            job.spec.pattern = DataPattern::Zeros;
        }
        return Ok(());
    }
    job.spec.pattern = DataPattern::Compress(percent(value.ok_or("needs a value")?)?);
    Ok(())
}

/// A rate cap or floor, in bytes or I/Os per second.
fn rate_option(job: &mut Job, key: &str, v: &str) -> Result<(), String> {
    let rate = if key.contains("iops") {
        Rate::Iops(one_number(v)?)
    } else {
        Rate::BytesPerSec(one_size(v)?)
    };
    match key {
        "rate" | "rate_iops" => job.spec.rate = Some(rate),
        _ => job.spec.rate_min = Some(rate),
    }
    Ok(())
}

/// The steady-state rule's parts, made a rule once the section is read.
fn steady_option(job: &mut Job, key: &str, v: &str) -> Result<(), String> {
    match key {
        "ss_dur" => job.steady.1 = Some(time_ms(v)?),
        "ss_ramp" => job.steady.2 = time_ms(v)?,
        _ => job.steady.0 = Some(v.to_string()),
    }
    Ok(())
}

/// One file per job (a device path may hold a `:`).
fn filename(v: &str) -> Result<String, String> {
    if v.split(':').count() > 1 && !v.starts_with("/dev/") {
        return Err("several files in one job: diskscope runs one file per job".into());
    }
    Ok(v.to_string())
}

/// `fsync=N` or `fdatasync=N`: a flush after every N writes (0: none, fio's default).
fn flush(key: &str, v: &str) -> Result<Option<shared::durability::Flush>, String> {
    let every: u32 = number(v)?;
    Ok((every > 0).then_some(shared::durability::Flush {
        every,
        data_only: key == "fdatasync",
    }))
}

/// A log option. Logs: PREFIX_bw.N.log and the like, one line per direction per window.
fn log_option(job: &mut Job, key: &str, value: Option<&str>) -> Result<(), String> {
    let prefix = || Some(value.unwrap_or(&job.name).to_string());
    match key {
        "write_bw_log" => job.logs.bw = prefix(),
        "write_iops_log" => job.logs.iops = prefix(),
        "write_lat_log" => job.logs.lat = prefix(),
        "log_avg_msec" => job.logs.avg_ms = Some(number(value.ok_or("needs a value")?)?),
        _ => job.logs.per_job = Some(flag(value)?),
    }
    Ok(())
}

/// A think-time option. They gather into one think time, created at fio's defaults on
/// first mention; spin, blocks or type without a thinktime leave it at 0 µs, which the
/// spec's validation refuses.
fn think_option(job: &mut Job, key: &str, v: &str) -> Result<(), String> {
    if key == "thinktime" {
        match time_us(v)? {
            // fio's default, written out: no think time.
            0 => job.spec.think = None,
            us => think(job).us = us,
        }
        return Ok(());
    }
    let t = think(job);
    match key {
        "thinktime_spin" => t.spin_us = time_us(v)?,
        "thinktime_blocks" => t.blocks = number(v)?,
        _ => {
            t.count_issued = match v {
                "complete" => false,
                "issue" => true,
                other => return Err(format!("'{other}': expected complete or issue")),
            }
        }
    }
    Ok(())
}

fn think(job: &mut Job) -> &mut shared::pacing::ThinkTime {
    job.spec.think.get_or_insert_with(Default::default)
}

fn rw_mode(v: &str) -> Result<RwMode, String> {
    if v.contains(':') {
        return Err("an offset modifier (rw=MODE:N) is not supported".into());
    }
    Ok(match v {
        "read" => RwMode::Read,
        "write" => RwMode::Write,
        "randread" => RwMode::RandRead,
        "randwrite" => RwMode::RandWrite,
        "rw" | "readwrite" => RwMode::Rw,
        "randrw" => RwMode::RandRw,
        "trim" => RwMode::Trim,
        "randtrim" => RwMode::RandTrim,
        "trimwrite" => RwMode::TrimWrite,
        "randtrimwrite" => RwMode::RandTrimWrite,
        _ => {
            return Err(
                "expected read, write, randread, randwrite, rw, randrw, trim, \
                        randtrim, trimwrite or randtrimwrite"
                    .into(),
            )
        }
    })
}

/// Where and how much: `size`, `offset`, `offset_increment` (0: none, fio's default),
/// `io_size`.
fn span_option(job: &mut Job, key: &str, bytes: u64) {
    let s = &mut job.spec;
    match key {
        "size" => s.size = Some(bytes),
        "offset" => s.offset = bytes,
        "offset_increment" => s.offset_increment = Some(bytes).filter(|&i| i > 0),
        _ => s.io_size = Some(bytes),
    }
}

/// `bs=SIZE` or `bs=READ,WRITE[,TRIM]` (an empty READ keeps the reads' size; trims take
/// the writes' unless TRIM is given, as in fio) (the last of bs and bsrange wins, as in
/// fio), or `bsrange=MIN-MAX`.
fn sizes_option(job: &mut Job, key: &str, v: &str) -> Result<(), String> {
    let (lo, hi) = if matches!(key, "bsrange" | "blocksize_range") {
        job.write_sizes.0 = None;
        job.trim_bs = None;
        bs_range(v)?
    } else {
        let mut parts = v.split(',').map(str::trim);
        let read = match parts.next().filter(|p| !p.is_empty()) {
            Some(r) => size(r)?,
            None => job.spec.bs,
        };
        let write = parts
            .next()
            .filter(|p| !p.is_empty())
            .map(size)
            .transpose()?;
        job.trim_bs = parts
            .next()
            .filter(|p| !p.is_empty())
            .map(size)
            .transpose()?;
        job.write_sizes.0 = write
            .filter(|&w| w != read)
            .map(|w| shared::bssplit::BsSplit(vec![(w, 100)]));
        (read, read)
    };
    job.spec.bs = lo;
    job.spec.bs_max = (hi != lo).then_some(hi);
    Ok(())
}

/// `bssplit=SPLIT` or `bssplit=READS,WRITES[,TRIMS]` (an empty part: that direction takes
/// the other's split).
fn split_option(job: &mut Job, v: &str) -> Result<(), String> {
    let mut parts = v.split(',').map(str::trim);
    let parse = |p: &str| shared::bssplit::BsSplit::parse_with(p, size);
    let reads = parts
        .next()
        .filter(|p| !p.is_empty())
        .map(parse)
        .transpose()?;
    let writes = parts
        .next()
        .filter(|p| !p.is_empty())
        .map(parse)
        .transpose()?;
    let (reads, writes) = match (reads, writes) {
        (Some(r), Some(w)) => (r, Some(w)),
        (Some(r), None) => (r, None),
        (None, Some(w)) => (w.clone(), Some(w)),
        (None, None) => return Err("needs a split".into()),
    };
    job.write_sizes.1 = writes.filter(|w| *w != reads);
    job.spec.bssplit = Some(reads);
    Ok(())
}

/// `MIN-MAX` (one range for reads and writes).
fn bs_range(v: &str) -> Result<(u64, u64), String> {
    if v.contains(',') {
        return Err("different ranges per direction are not supported".into());
    }
    shared::bssplit::parse_range(v, size)
}

/// The options of files and their lay-out: the metadata engines' files (how many, their
/// size), and how fio opens, lays out and removes files.
fn files_option(job: &mut Job, key: &str, value: Option<&str>) -> Result<(), String> {
    let val = || value.ok_or_else(|| "needs a value".to_string());
    match key {
        "nrfiles" => job.meta_shape.0 = Some(count(val()?)?),
        "filesize" => job.meta_shape.1 = Some(size(val()?)?),
        // fio keeps this many files open at once; diskscope closes each file before the
        // next, as fio's metadata engines do with openfiles=1.
        "openfiles" => {
            count(val()?)?;
        }
        // Files are opened during the run in any case.
        "create_on_open" => {
            flag(value)?;
        }
        "fallocate" => {
            if !matches!(val()?, "none" | "0") {
                return Err("diskscope lays files out by writing them (fallocate=none)".into());
            }
        }
        // Whether the files go at the end: a metadata engine's tree always goes (it is
        // diskscope's own work directory); another job's file stays.
        _ => job.unlink = Some(flag(value)?),
    }
    Ok(())
}

/// fio's metadata engines as the files workload's phase they measure.
fn meta_engine(v: &str) -> Option<shared::files::Phase> {
    use shared::files::Phase;
    match v {
        "filecreate" => Some(Phase::Create),
        "filestat" => Some(Phase::Stat),
        "filedelete" => Some(Phase::Delete),
        _ => None,
    }
}

/// A count of 1 or more (`nrfiles`, `openfiles`).
fn count(v: &str) -> Result<u32, String> {
    v.trim()
        .parse::<u32>()
        .ok()
        .filter(|n| *n >= 1)
        .ok_or_else(|| "expected a count of 1 or more".to_string())
}

/// fio's engine as diskscope's backend (the note saying so is written when the job is
/// complete: with buffered I/O, libaio becomes one I/O at a time, see `Job::finish`).
fn engine(v: &str) -> Result<Backend, String> {
    Ok(match v {
        "io_uring" | "posixaio" => Backend::Uring,
        "libaio" => Backend::Aio,
        "psync" | "sync" | "pvsync" | "pvsync2" => Backend::Sync,
        "null" => Backend::Null,
        _ => {
            return Err(
                "no such engine in diskscope (io_uring, libaio, posixaio, psync, pvsync, pvsync2, sync, null, and the metadata engines filecreate, filestat, filedelete)".into(),
            )
        }
    })
}

/// fio's verify mode as diskscope's verify on or off, with the note when it is checked
/// another way than fio would.
fn verify_mode(v: &str) -> Result<(bool, Option<String>), String> {
    Ok(match v {
        "0" | "null" => (false, None),
        "crc32c" | "crc32c-intel" => (true, None),
        "crc32" | "md5" | "sha1" | "sha256" | "xxhash" => (
            true,
            Some(format!(
                "verify={v} checks with diskscope's own block format (CRC32C, offset, run, sequence)"
            )),
        ),
        _ => return Err("this verify mode is not supported (crc32c and the checksums map onto diskscope's verify)".into()),
    })
}

/// fio's `latency_target` and `latency_window` (µs when no unit is given) and
/// `latency_percentile`.
fn latency_option(job: &mut Job, key: &str, v: &str) -> Result<(), String> {
    match key {
        "latency_target" => job.latency.0 = Some(time_us(v)?),
        "latency_window" => job.latency.1 = Some(time_us(v)? / 1_000),
        _ => job.latency.2 = latency_percentile(v)?,
    }
    Ok(())
}

/// fio's `iodepth_batch_submit` (also `iodepth_batch`), `iodepth_batch_complete_min`
/// (also `iodepth_batch_complete`) and `iodepth_batch_complete_max`.
fn batch_option(job: &mut Job, key: &str, v: &str) -> Result<(), String> {
    let n = number(v)?;
    match key {
        "iodepth_batch" | "iodepth_batch_submit" => job.spec.iodepth_batch = n,
        "iodepth_batch_complete_max" => job.spec.iodepth_batch_complete_max = n,
        _ => job.spec.iodepth_batch_complete_min = n,
    }
    Ok(())
}

/// fio's random generators all run as diskscope's own, said in a note.
fn generator_note(g: &str) -> Result<String, String> {
    match g {
        "tausworthe" | "tausworthe64" | "lfsr" => Ok(format!(
            "random_generator={g}: diskscope draws offsets with its own generator (each block once per pass unless norandommap, as lfsr does)"
        )),
        _ => Err("expected tausworthe, tausworthe64 or lfsr".into()),
    }
}

/// fio's `latency_percentile`: above 0, at most 100 (a decimal, `99.9`).
fn latency_percentile(v: &str) -> Result<f64, String> {
    let v = v.trim().trim_end_matches('%');
    match v.parse::<f64>() {
        Ok(p) if p > 0.0 && p <= 100.0 => Ok(p),
        _ => Err("expected a percentage above 0, at most 100".into()),
    }
}

fn flag(value: Option<&str>) -> Result<bool, String> {
    match value {
        None | Some("1") | Some("true") => Ok(true),
        Some("0") | Some("false") => Ok(false),
        Some(_) => Err("expected 0 or 1".into()),
    }
}

fn number<T: std::str::FromStr>(v: &str) -> Result<T, String> {
    v.trim()
        .parse()
        .map_err(|_| "expected a whole number".to_string())
}

fn percent(v: &str) -> Result<u8, String> {
    match number::<u8>(v) {
        Ok(p) if p <= 100 => Ok(p),
        _ => Err("expected a percentage (0..100)".into()),
    }
}

/// One value where fio also takes `READ,WRITE[,TRIM]`: refused unless they are equal.
fn one_size(v: &str) -> Result<u64, String> {
    let mut it = v.split(',').filter(|s| !s.is_empty()).map(size);
    let first = it.next().ok_or("needs a value")??;
    for other in it {
        if other? != first {
            return Err("different values per direction are not supported".into());
        }
    }
    Ok(first)
}

fn one_number(v: &str) -> Result<u64, String> {
    let mut it = v.split(',').filter(|s| !s.is_empty()).map(number::<u64>);
    let first = it.next().ok_or("needs a value")??;
    for other in it {
        if other? != first {
            return Err("different values per direction are not supported".into());
        }
    }
    Ok(first)
}

/// A byte count in fio's units: `4k` = 4096, `1m` = 1 MiB, `1MiB` = 10^6 (fio's kb_base=1024).
pub fn size(v: &str) -> Result<u64, String> {
    let v = v.trim();
    let err = || format!("'{v}' is not a size (e.g. 4k, 512m, 10g)");
    if let Some(hex) = v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        return u64::from_str_radix(hex, 16).map_err(|_| err());
    }
    let end = v
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(v.len());
    let (num, unit) = (&v[..end], v[end..].to_ascii_lowercase());
    let unit = unit.strip_suffix('b').unwrap_or(&unit);
    let (letter, decimal) = match unit.strip_suffix('i') {
        Some(l) => (l, true),
        None => (unit, false),
    };
    let power = match letter {
        "" if !decimal => 0,
        "k" => 1,
        "m" => 2,
        "g" => 3,
        "t" => 4,
        "p" => 5,
        _ => return Err(err()),
    };
    let base: f64 = if decimal { 1000.0 } else { 1024.0 };
    let n: f64 = num.parse().map_err(|_| err())?;
    let bytes = n * base.powi(power);
    if !bytes.is_finite() || bytes > shared::spec::MAX_BYTES as f64 || bytes.fract() != 0.0 {
        return Err(err());
    }
    Ok(bytes as u64)
}

/// A time in fio's units (seconds when none is written) in milliseconds.
pub fn time_ms(v: &str) -> Result<u64, String> {
    time(v, 1_000.0)
}

/// A time in µs: fio's think times take microseconds when no unit is given.
pub fn time_us(v: &str) -> Result<u64, String> {
    Ok((time_exact(v, 0.001)? * 1000.0).round() as u64)
}

/// `v` in ms, a bare number counting `bare_ms` ms.
fn time(v: &str, bare_ms: f64) -> Result<u64, String> {
    Ok(time_exact(v, bare_ms)?.round() as u64)
}

fn time_exact(v: &str, bare_ms: f64) -> Result<f64, String> {
    let v = v.trim();
    let err = || format!("'{v}' is not a time (e.g. 30, 500ms, 5m)");
    let end = v
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(v.len());
    let n: f64 = v[..end].parse().map_err(|_| err())?;
    let ms_per = match v[end..].to_ascii_lowercase().as_str() {
        "" => bare_ms,
        "us" | "usec" => 0.001,
        "ms" | "msec" => 1.0,
        "s" | "sec" => 1_000.0,
        "m" | "min" => 60_000.0,
        "h" => 3_600_000.0,
        "d" => 86_400_000.0,
        _ => return Err(err()),
    };
    let ms = n * ms_per;
    if !ms.is_finite() || ms > shared::spec::MAX_DURATION_MS as f64 {
        return Err(err());
    }
    Ok(ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_fio_not_si() {
        // As fio 3.33 reports io_bytes for size=…
        for (s, want) in [
            ("1k", 1024),
            ("1K", 1024),
            ("1kb", 1024),
            ("1KB", 1024),
            ("1kib", 1000),
            ("1KiB", 1000),
            ("1m", 1 << 20),
            ("1MiB", 1_000_000),
            ("1mb", 1 << 20),
            ("1g", 1 << 30),
            ("4096", 4096),
            ("0x1000", 4096),
        ] {
            assert_eq!(size(s), Ok(want), "{s}");
        }
        assert!(size("10%").unwrap_err().contains("'10%'"));
    }

    #[test]
    fn times_default_to_seconds() {
        assert_eq!(time_ms("900"), Ok(900_000));
        assert_eq!(time_ms("1500ms"), Ok(1500));
        assert_eq!(time_ms("2m"), Ok(120_000));
        assert_eq!(time_ms("250us"), Ok(0));
        assert!(time_ms("5x").is_err());
    }

    #[test]
    fn per_direction_values_must_agree() {
        assert_eq!(one_size("4k,4k"), Ok(4096));
        assert!(one_size("4k,8k").is_err());
    }
}
