//! The residency of every SM, run-length encoded: consecutive SMs in the
//! same state form one span. A launch's blocks go breadth-first over a
//! range of SMs, so most of the GPU is a few spans (the SMs with `q + 1`
//! blocks of a kernel, those with `q`, the idle ones) and placing or
//! retiring a wave costs a few span updates instead of one per SM.

use super::sm::Sm;

/// `count` consecutive SMs from `first`, `n` blocks on each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Seg {
    pub first: u32,
    pub count: u32,
    pub n: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Span {
    pub first: u32,
    pub len: u32,
    pub sm: Sm,
}

#[derive(Debug, Clone)]
pub(crate) struct Residency {
    /// Sorted, covering `0..sm_count`, no two neighbours in the same state.
    spans: Vec<Span>,
    sm_count: u32,
    /// SMs holding blocks of more than one launch, and of any.
    shared: u32,
    occupied: u32,
}

impl Residency {
    pub fn new(sm_count: u32) -> Residency {
        Residency {
            spans: vec![Span {
                first: 0,
                len: sm_count,
                sm: Sm::default(),
            }],
            sm_count,
            shared: 0,
            occupied: 0,
        }
    }

    pub fn spans(&self) -> &[Span] {
        &self.spans
    }

    /// SMs holding blocks of more than one launch.
    pub fn shared_sms(&self) -> u32 {
        self.shared
    }

    /// SMs holding any block.
    #[cfg(test)]
    pub fn occupied_sms(&self) -> u32 {
        self.occupied
    }

    /// SMs with no block.
    pub fn idle_sms(&self) -> u32 {
        self.sm_count - self.occupied
    }

    /// Make a span start at `at`; its index (`spans.len()` at the end).
    fn split(&mut self, at: u32) -> usize {
        if at >= self.sm_count {
            return self.spans.len();
        }
        let i = self.spans.partition_point(|s| s.first <= at) - 1;
        let span = &mut self.spans[i];
        if span.first == at {
            return i;
        }
        let right = Span {
            first: at,
            len: span.first + span.len - at,
            sm: span.sm.clone(),
        };
        span.len = at - span.first;
        self.spans.insert(i + 1, right);
        i + 1
    }

    /// Apply `f` to every SM of `seg`; how many SMs it returned true for.
    fn apply(&mut self, seg: Seg, mut f: impl FnMut(&mut Sm) -> bool) -> u32 {
        let a = self.split(seg.first);
        let b = self.split(seg.first + seg.count);
        let mut hits = 0;
        for span in &mut self.spans[a..b] {
            let (shared, occupied) = (span.sm.resident.len() > 1, !span.sm.resident.is_empty());
            if f(&mut span.sm) {
                hits += span.len;
            }
            let len = span.len;
            self.shared =
                self.shared + len * u32::from(span.sm.resident.len() > 1) - len * u32::from(shared);
            self.occupied = self.occupied + len * u32::from(!span.sm.resident.is_empty())
                - len * u32::from(occupied);
        }
        // Neighbours that now hold the same blocks become one span again.
        let mut i = a.max(1);
        let mut end = (b + 1).min(self.spans.len());
        while i < end {
            if self.spans[i].sm == self.spans[i - 1].sm {
                self.spans[i - 1].len += self.spans[i].len;
                self.spans.remove(i);
                end -= 1;
            } else {
                i += 1;
            }
        }
        hits
    }

    /// Add `seg.n` blocks of `slot` on each SM of `seg`, each using `share`
    /// of an SM; the SMs where the launch was not resident yet.
    pub fn add(&mut self, seg: Seg, slot: usize, share: f64) -> u32 {
        self.apply(seg, |sm| sm.add(slot, seg.n, share))
    }

    /// Remove `seg.n` blocks of `slot` from each SM of `seg`; the SMs where
    /// it has none left.
    pub fn remove(&mut self, seg: Seg, slot: usize) -> u32 {
        self.apply(seg, |sm| sm.remove(slot, seg.n))
    }

    /// What the launch in `slot` may place on each SM of `first..end`
    /// (`Sm::fit_for`), as segments of equal fit; SMs with none are left out.
    pub fn fits(&self, first: u32, end: u32, fit: impl Fn(&Sm) -> u32, out: &mut Vec<Seg>) {
        let start = self.spans.partition_point(|s| s.first + s.len <= first);
        for span in &self.spans[start..] {
            if span.first >= end {
                break;
            }
            let lo = span.first.max(first);
            let hi = (span.first + span.len).min(end);
            let n = fit(&span.sm);
            if n == 0 {
                continue;
            }
            match out.last_mut() {
                Some(last) if last.n == n && last.first + last.count == lo => last.count += hi - lo,
                _ => out.push(Seg {
                    first: lo,
                    count: hi - lo,
                    n,
                }),
            }
        }
    }
}

