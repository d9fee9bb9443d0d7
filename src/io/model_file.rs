//! Transformer model files (RON): `(name: "gpt-1t", layers: 128, hidden: 25600, ffn: 102400,
//! heads: 160, kv_heads: 160, vocab: 51200, seq_len: 2048)`, checked before use.

use crate::analysis::job::ModelSpec;
use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum ModelFileError {
    #[error("could not read {path}: {}", super::plain_error::plain_io(.error))]
    Read { path: String, error: std::io::Error },
    #[error("{origin}:{line}:{column}: {message}")]
    Syntax {
        origin: String,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{origin}: {message}")]
    Invalid { origin: String, message: String },
}

/// Reads and checks a model from RON text; `origin` names it in errors.
pub fn parse_model(text: &str, origin: &str) -> Result<ModelSpec, ModelFileError> {
    // Optional fields are written bare (`kv_heads: 8`), as the documented format shows.
    let options =
        ron::Options::default().with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME);
    let model: ModelSpec = options.from_str(text).map_err(|e| ModelFileError::Syntax {
        origin: origin.to_string(),
        line: e.span.start.line,
        column: e.span.start.col,
        message: super::plain_error::plain(&e.code),
    })?;
    model
        .validate()
        .map_err(|message| ModelFileError::Invalid {
            origin: origin.to_string(),
            message,
        })?;
    Ok(model)
}

pub fn load_model(path: &Path) -> Result<ModelSpec, ModelFileError> {
    let text = std::fs::read_to_string(path).map_err(|error| ModelFileError::Read {
        path: path.display().to_string(),
        error,
    })?;
    parse_model(&text, &path.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_issue_example_reads_and_a_bad_file_names_line_and_column() {
        let m = parse_model(
            r#"(name: "gpt-1t", layers: 128, hidden: 25600, ffn: 102400, heads: 160, kv_heads: 160, vocab: 51200, seq_len: 2048)"#,
            "gpt-1t.ron",
        )
        .expect("valid");
        assert_eq!(m.layers, 128);
        assert_eq!(m.kv_heads, Some(160));
        // The Megatron 1T model: 12·l·h² + V·h (untied here: 2·V·h) parameters.
        let (l, h, v) = (128.0, 25600.0_f64, 51200.0);
        assert_eq!(m.params(), 12.0 * l * h * h + 2.0 * v * h);
        let e = parse_model("(name: \"x\",\n  layers: twelve)", "bad.ron").unwrap_err();
        assert!(e.to_string().starts_with("bad.ron:2:10"), "{e}");
        let e = parse_model(
            r#"(name: "x", layers: 2, hidden: 100, ffn: 400, heads: 3, vocab: 10, seq_len: 8)"#,
            "odd.ron",
        )
        .unwrap_err();
        assert!(e.to_string().contains("multiple of heads"), "{e}");
    }
}
