//! User model files: a model described in TOML or JSON, parsed with exact
//! diagnostics (file, line, column, field) and checked so that every
//! lowered kernel is a valid launch.
//!
//! # Schema
//!
//! Top level:
//!
//! | key         | type                        | default       |
//! |-------------|-----------------------------|---------------|
//! | `name`      | string                      | required      |
//! | `phase`     | `"inference"` / `"training"`| `"inference"` |
//! | `batch`     | integer > 0 (informational) | 1             |
//! | `seq_len`   | integer > 0 (informational) | none          |
//! | `optimizer` | `"adam"` / `"sgd"`          | `"adam"`      |
//! | `operators` | array of operator tables    | required      |
//!
//! Each operator has `name`, `op` (the operator kind), its shape fields,
//! and optionally `repeat` (consecutive instances, default 1),
//! `backward` (the gradient computation, default false) and `recompute`
//! (a forward operator run again in the backward pass by activation
//! checkpointing: it owns no parameters; default false). Shape fields are
//! integers; dimensions must be > 0 (`pad`, `inputs`, `flops_per_element`
//! may be 0). `dtype` is `"f16"` (default), `"bf16"`, `"f32"` or `"tf32"` (FP32 tensors, products on the tensor cores in TF32).
//!
//! | `op`          | fields                                                               |
//! |---------------|----------------------------------------------------------------------|
//! | `gemm`        | `m n k`, `batch`=1, `dtype`                                          |
//! | `conv2d`      | `n c_in h w c_out kh kw`, `stride`=1, `pad`=0, `groups`=1, `dtype`, `backend` = `"cudnn"` / `"native"` (PyTorch without cuDNN) |
//! | `elementwise` | `elements inputs outputs flops_per_element`, `dtype`                 |
//! | `reduction`, `softmax`, `layer_norm` | `rows cols`, `dtype`                          |
//! | `attention`   | `batch heads q_len kv_len head_dim`, `kv_heads`=heads, `causal`=false, `dtype` |
//! | `embedding`   | `tokens hidden vocab`, `dtype`                                       |
//! | `optimizer`   | `params`, `kind` = `"adam"` / `"sgd"`                                |
//! | `copy`        | `bytes`                                                              |
//!
//! With `phase = "training"` and no operator marked `backward`, the listed
//! operators are the forward pass (loss included) and the backward pass
//! (reverse order) and an optimizer step over their parameters are derived;
//! otherwise the list is taken as written. A field that does not apply to
//! the operator's kind, an unknown key, a zero dimension or an inconsistent
//! shape is an error naming the file, line, column and field.

use std::collections::HashMap;
use std::path::Path;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;

use crate::model::{
    param_count, training_iteration, ConvBackend, Dtype, GemmLibrary, Model, ModelError,
    ModelParams, OpKind, Operator, OptimizerKind, ParamsOverride, Phase,
};

/// A positive integer: zero is rejected while the value is parsed, so the
/// error points at it.
#[derive(Debug, Clone, Copy)]
struct Positive(u64);

impl<'de> Deserialize<'de> for Positive {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Positive, D::Error> {
        match u64::deserialize(d)? {
            0 => Err(de::Error::custom("must be > 0")),
            v => Ok(Positive(v)),
        }
    }
}

/// The operator kinds, as written in `op`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum OpTag {
    Gemm,
    Conv2d,
    Elementwise,
    Reduction,
    Softmax,
    LayerNorm,
    Attention,
    Embedding,
    Optimizer,
    Copy,
}

/// A parsed field value.
#[derive(Debug, Clone)]
enum Val {
    Num(u64),
    Flag(bool),
    Text(String),
    Type(Dtype),
    Library(ConvBackend),
    Kind(OptimizerKind),
    Tag(OpTag),
}

