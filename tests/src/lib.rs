//! End-to-end test crate; the tests live in cli.rs.
