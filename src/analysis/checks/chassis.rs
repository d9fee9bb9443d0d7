//! What a node's chassis holds: GPUs beyond its slots, NICs beyond its slots (or another
//! machine's built-in one), and power beyond what its supplies deliver. Both only where the catalog states the limit (`NodeSpec::max_gpus`,
//! `power_supply_w`); a chassis without them is not guessed at.

use super::checked::{CheckedDesign, DeviceParts, as_nic, as_node};
use super::{Finding, Severity, codes::*};
use crate::model::{Catalog, Device, DeviceKind, Part, PartId, Watts};

pub(super) fn check_chassis(checked: &CheckedDesign<'_>, out: &mut Vec<Finding>) {
    for (device, parts) in checked.design.devices.iter().zip(&checked.device_parts) {
        let (DeviceKind::GpuNode(_) | DeviceKind::Host(_)) = &device.kind else {
            continue;
        };
        let Some(model) = parts.model else {
            continue;
        };
        let Some(spec) = as_node(model) else {
            continue;
        };
        if let DeviceKind::GpuNode(node) = &device.kind
            && let Some(slots) = spec.max_gpus()
            && node.gpu_count > slots
        {
            let message = format!(
                "{} holds {} GPUs; `{}` takes {slots}",
                checked.name(device.id),
                node.gpu_count,
                model.id
            );
            out.push(chassis_error(GPUS_OVER_SLOTS, device, message));
        }
        // Add-in NICs beyond the slots, and a built-in NIC on another machine's board.
        let nic_parts = || {
            parts
                .nics
                .iter()
                .flatten()
                .filter_map(|p| Some((p, as_nic(p)?)))
        };
        if let Some(slots) = spec.nic_slots {
            let add_in = nic_parts().filter(|(_, nic)| !nic.builtin).count();
            if !spec.has_slots_for(add_in) {
                let room = if slots == 0 {
                    "has no slot for one".to_string()
                } else {
                    format!("takes {slots}")
                };
                let message = format!(
                    "{} holds {add_in} add-in NIC{}; `{}` {room}",
                    checked.name(device.id),
                    if add_in == 1 { "" } else { "s" },
                    model.id
                );
                out.push(chassis_error(NICS_OVER_SLOTS, device, message));
            }
        }
        for (nic, _) in nic_parts().filter(|(p, nic)| !spec.takes_nic(&p.id, nic)) {
            let message = format!(
                "{} holds `{}`, which is built into another machine's board: `{}` cannot take it",
                checked.name(device.id),
                nic.id,
                model.id
            );
            out.push(chassis_error(NICS_OVER_SLOTS, device, message));
        }
        if let Some(supply) = spec.power_supply_w {
            let drawn = drawn_power(checked, device, parts);
            if drawn.0 > supply.0 {
                let message = format!(
                    "{} draws {:.0} W; the power supplies of `{}` deliver {:.0} W",
                    checked.name(device.id),
                    drawn.0,
                    model.id,
                    supply.0
                );
                out.push(chassis_error(POWER_OVER_SUPPLY, device, message));
            }
        }
    }
}

/// A box that cannot be built as drawn.
fn chassis_error(code: &'static str, device: &Device, message: String) -> Finding {
    Finding {
        severity: Severity::Error,
        code,
        message,
        devices: vec![device.id],
        links: vec![],
        suggestion: String::new(),
    }
}

/// What a node or host draws as the bill of materials counts it: its model, its GPUs when
/// the model's figure leaves them out, and its NICs. Parts the catalog lacks add nothing.
fn drawn_power<'a>(
    checked: &CheckedDesign<'a>,
    device: &'a Device,
    parts: &DeviceParts<'a>,
) -> Watts {
    draw(
        device,
        parts.model,
        parts.nics.iter().flatten().copied(),
        |id| checked.part(id),
    )
}

/// `drawn_power` for a caller outside the checks, its parts looked up in `catalog`.
pub(crate) fn device_draw<'a>(device: &'a Device, catalog: &'a Catalog) -> Watts {
    let (model, nics) = match &device.kind {
        DeviceKind::GpuNode(n) => (Some(&n.model), &n.nics[..]),
        DeviceKind::Host(h) => (h.model.as_ref(), &h.nics[..]),
        _ => (None, &[][..]),
    };
    draw(
        device,
        model.and_then(|m| catalog.get(m)),
        nics.iter().filter_map(|slot| catalog.get(&slot.part)),
        |id| catalog.get(id),
    )
}

fn draw<'a>(
    device: &'a Device,
    model: Option<&'a Part>,
    nics: impl Iterator<Item = &'a Part>,
    part: impl Fn(&'a PartId) -> Option<&'a Part>,
) -> Watts {
    let nics: f64 = nics.map(|p| p.power_w.0).sum();
    let gpus = match &device.kind {
        DeviceKind::GpuNode(node)
            if model
                .and_then(as_node)
                .is_some_and(|spec| !spec.gpus_included_in_price) =>
        {
            part(&node.gpu).map_or(0.0, |gpu| gpu.power_w.0 * f64::from(node.gpu_count))
        }
        _ => 0.0,
    };
    Watts(model.map_or(0.0, |p| p.power_w.0) + nics + gpus)
}

