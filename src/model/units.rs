//! Typed quantities. Bits versus bytes per second is the classic error of this field, so a
//! bandwidth is never a bare number: it is a `Bandwidth`, built and read through named units.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::ops::{Add, AddAssign, Div, Mul, Sub};

/// A data rate in one direction. Stored in Gb/s (bits); files write it as a plain number in
/// fields whose names end in `_gbit_s`.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Bandwidth {
    gbit_s: f64,
}

impl Bandwidth {
    pub const ZERO: Bandwidth = Bandwidth { gbit_s: 0.0 };

    pub const fn from_gbit_s(gbit_s: f64) -> Self {
        Self { gbit_s }
    }
    pub fn from_gbyte_s(gbyte_s: f64) -> Self {
        Self {
            gbit_s: gbyte_s * 8.0,
        }
    }
    pub fn from_bytes_per_s(bytes_per_s: f64) -> Self {
        Self {
            gbit_s: bytes_per_s * 8.0 / 1e9,
        }
    }
    pub fn gbit_s(self) -> f64 {
        self.gbit_s
    }
    pub fn gbyte_s(self) -> f64 {
        self.gbit_s / 8.0
    }
    pub fn bytes_per_s(self) -> f64 {
        self.gbit_s * 1e9 / 8.0
    }
    pub fn is_finite_non_negative(self) -> bool {
        self.gbit_s.is_finite() && self.gbit_s >= 0.0
    }
    pub fn min(self, other: Self) -> Self {
        if self.gbit_s <= other.gbit_s {
            self
        } else {
            other
        }
    }
    pub fn max(self, other: Self) -> Self {
        if self.gbit_s >= other.gbit_s {
            self
        } else {
            other
        }
    }
}

impl Add for Bandwidth {
    type Output = Self;
    fn add(self, rhs: Self) -> Self {
        Self::from_gbit_s(self.gbit_s + rhs.gbit_s)
    }
}
impl AddAssign for Bandwidth {
    fn add_assign(&mut self, rhs: Self) {
        self.gbit_s += rhs.gbit_s;
    }
}
impl Sub for Bandwidth {
    type Output = Self;
    fn sub(self, rhs: Self) -> Self {
        Self::from_gbit_s(self.gbit_s - rhs.gbit_s)
    }
}
impl Mul<f64> for Bandwidth {
    type Output = Self;
    fn mul(self, k: f64) -> Self {
        Self::from_gbit_s(self.gbit_s * k)
    }
}
impl Div<f64> for Bandwidth {
    type Output = Self;
    fn div(self, k: f64) -> Self {
        Self::from_gbit_s(self.gbit_s / k)
    }
}
impl Div for Bandwidth {
    type Output = f64;
    fn div(self, rhs: Self) -> f64 {
        self.gbit_s / rhs.gbit_s
    }
}
impl std::iter::Sum for Bandwidth {
    fn sum<I: Iterator<Item = Self>>(iter: I) -> Self {
        iter.fold(Self::ZERO, |a, b| a + b)
    }
}

impl fmt::Display for Bandwidth {
    /// Network people speak bits: "400 Gb/s", "1.6 Tb/s", "13.1 Pb/s".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let g = self.gbit_s;
        if g >= 1e6 {
            write!(f, "{} Pb/s", trim_number(g / 1e6))
        } else if g >= 1000.0 {
            write!(f, "{} Tb/s", trim_number(g / 1000.0))
        } else if g >= 1.0 {
            write!(f, "{} Gb/s", trim_number(g))
        } else {
            write!(f, "{} Mb/s", trim_number(g * 1000.0))
        }
    }
}

/// Money in US dollars.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Usd(pub f64);

impl Add for Usd {
    type Output = Self;
    fn add(self, rhs: Self) -> Self {
        Usd(self.0 + rhs.0)
    }
}
impl AddAssign for Usd {
    fn add_assign(&mut self, rhs: Self) {
        self.0 += rhs.0;
    }
}
impl Mul<f64> for Usd {
    type Output = Self;
    fn mul(self, k: f64) -> Self {
        Usd(self.0 * k)
    }
}
impl std::iter::Sum for Usd {
    fn sum<I: Iterator<Item = Self>>(iter: I) -> Self {
        iter.fold(Usd(0.0), |a, b| a + b)
    }
}
impl fmt::Display for Usd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "${}", group_thousands(self.0.round() as i64))
    }
}

