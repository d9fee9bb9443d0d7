//! The algorithms as flows: each turns a group of GPUs into phases, and each phase into the
//! bytes every arc carries per byte of the collective's size. Routing happens here (through
//! `LoadBuilder`), so the bandwidth term later is only "most loaded arc / its capacity".

use super::CollectiveError;
use super::efficiency as eff;
use super::fabric::{ArcId, Fabric, Intra, NO_ARC, Vx};
use super::latency::Hw;
use super::routing::{NetFlow, Router, TreeSlot, TreeUse, Unreachable};
use super::{Algorithm, Op};
use std::collections::HashSet;
use std::sync::Arc;

/// Above this many GPU-pair connections, all-to-all is routed as aggregated uniform traffic.
const EXPLICIT_ALL_TO_ALL_LIMIT: u64 = 1 << 18;

#[cfg(test)]
thread_local! {
    /// Tests turn the shortcuts off to check them against the transfer-by-transfer sums.
    static TRANSFER_BY_TRANSFER: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether shortcuts that add a node's transfers in one sweep are on (always, outside tests).
fn sweeps() -> bool {
    #[cfg(test)]
    if TRANSFER_BY_TRANSFER.with(std::cell::Cell::get) {
        return false;
    }
    true
}

/// NCCL runs two channels per ring or tree on each NIC: two connections to hash.
const CHANNELS_PER_CONNECTION: u32 = 2;

#[derive(Debug, Clone)]
pub(crate) struct Phase {
    /// How many times the phase's traffic pattern repeats, back to back.
    pub repeat: f64,
    /// Bytes per arc per byte of the collective's size, for one repetition (shared when a
    /// phase repeats an earlier one's traffic).
    pub loads: Arc<Vec<f64>>,
    /// NVLS phases run the NVLink ports at NVLS efficiency.
    pub nvls: bool,
}

#[derive(Debug, Clone)]
pub(crate) struct Plan {
    pub algorithm: Algorithm,
    /// The library that runs it (its protocols and step latencies).
    pub library: super::Library,
    pub phases: Vec<Phase>,
    pub n: u32,
    /// Scale-up domains in the group and the largest number of GPUs one holds.
    pub domains: u32,
    pub max_domain_gpus: u32,
    /// Worst intra-domain hop (PCIe is worse than NVLink); None when no GPU talks inside a domain.
    pub intra_hw: Option<Hw>,
    pub uses_net: bool,
    /// Stack, switch and propagation latency of the worst network path, µs.
    pub net_extra_us: f64,
    /// Per-GPU usable NVLink rate at NVLS efficiency (bytes/s) for the NVLS pipeline fill.
    pub nvls_rate: f64,
    pub notes: Vec<String>,
}

/// A run of the group's GPUs inside one scale-up domain.
pub(crate) struct Segment<'g> {
    pub gpus: &'g [u32],
}

pub(crate) fn segments<'g>(fab: &Fabric, group: &'g [u32]) -> Vec<Segment<'g>> {
    let mut out: Vec<Segment> = Vec::new();
    let mut start = 0;
    let mut last = u32::MAX;
    for (i, &g) in group.iter().enumerate() {
        let d = fab.domain_of_gpu(g);
        if i > 0 && d != last {
            out.push(Segment {
                gpus: &group[start..i],
            });
            start = i;
        }
        last = d;
    }
    if start < group.len() {
        out.push(Segment {
            gpus: &group[start..],
        });
    }
    out
}

/// Transfers of one size between GPUs behind an NVSwitch, counted per GPU: each adds the same
/// bytes to the sender's port up and the receiver's port down, so counting first and adding
/// at the end (`LoadBuilder::add_switch_hops`) gives the same sums as transfer by transfer.
#[derive(Default)]
pub(crate) struct SwitchHops {
    up: Vec<u32>,
    down: Vec<u32>,
    any: bool,
}

impl SwitchHops {
    /// Makes room to count the fabric's GPUs (once per load builder that counts).
    pub fn ensure(&mut self, fab: &Fabric) {
        if self.up.len() < fab.gpus.len() {
            self.up.resize(fab.gpus.len(), 0);
            self.down.resize(fab.gpus.len(), 0);
        }
    }

    /// Counts the transfer g → h when it crosses an NVSwitch (else leaves it to the caller).
    #[inline]
    pub fn count(&mut self, fab: &Fabric, g: u32, h: u32) -> bool {
        if g == h || !matches!(fab.node_of_gpu(g).intra, Intra::NvSwitch { .. }) {
            return false;
        }
        self.ensure(fab);
        self.count_switched(g, h);
        true
    }

    /// Counts `times` switched transfers out of GPU g and as many into it.
    #[inline]
    pub fn count_times(&mut self, g: u32, times: u32) {
        self.up[g as usize] += times;
        self.down[g as usize] += times;
        self.any |= times > 0;
    }

    /// Takes back one transfer out of GPU g and one into it, counted with `count_times`.
    #[inline]
    pub fn uncount(&mut self, g: u32) {
        self.up[g as usize] -= 1;
        self.down[g as usize] -= 1;
    }

    /// Counts the transfer g → h, known to cross an NVSwitch (g ≠ h).
    #[inline]
    pub fn count_switched(&mut self, g: u32, h: u32) {
        self.up[g as usize] += 1;
        self.down[h as usize] += 1;
        self.any = true;
    }
}

/// A GPU's way into the network through one NIC: the NIC's PCIe arcs, the cable's arcs and
/// the switch it reaches.
pub(crate) struct SimpleEnd {
    nic_up: ArcId,
    nic_down: ArcId,
    out: ArcId,
    inn: ArcId,
    attach: Vx,
}

/// A finished phase's loads, worst intra-domain hop, whether it used the network, and the
/// network's extra latency (µs).
pub(crate) type PhaseLoads = (Arc<Vec<f64>>, Option<Hw>, bool, f64);

/// Lets a plan stop early (before or while routing its flows) once it cannot be the tuner's
/// choice at the wanted size: the fastest time found so far (µs as `f64` bits, shared by the planning
/// threads; infinity until a plan is costed) and the µs that each unit of the phase's worst
/// load-to-capacity ratio costs at that size at the least (the most favourable protocol).
/// Only for plans of one phase run once (tree, NVLS-tree, SHARP).
pub(crate) struct Prune {
    pub best_us_bits: Arc<std::sync::atomic::AtomicU64>,
    pub us_per_worst: f64,
    pub algorithm: Algorithm,
    pub op: Op,
}

impl Prune {
    /// The fastest time costed so far (µs) and its bits, once there is one.
    pub fn best_us(&self) -> Option<(f64, u64)> {
        let bits = self.best_us_bits.load(std::sync::atomic::Ordering::Relaxed);
        let best = f64::from_bits(bits);
        best.is_finite().then_some((best, bits))
    }
}

/// Accumulates loads; network legs are queued and routed at the end.
pub(crate) struct LoadBuilder<'a, 'f> {
    fab: &'f Fabric,
    router: &'a mut Router<'f>,
    adaptive: bool,
    pub loads: Vec<f64>,
    flows: Vec<NetFlow>,
    pub intra_hw: Option<Hw>,
    pub uses_net: bool,
    stack_us: f64,
    switch_us: f64,
    /// Running sums 0, v, v + v, ... of one value `v`, for `add_times`.
    repeated: (f64, Vec<f64>),
    /// NVSwitch transfers counted but not yet added.
    pub switch_hops: SwitchHops,
}

impl<'a, 'f> LoadBuilder<'a, 'f> {
    pub fn new(fab: &'f Fabric, router: &'a mut Router<'f>, adaptive: bool) -> Self {
        let loads = router.take_loads();
        // The longest path is this phase's own: no earlier plan's routes may leak into its
        // latency (plans run in any order, on any thread).
        router.max_hops = 0;
        LoadBuilder {
            fab,
            router,
            adaptive,
            loads,
            flows: Vec::new(),
            intra_hw: None,
            uses_net: false,
            stack_us: 0.0,
            switch_us: 0.0,
            repeated: (f64::NAN, Vec::new()),
            switch_hops: SwitchHops::default(),
        }
    }