/// Spread `want` blocks over segments of per-SM room breadth-first, in SM
/// order: every SM gets one before any gets two, as the hardware block
/// scheduler does. Rewrites `fits` to what each SM got (segments of equal
/// blocks, none empty) and returns the total placed.
pub(crate) fn level_fill(fits: &mut Vec<Seg>, want: u64) -> u64 {
    let capacity: u64 = fits
        .iter()
        .map(|f| u64::from(f.count) * u64::from(f.n))
        .sum();
    if capacity <= want {
        return capacity;
    }
    // The largest level `q` with sum(min(fit, q)) <= want: raising the
    // level by one adds one block on every SM whose room is above it.
    let max_fit = fits.iter().map(|f| f.n).max().unwrap_or(0) as usize;
    let mut above = vec![0u64; max_fit + 1];
    for f in fits.iter() {
        above[f.n as usize] += u64::from(f.count);
    }
    for v in (0..max_fit).rev() {
        above[v] += above[v + 1];
    }
    let (mut q, mut filled) = (0u32, 0u64);
    while (q as usize) < max_fit && filled + above[q as usize + 1] <= want {
        filled += above[q as usize + 1];
        q += 1;
    }
    // Then one more block on the first SMs with room above `q`.
    let mut extra = want - filled;
    let mut out = Vec::with_capacity(fits.len() + 1);
    for f in fits.iter() {
        let base = f.n.min(q);
        let mut rest = *f;
        if extra > 0 && f.n > q {
            let k = u64::from(f.count).min(extra) as u32;
            extra -= u64::from(k);
            out.push(Seg {
                first: f.first,
                count: k,
                n: base + 1,
            });
            rest.first += k;
            rest.count -= k;
        }
        if rest.count > 0 && base > 0 {
            out.push(Seg { n: base, ..rest });
        }
    }
    *fits = out;
    want
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Segments as one count per SM (absent = 0).
    fn per_sm(segs: &[Seg], sms: u32) -> Vec<u32> {
        let mut v = vec![0; sms as usize];
        for s in segs {
            for sm in s.first..s.first + s.count {
                v[sm as usize] += s.n;
            }
        }
        v
    }

    /// The hardware's order: one block to each SM with room, in SM order,
    /// round after round.
    fn round_robin(room: &[u32], mut want: u64) -> Vec<u32> {
        let mut got = vec![0; room.len()];
        let mut progress = true;
        while want > 0 && progress {
            progress = false;
            for (g, &r) in got.iter_mut().zip(room) {
                if want > 0 && *g < r {
                    *g += 1;
                    want -= 1;
                    progress = true;
                }
            }
        }
        got
    }

    #[test]
    fn level_fill_is_breadth_first() {
        let seg = |first, count, n| Seg { first, count, n };
        let mut f = vec![seg(0, 2, 4), seg(2, 1, 1), seg(3, 1, 4)];
        assert_eq!(level_fill(&mut f, 6), 6);
        assert_eq!(per_sm(&f, 4), vec![2, 2, 1, 1]);
        let mut f = vec![seg(0, 2, 2)];
        assert_eq!(level_fill(&mut f, 9), 4);
        let mut f = vec![seg(0, 3, 3)];
        assert_eq!(level_fill(&mut f, 2), 2);
        assert_eq!(f, vec![seg(0, 2, 1)]);
    }

    proptest! {
        #[test]
        fn level_fill_matches_round_robin(
            room in proptest::collection::vec(0u32..80, 1..40),
            want in 0u64..2000,
        ) {
            let sms = room.len() as u32;
            let mut fits: Vec<Seg> = Vec::new();
            for (i, &r) in room.iter().enumerate() {
                if r > 0 {
                    fits.push(Seg { first: i as u32, count: 1, n: r });
                }
            }
            let placed = level_fill(&mut fits, want);
            let expected = round_robin(&room, want);
            prop_assert_eq!(placed, expected.iter().map(|&e| u64::from(e)).sum::<u64>());
            prop_assert_eq!(per_sm(&fits, sms), expected);
        }

        /// Random adds and removes on a run-length encoded GPU agree with
        /// one state per SM, and spans stay merged.
        #[test]
        fn spans_track_every_sm(ops in proptest::collection::vec((0u32..12, 1u32..12, 1u32..4, 0usize..3), 1..40)) {
            let sms = 16;
            let mut r = Residency::new(sms);
            let mut plain = vec![Sm::default(); sms as usize];
            let share = [0.25, 0.125, 0.5];
            for (first, count, n, slot) in ops {
                let count = count.min(sms - first);
                let seg = Seg { first, count, n };
                // Remove when every SM of the range holds enough, else add.
                let removable = plain[first as usize..(first + count) as usize].iter().all(|sm| {
                    sm.resident.iter().any(|x| x.slot == slot && x.blocks >= n)
                });
                if removable {
                    let gone = r.remove(seg, slot);
                    let mut want = 0;
                    for sm in &mut plain[first as usize..(first + count) as usize] {
                        want += u32::from(sm.remove(slot, n));
                    }
                    prop_assert_eq!(gone, want);
                } else {
                    let new = r.add(seg, slot, share[slot]);
                    let mut want = 0;
                    for sm in &mut plain[first as usize..(first + count) as usize] {
                        want += u32::from(sm.add(slot, n, share[slot]));
                    }
                    prop_assert_eq!(new, want);
                }
                let mut expanded = Vec::new();
                for span in r.spans() {
                    for _ in 0..span.len {
                        expanded.push(span.sm.clone());
                    }
                }
                prop_assert_eq!(&expanded, &plain);
                for w in r.spans().windows(2) {
                    prop_assert!(w[0].sm != w[1].sm, "unmerged neighbours");
                }
                prop_assert_eq!(r.occupied_sms(), plain.iter().filter(|s| !s.resident.is_empty()).count() as u32);
                prop_assert_eq!(r.shared_sms(), plain.iter().filter(|s| s.resident.len() > 1).count() as u32);
            }
        }
    }
}
