//! A fast hash for looking words up in the fixed vocabularies of the rules.
//!
//! Every token of every text is looked up, and the standard SipHash costs more than the rest of
//! the lookup for words this short. FNV-1a is enough here: the tables are built from the rules,
//! not from what a server sends, so nobody outside can fill a bucket. (The scan cache, keyed by
//! served texts, keeps the standard hasher.)

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A `HashMap` keyed by words of a fixed vocabulary.
pub type WordMap<K, V> = HashMap<K, V, BuildHasherDefault<WordHasher>>;

/// 64-bit FNV-1a.
#[derive(Debug, Clone, Copy)]
pub struct WordHasher(u64);

const OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
const PRIME: u64 = 0x0000_0100_0000_01b3;

impl Default for WordHasher {
    fn default() -> Self {
        WordHasher(OFFSET_BASIS)
    }
}

impl Hasher for WordHasher {
    fn write(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 = (self.0 ^ u64::from(*byte)).wrapping_mul(PRIME);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    #[test]
    fn known_fnv1a_values() {
        let hash = |bytes: &[u8]| {
            let mut hasher = WordHasher::default();
            hasher.write(bytes);
            hasher.finish()
        };
        // Reference values of 64-bit FNV-1a.
        assert_eq!(hash(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(hash(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(hash(b"foobar"), 0x8594_4171_f739_67e8);
        let build = BuildHasherDefault::<WordHasher>::default();
        assert_eq!(build.hash_one("user"), build.hash_one("user"));
        assert_ne!(build.hash_one("user"), build.hash_one("users"));
    }

    #[test]
    fn works_as_a_map_hasher() {
        let mut map: WordMap<&str, usize> = WordMap::default();
        for (i, word) in ["send", "secret", "user", "users"].into_iter().enumerate() {
            map.insert(word, i);
        }
        assert_eq!(map.get("users"), Some(&3));
        assert_eq!(map.get("use"), None);
    }
}