    #[inline]
    fn add(&mut self, arc: ArcId, bytes: f64) {
        if arc != NO_ARC {
            self.loads[arc as usize] += bytes;
        }
    }

    /// Adds `bytes` to an arc `times` times over, one addition after the other (so the sum is
    /// the same to the last bit as adding transfer by transfer); an arc still at zero takes
    /// the running sum from a table instead.
    fn add_times(&mut self, arc: ArcId, bytes: f64, times: u32) {
        if arc == NO_ARC || times == 0 {
            return;
        }
        let slot = &mut self.loads[arc as usize];
        if *slot != 0.0 {
            for _ in 0..times {
                *slot += bytes;
            }
            return;
        }
        let (value, sums) = &mut self.repeated;
        if value.to_bits() != bytes.to_bits() {
            *value = bytes;
            sums.clear();
            sums.push(0.0);
        }
        while sums.len() <= times as usize {
            let next = sums[sums.len() - 1] + bytes;
            sums.push(next);
        }
        *slot = sums[times as usize];
    }

    /// Adds the NVSwitch transfers counted in `switch_hops`, of `bytes` each, for the GPUs
    /// in `gpus` (every GPU counted must be among them), and clears the count.
    fn add_switch_hops<'g>(&mut self, gpus: impl IntoIterator<Item = &'g u32>, bytes: f64) {
        if !self.switch_hops.any {
            return;
        }
        self.note_hw(Some(Hw::NvLink));
        let fab = self.fab;
        let mut hops = std::mem::take(&mut self.switch_hops);
        for &g in gpus {
            let gpu = &fab.gpus[g as usize];
            let (up, down) = (
                std::mem::take(&mut hops.up[g as usize]),
                std::mem::take(&mut hops.down[g as usize]),
            );
            self.add_times(gpu.su_up, bytes, up);
            self.add_times(gpu.su_down, bytes, down);
        }
        hops.any = false;
        self.switch_hops = hops;
    }

    #[inline]
    fn note_hw(&mut self, hw: Option<Hw>) {
        self.intra_hw = match (self.intra_hw, hw) {
            (Some(Hw::Pci), _) | (_, Some(Hw::Pci)) => Some(Hw::Pci),
            (Some(a), _) => Some(a),
            (None, b) => b,
        };
    }

    /// A transfer between two GPUs of one scale-up domain.
    #[inline]
    pub fn intra(&mut self, g: u32, h: u32, bytes: f64) {
        if g == h || bytes == 0.0 {
            return;
        }
        let fab = self.fab;
        let (a, b) = (&fab.gpus[g as usize], &fab.gpus[h as usize]);
        let node = &fab.nodes[a.node as usize];
        // NVLink through the switch or a bridge; otherwise PCIe, through host memory without
        // peer-to-peer (its weight: each byte crosses twice).
        match node.intra {
            Intra::NvSwitch { .. } => {
                self.note_hw(Some(Hw::NvLink));
                self.add(a.su_up, bytes);
                self.add(b.su_down, bytes);
            }
            Intra::BridgePairs if a.node == b.node && a.local / 2 == b.local / 2 => {
                self.note_hw(Some(Hw::NvLink));
                self.add(a.su_up, bytes);
            }
            Intra::BridgePairs | Intra::Pcie => {
                self.note_hw(Some(Hw::Pci));
                let w = if node.p2p {
                    1.0
                } else {
                    1.0 / eff::NO_P2P_SHARE
                };
                self.add(a.pcie_up, bytes * w);
                self.add(b.pcie_down, bytes * w);
            }
            Intra::Unified => self.note_hw(None),
        }
    }

    fn access_latency(&mut self, arc: ArcId) {
        let li = (arc / 2) as usize;
        if li < self.fab.link_latency_us.len() {
            self.stack_us = self.stack_us.max(self.fab.link_latency_us[li]);
        }
    }

    fn note_switch(&mut self, v: Vx) {
        self.switch_us = self.switch_us.max(self.fab.switch_latency_us[v as usize]);
    }

    #[allow(clippy::too_many_arguments)]
    /// A transfer between GPUs of different domains, leaving through NIC `nic_g` of g's node
    /// and arriving at NIC `nic_h` of h's node (None: the node's other ports).
    pub fn inter(
        &mut self,
        g: u32,
        h: u32,
        nic_g: Option<u32>,
        nic_h: Option<u32>,
        bytes: f64,
        conns: u32,
        key: u64,
    ) -> Result<(), CollectiveError> {
        if bytes == 0.0 {
            return Ok(());
        }
        let fab = self.fab;
        self.uses_net = true;
        let (ga, gb) = (&fab.gpus[g as usize], &fab.gpus[h as usize]);
        let (na, nb) = (&fab.nodes[ga.node as usize], &fab.nodes[gb.node as usize]);
        let nic_a = nic_g.filter(|&i| (i as usize) < fab.nics_of(na).len());
        let nic_b = nic_h.filter(|&i| (i as usize) < fab.nics_of(nb).len());
        self.add(ga.pcie_up, bytes);
        self.add(gb.pcie_down, bytes);
        if let Some(i) = nic_a {
            self.add(fab.nics_of(na)[i as usize].pcie_up, bytes);
        }
        if let Some(i) = nic_b {
            self.add(fab.nics_of(nb)[i as usize].pcie_down, bytes);
        }
        let not_connected = || CollectiveError::NotConnected {
            from: na.device,
            to: nb.device,
        };
        // Source side.
        let src_access = nic_a
            .and_then(|i| fab.nics_of(na)[i as usize].access)
            .or_else(|| pick_access(fab, fab.other_access_of(na), nb.vertex))
            .or_else(|| {
                let all: Vec<_> = fab.nics_of(na).iter().filter_map(|n| n.access).collect();
                pick_access(fab, &all, nb.vertex)
            });
        let x = match src_access {
            Some((out, _, far)) if far == nb.vertex => {
                self.add(out, bytes);
                self.access_latency(out);
                return Ok(());
            }
            _ if fab.transit[na.vertex as usize] => na.vertex,
            Some((out, _, far)) if fab.transit[far as usize] => {
                self.add(out, bytes);
                self.access_latency(out);
                far
            }
            _ => return Err(not_connected()),
        };
        // Destination side.
        let dst_access = nic_b
            .and_then(|i| fab.nics_of(nb)[i as usize].access)
            .or_else(|| pick_access(fab, fab.other_access_of(nb), na.vertex))
            .or_else(|| {
                let all: Vec<_> = fab.nics_of(nb).iter().filter_map(|n| n.access).collect();
                pick_access(fab, &all, na.vertex)
            });
        let y = if fab.transit[nb.vertex as usize] {
            nb.vertex
        } else {
            match dst_access {
                Some((_, inn, far)) if fab.transit[far as usize] => {
                    self.add(inn, bytes);
                    self.access_latency(inn);
                    far
                }
                _ => return Err(not_connected()),
            }
        };
        self.note_switch(x);
        self.note_switch(y);
        if x != y {
            let conns = conns.max(1);
            self.flows.push(NetFlow {
                x,
                y,
                bytes: bytes / f64::from(conns),
                conns,
                key,
            });
        }
        Ok(())
    }

    /// How GPU `g` meets the network through NIC `nic` when `inter` would resolve it without
    /// looking at the peer: the NIC exists and is cabled to a switch, and the node does not
    /// forward traffic itself.
    pub fn simple_end(&self, g: u32, nic: Option<u32>) -> Option<SimpleEnd> {
        let fab = self.fab;
        let node = &fab.nodes[fab.gpus[g as usize].node as usize];
        let i = nic.filter(|&i| (i as usize) < fab.nics_of(node).len())?;
        let n = &fab.nics_of(node)[i as usize];
        let (out, inn, far) = n.access?;
        let switch = fab.transit[far as usize] && !fab.is_node[far as usize];
        (switch && !fab.transit[node.vertex as usize]).then_some(SimpleEnd {
            nic_up: n.pcie_up,
            nic_down: n.pcie_down,
            out,
            inn,
            attach: far,
        })
    }

    /// Attachment of a node's NIC for aggregated traffic: (arc out, arc in, transit vertex),
    /// or the node itself when it forwards (arcs NO_ARC).
    pub fn attachment(&self, node: u32, nic: Option<u32>) -> Option<(ArcId, ArcId, Vx)> {
        let fab = self.fab;
        let nd = &fab.nodes[node as usize];
        if fab.transit[nd.vertex as usize] {
            return Some((NO_ARC, NO_ARC, nd.vertex));
        }
        let access = nic
            .and_then(|i| fab.nics_of(nd).get(i as usize).and_then(|n| n.access))
            .or_else(|| fab.other_access_of(nd).first().copied())?;
        fab.transit[access.2 as usize].then_some(access)
    }

    pub fn add_arc(&mut self, arc: ArcId, bytes: f64) {
        self.add(arc, bytes);
        if arc != NO_ARC && bytes > 0.0 {
            self.access_latency(arc);
        }
    }

    pub fn uniform(
        &mut self,
        senders: &[(Vx, f64)],
        receivers: &[(Vx, f64)],
        unit: f64,
    ) -> Result<(), CollectiveError> {
        self.uses_net = true;
        for &(v, _) in senders.iter().chain(receivers) {
            self.note_switch(v);
        }
        let fab = self.fab;
        self.router
            .route_uniform(senders, receivers, unit, &mut self.loads)
            .map_err(|u| unreachable_error(fab, u))
    }

    /// Routes queued flows; returns the loads and the network's extra latency. Refuses (and
    /// marks the router `pruned`) when the loads so far already make the plan slower than
    /// the fastest one found (see `Prune`).
    pub fn finish(mut self) -> Result<PhaseLoads, CollectiveError> {
        let fab = self.fab;
        if self.router.stop_early(Some(&self.loads)) {
            return Err(self.stopped());
        }
        self.router
            .route(&self.flows, self.adaptive, &mut self.loads)
            .map_err(|u| unreachable_error(fab, u))?;
        if self.router.pruned {
            return Err(self.stopped());
        }
        let switches = f64::from(self.router.max_hops) + 1.0;
        let prop = super::efficiency::propagation_us(true) * f64::from(self.router.max_hops);
        let extra = if self.uses_net {
            self.stack_us + switches * self.switch_us + prop
        } else {
            0.0
        };
        let loads = std::mem::take(&mut self.loads);
        Ok((Arc::new(loads), self.intra_hw, self.uses_net, extra))
    }
}