#[cfg(test)]
mod tests {
    use crate::analysis::checks::checks;
    use crate::analysis::checks::codes::{GPUS_OVER_SLOTS, NICS_OVER_SLOTS, POWER_OVER_SUPPLY};
    use crate::model::factory::device_from_part;
    use crate::model::{Catalog, Design, DeviceKind, NicSlot, PartId, Pos};

    /// One node of `part` with `gpus` GPUs of `gpu` (its default GPU when None).
    fn node(part: &str, gpu: Option<&str>, gpus: u32) -> Design {
        let catalog = Catalog::builtin();
        let mut design = Design::new("chassis");
        let id = design.next_device_id();
        let mut d = device_from_part(
            &catalog,
            &PartId::new(part),
            id,
            "box".into(),
            Pos::default(),
        )
        .expect("builtin part");
        if let DeviceKind::GpuNode(n) = &mut d.kind {
            n.gpu_count = gpus;
            if let Some(gpu) = gpu {
                n.gpu = PartId::new(gpu);
            }
        }
        design.insert_device(d);
        design
    }

    fn findings(design: &Design, code: &str) -> Vec<String> {
        checks(design, &Catalog::builtin())
            .into_iter()
            .filter(|c| c.code == code)
            .map(|c| c.message)
            .collect()
    }

    #[test]
    fn a_workstation_holds_four_gpus_and_a_dgx_eight() {
        assert!(findings(&node("workstation", None, 4), GPUS_OVER_SLOTS).is_empty());
        assert_eq!(
            findings(&node("workstation", None, 5), GPUS_OVER_SLOTS),
            ["box holds 5 GPUs; `workstation` takes 4"]
        );
        assert!(findings(&node("dgx-h100", None, 8), GPUS_OVER_SLOTS).is_empty());
        assert_eq!(
            findings(&node("dgx-h100", None, 16), GPUS_OVER_SLOTS),
            ["box holds 16 GPUs; `dgx-h100` takes 8"]
        );
        // The catalog gives no slot count for a Mac beyond its one SoC... which is its count.
        assert!(findings(&node("mac-studio-m3-ultra", None, 1), GPUS_OVER_SLOTS).is_empty());
    }

    #[test]
    fn four_rtx_4090_fit_the_workstation_supply_and_four_b200_do_not() {
        // Host 550 W + 4 × 450 W (RTX 4090) = 2,350 W ≤ 3,200 W (2 × 1600 W PSUs).
        assert!(findings(&node("workstation", None, 4), POWER_OVER_SUPPLY).is_empty());
        // Host 550 W + 4 × 1,000 W (B200) = 4,550 W > 3,200 W.
        assert_eq!(
            findings(&node("workstation", Some("b200"), 4), POWER_OVER_SUPPLY),
            ["box draws 4550 W; the power supplies of `workstation` deliver 3200 W"]
        );
    }

    #[test]
    fn nics_count_toward_a_dgx_supply() {
        // 10,000 W (DGX H100 less its NICs) + 8 × 25 W (cx7-ndr-400) = 10,200 W ≤ 13,200 W.
        let design = node("dgx-h100", None, 8);
        assert!(findings(&design, POWER_OVER_SUPPLY).is_empty());
        // 129 NICs: 10,000 + 129 × 25 = 13,225 W > 13,200 W.
        let mut crowded = design.clone();
        if let DeviceKind::GpuNode(n) = &mut crowded.devices[0].kind {
            n.nics = vec![
                NicSlot {
                    part: PartId::new("cx7-ndr-400"),
                    gpudirect: true
                };
                129
            ];
        }
        assert_eq!(
            findings(&crowded, POWER_OVER_SUPPLY),
            ["box draws 13225 W; the power supplies of `dgx-h100` deliver 13200 W"]
        );
    }

    /// A Mac Studio has no PCIe slot and a DGX Spark only its built-in ConnectX-7, which no
    /// other machine can take; a workstation takes add-in cards (its slots are not counted).
    #[test]
    fn slotless_machines_take_no_add_in_nic_and_builtin_nics_stay_home() {
        let with_nics = |part: &str, nics: &[&str]| {
            let mut design = node(part, None, 1);
            if let DeviceKind::GpuNode(n) = &mut design.devices[0].kind {
                n.nics = nics
                    .iter()
                    .map(|id| NicSlot {
                        part: PartId::new(*id),
                        gpudirect: false,
                    })
                    .collect();
            }
            findings(&design, NICS_OVER_SLOTS)
        };
        assert!(with_nics("mac-studio-m3-ultra", &[]).is_empty());
        assert_eq!(
            with_nics("mac-studio-m3-ultra", &["cx4lx-25gbe"]),
            ["box holds 1 add-in NIC; `mac-studio-m3-ultra` has no slot for one"]
        );
        assert!(with_nics("dgx-spark", &["cx7-gb10"]).is_empty());
        assert_eq!(
            with_nics("dgx-spark", &["cx7-gb10", "cx4lx-25gbe", "cx4lx-25gbe"]),
            ["box holds 2 add-in NICs; `dgx-spark` has no slot for one"]
        );
        assert_eq!(
            with_nics("workstation", &["cx7-gb10"]),
            [
                "box holds `cx7-gb10`, which is built into another machine's board: \
                 `workstation` cannot take it"
            ]
        );
        assert!(with_nics("workstation", &["cx4lx-25gbe", "cx4lx-25gbe"]).is_empty());
    }
}