impl Usd {
    /// The amount as people say it on a slide: "$11.2M", "$950K", "$1.23B"; under $10,000
    /// to the dollar ("$9,999").
    pub fn compact(self) -> String {
        let x = self.0;
        let sign = if x < 0.0 { "-" } else { "" };
        let a = x.abs();
        let (value, suffix) = if a >= 1e9 {
            (a / 1e9, "B")
        } else if a >= 1e6 {
            (a / 1e6, "M")
        } else if a >= 1e4 {
            (a / 1e3, "K")
        } else {
            return self.to_string();
        };
        format!("{sign}${}{suffix}", significant(value, 3))
    }

    /// A total as a headline: the slide's figure, then the exact one where they differ
    /// ("$11.8M ($11,802,752)"; "$9,999").
    pub fn headline(self) -> String {
        let (compact, exact) = (self.compact(), self.to_string());
        if compact == exact {
            exact
        } else {
            format!("{compact} ({exact})")
        }
    }
}

/// Electrical power in watts.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Watts(pub f64);

impl Add for Watts {
    type Output = Self;
    fn add(self, rhs: Self) -> Self {
        Watts(self.0 + rhs.0)
    }
}
impl AddAssign for Watts {
    fn add_assign(&mut self, rhs: Self) {
        self.0 += rhs.0;
    }
}
impl Mul<f64> for Watts {
    type Output = Self;
    fn mul(self, k: f64) -> Self {
        Watts(self.0 * k)
    }
}
impl std::iter::Sum for Watts {
    fn sum<I: Iterator<Item = Self>>(iter: I) -> Self {
        iter.fold(Watts(0.0), |a, b| a + b)
    }
}
impl fmt::Display for Watts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 >= 1e6 {
            write!(f, "{} MW", significant(self.0 / 1e6, 3))
        } else if self.0 >= 1000.0 {
            write!(f, "{} kW", trim_number(self.0 / 1000.0))
        } else {
            write!(f, "{} W", trim_number(self.0))
        }
    }
}

/// A message or buffer size in bytes.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Bytes(pub u64);

impl fmt::Display for Bytes {
    /// Binary multiples, as nccl-tests sizes are.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
        let mut value = self.0 as f64;
        let mut unit = 0;
        while value >= 1024.0 && unit < UNITS.len() - 1 {
            value /= 1024.0;
            unit += 1;
        }
        write!(f, "{} {}", trim_number(value), UNITS[unit])
    }
}

/// A duration given in µs, in µs, ms, s, min or h, whichever reads best: "150.8 µs",
/// "3.24 s", "12.2 h".
pub fn time_text(us: f64) -> String {
    const MINUTE_US: f64 = 60e6;
    const HOUR_US: f64 = 3600e6;
    if us >= HOUR_US {
        format!("{} h", significant(us / HOUR_US, 3))
    } else if us >= MINUTE_US {
        format!("{} min", significant(us / MINUTE_US, 3))
    } else if us >= 1_000_000.0 {
        format!("{:.2} s", us / 1_000_000.0)
    } else if us >= 1000.0 {
        format!("{:.2} ms", us / 1000.0)
    } else {
        format!("{us:.1} µs")
    }
}

