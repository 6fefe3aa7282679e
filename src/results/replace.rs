//! Writing a file of a results directory whole: into a new file beside it, then renamed
//! over it. A reader never sees half of it, and a symbolic link planted in the directory
//! (at the file's name or at its temporary one) is replaced or refused, never written
//! through to a file outside.

use std::fs;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

/// Writes `bytes` as `path`: a new file created beside it (O_EXCL: never an existing
/// file or link), then renamed over `path` (which replaces a link there, not its target).
pub fn replace(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let tmp = temporary(path)?;
    let written = create_new(&tmp)
        .and_then(|mut file| file.write_all(bytes).and_then(|()| file.sync_data()))
        .and_then(|()| fs::rename(&tmp, path));
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written
}

/// A new file at `path`, created by this call: an entry already there (a link planted
/// at the name, or a temporary file a killed writer left) is removed first, never opened.
fn create_new(path: &Path) -> io::Result<fs::File> {
    let open = || {
        fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
    };
    match open() {
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            fs::remove_file(path)?;
            open()
        }
        other => other,
    }
}

/// `.NAME.tmp` beside `path`.
fn temporary(path: &Path) -> io::Result<PathBuf> {
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no file name"))?;
    let mut tmp = std::ffi::OsString::from(".");
    tmp.push(name);
    tmp.push(".tmp");
    Ok(path.with_file_name(tmp))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_planted_link_is_replaced_and_its_target_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("outside.txt");
        fs::write(&outside, "keep").unwrap();
        let inside = dir.path().join("results");
        fs::create_dir(&inside).unwrap();
        let report = inside.join("report.html");
        std::os::unix::fs::symlink(&outside, &report).unwrap();
        std::os::unix::fs::symlink(&outside, inside.join(".report.html.tmp")).unwrap();
        replace(&report, b"new").unwrap();
        assert_eq!(fs::read_to_string(&outside).unwrap(), "keep");
        assert_eq!(fs::read_to_string(&report).unwrap(), "new");
        assert!(!fs::symlink_metadata(&report)
            .unwrap()
            .file_type()
            .is_symlink());
        assert!(!inside.join(".report.html.tmp").exists());
    }
}
