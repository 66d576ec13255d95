//! On-disk cache of program binaries, so that a second `lift run` of the same kernel skips
//! the OpenCL C compiler (hundreds of milliseconds on PoCL, more for big kernels on GPUs).
//!
//! Every failure here is swallowed: the cache only ever saves time, and a read-only or
//! missing cache directory must not stop a run.

use std::fs;
use std::path::{Path, PathBuf};

/// Bumped whenever the key or file layout changes, so old files are never misread.
const FORMAT: &str = "lift-program-cache-v1";
const MAGIC: &[u8; 8] = b"LIFTCLB1";

/// `$LIFT_CACHE_DIR`, else `$XDG_CACHE_HOME/lift`, else `~/.cache/lift`.
pub fn default_cache_dir() -> Option<PathBuf> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(dir) = var("LIFT_CACHE_DIR") {
        return Some(dir);
    }
    if let Some(dir) = var("XDG_CACHE_HOME") {
        return Some(dir.join("lift"));
    }
    var("HOME").map(|home| home.join(".cache").join("lift"))
}

/// FNV-1a, 64 bit. Written out here because std's hashers are not stable across releases,
/// and cache file names must be.
pub(crate) fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// Everything a binary depends on. The full key is stored in the file and compared on load,
/// so a hash collision costs a rebuild, never a wrong program.
pub(crate) struct Key(Vec<u8>);

impl Key {
    pub fn new(fields: &[&str]) -> Key {
        let mut k = Vec::new();
        // Length prefixes keep field boundaries unambiguous ("ab"+"c" vs "a"+"bc").
        for f in std::iter::once(&FORMAT).chain(fields) {
            k.extend_from_slice(&(f.len() as u64).to_le_bytes());
            k.extend_from_slice(f.as_bytes());
        }
        Key(k)
    }

    fn file(&self, dir: &Path) -> PathBuf {
        dir.join("opencl").join(format!("{:016x}.clbin", fnv1a64(&self.0)))
    }
}

fn encode(key: &Key, binary: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(8 + 16 + key.0.len() + binary.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(key.0.len() as u64).to_le_bytes());
    out.extend_from_slice(&key.0);
    out.extend_from_slice(&(binary.len() as u64).to_le_bytes());
    out.extend_from_slice(binary);
    out
}

fn decode(key: &Key, file: &[u8]) -> Option<Vec<u8>> {
    let rest = file.strip_prefix(MAGIC.as_slice())?;
    let (stored_key, rest) = take_sized(rest)?;
    if stored_key != key.0.as_slice() {
        return None;
    }
    let (binary, rest) = take_sized(rest)?;
    // Trailing bytes mean a torn or foreign file.
    (rest.is_empty() && !binary.is_empty()).then(|| binary.to_vec())
}

fn take_sized(bytes: &[u8]) -> Option<(&[u8], &[u8])> {
    let (len, rest) = bytes.split_first_chunk::<8>()?;
    let len = usize::try_from(u64::from_le_bytes(*len)).ok()?;
    (len <= rest.len()).then(|| rest.split_at(len))
}

pub(crate) fn load(dir: &Path, key: &Key) -> Option<Vec<u8>> {
    decode(key, &fs::read(key.file(dir)).ok()?)
}

/// Writes through a temporary file and a rename, so a concurrent `lift run` never reads a
/// half-written binary.
pub(crate) fn store(dir: &Path, key: &Key, binary: &[u8]) {
    let path = key.file(dir);
    let Some(parent) = path.parent() else { return };
    if fs::create_dir_all(parent).is_err() {
        return;
    }
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    if fs::write(&tmp, encode(key, binary)).is_err() || fs::rename(&tmp, &path).is_err() {
        let _ = fs::remove_file(&tmp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a64_matches_reference_vectors() {
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn key_fields_are_length_prefixed() {
        assert_ne!(Key::new(&["ab", "c"]).0, Key::new(&["a", "bc"]).0);
    }

    #[test]
    fn encode_decode_round_trip_and_reject() {
        let key = Key::new(&["dev", "src"]);
        let file = encode(&key, b"binary");
        assert_eq!(decode(&key, &file).as_deref(), Some(&b"binary"[..]));
        assert_eq!(decode(&Key::new(&["dev", "other"]), &file), None);
        assert_eq!(decode(&key, &file[..file.len() - 1]), None);
        let mut longer = file.clone();
        longer.push(0);
        assert_eq!(decode(&key, &longer), None);
        assert_eq!(decode(&key, b"garbage"), None);
    }

    #[test]
    fn store_into_unwritable_place_is_silent() {
        let key = Key::new(&["x"]);
        // A regular file where a directory should be: create_dir_all fails.
        let base = std::env::temp_dir().join(format!("lift-hr-cache-file-{}", std::process::id()));
        fs::write(&base, b"not a dir").unwrap();
        store(&base, &key, b"bin");
        assert_eq!(load(&base, &key), None);
        let _ = fs::remove_file(&base);
    }
}
