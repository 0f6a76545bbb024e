//! Model arguments of the form `NAME[:VARIANT][@BATCH]`: splitting off the
//! batch suffix, and reconciling it with an explicit batch override.

use crate::model::{ModelError, ParamsOverride};

/// A model argument with its `@BATCH` suffix split off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelArg<'a> {
    /// `NAME[:VARIANT]`, or a model file path.
    pub name: &'a str,
    /// The batch of the suffix, where one was given.
    pub batch: Option<u32>,
}

impl<'a> ModelArg<'a> {
    /// Split `arg` at its last `@`. A suffix must be a positive integer:
    /// `@0`, `@abc` and a bare `@` are errors naming the argument.
    pub fn parse(arg: &'a str) -> Result<ModelArg<'a>, ModelError> {
        let Some((name, suffix)) = arg.rsplit_once('@') else {
            return Ok(ModelArg {
                name: arg,
                batch: None,
            });
        };
        let invalid = |reason: String| ModelError::InvalidName {
            arg: arg.to_string(),
            reason,
        };
        if name.is_empty() {
            return Err(invalid("no model name before `@`".into()));
        }
        if suffix.is_empty() {
            return Err(invalid("`@` must be followed by a batch size".into()));
        }
        let batch: u32 = suffix.parse().map_err(|_| {
            invalid(format!(
                "batch suffix `@{suffix}` is not a positive integer"
            ))
        })?;
        if batch == 0 {
            return Err(invalid(
                "batch suffix `@0`: the batch must be at least 1".into(),
            ));
        }
        Ok(ModelArg {
            name,
            batch: Some(batch),
        })
    }

    /// The caller's overrides with the suffix's batch folded in; a suffix
    /// and an explicit batch that differ are an error naming both.
    pub fn overrides(&self, arg: &str, o: &ParamsOverride) -> Result<ParamsOverride, ModelError> {
        match (self.batch, o.batch) {
            (Some(suffix), Some(batch)) if suffix != batch => Err(ModelError::BatchConflict {
                arg: arg.to_string(),
                suffix,
                batch,
            }),
            (Some(suffix), _) => Ok(ParamsOverride {
                batch: Some(suffix),
                ..*o
            }),
            (None, _) => Ok(*o),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(arg: &str) -> String {
        match ModelArg::parse(arg) {
            Err(e @ ModelError::InvalidName { .. }) => e.to_string(),
            other => panic!("{arg}: {other:?}"),
        }
    }

    #[test]
    fn suffix_splits_off_the_batch() {
        let a = ModelArg::parse("resnet50:train@128").unwrap();
        assert_eq!((a.name, a.batch), ("resnet50:train", Some(128)));
        let a = ModelArg::parse("bert-base:infer").unwrap();
        assert_eq!((a.name, a.batch), ("bert-base:infer", None));
        let a = ModelArg::parse("llama2-7b@1").unwrap();
        assert_eq!((a.name, a.batch), ("llama2-7b", Some(1)));
    }

    #[test]
    fn malformed_suffixes_name_the_argument_and_the_form() {
        for (arg, says) in [
            ("resnet50@0", "at least 1"),
            ("resnet50@abc", "`@abc` is not a positive integer"),
            ("resnet50@-3", "not a positive integer"),
            ("resnet50@", "followed by a batch size"),
            ("@8", "no model name"),
        ] {
            let msg = reason(arg);
            assert!(msg.contains(&format!("`{arg}`")), "{msg}");
            assert!(msg.contains(says), "{msg}");
            assert!(msg.contains("NAME[:VARIANT][@BATCH]"), "{msg}");
        }
    }

    #[test]
    fn suffix_and_explicit_batch_must_agree() {
        let a = ModelArg::parse("bert-base@32").unwrap();
        let o = |batch| ParamsOverride {
            batch,
            seq_len: Some(64),
            kv_len: None,
        };
        assert_eq!(a.overrides("bert-base@32", &o(None)).unwrap(), o(Some(32)));
        assert_eq!(
            a.overrides("bert-base@32", &o(Some(32))).unwrap(),
            o(Some(32))
        );
        let err = a.overrides("bert-base@32", &o(Some(8))).unwrap_err();
        assert!(matches!(
            err,
            ModelError::BatchConflict {
                suffix: 32,
                batch: 8,
                ..
            }
        ));
        let msg = err.to_string();
        assert!(
            msg.contains("32") && msg.contains("8") && msg.contains("--batch"),
            "{msg}"
        );
    }
}
