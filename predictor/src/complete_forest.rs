//! `CompleteForest`: the run-time layout of shallow boosted trees. Each
//! tree is padded to a complete binary tree of the forest's depth (a leaf
//! above the last level becomes splits that always go left), so a walk is
//! a fixed number of branch-free steps `i = 2i + 1 + (x >= t)` with no
//! child pointers and no early exit: trees walk in lock-step, the CPU
//! overlaps their loads, and no step mispredicts. Built from a `Forest`
//! when the run-time predictor loads a model file.

use crate::features::{Features, N_FEATURES};
use crate::forest::{Forest, LEAF};

/// Deepest forest padded (a tree of depth d holds 2^d - 1 splits); deeper
/// ones stay node walks.
pub const MAX_PADDED_DEPTH: u32 = 10;

/// Trees walked together (independent load chains in flight: the deep
/// levels of 40 trees do not fit in L1, so the walk is bound by how many
/// cache misses overlap).
const LANES: usize = 8;

/// The feature vector's length rounded up to a power of two.
const PADDED_FEATURES: usize = N_FEATURES.next_power_of_two();

/// One split: threshold and feature side by side, so a step touches one
/// cache line rather than two.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Split {
    threshold: f64,
    feature: u32,
}

/// The always-left pass-through that pads a leaf above the last level.
const PASS: Split = Split {
    threshold: f64::INFINITY,
    feature: 0,
};

/// Padded trees: per tree `2^depth - 1` splits in heap order, then
/// `2^depth` leaves.
#[derive(Debug, Clone, PartialEq)]
pub struct CompleteForest {
    base: f64,
    depth: u32,
    trees: usize,
    /// Splits of every tree in heap order (padding: `PASS`).
    splits: Vec<Split>,
    leaves: Vec<f64>,
}

impl CompleteForest {
    /// Pad `forest`; `None` if a tree is deeper than `MAX_PADDED_DEPTH`.
    /// `forest` must have passed `Forest::check`.
    pub fn from_forest(forest: &Forest) -> Option<CompleteForest> {
        let depth = forest
            .roots
            .iter()
            .map(|&r| tree_depth(forest, r as usize))
            .max()
            .unwrap_or(0);
        if depth > MAX_PADDED_DEPTH {
            return None;
        }
        let splits = (1usize << depth) - 1;
        let n_leaves = 1usize << depth;
        let trees = forest.roots.len();
        let mut out = CompleteForest {
            base: forest.base,
            depth,
            trees,
            splits: vec![PASS; trees * splits],
            leaves: vec![0.0; trees * n_leaves],
        };
        for (t, &root) in forest.roots.iter().enumerate() {
            out.fill(forest, t, root as usize, 0, 0);
        }
        Some(out)
    }

    /// Copy the subtree at forest node `node` to heap position `pos` at `level`.
    fn fill(&mut self, forest: &Forest, tree: usize, node: usize, pos: usize, level: u32) {
        let splits = (1usize << self.depth) - 1;
        let n = &forest.nodes[node];
        if n.feature == LEAF {
            // Always left from here down: the value sits in the leftmost leaf.
            let leftmost = ((pos + 1) << (self.depth - level)) - 1;
            self.leaves[tree * (splits + 1) + leftmost - splits] = n.value;
            return;
        }
        self.splits[tree * splits + pos] = Split {
            threshold: n.value,
            feature: u32::from(n.feature),
        };
        let left = n.left as usize;
        self.fill(forest, tree, left, 2 * pos + 1, level + 1);
        self.fill(forest, tree, left + 1, 2 * pos + 2, level + 1);
    }

