//! The samples of several targets run at once, summed per interval in `seq` order.

use super::totals::sum_samples;
use super::SampleSeries;
use shared::Sample;
use std::collections::BTreeMap;

/// Takes each target's samples as they come, in any interleaving, and gives out the run's:
/// for each interval the sum of every target's sample of it, with a part per target, in
/// `seq` order, as soon as every target has reported that interval or ended. The run's
/// samples are kept bounded like a single run's ([`SampleSeries`]).
pub struct TargetMerger {
    /// Intervals some targets have reported and others not yet.
    pending: BTreeMap<u64, Vec<Option<Sample>>>,
    /// The targets that ended (they report nothing more).
    ended: Vec<bool>,
    /// The interval to give out next.
    next: u64,
    merged: SampleSeries,
}

impl TargetMerger {
    pub fn new(targets: usize) -> Self {
        TargetMerger {
            pending: BTreeMap::new(),
            ended: vec![false; targets],
            next: 0,
            merged: SampleSeries::default(),
        }
    }

    pub fn sample(&mut self, target: usize, s: Sample) {
        let n = self.ended.len();
        let seq = s.seq;
        self.pending.entry(seq).or_insert_with(|| vec![None; n])[target] = Some(s);
    }

    pub fn ended(&mut self, target: usize) {
        self.ended[target] = true;
    }

    /// Gives every run sample that is complete now to `emit`, in order.
    pub fn ready(&mut self, mut emit: impl FnMut(&Sample)) {
        loop {
            let complete = self.pending.get(&self.next).is_some_and(|row| {
                row.iter()
                    .zip(&self.ended)
                    .all(|(s, ended)| s.is_some() || *ended)
            });
            if !complete {
                // Everyone ended: what is left goes out in order (an interval no target
                // reported is skipped, not made up).
                match self.pending.keys().next() {
                    Some(&k) if self.ended.iter().all(|e| *e) => {
                        self.next = k;
                        continue;
                    }
                    _ => break,
                }
            }
            if let Some(row) = self.pending.remove(&self.next) {
                let s = sum_samples(self.merged.count(), &row);
                emit(&s);
                self.merged.push(s);
            }
            self.next += 1;
        }
    }

    /// Run samples given out so far.
    pub fn count(&self) -> u64 {
        self.merged.count()
    }

    /// The run's samples (merged neighbours past the cap).
    pub fn into_samples(self) -> Vec<Sample> {
        self.merged.into_vec()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(seq: u64, bytes: u64) -> Sample {
        let mut s = Sample {
            seq,
            start_ns: seq * 100,
            end_ns: (seq + 1) * 100,
            ..Sample::default()
        };
        s.write.bytes = bytes;
        s.write.ios = 1;
        s
    }

    /// Out of order and at different paces: an interval goes out once both targets have it,
    /// or once the one that lacks it has ended; sums and parts are per interval.
    #[test]
    fn intervals_go_out_in_order_once_every_target_has_them_or_ended() {
        let mut m = TargetMerger::new(2);
        let mut out = Vec::new();
        m.sample(1, sample(0, 10));
        m.sample(1, sample(1, 11));
        m.ready(|s| out.push(s.clone()));
        assert!(out.is_empty(), "target 0 has reported nothing yet");
        m.sample(0, sample(0, 1));
        m.ready(|s| out.push(s.clone()));
        assert_eq!(out.len(), 1);
        assert_eq!(
            (out[0].seq, out[0].write.bytes, out[0].parts.len()),
            (0, 11, 2)
        );
        // Target 0 ends after one interval: interval 1 is target 1's alone.
        m.ended(0);
        m.ready(|s| out.push(s.clone()));
        assert_eq!(out.len(), 2);
        assert_eq!(
            (out[1].seq, out[1].write.bytes, out[1].parts.len()),
            (1, 11, 1)
        );
        m.sample(1, sample(3, 13));
        m.ended(1);
        m.ready(|s| out.push(s.clone()));
        let seqs: Vec<u64> = out.iter().map(|s| s.seq).collect();
        assert_eq!(
            seqs,
            [0, 1, 2],
            "the run's seq has no hole where no target reported"
        );
        assert_eq!(out[2].write.bytes, 13);
        assert_eq!(m.count(), 3);
        assert_eq!(m.into_samples().len(), 3);
    }
}