impl LoadBuilder<'_, '_> {
    /// Whether the plan may stop early and a floor is worth working out now: for its first
    /// one, or to compare with a fastest time already found.
    fn floor_wanted(&self) -> bool {
        self.router
            .prune
            .as_ref()
            .is_some_and(|prune| self.router.floor_worst == 0.0 || prune.best_us().is_some())
    }

    /// What a plan that stopped early returns (never reported: see `Router::pruned`).
    fn stopped(&self) -> CollectiveError {
        let (algorithm, op) = self
            .router
            .prune
            .as_ref()
            .map_or((Algorithm::Tree, Op::AllReduce), |p| (p.algorithm, p.op));
        CollectiveError::AlgorithmUnavailable {
            algorithm,
            op,
            reason: "slower at this size than another algorithm".into(),
        }
    }
}

impl Drop for LoadBuilder<'_, '_> {
    /// A plan that fails part-way hands its buffer back for the next one.
    fn drop(&mut self) {
        let loads = std::mem::take(&mut self.loads);
        if loads.len() == self.fab.arc_count() {
            self.router.recycle_loads(loads);
        }
    }
}

fn pick_access(
    fab: &Fabric,
    list: &[(ArcId, ArcId, Vx)],
    target: Vx,
) -> Option<(ArcId, ArcId, Vx)> {
    list.iter()
        .find(|a| a.2 == target)
        .or_else(|| list.iter().find(|a| fab.transit[a.2 as usize]))
        .copied()
}

fn unreachable_error(fab: &Fabric, u: Unreachable) -> CollectiveError {
    CollectiveError::NotConnected {
        from: fab.device_ids[u.from as usize],
        to: fab.device_ids[u.to as usize],
    }
}

fn key(a: u64, b: u64, c: u64) -> u64 {
    a.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ b.wrapping_mul(0xc2b2_ae3d_27d4_eb4f) ^ c
}

/// Rings over the group: one per NIC when the group spans domains (rail rings), entering each
/// domain at a GPU served by that NIC. `per_hop` bytes per ring-hop in total over all rings.
/// `cyclic` false gives the broadcast chain; `reverse` the reduce chain.
#[allow(clippy::too_many_arguments)]
pub(crate) fn rings(
    b: &mut LoadBuilder,
    fab: &Fabric,
    group: &[u32],
    segs: &[Segment],
    per_hop: f64,
    cyclic: bool,
    reverse: bool,
) -> Result<(), CollectiveError> {
    let ring_count = if segs.len() <= 1 {
        1
    } else {
        nic_rings(fab, group)
    };
    let bytes = per_hop / f64::from(ring_count.max(1));
    let any_nics = fab.nodes.iter().any(|nd| !fab.nics_of(nd).is_empty());
    let behind_switch: Vec<bool> = segs.iter().map(|s| all_nvswitch(fab, s.gpus)).collect();
    let mut seq: Vec<u32> = Vec::with_capacity(group.len());
    if behind_switch.contains(&true) {
        b.switch_hops.ensure(fab);
    }
    for r in 0..ring_count.max(1) {
        seq.clear();
        for s in segs {
            let start = if segs.len() > 1 {
                s.gpus
                    .iter()
                    .position(|&g| fab.gpus[g as usize].nic == Some(r))
                    .unwrap_or(0)
            } else {
                0
            };
            seq.extend(s.gpus[start..].iter().chain(&s.gpus[..start]));
        }
        let n = seq.len();
        let hops = if cyclic { n } else { n.saturating_sub(1) };
        let nic = (ring_count > 1 || any_nics).then_some(r);
        // Hop i leaves seq[i]; inside a domain's run the next GPU is in the same domain, and
        // only the hop out of a run's last GPU may cross to another domain.
        let mut i = 0;
        for (s, &switch) in segs.iter().zip(&behind_switch) {
            let len = s.gpus.len();
            for j in 0..len {
                if i >= hops {
                    break;
                }
                let (mut a, mut c) = (seq[i], seq[if i + 1 == n { 0 } else { i + 1 }]);
                if reverse {
                    std::mem::swap(&mut a, &mut c);
                }
                let inside = j + 1 < len;
                if inside && switch && a != c && bytes != 0.0 {
                    b.switch_hops.count_switched(a, c);
                } else if inside || fab.domain_of_gpu(a) == fab.domain_of_gpu(c) {
                    if bytes == 0.0 || !b.switch_hops.count(fab, a, c) {
                        b.intra(a, c, bytes);
                    }
                } else {
                    let nic_a = nic.filter(|_| !fab.nics_of(fab.node_of_gpu(a)).is_empty());
                    let nic_c = nic.filter(|_| !fab.nics_of(fab.node_of_gpu(c)).is_empty());
                    b.inter(
                        a,
                        c,
                        nic_a,
                        nic_c,
                        bytes,
                        CHANNELS_PER_CONNECTION,
                        key(u64::from(r), i as u64, 1),
                    )?;
                }
                i += 1;
            }
        }
    }
    b.add_switch_hops(group, bytes);
    Ok(())
}

/// Whether every GPU of a domain's run sits behind an NVSwitch.
fn all_nvswitch(fab: &Fabric, gpus: &[u32]) -> bool {
    gpus.iter()
        .all(|&g| matches!(fab.node_of_gpu(g).intra, Intra::NvSwitch { .. }))
}

/// Rings across domains: one per NIC of the node with fewest NICs (at least one).
fn nic_rings(fab: &Fabric, group: &[u32]) -> u32 {
    let mut k = u32::MAX;
    let mut last = u32::MAX;
    for &g in group {
        let node = fab.gpus[g as usize].node;
        if node != last {
            k = k.min(fab.nics_of(&fab.nodes[node as usize]).len() as u32);
            last = node;
        }
    }
    k.clamp(1, 64)
}