    /// `base + sum over trees of the leaf reached`, as `Forest::predict`
    /// (the same additions in the same order, so the same bits).
    #[inline]
    pub fn predict(&self, f: &Features) -> f64 {
        // Features in a power-of-two array: indexing with a masked feature
        // number needs no bounds check on the hot path.
        let mut padded = [0.0; PADDED_FEATURES];
        padded[..f.len()].copy_from_slice(f);
        let f = &padded;
        let splits = (1usize << self.depth) - 1;
        let mut sum = self.base;
        let mut t = 0;
        // Full groups of lanes: fixed-size loops the compiler unrolls.
        while t + LANES <= self.trees {
            let mut pos = [0usize; LANES];
            for _ in 0..self.depth {
                for (l, p) in pos.iter_mut().enumerate() {
                    *p = self.step(f, (t + l) * splits, *p);
                }
            }
            for (l, p) in pos.iter().enumerate() {
                sum += self.leaves[(t + l) * (splits + 1) + *p - splits];
            }
            t += LANES;
        }
        // The remaining trees, one after the other.
        while t < self.trees {
            let mut p = 0;
            for _ in 0..self.depth {
                p = self.step(f, t * splits, p);
            }
            sum += self.leaves[t * (splits + 1) + p - splits];
            t += 1;
        }
        sum
    }

    /// One level down from heap position `p` of the tree whose splits start
    /// at `tree_start`.
    #[inline(always)]
    fn step(&self, f: &[f64; PADDED_FEATURES], tree_start: usize, p: usize) -> usize {
        let s = self.splits[tree_start + p];
        let right = f[s.feature as usize & (PADDED_FEATURES - 1)] >= s.threshold;
        2 * p + 1 + usize::from(right)
    }
}

/// Levels of splits below forest node `node` (0 for a leaf).
fn tree_depth(forest: &Forest, node: usize) -> u32 {
    let n = &forest.nodes[node];
    if n.feature == LEAF {
        return 0;
    }
    let left = n.left as usize;
    1 + tree_depth(forest, left).max(tree_depth(forest, left + 1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::forest::Node;
    use proptest::prelude::*;

    /// A random valid forest: trees of mixed depth, breadth-first.
    fn forest(seed: u64, trees: usize, max_depth: u32) -> Forest {
        let mut rng = tally_gpu::rng::SplitMix64::new(seed);
        let mut nodes = Vec::new();
        let mut roots = Vec::new();
        for _ in 0..trees {
            let root = nodes.len();
            roots.push(root as u32);
            // (index, level) queue in breadth-first order.
            nodes.push(Node {
                value: 0.0,
                left: 0,
                feature: LEAF,
            });
            let mut queue = vec![(root, 0u32)];
            let mut k = 0;
            while k < queue.len() {
                let (i, level) = queue[k];
                k += 1;
                if level < max_depth && rng.next_f64() < 0.7 {
                    let left = nodes.len();
                    nodes[i] = Node {
                        value: rng.next_f64(),
                        left: left as u32,
                        feature: rng.below(N_FEATURES as u64) as u16,
                    };
                    for _ in 0..2 {
                        nodes.push(Node {
                            value: rng.next_f64() - 0.5,
                            left: 0,
                            feature: LEAF,
                        });
                    }
                    queue.push((left, level + 1));
                    queue.push((left + 1, level + 1));
                } else {
                    nodes[i].value = rng.next_f64() - 0.5;
                }
            }
        }
        Forest {
            base: 0.25,
            roots,
            nodes,
        }
    }

    proptest! {
        #[test]
        fn padded_trees_predict_exactly_like_the_node_walk(seed in 0u64..1000, trees in 1usize..20, depth in 0u32..7) {
            let forest = forest(seed, trees, depth);
            forest.check(N_FEATURES).expect("valid");
            let complete = CompleteForest::from_forest(&forest).expect("shallow");
            let mut rng = tally_gpu::rng::SplitMix64::new(seed ^ 0xabc);
            for _ in 0..20 {
                let mut f = [0.0; N_FEATURES];
                for v in &mut f {
                    *v = rng.next_f64();
                }
                prop_assert_eq!(complete.predict(&f).to_bits(), forest.predict(&f).to_bits());
            }
        }
    }

    #[test]
    fn deep_forests_are_not_padded() {
        let deep = forest(1, 1, MAX_PADDED_DEPTH + 3);
        let d = tree_depth(&deep, 0);
        assert_eq!(
            CompleteForest::from_forest(&deep).is_some(),
            d <= MAX_PADDED_DEPTH
        );
    }
}
