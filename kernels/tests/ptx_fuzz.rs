//! Fuzz-style property test: byte-level mutations of fixture text (delete,
//! insert or replace a character, truncate) must make parsing, analysis
//! and transformation return `Ok` or `Err`, never panic.

mod common;

use proptest::prelude::*;
use tally_kernels::ptx::{analyze_module, parse_module, transform_module, Variants};

/// Characters that matter to the grammar, so mutations hit interesting paths.
const ALPHABET: &[u8] = b"{}()[],;:@!+-<>|=.%$_0123456789xfdU \n\t\"/*abcr";

#[derive(Debug, Clone)]
enum Mutation {
    Delete(usize),
    Insert(usize, u8),
    Replace(usize, u8),
    Truncate(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let ch = prop::sample::select(ALPHABET.to_vec());
    prop_oneof![
        any::<usize>().prop_map(Mutation::Delete),
        (any::<usize>(), ch.clone()).prop_map(|(i, c)| Mutation::Insert(i, c)),
        (any::<usize>(), ch).prop_map(|(i, c)| Mutation::Replace(i, c)),
        any::<usize>().prop_map(Mutation::Truncate),
    ]
}

fn apply(text: &str, muts: &[Mutation]) -> String {
    let mut b = text.as_bytes().to_vec();
    for m in muts {
        let n = b.len().max(1);
        match *m {
            Mutation::Delete(i) if !b.is_empty() => {
                b.remove(i % n);
            }
            Mutation::Insert(i, c) => b.insert(i % (b.len() + 1), c),
            Mutation::Replace(i, c) if !b.is_empty() => b[i % n] = c,
            Mutation::Truncate(i) => b.truncate(i % (b.len() + 1)),
            _ => {}
        }
    }
    String::from_utf8_lossy(&b).into_owned()
}

fn small_fixtures() -> Vec<String> {
    // Large library fixtures make each case slow; mutations of the small
    // ones reach the same grammar.
    common::all_fixtures()
        .iter()
        .map(|p| common::read(p))
        .filter(|t| t.len() < 40_000)
        .collect()
}

fn exercise(text: &str) {
    if let Ok(m) = parse_module(text) {
        let _ = analyze_module(&m);
        if let Ok(t) = transform_module(&m, Variants::ALL) {
            parse_module(&t.to_string()).expect("a transformed module reparses");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn mutated_fixtures_never_panic(pick in any::<usize>(), muts in prop::collection::vec(mutation(), 1..6)) {
        let fixtures = small_fixtures();
        let text = &fixtures[pick % fixtures.len()];
        exercise(&apply(text, &muts));
    }

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(prop::sample::select(ALPHABET.to_vec()), 0..200)) {
        exercise(&String::from_utf8_lossy(&bytes));
    }
}

#[test]
fn every_truncation_of_a_fixture_is_handled() {
    let text = common::handwritten("syntax_zoo.ptx");
    for cut in 0..=text.len() {
        if text.is_char_boundary(cut) {
            exercise(&text[..cut]);
        }
    }
}