/// Parent position of 1-based position `p` in a balanced in-order binary tree over 1..=m.
fn tree_parent(p: u32, m: u32) -> Option<u32> {
    let mut q = p;
    loop {
        let low = q & q.wrapping_neg();
        let parent = (q | (low << 1)) & !low;
        if parent <= m {
            return Some(parent);
        }
        if (low << 1) > m {
            return None;
        }
        q = parent;
    }
}

/// Edges (parent, child) of NCCL-style double binary trees over `m` domains: the second tree
/// is the first shifted by one, so leaves of one are inner nodes of the other.
pub(crate) fn double_tree(m: u32) -> [Vec<(u32, u32)>; 2] {
    let mut trees = [Vec::new(), Vec::new()];
    if m < 2 {
        return trees;
    }
    for (t, tree) in trees.iter_mut().enumerate() {
        let shift = t as u32;
        let seg_of = |p: u32| (p - 1 + m - shift) % m;
        for i in 0..m {
            let p = (i + shift) % m + 1;
            if let Some(q) = tree_parent(p, m) {
                tree.push((seg_of(q), i));
            }
        }
    }
    trees
}

/// Inter-domain double binary trees, one set per channel (NIC), each tree carrying
/// `per_tree` bytes up and down every edge; intra-domain chains lead to the channel's head.
fn trees(
    b: &mut LoadBuilder,
    fab: &Fabric,
    segs: &[Segment],
    total: f64,
    per_local_gpu: bool,
) -> Result<(), CollectiveError> {
    let m = segs.len() as u32;
    let edges = double_tree(m);
    let has_nics = fab.nodes.iter().any(|n| !fab.nics_of(n).is_empty());
    let mut heads: Vec<u32> = Vec::with_capacity(segs.len());
    let mut nics: Vec<Option<u32>> = Vec::with_capacity(segs.len());
    match per_local_gpu {
        false => {
            // Tree over domains per NIC; chains inside each domain.
            let k = segs
                .iter()
                .map(|s| nic_rings(fab, s.gpus))
                .min()
                .unwrap_or(1);
            let per = total / 2.0 / f64::from(k);
            // Per channel and domain, the position of the channel's head: the first GPU on
            // the channel's NIC, else the first GPU.
            let mut head_at = vec![0u32; k as usize * segs.len()];
            for (si, s) in segs.iter().enumerate() {
                let mut found = 0u64;
                for (p, &g) in s.gpus.iter().enumerate() {
                    if let Some(c) = fab.gpus[g as usize].nic.filter(|&c| c < k)
                        && found & (1 << c) == 0
                    {
                        found |= 1 << c;
                        head_at[c as usize * segs.len() + si] = p as u32;
                    }
                }
            }
            let behind_switch: Vec<bool> = segs.iter().map(|s| all_nvswitch(fab, s.gpus)).collect();
            // Each channel's chain starts at its head and wraps around the domain's GPUs; both
            // trees run it (reduce up, broadcast down), so every chain edge is one switched
            // transfer each way. Behind a switch only the counts matter: every GPU is on two
            // edges of each chain, its ends on one.
            if per != 0.0 {
                for (si, s) in segs.iter().enumerate() {
                    let len = s.gpus.len();
                    if !behind_switch[si] || len < 2 {
                        continue;
                    }
                    b.switch_hops.ensure(fab);
                    for &g in s.gpus {
                        b.switch_hops.count_times(g, 2 * k);
                    }
                    for c in 0..k as usize {
                        let i = head_at[c * segs.len() + si] as usize;
                        b.switch_hops.uncount(s.gpus[i]);
                        b.switch_hops.uncount(s.gpus[(i + len - 1) % len]);
                    }
                }
            }
            for c in 0..k {
                heads.clear();
                for (si, s) in segs.iter().enumerate() {
                    let i = head_at[c as usize * segs.len() + si] as usize;
                    heads.push(s.gpus[i]);
                    if behind_switch[si] && per != 0.0 {
                        continue;
                    }
                    let mut chain = s.gpus[i..].iter().chain(&s.gpus[..i]).copied();
                    let Some(mut w0) = chain.next() else {
                        continue;
                    };
                    for w1 in chain {
                        b.intra(w1, w0, 2.0 * per);
                        b.intra(w0, w1, 2.0 * per);
                        w0 = w1;
                    }
                }
                nics.clear();
                nics.resize(segs.len(), has_nics.then_some(c));
                tree_edges(b, &edges, &heads, &nics, per, |t, e| {
                    key(u64::from(c), e as u64, 10 + t as u64)
                })?;
            }
            b.add_switch_hops(segs.iter().flat_map(|s| s.gpus), 2.0 * per);
        }
        true => {
            // One tree set per local GPU index, each over that GPU's own NIC (NVLS-tree).
            let g_count = segs[0].gpus.len();
            let per = total / g_count as f64 / 2.0;
            for l in 0..g_count {
                heads.clear();
                heads.extend(segs.iter().map(|s| s.gpus[l]));
                nics.clear();
                nics.extend(heads.iter().map(|&h| fab.gpus[h as usize].nic));
                tree_edges(b, &edges, &heads, &nics, per, |t, e| {
                    key(l as u64, e as u64, 20 + t as u64)
                })?;
            }
        }
    }
    Ok(())
}

/// Both directions of every edge of the double tree between the domains' `heads` (GPUs, with
/// the NIC each uses), `per` bytes each way, connection keys from `key_of(tree, edge)`.
fn tree_edges(
    b: &mut LoadBuilder,
    edges: &[Vec<(u32, u32)>; 2],
    heads: &[u32],
    nics: &[Option<u32>],
    per: f64,
    key_of: impl Fn(usize, usize) -> u64,
) -> Result<(), CollectiveError> {
    let fab = b.fab;
    // Where every head meets the network, when that does not depend on the peer (NICs cabled
    // to switches, the usual case): then each domain's arcs carry `per` once per incident
    // edge and direction, added here in one sweep over the domains rather than edge by edge
    // (the same additions, so the same sums), and only the flows between switches are queued.
    let ends: Option<Vec<SimpleEnd>> = heads
        .iter()
        .zip(nics)
        .map(|(&h, &nic)| b.simple_end(h, nic))
        .collect();
    let Some(ends) = ends.filter(|_| per != 0.0) else {
        for (t, tree) in edges.iter().enumerate() {
            for (e, &(p, ch)) in tree.iter().enumerate() {
                let (hp, hc) = (heads[p as usize], heads[ch as usize]);
                let (np, nc) = (nics[p as usize], nics[ch as usize]);
                let kk = key_of(t, e);
                b.inter(hc, hp, nc, np, per, CHANNELS_PER_CONNECTION, kk)?;
                b.inter(hp, hc, np, nc, per, CHANNELS_PER_CONNECTION, kk ^ 1)?;
            }
        }
        return Ok(());
    };
    let mut degree = vec![0u32; heads.len()];
    for &(p, ch) in edges.iter().flatten() {
        degree[p as usize] += 1;
        degree[ch as usize] += 1;
    }
    // The nodes' ends of the tree edges also give a floor under the plan's worst ratio (see
    // `Router::stop_early`) that often rules it out long before its flows are routed.
    let want_floor = b.floor_wanted();
    let mut worst = b.router.floor_worst;
    for ((&h, end), &deg) in heads.iter().zip(&ends).zip(&degree) {
        if deg == 0 {
            continue;
        }
        b.uses_net = true;
        let gpu = &fab.gpus[h as usize];
        for arc in [
            gpu.pcie_up,
            gpu.pcie_down,
            end.nic_up,
            end.nic_down,
            end.out,
            end.inn,
        ] {
            b.add_times(arc, per, deg);
            if want_floor && arc != NO_ARC {
                worst = worst.max(b.loads[arc as usize] / fab.arc_usable[arc as usize]);
            }
        }
        b.access_latency(end.out);
        b.access_latency(end.inn);
        b.note_switch(end.attach);
    }
    if want_floor {
        b.router.floor_worst = worst;
        if b.router.stop_early(None) {
            return Err(b.stopped());
        }
    }
    let conns = CHANNELS_PER_CONNECTION;
    for (t, tree) in edges.iter().enumerate() {
        for (e, &(p, ch)) in tree.iter().enumerate() {
            let (xp, xc) = (ends[p as usize].attach, ends[ch as usize].attach);
            if xp != xc {
                let kk = key_of(t, e);
                b.flows.push(NetFlow {
                    x: xc,
                    y: xp,
                    bytes: per / f64::from(conns),
                    conns,
                    key: kk,
                });
                b.flows.push(NetFlow {
                    x: xp,
                    y: xc,
                    bytes: per / f64::from(conns),
                    conns,
                    key: kk ^ 1,
                });
            }
        }
    }
    Ok(())
}