impl From<Positive> for Val {
    fn from(v: Positive) -> Val {
        Val::Num(v.0)
    }
}
impl From<u64> for Val {
    fn from(v: u64) -> Val {
        Val::Num(v)
    }
}
impl From<bool> for Val {
    fn from(v: bool) -> Val {
        Val::Flag(v)
    }
}
impl From<String> for Val {
    fn from(v: String) -> Val {
        Val::Text(v)
    }
}
impl From<Dtype> for Val {
    fn from(v: Dtype) -> Val {
        Val::Type(v)
    }
}
impl From<ConvBackend> for Val {
    fn from(v: ConvBackend) -> Val {
        Val::Library(v)
    }
}
impl From<OptimizerKind> for Val {
    fn from(v: OptimizerKind) -> Val {
        Val::Kind(v)
    }
}
impl From<OpTag> for Val {
    fn from(v: OpTag) -> Val {
        Val::Tag(v)
    }
}

/// Declares the operator-table keys: the `Field` enum, its names, and the
/// type each key's value is parsed as (so type errors point at the value).
macro_rules! fields {
    ($($variant:ident => $name:literal : $ty:ty),* $(,)?) => {
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        enum Field { $($variant),* }

        const FIELD_NAMES: &[&str] = &[$($name),*];

        impl Field {
            fn as_str(self) -> &'static str {
                match self { $(Field::$variant => $name),* }
            }

            fn parse(s: &str) -> Option<Field> {
                match s { $($name => Some(Field::$variant),)* _ => None }
            }

            fn read<'de, A: MapAccess<'de>>(self, map: &mut A) -> Result<Val, A::Error> {
                match self { $(Field::$variant => map.next_value::<$ty>().map(Val::from)),* }
            }
        }
    };
}

fields! {
    Name => "name": String,
    Op => "op": OpTag,
    Repeat => "repeat": Positive,
    Backward => "backward": bool,
    Recompute => "recompute": bool,
    Dtype => "dtype": Dtype,
    M => "m": Positive,
    N => "n": Positive,
    K => "k": Positive,
    Batch => "batch": Positive,
    CIn => "c_in": Positive,
    H => "h": Positive,
    W => "w": Positive,
    COut => "c_out": Positive,
    Kh => "kh": Positive,
    Kw => "kw": Positive,
    Stride => "stride": Positive,
    Pad => "pad": u64,
    Groups => "groups": Positive,
    Backend => "backend": ConvBackend,
    Elements => "elements": Positive,
    Inputs => "inputs": u64,
    Outputs => "outputs": Positive,
    FlopsPerElement => "flops_per_element": u64,
    Rows => "rows": Positive,
    Cols => "cols": Positive,
    Heads => "heads": Positive,
    KvHeads => "kv_heads": Positive,
    QLen => "q_len": Positive,
    KvLen => "kv_len": Positive,
    HeadDim => "head_dim": Positive,
    Causal => "causal": bool,
    Tokens => "tokens": Positive,
    Hidden => "hidden": Positive,
    Vocab => "vocab": Positive,
    Params => "params": Positive,
    Kind => "kind": OptimizerKind,
    Bytes => "bytes": Positive,
}

impl<'de> Deserialize<'de> for Field {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Field, D::Error> {
        // Rejected while the key is parsed, so the error points at the key.
        let key = String::deserialize(d)?;
        Field::parse(&key).ok_or_else(|| de::Error::unknown_field(&key, FIELD_NAMES))
    }
}

/// The fields of one operator table, consumed as the operator is built so
/// that leftovers (fields of another kind) can be reported.
struct Fields {
    values: HashMap<Field, Val>,
    context: String,
}

impl Fields {
    fn take(&mut self, f: Field) -> Option<Val> {
        self.values.remove(&f)
    }

    fn missing(&self, f: Field) -> String {
        format!("{}: missing field `{}`", self.context, f.as_str())
    }

    fn num(&mut self, f: Field) -> Result<u64, String> {
        self.num_or(f, None)
    }

    fn num_or(&mut self, f: Field, default: Option<u64>) -> Result<u64, String> {
        match (self.take(f), default) {
            (Some(Val::Num(v)), _) => Ok(v),
            (None, Some(d)) => Ok(d),
            _ => Err(self.missing(f)),
        }
    }

