//! What one link is and carries, in words: the canvas's hover card and the inspector's load
//! row say the same thing from here.

use crate::analysis::collective::CollectiveResult;
use crate::model::{Design, Link, LinkId, LinkState};
use std::collections::HashMap;

/// Each link's load under the collective the sidebar asks about, and what that collective
/// was: the analysis's, whether or not the heatmap colours the links. Unknown, with why, when
/// the collective could not be worked out.
pub enum LinkLoads<'a> {
    Known {
        /// Busy time over the collective's bandwidth term: 1.0 for its bottleneck.
        utilisation: &'a HashMap<LinkId, f64>,
        /// "all-reduce of 1 GiB (ring/Simple)".
        collective: String,
    },
    /// The collective failed: "not connected: no working path from gpu-1 to gpu-9".
    Unknown { why: String },
}

impl<'a> LinkLoads<'a> {
    pub fn of(utilisation: &'a HashMap<LinkId, f64>, result: &CollectiveResult) -> Self {
        Self::Known {
            utilisation,
            collective: format!(
                "{} of {} ({})",
                result.op,
                result.bytes,
                result.algorithm_text()
            ),
        }
    }

    /// The link's share of the bottleneck's load, in words.
    pub fn line(&self, link: LinkId) -> String {
        let (utilisation, collective) = match self {
            Self::Known {
                utilisation,
                collective,
            } => (utilisation, collective),
            Self::Unknown { why } => {
                return format!(
                    "unknown: the sidebar's collective could not be worked out ({why})"
                );
            }
        };
        match utilisation.get(&link) {
            Some(&u) if u >= 0.995 => format!("the bottleneck of the {collective}"),
            Some(&u) => format!(
                "{:.0} % of the bottleneck's load in the {collective}",
                u * 100.0,
            ),
            None => format!("carries nothing in the {collective}"),
        }
    }
}

/// "RoCEv2, 400 Gb/s × 2 lanes = 800 Gb/s", with its state when it is not up.
pub fn rate_line(link: &Link) -> String {
    let rate = if link.lanes > 1 {
        format!(
            "{} × {} lanes = {}",
            link.rate_gbit_s,
            link.lanes,
            link.nominal_capacity()
        )
    } else {
        link.rate_gbit_s.to_string()
    };
    let state = match link.state {
        LinkState::Up => String::new(),
        LinkState::Degraded { fraction } => format!(
            "; degraded: runs at {:.0} % ({})",
            fraction * 100.0,
            link.capacity()
        ),
        LinkState::Failed => "; failed: carries nothing".to_string(),
    };
    format!("{}, {rate}{state}", link.tech.label())
}

/// "node-01 nic0 – leaf-r0 p3": both ends with their ports.
pub fn ends_line(design: &Design, link: &Link) -> String {
    let end = |e: &crate::model::Endpoint| {
        let name = design.device(e.device).map_or("?", |d| d.name.as_str());
        format!("{name} {}", e.port)
    };
    format!("{} – {}", end(&link.a), end(&link.b))
}

/// The hover card of a link: what it is, its ends, and its load when one is known.
pub fn hover_text(
    design: &Design,
    link: &Link,
    alongside: usize,
    loads: Option<&LinkLoads>,
) -> String {
    let mut text = format!(
        "Link {}: {}\n{}",
        link.id,
        rate_line(link),
        ends_line(design, link)
    );
    if alongside > 1 {
        text.push_str(&format!(
            "\nOne of {alongside} links drawn as this one line"
        ));
    }
    if let Some(loads) = loads {
        text.push('\n');
        let line = loads.line(link.id);
        let mut chars = line.chars();
        if let Some(first) = chars.next() {
            text.extend(first.to_uppercase());
            text.push_str(chars.as_str());
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Bandwidth, Endpoint, LinkTech, Port};

    fn link(lanes: u32, state: LinkState) -> Link {
        let mut l = Link::new(
            Endpoint {
                device: crate::model::DeviceId(1),
                port: Port::Nic(0),
            },
            Endpoint {
                device: crate::model::DeviceId(2),
                port: Port::Switch(3),
            },
            LinkTech::RoceV2,
            Bandwidth::from_gbit_s(400.0),
        );
        l.id = LinkId(7);
        l.lanes = lanes;
        l.state = state;
        l
    }

    #[test]
    fn rate_lanes_and_state_in_words() {
        assert_eq!(
            rate_line(&link(2, LinkState::Up)),
            "RoCEv2, 400 Gb/s × 2 lanes = 800 Gb/s"
        );
        assert_eq!(
            rate_line(&link(1, LinkState::Degraded { fraction: 0.25 })),
            "RoCEv2, 400 Gb/s; degraded: runs at 25 % (100 Gb/s)"
        );
        assert_eq!(
            rate_line(&link(1, LinkState::Failed)),
            "RoCEv2, 400 Gb/s; failed: carries nothing"
        );
    }

    #[test]
    fn load_is_said_against_the_bottleneck() {
        let heat: HashMap<LinkId, f64> = [(LinkId(7), 0.634), (LinkId(8), 1.0)].into();
        let loads = LinkLoads::Known {
            utilisation: &heat,
            collective: "all-reduce of 1 GiB (ring/Simple)".into(),
        };
        assert_eq!(
            loads.line(LinkId(7)),
            "63 % of the bottleneck's load in the all-reduce of 1 GiB (ring/Simple)"
        );
        assert_eq!(
            loads.line(LinkId(8)),
            "the bottleneck of the all-reduce of 1 GiB (ring/Simple)"
        );
        assert_eq!(
            loads.line(LinkId(9)),
            "carries nothing in the all-reduce of 1 GiB (ring/Simple)"
        );
        // A failed collective leaves every link's load unknown, and says why.
        let failed = LinkLoads::Unknown {
            why: "the design has no GPUs".into(),
        };
        assert_eq!(
            failed.line(LinkId(7)),
            "unknown: the sidebar's collective could not be worked out (the design has no GPUs)"
        );
    }
}
