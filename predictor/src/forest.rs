//! `Forest`: gradient-boosted regression trees flattened into one node
//! array — the form model files store and the run-time predictor walks
//! (no pointers, no maps, no allocation per prediction).

use serde::{Deserialize, Serialize};

use crate::features::Features;

/// Marks a leaf in `Node::feature`.
pub const LEAF: u16 = u16::MAX;

/// A split (`feature < value` goes to `left`, else to `left + 1`) or a
/// leaf (`feature == LEAF`, `value` its output). 16 bytes: the run-time
/// cost of a tree walk is the cache misses on its nodes, so the right
/// child is implied (trees are stored breadth-first, siblings adjacent)
/// and the threshold and the leaf value share a field.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Node {
    /// Split threshold, or the leaf's output.
    pub value: f64,
    /// Index of the left child in `Forest::nodes`; the right one follows it.
    pub left: u32,
    pub feature: u16,
}

/// An additive ensemble: `base + sum over trees of the leaf reached`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Forest {
    pub base: f64,
    /// Index of each tree's root in `nodes`.
    pub roots: Vec<u32>,
    pub nodes: Vec<Node>,
}

impl Forest {
    #[inline]
    pub fn predict(&self, f: &Features) -> f64 {
        let mut sum = self.base;
        for &root in &self.roots {
            let mut i = root as usize;
            loop {
                let n = &self.nodes[i];
                if n.feature == LEAF {
                    sum += n.value;
                    break;
                }
                i = n.left as usize + usize::from(f[usize::from(n.feature)] >= n.value);
            }
        }
        sum
    }

    /// Check the structure: every child index in range and pointing forward
    /// (so a walk always ends), every feature index valid. Model files are
    /// user input; a corrupt one must not hang or panic the predictor.
    pub fn check(&self, n_features: usize) -> Result<(), String> {
        let len = self.nodes.len();
        for &r in &self.roots {
            if r as usize >= len {
                return Err(format!("tree root {r} is past the {len} nodes"));
            }
        }
        for (i, n) in self.nodes.iter().enumerate() {
            if n.feature == LEAF {
                if !n.value.is_finite() {
                    return Err(format!("node {i}: leaf value is not finite"));
                }
                continue;
            }
            if usize::from(n.feature) >= n_features {
                return Err(format!(
                    "node {i}: feature {} but the schema has {n_features}",
                    n.feature
                ));
            }
            let left = n.left as usize;
            if left <= i || left + 1 >= len {
                return Err(format!(
                    "node {i}: children {left}, {} are out of order",
                    left + 1
                ));
            }
            if !n.value.is_finite() {
                return Err(format!("node {i}: split threshold is not finite"));
            }
        }
        if !self.base.is_finite() {
            return Err("base score is not finite".to_string());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::features::N_FEATURES;

    fn stump(feature: u16, threshold: f64, left: f64, right: f64) -> [Node; 3] {
        let leaf = |value| Node {
            feature: LEAF,
            left: 0,
            value,
        };
        [
            Node {
                feature,
                left: 1,
                value: threshold,
            },
            leaf(left),
            leaf(right),
        ]
    }

    #[test]
    fn walks_and_sums() {
        let mut nodes = stump(0, 0.5, 1.0, 2.0).to_vec();
        let second = stump(1, 0.0, 10.0, 20.0);
        // Re-base the second tree's child indices.
        nodes.extend(second.iter().map(|n| Node {
            left: n.left + 3,
            ..*n
        }));
        let forest = Forest {
            base: 0.5,
            roots: vec![0, 3],
            nodes,
        };
        forest.check(N_FEATURES).expect("valid");
        let mut f = [0.0; N_FEATURES];
        assert_eq!(forest.predict(&f), 0.5 + 1.0 + 20.0);
        f[0] = 0.7;
        f[1] = -1.0;
        assert_eq!(forest.predict(&f), 0.5 + 2.0 + 10.0);
    }

    #[test]
    fn corrupt_forests_are_refused() {
        let mut nodes = stump(0, 0.5, 1.0, 2.0).to_vec();
        nodes[0].left = 0;
        let bad = Forest {
            base: 0.0,
            roots: vec![0],
            nodes,
        };
        assert!(bad.check(N_FEATURES).is_err());
        let nodes = stump(200, 0.5, 1.0, 2.0).to_vec();
        let bad = Forest {
            base: 0.0,
            roots: vec![0],
            nodes,
        };
        assert!(bad.check(N_FEATURES).is_err());
    }
}