    fn flag(&mut self, f: Field) -> bool {
        matches!(self.take(f), Some(Val::Flag(true)))
    }

    fn backend(&mut self) -> ConvBackend {
        match self.take(Field::Backend) {
            Some(Val::Library(b)) => b,
            _ => ConvBackend::default(),
        }
    }

    fn dtype(&mut self) -> Dtype {
        match self.take(Field::Dtype) {
            Some(Val::Type(d)) => d,
            _ => Dtype::default(),
        }
    }

    /// Rows x cols of a row-wise kind.
    fn rows_cols(&mut self) -> Result<(u64, u64, Dtype), String> {
        Ok((self.num(Field::Rows)?, self.num(Field::Cols)?, self.dtype()))
    }

    fn op(&mut self, tag: OpTag) -> Result<OpKind, String> {
        use Field as F;
        Ok(match tag {
            OpTag::Gemm => OpKind::Gemm {
                m: self.num(F::M)?,
                n: self.num(F::N)?,
                k: self.num(F::K)?,
                batch: self.num_or(F::Batch, Some(1))?,
                dtype: self.dtype(),
            },
            OpTag::Conv2d => OpKind::Conv2d {
                n: self.num(F::N)?,
                c_in: self.num(F::CIn)?,
                h: self.num(F::H)?,
                w: self.num(F::W)?,
                c_out: self.num(F::COut)?,
                kh: self.num(F::Kh)?,
                kw: self.num(F::Kw)?,
                stride: self.num_or(F::Stride, Some(1))?,
                pad: self.num_or(F::Pad, Some(0))?,
                groups: self.num_or(F::Groups, Some(1))?,
                dtype: self.dtype(),
                backend: self.backend(),
            },
            OpTag::Elementwise => OpKind::Elementwise {
                elements: self.num(F::Elements)?,
                inputs: self.num(F::Inputs)?,
                outputs: self.num(F::Outputs)?,
                flops_per_element: self.num(F::FlopsPerElement)?,
                dtype: self.dtype(),
            },
            OpTag::Reduction => {
                let (rows, cols, dtype) = self.rows_cols()?;
                OpKind::Reduction { rows, cols, dtype }
            }
            OpTag::Softmax => {
                let (rows, cols, dtype) = self.rows_cols()?;
                OpKind::Softmax { rows, cols, dtype }
            }
            OpTag::LayerNorm => {
                let (rows, cols, dtype) = self.rows_cols()?;
                OpKind::LayerNorm { rows, cols, dtype }
            }
            OpTag::Attention => {
                let heads = self.num(F::Heads)?;
                OpKind::Attention {
                    batch: self.num(F::Batch)?,
                    heads,
                    kv_heads: self.num_or(F::KvHeads, Some(heads))?,
                    q_len: self.num(F::QLen)?,
                    kv_len: self.num(F::KvLen)?,
                    head_dim: self.num(F::HeadDim)?,
                    causal: self.flag(F::Causal),
                    dtype: self.dtype(),
                }
            }
            OpTag::Embedding => OpKind::Embedding {
                tokens: self.num(F::Tokens)?,
                hidden: self.num(F::Hidden)?,
                vocab: self.num(F::Vocab)?,
                dtype: self.dtype(),
            },
            OpTag::Optimizer => OpKind::Optimizer {
                params: self.num(F::Params)?,
                kind: match self.take(F::Kind) {
                    Some(Val::Kind(k)) => k,
                    _ => OptimizerKind::default(),
                },
            },
            OpTag::Copy => OpKind::Copy {
                bytes: self.num(F::Bytes)?,
            },
        })
    }
}