/// `x` to `digits` significant figures (at least the whole part), no trailing zeros:
/// 90.288 → "90.3", 1.2345 → "1.23", 1234.6 → "1235".
pub fn significant(x: f64, digits: i32) -> String {
    if x == 0.0 || !x.is_finite() {
        return trim_number(x);
    }
    let s = significant_padded(x, digits);
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// `x` to `digits` significant figures (at least the whole part), trailing zeros kept:
/// 40.95 → "41.0", 4.0002 → "4.00", so figures side by side show the same precision.
pub fn significant_padded(x: f64, digits: i32) -> String {
    if x == 0.0 || !x.is_finite() {
        return trim_number(x);
    }
    let whole_digits = x.abs().log10().floor() as i32 + 1;
    let decimals = (digits - whole_digits).max(0) as usize;
    format!("{x:.decimals$}")
}

/// US dollars to the cent, or to two significant digits under a cent ("0.0042"): a price per
/// million tokens can be that small, and "$0.00" would read as free.
pub fn cents_or_less(usd: f64) -> String {
    if usd == 0.0 || usd.abs() >= 0.01 || !usd.is_finite() {
        format!("{usd:.2}")
    } else {
        significant(usd, 2)
    }
}

/// Prints a number with at most two decimals and no trailing zeros.
pub fn trim_number(x: f64) -> String {
    let s = format!("{x:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

/// "1 switch", "24 switches", "1,024 links".
pub fn count_of(n: usize, one: &str, many: &str) -> String {
    format!(
        "{} {}",
        group_thousands(n as i64),
        if n == 1 { one } else { many }
    )
}

/// 1234567 -> "1,234,567".
pub fn group_thousands(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 + 1);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 { format!("-{out}") } else { out }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prices_under_a_cent_keep_two_significant_digits() {
        assert_eq!(cents_or_less(0.4412), "0.44");
        assert_eq!(cents_or_less(0.004_213), "0.0042");
        assert_eq!(cents_or_less(0.0), "0.00");
        assert_eq!(cents_or_less(12.0), "12.00");
    }

    #[test]
    fn bits_and_bytes_do_not_mix() {
        let ndr = Bandwidth::from_gbit_s(400.0);
        assert_eq!(ndr.gbyte_s(), 50.0);
        assert_eq!(Bandwidth::from_gbyte_s(50.0), ndr);
        assert_eq!(ndr.bytes_per_s(), 50e9);
    }

    #[test]
    fn display_is_readable() {
        assert_eq!(Bandwidth::from_gbit_s(400.0).to_string(), "400 Gb/s");
        assert_eq!(Bandwidth::from_gbit_s(25.6e3).to_string(), "25.6 Tb/s");
        // The bisection of 8,192 DGX at 400 Gb/s a GPU: 65,536 × 400 / 2 Gb/s.
        assert_eq!(
            Bandwidth::from_gbit_s(13_107_200.0).to_string(),
            "13.11 Pb/s"
        );
        assert_eq!(Usd(1_234_567.4).to_string(), "$1,234,567");
        assert_eq!(Watts(10_200.0).to_string(), "10.2 kW");
        assert_eq!(Bytes(8 << 30).to_string(), "8 GiB");
        assert_eq!(group_thousands(-1000), "-1,000");
    }

    #[test]
    fn large_figures_scale_their_unit() {
        // The figures: 90288.13 kW and 44014.78 s as people say them.
        assert_eq!(Watts(90_288_130.0).to_string(), "90.3 MW");
        assert_eq!(Watts(1_000_000.0).to_string(), "1 MW");
        assert_eq!(Watts(999_000.0).to_string(), "999 kW");
        assert_eq!(time_text(44_014.78e6), "12.2 h");
        assert_eq!(time_text(90e6), "1.5 min");
        assert_eq!(time_text(59.5e6), "59.50 s");
        assert_eq!(time_text(3242.32e3), "3.24 s");
        assert_eq!(time_text(150.84), "150.8 µs");
        assert_eq!(Usd(11_180_000.0).compact(), "$11.2M");
        assert_eq!(Usd(950_400.0).compact(), "$950K");
        assert_eq!(Usd(1_234_000_000.0).compact(), "$1.23B");
        assert_eq!(Usd(9_999.0).compact(), "$9,999");
        assert_eq!(Usd(11_802_752.0).headline(), "$11.8M ($11,802,752)");
        assert_eq!(Usd(9_999.0).headline(), "$9,999");
        assert_eq!(Usd(-25_000.0).compact(), "-$25K");
        assert_eq!(significant(1234.6, 3), "1235");
        assert_eq!(significant(0.0, 3), "0");
    }
}
