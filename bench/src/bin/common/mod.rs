//! What the measuring binaries share: the GPU they need, and the CSV file they fill.
use rgemm::Context;
use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Device `device`'s context, or (no GPU) the message and exit status 2 of binary `name`.
pub fn gpu(name: &str, device: usize) -> Result<Context, ExitCode> {
    Context::new(device).map_err(|e| {
        eprintln!("{name}: no GPU ({e}); it needs an NVIDIA GPU. Nothing was measured.");
        ExitCode::from(2)
    })
}

/// The CSV file asked for, opened before the run so that a path that cannot be written
/// costs no measurement.
pub struct Csv(Option<(PathBuf, File)>);

impl Csv {
    pub fn create(name: &str, path: Option<&Path>) -> Result<Csv, ExitCode> {
        match path {
            None => Ok(Csv(None)),
            Some(path) => match File::create(path) {
                Ok(file) => Ok(Csv(Some((path.to_path_buf(), file)))),
                Err(e) => {
                    eprintln!("{name}: cannot write {}: {e}", path.display());
                    Err(ExitCode::from(2))
                }
            },
        }
    }

    /// Writes `text` to the file, if one was asked for; says which file failed and why.
    pub fn finish(self, name: &str, text: &str) -> ExitCode {
        if let Some((path, mut file)) = self.0
            && let Err(e) = file.write_all(text.as_bytes()).and_then(|()| file.flush())
        {
            eprintln!("{name}: writing {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
        ExitCode::SUCCESS
    }
}