/// Build an operator from its table's fields.
fn build_operator(mut values: HashMap<Field, Val>) -> Result<Operator, String> {
    let name = match values.remove(&Field::Name) {
        Some(Val::Text(n)) => n,
        _ => return Err("operator: missing field `name`".into()),
    };
    let tag = match values.remove(&Field::Op) {
        Some(Val::Tag(t)) => t,
        _ => return Err(format!("operator `{name}`: missing field `op`")),
    };
    let repeat = match values.remove(&Field::Repeat) {
        Some(Val::Num(r)) => u32::try_from(r).map_err(|_| {
            format!(
                "operator `{name}`: field `repeat` must be at most {}",
                u32::MAX
            )
        })?,
        _ => 1,
    };
    let backward = matches!(values.remove(&Field::Backward), Some(Val::Flag(true)));
    let recompute = matches!(values.remove(&Field::Recompute), Some(Val::Flag(true)));
    let mut fields = Fields {
        values,
        context: format!("operator `{name}`"),
    };
    let op = fields.op(tag)?;
    if let Some(extra) = fields.values.keys().next() {
        return Err(format!(
            "operator `{name}`: field `{}` does not apply to op `{}`",
            extra.as_str(),
            op.tag()
        ));
    }
    op.check()
        .map_err(|(field, reason)| format!("operator `{name}`: field `{field}` {reason}"))?;
    if backward && tag == OpTag::Optimizer {
        return Err(format!(
            "operator `{name}`: field `backward`: an optimizer step has no backward pass"
        ));
    }
    if recompute && (backward || tag == OpTag::Optimizer) {
        return Err(format!(
            "operator `{name}`: field `recompute`: only a forward operator can be recomputed"
        ));
    }
    Ok(Operator {
        name,
        op,
        repeat,
        backward,
        recompute,
        gemm_library: GemmLibrary::Cublas,
    })
}

/// An operator table, parsed key by key so each error keeps its position.
#[derive(Debug)]
struct FileOperator(Operator);

impl<'de> Deserialize<'de> for FileOperator {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<FileOperator, D::Error> {
        d.deserialize_map(OperatorVisitor)
    }
}

struct OperatorVisitor;

impl<'de> Visitor<'de> for OperatorVisitor {
    type Value = FileOperator;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an operator table with `name`, `op` and shape fields")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<FileOperator, A::Error> {
        let mut values = HashMap::new();
        while let Some(field) = map.next_key::<Field>()? {
            let v = field.read(&mut map)?;
            if values.insert(field, v).is_some() {
                return Err(de::Error::duplicate_field(field.as_str()));
            }
        }
        // Raised inside the table's deserialization, so the parser attaches
        // the table's position.
        build_operator(values)
            .map(FileOperator)
            .map_err(de::Error::custom)
    }
}

/// The document.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileDoc {
    name: String,
    #[serde(default)]
    phase: Phase,
    batch: Option<Positive>,
    seq_len: Option<Positive>,
    optimizer: Option<OptimizerKind>,
    operators: Vec<FileOperator>,
}

/// Line and column (1-based, in characters) of a byte offset.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    // Parser spans fall on character boundaries; `get` guards the rest.
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

/// The field an error is about: named in the message (serde's "missing
/// field `k`", ours "field `k`"), else the key of the `key = value` /
/// `"key": value` the position points into.
fn field_of(message: &str, text: &str, line: usize, col: usize) -> Option<String> {
    if let Some(rest) = message.split("field `").nth(1) {
        return rest.split('`').next().map(str::to_string);
    }
    let src = text.lines().nth(line.checked_sub(1)?)?;
    let upto: String = src.chars().take(col.saturating_sub(1)).collect();
    let sep = upto.rfind(['=', ':'])?;
    let key = upto[..sep]
        .rsplit([',', '{', ' ', '\t'])
        .find(|s| !s.is_empty())?
        .trim_matches('"');
    FIELD_NAMES
        .iter()
        .chain(
            [
                "name",
                "phase",
                "batch",
                "seq_len",
                "optimizer",
                "operators",
            ]
            .iter(),
        )
        .find(|f| **f == key)
        .map(|f| f.to_string())
}

