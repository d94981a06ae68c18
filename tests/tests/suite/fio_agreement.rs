//! Agreement with fio, the reference meter, on what can be checked exactly: the latency
//! histogram layout. fio's `json+` output lists its non-empty latency bins by value; each must
//! be the representative value diskscope gives the same bucket, so percentiles computed from
//! either tool's buckets are comparable bucket for bucket. (Speed agreement is measured by
//! `bench/vs_fio.py`, never asserted in a test: this machine is too noisy for that.)

use agent::stats::histogram::{bucket_index, bucket_value};
use tests::*;

#[test]
fn fio_json_plus_bins_are_diskscope_buckets() {
    if std::process::Command::new("fio")
        .arg("--version")
        .output()
        .is_err()
    {
        skip!(Missing::Tool, "fio is not installed (apt-get install fio)");
    }
    let dir = disk_tempdir();
    let target = dir.path().join("fio.bin");
    let out = std::process::Command::new("fio")
        .args([
            "--name=layout",
            &format!("--filename={}", target.display()),
            "--size=16M",
            "--rw=randwrite",
            "--bs=4k",
            "--ioengine=psync",
            "--runtime=1",
            "--time_based",
            "--output-format=json+",
        ])
        .output()
        .expect("run fio");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let doc: serde_json::Value =
        serde_json::from_str(&text[text.find('{').expect("json")..]).expect("fio json");
    let bins = doc["jobs"][0]["write"]["clat_ns"]["bins"]
        .as_object()
        .expect("json+ bins");
    assert!(bins.len() > 10, "too few bins to compare: {}", bins.len());
    let mut groups = std::collections::BTreeSet::new();
    for key in bins.keys() {
        let v: u64 = key.parse().expect("bin value");
        let idx = bucket_index(v);
        assert_eq!(
            bucket_value(idx),
            v,
            "fio bin {v} is not the value of diskscope bucket {idx}"
        );
        groups.insert(idx / 64);
    }
    assert!(
        groups.len() >= 3,
        "bins span only {} power-of-two groups",
        groups.len()
    );
}