fn equal_segments(segs: &[Segment]) -> bool {
    segs.windows(2).all(|w| w[0].gpus.len() == w[1].gpus.len())
}

fn all_nvls(fab: &Fabric, group: &[u32]) -> bool {
    group.iter().all(|&g| {
        let n = fab.node_of_gpu(g);
        matches!(n.intra, Intra::NvSwitch { nvls: true }) && n.arch.nvls_efficiency() > 0.0
    })
}

fn nvls_loads(b: &mut LoadBuilder, fab: &Fabric, seg: &[u32], op: Op) {
    let n = seg.len() as f64;
    let (up, down) = match op {
        // Reads of every slice for the in-switch reduction plus the store of one's own result;
        // the result back plus the multicast of everyone's.
        Op::AllReduce => (1.0 + 1.0 / n, 1.0 + 1.0 / n),
        Op::ReduceScatter => (1.0, 1.0 / n),
        _ => (1.0 / n, 1.0),
    };
    for &g in seg {
        let gpu = &fab.gpus[g as usize];
        b.add_arc(gpu.su_up, up);
        b.add_arc(gpu.su_down, down);
    }
    b.intra_hw = Some(Hw::NvLink);
}

/// Concurrent, congruent groups of GPUs (one group for a plain collective; the TP or DP groups
/// of a training step), with what every algorithm asks of them worked out once.
pub(crate) struct Groups<'g> {
    pub groups: &'g [Vec<u32>],
    /// Per group: its runs of GPUs by scale-up domain.
    pub segs: Vec<Vec<Segment<'g>>>,
    /// Every GPU of every group sits behind an NVSwitch that reduces (NVLS).
    pub all_nvls: bool,
}

impl<'g> Groups<'g> {
    pub fn new(fab: &Fabric, groups: &'g [Vec<u32>]) -> Self {
        Groups {
            groups,
            segs: groups.iter().map(|g| segments(fab, g)).collect(),
            all_nvls: groups.iter().all(|gr| all_nvls(fab, gr)),
        }
    }

    /// Each group with its domain runs.
    fn each(&self) -> impl Iterator<Item = (&'g [u32], &[Segment<'g>])> {
        self.groups
            .iter()
            .map(Vec::as_slice)
            .zip(self.segs.iter().map(Vec::as_slice))
    }
}

/// The plan of `algorithm` for `op` over the groups, or why it does not apply.
pub(crate) fn plan<'f>(
    fab: &'f Fabric,
    router: &mut Router<'f>,
    gs: &Groups,
    op: Op,
    algorithm: Algorithm,
    adaptive: bool,
) -> Result<Plan, CollectiveError> {
    let groups = gs.groups;
    let unavailable = |reason: &str| CollectiveError::AlgorithmUnavailable {
        algorithm,
        op,
        reason: reason.to_string(),
    };
    let Some(first) = groups.first() else {
        return Err(CollectiveError::NoGpus);
    };
    let segs0 = &gs.segs[0];
    let m = segs0.len() as u32;
    let n = first.len() as u32;
    let max_g = segs0.iter().map(|s| s.gpus.len() as u32).max().unwrap_or(0);
    let nf = f64::from(n);
    let g = f64::from(max_g);
    let mf = f64::from(m);
    let mut phases: Vec<Phase> = Vec::new();
    let mut notes = Vec::new();
    let mut nvls_rate = 0.0;
    let mut intra_hw = None;
    let mut uses_net = false;
    let mut net_extra = 0.0f64;
    let mut push = |res: PhaseLoads, repeat: f64, nvls: bool, phases: &mut Vec<Phase>| {
        let (loads, hw, net, extra) = res;
        intra_hw = match (intra_hw, hw) {
            (Some(Hw::Pci), _) | (_, Some(Hw::Pci)) => Some(Hw::Pci),
            (Some(a), _) => Some(a),
            (None, b) => b,
        };
        uses_net |= net;
        net_extra = net_extra.max(extra);
        phases.push(Phase {
            repeat,
            loads,
            nvls,
        });
    };
    let all_groups_nvls = gs.all_nvls;
    match (op, algorithm) {
        (Op::AllReduce | Op::AllGather | Op::ReduceScatter, Algorithm::Ring)
        | (Op::AllReduce | Op::AllGather, Algorithm::BidirectionalRing) => {
            let steps = if op == Op::AllReduce {
                2.0 * (nf - 1.0)
            } else {
                nf - 1.0
            };
            let mut b = LoadBuilder::new(fab, router, adaptive);
            for (group, segs) in gs.each() {
                if algorithm == Algorithm::BidirectionalRing {
                    // Half of every chunk goes clockwise, half counter-clockwise, on the same
                    // neighbours: each direction of a ring link carries half a one-way ring's.
                    rings(&mut b, fab, group, segs, 0.5 / nf, true, false)?;
                    rings(&mut b, fab, group, segs, 0.5 / nf, true, true)?;
                } else {
                    rings(&mut b, fab, group, segs, 1.0 / nf, true, false)?;
                }
            }
            push(b.finish()?, steps, false, &mut phases);
        }
        (Op::Broadcast | Op::Reduce, Algorithm::Ring) => {
            let mut b = LoadBuilder::new(fab, router, adaptive);
            for (group, segs) in gs.each() {
                rings(&mut b, fab, group, segs, 1.0, false, op == Op::Reduce)?;
            }
            push(b.finish()?, 1.0, false, &mut phases);
        }
        (Op::AllReduce, Algorithm::Tree) => {
            let mut b = LoadBuilder::new(fab, router, adaptive);
            for (group, segs) in gs.each() {
                if segs.len() == 1 {
                    for w in group.windows(2) {
                        b.intra(w[1], w[0], 1.0);
                        b.intra(w[0], w[1], 1.0);
                    }
                } else {
                    trees(&mut b, fab, segs, 1.0, false)?;
                }
            }
            push(b.finish()?, 1.0, false, &mut phases);
        }
        (Op::AllReduce | Op::AllGather | Op::ReduceScatter, Algorithm::Nvls) => {
            if m != 1 {
                return Err(unavailable(
                    "NVLS reduces inside one NVSwitch domain; across domains use NVLS-tree",
                ));
            }
            if !all_groups_nvls {
                return Err(unavailable(
                    "needs NVSwitch generation 3 or later (Hopper, Blackwell)",
                ));
            }
            let mut b = LoadBuilder::new(fab, router, adaptive);
            for group in groups {
                nvls_loads(&mut b, fab, group, op);
            }
            nvls_rate = nvls_gpu_rate(fab, first);
            push(b.finish()?, 1.0, true, &mut phases);
        }
        (Op::AllReduce, Algorithm::NvlsTree) => {
            if m < 2 {
                return Err(unavailable(
                    "NVLS-tree joins several NVSwitch domains; one domain uses NVLS",
                ));
            }
            if !all_groups_nvls || !equal_segments(segs0) {
                return Err(unavailable(
                    "needs NVSwitch gen3+ in every node, each with the same number of GPUs",
                ));
            }
            let mut b = LoadBuilder::new(fab, router, adaptive);
            for (_, segs) in gs.each() {
                for s in segs {
                    nvls_loads(&mut b, fab, s.gpus, Op::AllReduce);
                }
                trees(&mut b, fab, segs, 1.0, true)?;
            }
            nvls_rate = nvls_gpu_rate(fab, first);
            push(b.finish()?, 1.0, true, &mut phases);
        }
        (Op::AllReduce, Algorithm::Sharp) => {
            if m < 2 {
                return Err(unavailable(
                    "in-network reduction needs GPUs in several nodes",
                ));
            }
            if !equal_segments(segs0) {
                return Err(unavailable("needs the same number of GPUs in every node"));
            }
            let mut b = LoadBuilder::new(fab, router, adaptive);
            let mut used = TreeUse::default();
            for (gi, (_, segs)) in gs.each().enumerate() {
                for s in segs {
                    if all_groups_nvls {
                        nvls_loads(&mut b, fab, s.gpus, Op::AllReduce);
                    } else {
                        // Reduce-scatter then all-gather inside the node, by ring.
                        let k = s.gpus.len();
                        for i in 0..k {
                            b.intra(s.gpus[i], s.gpus[(i + 1) % k], 2.0 * (g - 1.0) / g);
                        }
                    }
                }
                sharp_trees(&mut b, fab, segs, gi as u32, &mut used)?;
            }
            if all_groups_nvls {
                nvls_rate = nvls_gpu_rate(fab, first);
            }
            push(b.finish()?, 1.0, all_groups_nvls, &mut phases);
        }
        (Op::AllReduce, Algorithm::Hierarchical) => {
            if m < 2 || max_g < 2 {
                return Err(unavailable("needs several nodes with several GPUs each"));
            }
            if !equal_segments(segs0) {
                return Err(unavailable("needs the same number of GPUs in every node"));
            }
            // Intra-domain reduce-scatter by ring (the same traffic again for the all-gather).
            let mut b = LoadBuilder::new(fab, router, adaptive);
            for (_, segs) in gs.each() {
                for s in segs {
                    let k = s.gpus.len();
                    for i in 0..k {
                        b.intra(s.gpus[i], s.gpus[(i + 1) % k], 1.0 / g);
                    }
                }
            }
            let intra = b.finish()?;
            let intra_copy = intra.clone();
            push(intra, g - 1.0, false, &mut phases);
            // One inter-domain ring per local GPU index, on that GPU's NIC.
            let mut b = LoadBuilder::new(fab, router, adaptive);
            for (_, segs) in gs.each() {
                for l in 0..max_g as usize {
                    for i in 0..segs.len() {
                        let (a, c) = (segs[i].gpus[l], segs[(i + 1) % segs.len()].gpus[l]);
                        let (na, nc) = (fab.gpus[a as usize].nic, fab.gpus[c as usize].nic);
                        b.inter(
                            a,
                            c,
                            na,
                            nc,
                            1.0 / (g * mf),
                            CHANNELS_PER_CONNECTION,
                            key(l as u64, i as u64, 30),
                        )?;
                    }
                }
            }
            push(b.finish()?, 2.0 * (mf - 1.0), false, &mut phases);
            push(intra_copy, g - 1.0, false, &mut phases);
        }
        (Op::AllToAll, Algorithm::Direct) => {
            let mut b = LoadBuilder::new(fab, router, adaptive);
            for (group, segs) in gs.each() {
                all_to_all(&mut b, fab, group, segs, adaptive, &mut notes)?;
            }
            push(b.finish()?, 1.0, false, &mut phases);
        }
        (Op::SendRecv, Algorithm::Direct) => {
            let mut b = LoadBuilder::new(fab, router, adaptive);
            for group in groups {
                for i in 0..group.len() {
                    let (a, c) = (group[i], group[(i + 1) % group.len()]);
                    if fab.domain_of_gpu(a) == fab.domain_of_gpu(c) {
                        b.intra(a, c, 1.0);
                    } else {
                        pxn_send(&mut b, fab, a, c, 1.0, key(i as u64, u64::from(a), 40))?;
                    }
                }
            }
            push(b.finish()?, 1.0, false, &mut phases);
        }
        _ => {
            return Err(unavailable(&format!(
                "{} has no {} variant",
                op.cli_name(),
                algorithm.label()
            )));
        }
    }
    notes.dedup();
    Ok(Plan {
        algorithm,
        library: fab.library,
        phases,
        n,
        domains: m,
        max_domain_gpus: max_g,
        intra_hw,
        uses_net,
        net_extra_us: net_extra,
        nvls_rate,
        notes,
    })
}