fn file_error(path: &Path, text: &str, pos: Option<(usize, usize)>, message: String) -> ModelError {
    let field = pos.and_then(|(l, c)| field_of(&message, text, l, c));
    ModelError::File {
        path: path.to_path_buf(),
        line: pos.map(|p| p.0),
        column: pos.map(|p| p.1),
        field,
        message,
    }
}

fn parse_toml(path: &Path, text: &str) -> Result<FileDoc, ModelError> {
    toml::from_str(text).map_err(|e| {
        let pos = e.span().map(|s| line_col(text, s.start));
        file_error(path, text, pos, e.message().trim().to_string())
    })
}

fn parse_json(path: &Path, text: &str) -> Result<FileDoc, ModelError> {
    serde_json::from_str(text).map_err(|e| {
        let pos = (e.line() > 0).then(|| (e.line(), e.column()));
        let full = e.to_string();
        // serde_json appends " at line L column C"; the location is kept
        // separately.
        let message = match full.rfind(" at line ") {
            Some(i) => full[..i].to_string(),
            None => full,
        };
        file_error(path, text, pos, message)
    })
}

/// Parse a model file's text (`json` selects the format).
pub fn parse_model_file(path: &Path, text: &str, json: bool) -> Result<Model, ModelError> {
    let doc = if json {
        parse_json(path, text)?
    } else {
        parse_toml(path, text)?
    };
    let plain = |field: Option<&str>, message: String| ModelError::File {
        path: path.to_path_buf(),
        line: None,
        column: None,
        field: field.map(str::to_string),
        message,
    };
    if doc.operators.is_empty() {
        return Err(plain(
            Some("operators"),
            "the model has no operators".into(),
        ));
    }
    let forward: Vec<Operator> = doc.operators.into_iter().map(|o| o.0).collect();
    let derive = doc.phase == Phase::Training && !forward.iter().any(|o| o.backward);
    let operators = if derive {
        let params = param_count(&forward);
        training_iteration(forward, doc.optimizer.unwrap_or_default(), params)
    } else {
        forward
    };
    let model = Model {
        name: doc.name,
        phase: doc.phase,
        params: ModelParams {
            batch: doc
                .batch
                .map_or(1, |b| u32::try_from(b.0).unwrap_or(u32::MAX)),
            seq_len: doc.seq_len.map(|s| u32::try_from(s.0).unwrap_or(u32::MAX)),
            kv_len: None,
        },
        operators,
    };
    model.validate().map_err(|e| plain(None, e.to_string()))?;
    Ok(model)
}

