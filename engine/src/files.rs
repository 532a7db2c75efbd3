//! Writing a user's file so that a failure names it.

use std::path::Path;

/// Writes `contents` to `path`; an error (a full disk, a place not writable) names the file.
pub fn write_named(path: impl AsRef<Path>, contents: impl AsRef<[u8]>) -> std::io::Result<()> {
    let path = path.as_ref();
    std::fs::write(path, contents)
        .map_err(|e| std::io::Error::new(e.kind(), format!("writing {}: {e}", path.display())))
}

#[cfg(test)]
mod tests {
    /// `/dev/full` answers every write with ENOSPC, as a full disk does.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_full_disk_names_the_file() {
        let e = super::write_named("/dev/full", "x").expect_err("/dev/full is always full");
        assert!(e.to_string().starts_with("writing /dev/full: "), "{e}");
        assert_eq!(e.kind(), std::io::ErrorKind::StorageFull, "{e}");
    }
}