fn nvls_gpu_rate(fab: &Fabric, group: &[u32]) -> f64 {
    group
        .iter()
        .map(|&g| {
            let gpu = &fab.gpus[g as usize];
            let node = fab.node_of_gpu(g);
            let up = if gpu.su_up == NO_ARC {
                0.0
            } else {
                fab.arc_usable[gpu.su_up as usize]
            };
            up * node.arch.nvls_efficiency()
        })
        .fold(f64::INFINITY, f64::min)
}

/// All-to-all: every GPU sends S/n to every other. Across domains with NVLink inside, NCCL's
/// PXN first moves data over NVLink to the GPU on the destination's rail, so network traffic
/// stays rail-aligned (and a rail-only fabric with no spine still works).
fn all_to_all(
    b: &mut LoadBuilder,
    fab: &Fabric,
    group: &[u32],
    segs: &[Segment],
    adaptive: bool,
    notes: &mut Vec<String>,
) -> Result<(), CollectiveError> {
    let n = group.len();
    let per = 1.0 / n as f64;
    for s in segs {
        let nvswitch = s
            .gpus
            .iter()
            .all(|&g| matches!(fab.node_of_gpu(g).intra, Intra::NvSwitch { .. }));
        if nvswitch && s.gpus.len() > 1 && sweeps() {
            // Through the switch every pair costs the sender's port up and the receiver's
            // port down: the same additions as pair by pair, in one sweep.
            b.note_hw(Some(Hw::NvLink));
            let others = s.gpus.len() as u32 - 1;
            for &g in s.gpus {
                let gpu = &fab.gpus[g as usize];
                b.add_times(gpu.su_up, per, others);
                b.add_times(gpu.su_down, per, others);
            }
        } else {
            for &g in s.gpus {
                for &h in s.gpus {
                    b.intra(g, h, per);
                }
            }
        }
    }
    if segs.len() < 2 {
        return Ok(());
    }
    let pxn = |node: u32| pxn(fab, node);
    let remote_pairs: u64 = segs
        .iter()
        .map(|s| s.gpus.len() as u64 * (n - s.gpus.len()) as u64)
        .sum();
    let single_node_domains = fab.domains.iter().all(|d| d.nodes == 1);
    let aggregated = remote_pairs > EXPLICIT_ALL_TO_ALL_LIMIT && single_node_domains;
    if !aggregated {
        for (si, s) in segs.iter().enumerate() {
            for &g in s.gpus {
                for (ti, t) in segs.iter().enumerate() {
                    if si == ti {
                        continue;
                    }
                    for &h in t.gpus {
                        pxn_send(b, fab, g, h, per, key(u64::from(g), u64::from(h), 50))?;
                    }
                }
            }
        }
        return Ok(());
    }
    if !adaptive {
        notes.push(format!(
            "{remote_pairs} connections: ECMP hashing of this many flows is even to within a few per cent, so they are spread evenly"
        ));
    }
    // Aggregated: per node, GPUs in the group (a run of it) and per rail the GPUs each NIC
    // serves.
    let mut node_gpus: Vec<(u32, &[u32])> = Vec::new();
    let mut start = 0;
    for i in 1..=group.len() {
        if i == group.len()
            || fab.gpus[group[i] as usize].node != fab.gpus[group[start] as usize].node
        {
            node_gpus.push((fab.gpus[group[start] as usize].node, &group[start..i]));
            start = i;
        }
    }
    let rails = node_gpus
        .iter()
        .map(|(nd, _)| fab.nics_of(&fab.nodes[*nd as usize]).len())
        .max()
        .unwrap_or(0)
        .max(1);
    let all_pxn = node_gpus.iter().all(|(nd, _)| pxn(*nd));
    let on_rail = |h: u32, r: usize| fab.gpus[h as usize].nic.map_or(r == 0, |x| x as usize == r);
    // Per node and rail: GPUs of the group the rail's NIC serves.
    let mut rail_count = vec![0.0f64; node_gpus.len() * rails];
    for (i, (_, list)) in node_gpus.iter().enumerate() {
        let counts = &mut rail_count[i * rails..(i + 1) * rails];
        for (r, slot) in counts.iter_mut().enumerate() {
            *slot = list.iter().filter(|&&h| on_rail(h, r)).count() as f64;
        }
    }
    let count_rail = |i: usize, r: usize| rail_count[i * rails + r];
    let total_rail: Vec<f64> = (0..rails)
        .map(|r| (0..node_gpus.len()).map(|i| count_rail(i, r)).sum())
        .collect();
    let rail_groups: Vec<Vec<usize>> = if all_pxn {
        (0..rails).map(|r| vec![r]).collect()
    } else {
        vec![(0..rails).collect()]
    };
    let mut senders: Vec<(Vx, f64)> = Vec::new();
    let mut receivers: Vec<(Vx, f64)> = Vec::new();
    let mut proxies: Vec<u32> = Vec::new();
    for rails_here in &rail_groups {
        senders.clear();
        receivers.clear();
        for (i, &(nd, list)) in node_gpus.iter().enumerate() {
            let node = &fab.nodes[nd as usize];
            for &r in rails_here {
                let nic = (!fab.nics_of(node).is_empty()).then_some(r as u32);
                let Some((out, inn, x)) = b.attachment(nd, nic) else {
                    return Err(CollectiveError::NotConnected {
                        from: node.device,
                        to: fab.nodes[node_gpus
                            .iter()
                            .find(|(o, _)| *o != nd)
                            .map_or(nd, |(o, _)| *o)
                            as usize]
                            .device,
                    });
                };
                let send_gpus = if all_pxn {
                    list.len() as f64
                } else {
                    count_rail(i, r)
                };
                let recv_gpus = count_rail(i, r);
                // Bytes leaving through this NIC and arriving at it.
                let out_bytes = if all_pxn {
                    send_gpus * (total_rail[r] - recv_gpus) * per
                } else {
                    send_gpus * (n - list.len()) as f64 * per
                };
                let in_bytes = recv_gpus * (n - list.len()) as f64 * per;
                b.add_arc(out, out_bytes);
                b.add_arc(inn, in_bytes);
                if let Some(nic) = nic.and_then(|i| fab.nics_of(node).get(i as usize)) {
                    b.add_arc(nic.pcie_up, out_bytes);
                    b.add_arc(nic.pcie_down, in_bytes);
                }
                senders.push((x, send_gpus));
                receivers.push((x, recv_gpus));
            }
            // GPU PCIe and the PXN hop over NVLink.
            let remote = (n - list.len()) as f64 * per;
            if all_pxn {
                // The GPU of this node on each rail (PXN forwards through it).
                proxies.clear();
                proxies.extend(rails_here.iter().map(|&r| {
                    (node.first_gpu..node.first_gpu + node.gpu_count)
                        .find(|&p| fab.gpus[p as usize].nic == Some(r as u32))
                        .unwrap_or(u32::MAX)
                }));
            }
            if all_pxn
                && sweeps()
                && let ([r], [p]) = (rails_here.as_slice(), proxies.as_slice())
                && *p != u32::MAX
            {
                // One rail, forwarded through its GPU p: every other GPU of the node sends
                // `to_rail` over NVLink to p, which sends it all out over PCIe. The same
                // additions per arc, in the same order, as GPU by GPU below.
                let to_rail = (total_rail[*r] - count_rail(i, *r)) * per;
                if to_rail != 0.0 {
                    let mut hops = 0;
                    for &g in list.iter().filter(|&&g| g != *p) {
                        b.add(fab.gpus[g as usize].su_up, to_rail);
                        hops += 1;
                    }
                    if hops > 0 {
                        b.note_hw(Some(Hw::NvLink));
                    }
                    let proxy = &fab.gpus[*p as usize];
                    b.add_times(proxy.su_down, to_rail, hops);
                    b.add_times(proxy.pcie_up, to_rail, list.len() as u32);
                }
                for &g in list.iter().filter(|&&g| on_rail(g, *r)) {
                    b.add_arc(fab.gpus[g as usize].pcie_down, remote);
                }
                continue;
            }
            for &g in list {
                let gpu = &fab.gpus[g as usize];
                if all_pxn {
                    for (j, &r) in rails_here.iter().enumerate() {
                        let to_rail = (total_rail[r] - count_rail(i, r)) * per;
                        let p = if proxies[j] == u32::MAX {
                            g
                        } else {
                            proxies[j]
                        };
                        b.intra(g, p, to_rail);
                        b.add_arc(fab.gpus[p as usize].pcie_up, to_rail);
                        if on_rail(g, r) {
                            b.add_arc(gpu.pcie_down, remote);
                        }
                    }
                } else {
                    b.add_arc(gpu.pcie_up, remote);
                    b.add_arc(gpu.pcie_down, remote);
                }
            }
        }
        b.uniform(&senders, &receivers, per)?;
    }
    Ok(())
}

