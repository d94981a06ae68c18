//! Write data: incompressible, zeros, or N % compressible, fresh for every write.
//!
//! Buffers are filled once at start (random bytes, zeros, or per 4 KiB chunk a random head
//! and a zero tail of N %). Before each write, [`Filler::refresh`] xors a new 64-bit value into
//! the first word of every 512-byte sector of the random part: every write then carries
//! content never written before (no dedup, no compression of random data), for one store per
//! sector, which is negligible next to the I/O (fio's `refill_buffers` costs ~half a CPU at
//! 1.9 GB/s by regenerating everything).

use super::rng::Rng;
use shared::DataPattern;

const SECTOR: usize = 512;
const CHUNK: usize = 4096;

#[derive(Debug)]
pub struct Filler {
    pattern: DataPattern,
    rng: Rng,
}

impl Filler {
    pub fn new(pattern: DataPattern, rng: Rng) -> Self {
        Filler { pattern, rng }
    }

    /// Bytes at the start of each chunk that hold random data.
    fn random_head(&self, chunk: usize) -> usize {
        match self.pattern {
            DataPattern::Random => chunk,
            DataPattern::Zeros => 0,
            DataPattern::Compress(n) => chunk * (100 - usize::from(n.min(100))) / 100,
        }
    }

    /// Initial content of a write buffer.
    pub fn init(&mut self, buf: &mut [u8]) {
        for chunk in buf.chunks_mut(CHUNK) {
            let head = self.random_head(chunk.len());
            self.rng.fill(&mut chunk[..head]);
            chunk[head..].fill(0);
        }
    }

    /// Makes the buffer's content new before it is written again.
    #[inline]
    pub fn refresh(&mut self, buf: &mut [u8]) {
        if self.pattern == DataPattern::Zeros {
            return;
        }
        let mut v = self.rng.next_u64();
        for chunk in buf.chunks_mut(CHUNK) {
            let head = self.random_head(chunk.len());
            let mut pos = 0;
            while pos + 8 <= head {
                let word = &mut chunk[pos..pos + 8];
                let old = u64::from_ne_bytes([
                    word[0], word[1], word[2], word[3], word[4], word[5], word[6], word[7],
                ]);
                word.copy_from_slice(&(old ^ v).to_ne_bytes());
                v = v.rotate_left(17).wrapping_add(0x9e37_79b9_7f4a_7c15);
                pos += SECTOR;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zeros_share(buf: &[u8]) -> f64 {
        buf.iter().filter(|&&b| b == 0).count() as f64 / buf.len() as f64
    }

    #[test]
    fn patterns_have_the_requested_content() {
        let mut buf = vec![0xAAu8; 64 * 1024];
        Filler::new(DataPattern::Zeros, Rng::new(1, 1)).init(&mut buf);
        assert!(buf.iter().all(|&b| b == 0));

        let mut f = Filler::new(DataPattern::Random, Rng::new(1, 1));
        f.init(&mut buf);
        assert!(zeros_share(&buf) < 0.01);

        let mut f = Filler::new(DataPattern::Compress(50), Rng::new(1, 1));
        f.init(&mut buf);
        let z = zeros_share(&buf);
        assert!((0.49..0.52).contains(&z), "{z}");
        let before = buf.clone();
        f.refresh(&mut buf);
        assert_ne!(before, buf, "refresh must change the content");
        assert!(
            (0.49..0.52).contains(&zeros_share(&buf)),
            "refresh keeps the zero tail"
        );
    }

    #[test]
    fn refresh_changes_every_sector() {
        let mut buf = vec![0u8; 8192];
        let mut f = Filler::new(DataPattern::Random, Rng::new(5, 0));
        f.init(&mut buf);
        let before = buf.clone();
        f.refresh(&mut buf);
        for (a, b) in before.chunks(SECTOR).zip(buf.chunks(SECTOR)) {
            assert_ne!(a, b);
        }
    }
}