/// Load a `.toml` or `.json` model file. Its shapes are fixed integers, so
/// parameter overrides are rejected.
pub fn load_model_file(path: &Path, params: &ParamsOverride) -> Result<Model, ModelError> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let json = match ext.as_deref() {
        Some("json") => true,
        Some("toml") => false,
        _ => {
            return Err(ModelError::UnsupportedFile {
                path: path.to_path_buf(),
            })
        }
    };
    let text = std::fs::read_to_string(path).map_err(|source| ModelError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let overridden = [
        ("batch", params.batch.is_some()),
        ("seq_len", params.seq_len.is_some()),
        ("kv_len", params.kv_len.is_some()),
    ];
    if let Some((param, _)) = overridden.iter().find(|(_, set)| *set) {
        return Err(ModelError::ParamNotApplicable {
            model: path.display().to_string(),
            param,
            reason: "a model file's shapes are fixed integers; edit the file instead".into(),
        });
    }
    parse_model_file(path, &text, json)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tally_gpu::KernelKind;

    const TINY_MLP: &str = include_str!("../examples-models/tiny-mlp.toml");
    const SMALL_CNN: &str = include_str!("../examples-models/small-cnn.json");

    fn toml_err(text: &str) -> (Option<usize>, Option<usize>, Option<String>, String) {
        match parse_model_file(Path::new("m.toml"), text, false) {
            Err(ModelError::File {
                line,
                column,
                field,
                message,
                ..
            }) => (line, column, field, message),
            other => panic!("expected a file error, got {other:?}"),
        }
    }

    const GEMM_HEAD: &str = "name = \"x\"\n\n[[operators]]\nname = \"fc\"\nop = \"gemm\"\n";

    #[test]
    fn examples_parse_and_lower() {
        let m = parse_model_file(Path::new("tiny-mlp.toml"), TINY_MLP, false).unwrap();
        assert_eq!(m.name, "tiny-mlp");
        assert_eq!(m.params.batch, 4096);
        assert_eq!(m.operators.len(), 5);
        assert_eq!(m.operators[2].repeat, 2);
        assert_eq!(m.launches().len(), 6);
        let c = parse_model_file(Path::new("small-cnn.json"), SMALL_CNN, true).unwrap();
        assert_eq!(c.phase, Phase::Training);
        // Forward, derived backward (reverse) and the SGD step.
        assert!(c.operators.iter().any(|o| o.backward));
        let last = c.operators.last().unwrap();
        assert!(matches!(
            last.op,
            OpKind::Optimizer {
                kind: OptimizerKind::Sgd,
                ..
            }
        ));
        assert_eq!(c.operators[9].name, "loss.nll.bwd");
        for k in c.launches() {
            k.validate().unwrap();
        }
    }

    #[test]
    fn zero_dimension_names_line_and_field() {
        let (line, col, field, msg) = toml_err(&format!("{GEMM_HEAD}m = 64\nn = 0\nk = 8\n"));
        assert_eq!((line, col), (Some(7), Some(5)));
        assert_eq!(field.as_deref(), Some("n"));
        assert!(msg.contains("> 0"), "{msg}");
    }

    #[test]
    fn unknown_wrong_type_and_foreign_fields() {
        let (line, _, field, msg) =
            toml_err(&format!("{GEMM_HEAD}m = 64\nn = 8\nk = 8\nfoo = 1\n"));
        assert_eq!(line, Some(9));
        assert_eq!(field.as_deref(), Some("foo"));
        assert!(msg.contains("unknown field"), "{msg}");

        let (line, _, field, _) = toml_err(&format!("{GEMM_HEAD}m = \"big\"\nn = 8\nk = 8\n"));
        assert_eq!(line, Some(6));
        assert_eq!(field.as_deref(), Some("m"));

        let (line, _, field, msg) = toml_err(&format!("{GEMM_HEAD}m = 1\nn = 8\nk = 8\nkh = 3\n"));
        assert!(line.is_some_and(|l| l >= 3));
        assert_eq!(field.as_deref(), Some("kh"));
        assert!(msg.contains("does not apply to op `gemm`"), "{msg}");

        let (_, _, field, msg) = toml_err(&format!("{GEMM_HEAD}m = 1\nn = 8\n"));
        assert_eq!(field.as_deref(), Some("k"));
        assert!(msg.contains("missing field"), "{msg}");

        let (line, _, field, _) = toml_err("name = \"x\"\nbatchh = 3\noperators = []\n");
        assert_eq!(line, Some(2));
        assert_eq!(field.as_deref(), Some("batchh"));
    }

    #[test]
    fn a_convolution_may_run_without_cudnn() {
        let conv = "name = \"x\"\noperators = [\n  { name = \"c\", op = \"conv2d\", n = 2, c_in = 8, h = 8, w = 8, c_out = 8, kh = 3, kw = 3, pad = 1";
        let native = parse_model_file(
            Path::new("m.toml"),
            &format!("{conv}, backend = \"native\" }},\n]\n"),
            false,
        )
        .unwrap();
        let kinds: Vec<KernelKind> = native.launches().iter().map(|k| k.kind).collect();
        // Per sample, im2col and a GEMM; no cuDNN kernel.
        assert_eq!(kinds.len(), 4, "{kinds:?}");
        assert!(!kinds.contains(&KernelKind::Conv));
        let cudnn =
            parse_model_file(Path::new("m.toml"), &format!("{conv} }},\n]\n"), false).unwrap();
        assert!(cudnn.launches().iter().all(|k| k.kind == KernelKind::Conv));
        let (line, _, field, msg) = toml_err(&format!("{conv}, backend = \"miopen\" }},\n]\n"));
        assert_eq!((line, field.as_deref()), (Some(3), Some("backend")));
        assert!(msg.contains("native"), "{msg}");
        let (_, _, field, msg) = toml_err(&format!(
            "{GEMM_HEAD}m = 1\nn = 8\nk = 8\nbackend = \"native\"\n"
        ));
        assert_eq!(field.as_deref(), Some("backend"));
        assert!(msg.contains("does not apply to op `gemm`"), "{msg}");
    }

    #[test]
    fn inconsistent_shape_names_field() {
        let text = "name = \"x\"\noperators = [\n  { name = \"c\", op = \"conv2d\", n = 1, c_in = 6, h = 8, w = 8, c_out = 8, kh = 3, kw = 3, groups = 4 },\n]\n";
        let (line, _, field, msg) = toml_err(text);
        assert_eq!(line, Some(3));
        assert_eq!(field.as_deref(), Some("groups"));
        assert!(msg.contains("must divide"), "{msg}");
    }

    #[test]
    fn a_recomputed_operator_owns_no_parameters_and_cannot_be_backward() {
        let gemm = "m = 64\nn = 8\nk = 8\n";
        let m = parse_model_file(
            Path::new("m.toml"),
            &format!("{GEMM_HEAD}{gemm}\n[[operators]]\nname = \"fc.recompute\"\nop = \"gemm\"\n{gemm}recompute = true\n"),
            false,
        )
        .unwrap();
        assert!(m.operators[1].recompute);
        assert_eq!(m.param_count(), 8 * 8);
        let (_, _, _, msg) = toml_err(&format!(
            "{GEMM_HEAD}{gemm}backward = true\nrecompute = true\n"
        ));
        assert!(msg.contains("recompute"), "{msg}");
    }

    #[test]
    fn syntax_error_has_position() {
        let (line, col, _, _) = toml_err("name = \"x\"\n[[operators]\n");
        assert_eq!(line, Some(2));
        assert!(col.is_some());
    }

    #[test]
    fn json_errors_name_line_and_field() {
        let text = "{\n  \"name\": \"x\",\n  \"operators\": [\n    { \"name\": \"fc\", \"op\": \"gemm\",\n      \"m\": 0, \"n\": 4, \"k\": 4 }\n  ]\n}\n";
        match parse_model_file(Path::new("m.json"), text, true) {
            Err(ModelError::File {
                line,
                column,
                field,
                message,
                ..
            }) => {
                assert_eq!(line, Some(5));
                assert!(column.is_some());
                assert_eq!(field.as_deref(), Some("m"));
                assert!(message.contains("> 0"), "{message}");
            }
            other => panic!("{other:?}"),
        }
        let err = parse_model_file(Path::new("m.json"), "{\"name\": 3}", true).unwrap_err();
        let shown = err.to_string();
        assert!(shown.starts_with("m.json:1:"), "{shown}");
        assert!(shown.contains("field `name`"), "{shown}");
    }

    #[test]
    fn overrides_and_extensions_are_rejected() {
        let dir = std::env::temp_dir().join(format!("tally-model-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("tiny.toml");
        std::fs::write(&path, TINY_MLP).unwrap();
        assert!(load_model_file(&path, &ParamsOverride::default()).is_ok());
        let err = load_model_file(
            &path,
            &ParamsOverride {
                batch: Some(2),
                ..ParamsOverride::default()
            },
        )
        .unwrap_err();
        assert!(matches!(
            err,
            ModelError::ParamNotApplicable { param: "batch", .. }
        ));
        let err = load_model_file(&dir.join("m.yaml"), &ParamsOverride::default()).unwrap_err();
        assert!(matches!(err, ModelError::UnsupportedFile { .. }));
        let err =
            load_model_file(&dir.join("missing.json"), &ParamsOverride::default()).unwrap_err();
        assert!(err.to_string().contains("missing.json"));
        std::fs::remove_dir_all(&dir).ok();
    }
}
