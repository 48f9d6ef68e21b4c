//! Reading model files with a bound, and the other files a model reads.

use crate::tree::{self, Node};
use std::path::Path;

/// Most bytes of a model file. The largest catalogue model is a few
/// kilobytes and a generated model of ten thousand stations written out
/// about two megabytes; reading builds a located tree of about 45 bytes of
/// memory per byte of text (a 16 MiB file of 331,000 schedule steps
/// peaked at 713 MB), so the limit keeps loading under a gigabyte.
/// It is a property of the model format, the same on every machine (the
/// run's own memory limit, `--max-memory`, is the machine's), and an
/// endless device (`/dev/zero`) is refused after reading one byte past it.
pub const MAX_MODEL_FILE_BYTES: u64 = 16 << 20;

/// The text of a model file, read with the [`MAX_MODEL_FILE_BYTES`] bound;
/// the error says what was wrong (cannot open, too large, not UTF-8 text).
pub fn read_model_text(path: &Path) -> Result<String, String> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|file| file.take(MAX_MODEL_FILE_BYTES + 1).read_to_end(&mut bytes))
        .map_err(|e| format!("cannot read the model file: {e}"))?;
    if bytes.len() as u64 > MAX_MODEL_FILE_BYTES {
        return Err(format!(
            "the model file is too large: it goes on past {} bytes ({} MiB), the most a model file may hold; generate repeated stations with `count = N` groups instead of writing each out",
            MAX_MODEL_FILE_BYTES,
            MAX_MODEL_FILE_BYTES >> 20
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "the model file is not UTF-8 text (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        )
    })
}

/// The samples files a model's text names (`file = "..."` of `empirical`
/// distributions), resolved against the directory of `name` as loading
/// does, in file order; empty when the text does not parse. A sweep's
/// resume fingerprint covers their contents.
pub fn sample_files(name: &str, text: &str) -> Vec<std::path::PathBuf> {
    fn walk(node: &Node, base: &Path, out: &mut Vec<std::path::PathBuf>) {
        if let Some(entries) = node.table() {
            let empirical = matches!(
                node.get("dist").map(|d| &d.v),
                Some(tree::V::Str(s)) if s == "empirical"
            );
            for e in entries {
                if empirical
                    && e.key == "file"
                    && let tree::V::Str(f) = &e.node.v
                {
                    out.push(base.join(f));
                }
                walk(&e.node, base, out);
            }
        } else if let tree::V::Array(items) = &node.v {
            for it in items {
                walk(it, base, out);
            }
        }
    }
    let base = Path::new(name).parent().unwrap_or(Path::new(""));
    let mut out = Vec::new();
    if let Ok(root) = tree::parse_document(text) {
        walk(&root, base, &mut out);
    }
    out
}