/// Whether a node forwards network traffic over NVLink to the GPU on the destination's rail
/// (NCCL's PXN): NVSwitch inside and NICs to forward to.
fn pxn(fab: &Fabric, node: u32) -> bool {
    let nd = &fab.nodes[node as usize];
    matches!(nd.intra, Intra::NvSwitch { .. }) && !fab.nics_of(nd).is_empty()
}

/// The GPU of g's node served by NIC `rail`, where PXN applies; g itself otherwise.
fn pxn_proxy(fab: &Fabric, g: u32, rail: Option<u32>) -> u32 {
    let gpu = &fab.gpus[g as usize];
    let node = &fab.nodes[gpu.node as usize];
    match rail {
        Some(r) if pxn(fab, gpu.node) => (node.first_gpu..node.first_gpu + node.gpu_count)
            .find(|&p| fab.gpus[p as usize].nic == Some(r))
            .unwrap_or(g),
        _ => g,
    }
}

/// A point-to-point transfer between domains: over NVLink to the sender-side GPU on the
/// receiver's rail, then rail-aligned through the network.
fn pxn_send(
    b: &mut LoadBuilder,
    fab: &Fabric,
    g: u32,
    h: u32,
    bytes: f64,
    k: u64,
) -> Result<(), CollectiveError> {
    let rail = fab.gpus[h as usize].nic;
    let from = pxn_proxy(fab, g, rail);
    b.intra(g, from, bytes);
    let out_nic = if pxn(fab, fab.gpus[g as usize].node) {
        rail
    } else {
        fab.gpus[g as usize].nic
    };
    b.inter(from, h, out_nic, rail, bytes, 1, k)
}

/// SHARP: every NIC sends its share to its leaf once; the switches reduce along one tree per
/// rail and send the result back down. Each tree edge carries the share once each way; the
/// trees of the rails, and of the concurrent groups (this is the `group`th), go where the
/// fewest earlier trees of the plan are (`Router::aggregation_tree`), as an aggregation manager
/// spreads the trees of the communicators it serves.
fn sharp_trees(
    b: &mut LoadBuilder,
    fab: &Fabric,
    segs: &[Segment],
    group: u32,
    used: &mut TreeUse,
) -> Result<(), CollectiveError> {
    let g = segs[0].gpus.len() as f64;
    let rails = segs
        .iter()
        .map(|s| fab.nics_of(fab.node_of_gpu(s.gpus[0])).len())
        .min()
        .unwrap_or(0);
    if rails == 0 {
        return Err(CollectiveError::AlgorithmUnavailable {
            algorithm: Algorithm::Sharp,
            op: Op::AllReduce,
            reason: "in-network reduction needs NICs on switches".into(),
        });
    }
    for r in 0..rails as u32 {
        let mut leaves: Vec<Vx> = Vec::new();
        for s in segs {
            let served = || {
                s.gpus
                    .iter()
                    .copied()
                    .filter(|&x| fab.gpus[x as usize].nic == Some(r))
            };
            let share = served().count() as f64 / g;
            let node = fab.gpus[s.gpus[0] as usize].node;
            let Some((out, inn, x)) = b.attachment(node, Some(r)) else {
                return Err(CollectiveError::AlgorithmUnavailable {
                    algorithm: Algorithm::Sharp,
                    op: Op::AllReduce,
                    reason: "a NIC is not cabled to a switch".into(),
                });
            };
            if out == super::fabric::NO_ARC {
                return Err(CollectiveError::AlgorithmUnavailable {
                    algorithm: Algorithm::Sharp,
                    op: Op::AllReduce,
                    reason: "nodes are cabled to each other, not to reducing switches".into(),
                });
            }
            b.add_arc(out, share);
            b.add_arc(inn, share);
            let nic = &fab.nics_of(&fab.nodes[node as usize])[r as usize];
            b.add_arc(nic.pcie_up, share);
            b.add_arc(nic.pcie_down, share);
            for x in served() {
                b.add_arc(fab.gpus[x as usize].pcie_up, 1.0 / g);
                b.add_arc(fab.gpus[x as usize].pcie_down, 1.0 / g);
            }
            leaves.push(x);
        }
        let served_share = segs[0]
            .gpus
            .iter()
            .filter(|&&x| fab.gpus[x as usize].nic == Some(r))
            .count() as f64
            / g;
        if served_share == 0.0 {
            // No GPU of the group on this rail: no tree to place.
            continue;
        }
        let slot = TreeSlot {
            rail: r,
            rails: rails as u32,
            group,
        };
        let edges = b.router_tree(&leaves, slot, used)?;
        for (up, down) in edges {
            b.add_arc(up, served_share);
            b.add_arc(down, served_share);
        }
    }
    b.uses_net = true;
    Ok(())
}

