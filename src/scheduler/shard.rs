//! `--shard i/n` and the stable name hash it (and jitter) use.

/// First 8 bytes of SHA-256 of the name: stable across versions and hosts
/// (std's hasher is not), used for jitter and `--shard`.
pub fn stable_hash(name: &str) -> u64 {
    use sha2::{Digest, Sha256};
    let d = Sha256::digest(name.as_bytes());
    u64::from_be_bytes([d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7]])
}

/// `--shard i/n`: keep the targets whose stable hash falls in shard i.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: u64,
    pub count: u64,
}

impl Shard {
    pub fn parse(s: &str) -> Result<Shard, String> {
        let (i, n) = s
            .split_once('/')
            .ok_or_else(|| format!("--shard {s:?} is not i/n"))?;
        let index: u64 = i
            .trim()
            .parse()
            .map_err(|_| format!("--shard {s:?}: bad index"))?;
        let count: u64 = n
            .trim()
            .parse()
            .map_err(|_| format!("--shard {s:?}: bad count"))?;
        if count == 0 || index >= count {
            return Err(format!("--shard {s:?}: need 0 <= i < n"));
        }
        Ok(Shard { index, count })
    }

    pub fn keeps(&self, target: &str) -> bool {
        stable_hash(target) % self.count == self.index
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_partition_targets() {
        let shards: Vec<Shard> = (0..3).map(|i| Shard { index: i, count: 3 }).collect();
        for n in 0..100 {
            let name = format!("target-{n}");
            assert_eq!(shards.iter().filter(|s| s.keeps(&name)).count(), 1);
        }
        assert!(Shard::parse("3/3").is_err());
        assert!(Shard::parse("0/0").is_err());
        assert_eq!(Shard::parse("1/4").unwrap(), Shard { index: 1, count: 4 });
    }
}
