//! Technologies and rates as people write them: `InfiniBand`, `IB`, `RoCE`; `400G`,
//! `400 Gb/s`, `100GbE`, `1.6T`, `2 × 400 Gb/s`; and the link labels our exports print
//! (`InfiniBand 400 Gb/s`, `NVLink 18 × 400 Gb/s`). Bytes per second (`GB/s`) are read as
//! bytes and converted; a bare `GB` is refused as ambiguous.

use crate::model::{Bandwidth, LinkTech};

/// A technology by its label in the app (any case, spaces optional) or a common short name.
pub fn parse_technology(text: &str) -> Result<LinkTech, String> {
    let key: String = text
        .chars()
        .filter(|c| !matches!(c, ' ' | '-' | '_'))
        .flat_map(char::to_lowercase)
        .collect();
    let tech = match key.as_str() {
        "nvlink" => LinkTech::NvLink,
        "nvlinkbridge" => LinkTech::NvLinkBridge,
        "pcie" => LinkTech::Pcie,
        "ethernet" | "eth" => LinkTech::Ethernet,
        "rocev2" | "roce" => LinkTech::RoceV2,
        "infiniband" | "ib" => LinkTech::InfiniBand,
        "thunderbolt4" | "tb4" => LinkTech::Thunderbolt4,
        "thunderbolt5" | "tb5" => LinkTech::Thunderbolt5,
        _ => {
            let names: Vec<&str> = LinkTech::ALL.iter().map(|t| t.label()).collect();
            return Err(format!(
                "`{text}` is not a technology; one of {}",
                names.join(", ")
            ));
        }
    };
    Ok(tech)
}

/// Lanes and the rate of one lane: `400G` is one lane of 400 Gb/s, `2 × 400 Gb/s` and
/// `2x400G` two. A number without a unit is Gb/s.
pub fn parse_rate(text: &str) -> Result<(u32, Bandwidth), String> {
    let trimmed = text.trim();
    let bundle = trimmed
        .split_once(['×', 'x', 'X'])
        .and_then(|(lanes, rate)| Some((lanes.trim().parse::<u32>().ok()?, rate.trim())));
    let (lanes, rate) = bundle.unwrap_or((1, trimmed));
    if lanes == 0 {
        return Err(format!("`{text}`: a link needs at least one lane"));
    }
    let split = rate
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(rate.len());
    let (number, unit) = rate.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a rate like 400G, 400 Gb/s or 100GbE"))?;
    let unit: String = unit.chars().filter(|c| *c != ' ').collect();
    // Case matters for the b: Gb/s are bits, GB/s bytes.
    let gbit_per_unit = match unit.as_str() {
        "" | "G" | "g" | "Gb/s" | "Gbps" | "Gbit/s" | "GbE" | "GE" | "Gb" | "gb/s" | "gbps" => 1.0,
        "T" | "t" | "Tb/s" | "Tbps" | "Tbit/s" | "TbE" => 1000.0,
        "M" | "m" | "Mb/s" | "Mbps" | "Mbit/s" => 0.001,
        "GB/s" | "GBps" => 8.0,
        "TB/s" | "TBps" => 8000.0,
        _ => {
            return Err(format!(
                "`{text}`: unknown unit `{unit}`; write Gb/s (bits) or GB/s (bytes), e.g. 400G"
            ));
        }
    };
    let gbit_s = value * gbit_per_unit;
    if !(gbit_s.is_finite() && gbit_s > 0.0) {
        return Err(format!("`{text}`: a rate must be more than zero"));
    }
    Ok((lanes, Bandwidth::from_gbit_s(gbit_s)))
}

/// A link label as our exports write it: the technology's label, then the rate (with
/// lanes): `InfiniBand 400 Gb/s`, `NVLink bridge 2 × 112.5 Gb/s`.
pub fn parse_link_label(text: &str) -> Result<(LinkTech, u32, Bandwidth), String> {
    let text = text.trim();
    // Longest label first: "NVLink bridge" before "NVLink".
    let mut techs = LinkTech::ALL;
    techs.sort_by_key(|t| std::cmp::Reverse(t.label().len()));
    for tech in techs {
        let label = tech.label();
        if text.len() >= label.len()
            && text.is_char_boundary(label.len())
            && text[..label.len()].eq_ignore_ascii_case(label)
        {
            let (lanes, rate) = parse_rate(&text[label.len()..])?;
            return Ok((tech, lanes, rate));
        }
    }
    // "IB 400G", "RoCE 100GbE": a short name, then the rate.
    let (tech, rate) = text
        .split_once(' ')
        .ok_or_else(|| format!("`{text}` is not a label like `InfiniBand 400 Gb/s`"))?;
    let tech = parse_technology(tech)?;
    let (lanes, rate) = parse_rate(rate)?;
    Ok((tech, lanes, rate))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gbit(text: &str) -> (u32, f64) {
        let (lanes, rate) = parse_rate(text).unwrap();
        (lanes, rate.gbit_s())
    }

    #[test]
    fn rates_as_people_write_them() {
        assert_eq!(gbit("400G"), (1, 400.0));
        assert_eq!(gbit("400 Gb/s"), (1, 400.0));
        assert_eq!(gbit("100GbE"), (1, 100.0));
        assert_eq!(gbit("1.6 Tb/s"), (1, 1600.0));
        assert_eq!(gbit("25"), (1, 25.0));
        assert_eq!(gbit("2 × 400 Gb/s"), (2, 400.0));
        assert_eq!(gbit("4x100G"), (4, 100.0));
        // Bytes are bytes.
        assert_eq!(gbit("50 GB/s"), (1, 400.0));
        assert!(parse_rate("400GB").is_err());
        assert!(parse_rate("fast").is_err());
        assert!(parse_rate("0G").is_err());
    }

    #[test]
    fn labels_our_exports_write_read_back() {
        for tech in LinkTech::ALL {
            let label = format!("{} 3 × {}", tech.label(), Bandwidth::from_gbit_s(112.5));
            let (t, lanes, rate) = parse_link_label(&label).unwrap();
            assert_eq!((t, lanes, rate.gbit_s()), (tech, 3, 112.5), "{label}");
            assert_eq!(parse_technology(tech.label()), Ok(tech));
        }
        assert_eq!(
            parse_link_label("IB 400G").map(|(t, l, _)| (t, l)),
            Ok((LinkTech::InfiniBand, 1))
        );
        assert!(parse_technology("carrier pigeon").is_err());
    }
}