impl LoadBuilder<'_, '_> {
    /// SHARP tree `tree` of `trees` over the switches the nodes' NICs reach (`leaves`).
    fn router_tree(
        &mut self,
        leaves: &[Vx],
        slot: TreeSlot,
        used: &mut TreeUse,
    ) -> Result<Vec<(ArcId, ArcId)>, CollectiveError> {
        let fab = self.fab;
        // Many nodes share a leaf switch; a leaf's path to the root is the same each time, so
        // each one is walked once, in order of first appearance (which keeps the errors and
        // the edge order of walking them all).
        let mut seen: HashSet<Vx> = HashSet::with_capacity(leaves.len().min(1 << 12));
        let unique: Vec<Vx> = leaves.iter().copied().filter(|&l| seen.insert(l)).collect();
        if unique.len() <= 1 {
            return match leaves.first() {
                Some(&l) if !fab.in_network[l as usize] => {
                    Err(CollectiveError::AlgorithmUnavailable {
                        algorithm: Algorithm::Sharp,
                        op: Op::AllReduce,
                        reason: format!(
                            "switch {} does not reduce in the network",
                            fab.device_ids[l as usize]
                        ),
                    })
                }
                _ => Ok(Vec::new()),
            };
        }
        self.router
            .aggregation_tree(&unique, &fab.in_network, slot, used)
            .map_err(|e| match e {
                Ok(u) => unreachable_error(fab, u),
                Err(reason) => CollectiveError::AlgorithmUnavailable {
                    algorithm: Algorithm::Sharp,
                    op: Op::AllReduce,
                    reason,
                },
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::collective::test_designs::rail_optimized;
    use crate::model::{Catalog, DeviceKind, LinkState};

    /// All-to-all loads with the per-node sweeps and transfer by transfer, bit for bit.
    fn sweeps_match_transfers(design: &crate::model::Design, gpus: u32) {
        let catalog = Catalog::builtin();
        let fab = super::super::fabric::build(design, &catalog).expect("fabric");
        let groups = vec![(0..gpus).collect::<Vec<u32>>()];
        let gs = Groups::new(&fab, &groups);
        let loads = |by_transfer: bool| {
            TRANSFER_BY_TRANSFER.with(|c| c.set(by_transfer));
            let mut router = Router::new(&fab);
            let plan = plan(
                &fab,
                &mut router,
                &gs,
                Op::AllToAll,
                Algorithm::Direct,
                false,
            );
            TRANSFER_BY_TRANSFER.with(|c| c.set(false));
            let plan = plan.expect("all-to-all plan");
            assert_eq!(plan.phases.len(), 1);
            (
                plan.phases[0].loads.as_ref().clone(),
                plan.intra_hw,
                plan.uses_net,
            )
        };
        let (fast, slow) = (loads(false), loads(true));
        assert_eq!((fast.1, fast.2), (slow.1, slow.2));
        assert_eq!(fast.0.len(), slow.0.len());
        let differ = fast
            .0
            .iter()
            .zip(&slow.0)
            .filter(|(a, b)| a.to_bits() != b.to_bits())
            .count();
        assert_eq!(differ, 0, "{differ} arcs differ");
        // The aggregated path ran: NVLink ports and network arcs both carry traffic.
        assert!(fast.0.iter().filter(|&&l| l > 0.0).count() > gpus as usize);
    }

    /// The design with its first GPU node holding 4 of its 8 GPUs (on NICs 0, 2, 4, 6).
    fn first_node_cut_to_four_gpus(mut design: crate::model::Design) -> crate::model::Design {
        let first = design
            .devices
            .iter_mut()
            .find_map(|d| match &mut d.kind {
                DeviceKind::GpuNode(n) => Some(n),
                _ => None,
            })
            .expect("a GPU node");
        first.gpu_count = 4;
        design
    }

    #[test]
    fn all_to_all_sweeps_equal_transfers_on_a_symmetric_fabric() {
        // 1,024 GPUs: 1,040,384 remote pairs, past the explicit limit, so aggregated.
        sweeps_match_transfers(&rail_optimized(128, "dgx-h100", 2), 1024);
    }

    #[test]
    fn all_to_all_sweeps_equal_transfers_on_an_irregular_fabric() {
        // The first node holds 4 GPUs (on NICs 0, 2, 4, 6: rails without a GPU there take
        // the GPU-by-GPU path), part of the last node is left out of the group, and one
        // leaf loses an uplink.
        let mut design = first_node_cut_to_four_gpus(rail_optimized(128, "dgx-h100", 2));
        let uplink = design
            .links
            .iter()
            .position(|l| {
                [l.a.device, l.b.device].iter().all(|&d| {
                    design
                        .device(d)
                        .is_some_and(|d| matches!(d.kind, DeviceKind::Switch(_)))
                })
            })
            .expect("a switch-to-switch link");
        design.links[uplink].state = LinkState::Failed;
        sweeps_match_transfers(&design, 1017);
    }

    #[test]
    fn tree_chains_load_each_nvlink_port_by_its_place_in_the_chains() {
        // Four DGX H100 nodes, the first cut to 4 GPUs (on NICs 0, 2, 4, 6). Eight channels
        // (one per NIC), each carrying 1/16 of the size each way per tree edge; inside a node
        // a channel's chain runs from its head (the first GPU on its NIC, else the first GPU)
        // around to the GPU before it, and every chain edge is a transfer each way of twice
        // that: 1/8. A full node's GPU heads one chain and ends one, so it is on 2·8 − 2 = 14
        // edges: 1.75 up and down. In the cut node, GPU 0 heads the five chains of NICs
        // 0, 1, 3, 5, 7 and ends that of NIC 2 (10 edges: 1.25); GPU 3 ends those five and
        // heads NIC 6's (1.25); GPUs 1 and 2 head one and end one (1.75).
        let design = first_node_cut_to_four_gpus(rail_optimized(4, "dgx-h100", 2));
        let catalog = Catalog::builtin();
        let fab = super::super::fabric::build(&design, &catalog).expect("fabric");
        assert_eq!(fab.gpus.len(), 28);
        let groups = vec![(0..28).collect::<Vec<u32>>()];
        let gs = Groups::new(&fab, &groups);
        let mut router = Router::new(&fab);
        let plan = plan(
            &fab,
            &mut router,
            &gs,
            Op::AllReduce,
            Algorithm::Tree,
            false,
        )
        .expect("tree plan");
        let loads = &plan.phases[0].loads;
        let expected = |g: usize| if g == 0 || g == 3 { 1.25 } else { 1.75 };
        for (g, gpu) in fab.gpus.iter().enumerate() {
            assert_eq!(loads[gpu.su_up as usize], expected(g), "GPU {g} up");
            assert_eq!(loads[gpu.su_down as usize], expected(g), "GPU {g} down");
        }
        assert_eq!(plan.intra_hw, Some(Hw::NvLink));
    }
}
