//! Which NCCL release a design's jobs run. NCCL's tuner constants and some of its rules (which
//! GPU counts get NVLS, what a forced algorithm falls back to) changed from release to
//! release, and a measurement taken on an older release is only comparable with that release's
//! constants. The analysis maps a release to them; here is only the name and its order.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::str::FromStr;

/// An NCCL release, `major.minor.patch` (the `-1` package suffix and `+cuda…` build tags of
/// its version strings are not part of it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NcclRelease {
    pub major: u16,
    pub minor: u16,
    pub patch: u16,
}

impl NcclRelease {
    /// The release whose source the model's NCCL constants are read from (v2.30.7-1).
    pub const MODELLED: NcclRelease = NcclRelease::new(2, 30, 7);

    pub const fn new(major: u16, minor: u16, patch: u16) -> Self {
        NcclRelease {
            major,
            minor,
            patch,
        }
    }

    /// Whether this release comes before `major.minor.patch`.
    pub fn before(self, major: u16, minor: u16, patch: u16) -> bool {
        self < NcclRelease::new(major, minor, patch)
    }
}

impl fmt::Display for NcclRelease {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReleaseError {
    #[error("`{0}` is not an NCCL release: write major.minor.patch, e.g. 2.21.5")]
    Malformed(String),
    /// Well formed, but NCCL 2 is the only NCCL there is (1.x was single-node only and is
    /// long gone).
    #[error("there is no NCCL {0}: NCCL releases are numbered 2.x.y (the newest the model reads is {modelled})", modelled = NcclRelease::MODELLED)]
    NoSuchMajor(String),
}

impl FromStr for NcclRelease {
    type Err = ReleaseError;

    /// `2.21.5`, `v2.21.5-1`, `2.21.5+cuda12.3`: what NCCL's logs and tags print.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || ReleaseError::Malformed(s.to_string());
        let t = s.trim();
        let t = t.strip_prefix('v').unwrap_or(t);
        let t = t.split(['+', '-']).next().unwrap_or(t);
        let mut parts = t.split('.');
        let mut number = || -> Result<u16, ReleaseError> {
            parts.next().ok_or_else(bad)?.parse().map_err(|_| bad())
        };
        let release = NcclRelease::new(number()?, number()?, number()?);
        if parts.next().is_some() {
            return Err(bad());
        }
        if release.major != 2 {
            return Err(ReleaseError::NoSuchMajor(release.to_string()));
        }
        Ok(release)
    }
}

impl Serialize for NcclRelease {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for NcclRelease {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn releases_parse_as_nccl_prints_them_and_order_by_number() {
        let r: NcclRelease = "2.21.5".parse().expect("parses");
        assert_eq!(r, NcclRelease::new(2, 21, 5));
        assert_eq!("v2.21.5-1".parse(), Ok(r));
        assert_eq!("2.21.5+cuda12.3".parse(), Ok(r));
        assert_eq!(r.to_string(), "2.21.5");
        // 2.9.9 is older than 2.18.5: numbers, not strings, order them.
        let old: NcclRelease = "2.9.9".parse().expect("parses");
        assert!(old < NcclRelease::new(2, 18, 5));
        assert!(old.before(2, 12, 0));
        assert!(!NcclRelease::MODELLED.before(2, 30, 7));
        for bad in ["2.21", "2.21.5.1", "3.0.0", "two", ""] {
            assert!(bad.parse::<NcclRelease>().is_err(), "{bad}");
        }
        // A well-formed number that is no release says so, not how to write one.
        assert_eq!(
            "9.9.9".parse::<NcclRelease>().unwrap_err().to_string(),
            "there is no NCCL 9.9.9: NCCL releases are numbered 2.x.y (the newest the model reads is 2.30.7)"
        );
    }
}
