//! Accumulating a phase's loads: transfers inside domains added at once, network legs queued
//! and routed at the end.

use crate::analysis::collective::efficiency as eff;
use crate::analysis::collective::fabric::{
    ABSENT_ARC, ArcId, Fabric, GpuInterconnect, Node, Vertex,
};
use crate::analysis::collective::latency::HopKind;
use crate::analysis::collective::routing::{NetFlow, Router, Unreachable};
use crate::analysis::collective::{Algorithm, CollectiveError, Library, Op, Routing};
use std::sync::Arc;

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
        if g == h
            || !matches!(
                fab.node_of_gpu(g).interconnect,
                GpuInterconnect::NvSwitch { .. }
            )
        {
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
    pub(super) nic_up: ArcId,
    pub(super) nic_down: ArcId,
    pub(super) out: ArcId,
    pub(super) arc_in: ArcId,
    pub(super) attach: Vertex,
}

/// A finished phase's loads, worst intra-domain hop, whether it used the network, and the
/// network's extra latency (µs).
pub(crate) type PhaseLoads = (Arc<Vec<f64>>, Option<HopKind>, bool, f64);

/// Accumulates loads; network legs are queued and routed at the end.
pub(crate) struct LoadBuilder<'a, 'f> {
    pub(super) fab: &'f Fabric,
    pub(super) router: &'a mut Router<'f>,
    pub(super) routing: Routing,
    pub loads: Vec<f64>,
    pub(super) flows: Vec<NetFlow>,
    pub intra_hop: Option<HopKind>,
    pub uses_net: bool,
    pub(super) stack_us: f64,
    pub(super) switch_us: f64,
    /// Running sums 0, v, v + v, ... of one value `v`, for `add_times`.
    pub(super) repeated: (f64, Vec<f64>),
    /// NVSwitch transfers counted but not yet added.
    pub switch_hops: SwitchHops,
    /// Bytes each GPU sends and receives through host memory (the SHM transport, GPUs
    /// without peer-to-peer), indexed by GPU; empty until the first such transfer.
    pub(super) shm: ShmTally,
}

/// Host-memory (SHM) traffic per GPU, to charge a link used both ways at once.
#[derive(Default)]
pub(crate) struct ShmTally {
    up: Vec<f64>,
    down: Vec<f64>,
    gpus: Vec<u32>,
}

impl ShmTally {
    #[inline]
    fn add(&mut self, fab: &Fabric, from: u32, to: u32, bytes: f64) {
        self.add_one(fab, from, true, bytes);
        self.add_one(fab, to, false, bytes);
    }

    /// Host-memory traffic at one GPU only: `up` from it into host memory, else down.
    #[inline]
    fn add_one(&mut self, fab: &Fabric, g: u32, up: bool, bytes: f64) {
        if self.up.len() < fab.gpus.len() {
            self.up.resize(fab.gpus.len(), 0.0);
            self.down.resize(fab.gpus.len(), 0.0);
        }
        if self.up[g as usize] == 0.0 && self.down[g as usize] == 0.0 {
            self.gpus.push(g);
        }
        if up {
            self.up[g as usize] += bytes;
        } else {
            self.down[g as usize] += bytes;
        }
    }

    /// Charges each GPU's PCIe link for SHM traffic in both directions at once: with `up`
    /// and `down` bytes the link takes max/rate + min·(1/share − 1)/rate (one way: the PCIe
    /// rate; both ways evenly: `SHM_BIDIRECTIONAL_SHARE` of it each), added to both arcs so
    /// that the busier one carries it.
    fn charge(&mut self, fab: &Fabric, loads: &mut [f64]) {
        let extra_per_byte = 1.0 / eff::SHM_BIDIRECTIONAL_SHARE - 1.0;
        for g in self.gpus.drain(..) {
            let (up, down) = (
                std::mem::take(&mut self.up[g as usize]),
                std::mem::take(&mut self.down[g as usize]),
            );
            let extra = up.min(down) * extra_per_byte;
            if extra > 0.0 {
                let gpu = &fab.gpus[g as usize];
                for arc in [gpu.pcie_up, gpu.pcie_down] {
                    if arc != ABSENT_ARC {
                        loads[arc as usize] += extra;
                    }
                }
            }
        }
    }
}

impl<'a, 'f> LoadBuilder<'a, 'f> {
    pub fn new(fab: &'f Fabric, router: &'a mut Router<'f>, routing: Routing) -> Self {
        let loads = router.take_loads();
        // The longest path is this phase's own: no earlier plan's routes may leak into its
        // latency (plans run in any order, on any thread).
        router.max_hops = 0;
        LoadBuilder {
            fab,
            router,
            routing,
            loads,
            flows: Vec::new(),
            intra_hop: None,
            uses_net: false,
            stack_us: 0.0,
            switch_us: 0.0,
            repeated: (f64::NAN, Vec::new()),
            switch_hops: SwitchHops::default(),
            shm: ShmTally::default(),
        }
    }

    #[inline]
    /// Whether GPU `g`'s network data through its NIC `nic` (None: the node's other ports)
    /// passes through host memory under NCCL: without GPUDirect RDMA, or on NCCL's sockets,
    /// the sending GPU's kernel writes it into a host-memory buffer and the receiving GPU's
    /// kernel reads it from one (`net.cc` maps the buffers in host memory).
    pub(super) fn staged_at(&self, g: u32, nic: Option<u32>) -> bool {
        let fab = self.fab;
        let node = &fab.nodes[fab.gpus[g as usize].node as usize];
        fab.library == Library::Nccl
            && match nic.and_then(|i| fab.nics_of(node).get(i as usize)) {
                Some(n) => n.host_staged,
                None => node.other_host_staged,
            }
    }

    /// GPU `g`'s network bytes out (`up_bytes`) and in at its PCIe link: at face value, or
    /// through host memory as SHM traffic (`SHM_LOAD_PER_BYTE`, and a link used both ways at
    /// once is charged as `ShmTally::charge` says).
    pub(super) fn gpu_net(&mut self, g: u32, up_bytes: f64, down_bytes: f64, staged: bool) {
        let gpu = &self.fab.gpus[g as usize];
        let (up_arc, down_arc) = (gpu.pcie_up, gpu.pcie_down);
        let per_byte = if staged { eff::SHM_LOAD_PER_BYTE } else { 1.0 };
        for (arc, up, bytes) in [(up_arc, true, up_bytes), (down_arc, false, down_bytes)] {
            if bytes == 0.0 {
                continue;
            }
            let load = bytes * per_byte;
            if staged && arc != ABSENT_ARC {
                self.shm.add_one(self.fab, g, up, load);
            }
            self.add(arc, load);
        }
    }

    pub(super) fn add(&mut self, arc: ArcId, bytes: f64) {
        if arc != ABSENT_ARC {
            self.loads[arc as usize] += bytes;
        }
    }

    /// Adds `bytes` to an arc `times` times over, one addition after the other (so the sum is
    /// the same to the last bit as adding transfer by transfer); an arc still at zero takes
    /// the running sum from a table instead.
    pub(super) fn add_times(&mut self, arc: ArcId, bytes: f64, times: u32) {
        if arc == ABSENT_ARC || times == 0 {
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
    pub(super) fn add_switch_hops<'g>(
        &mut self,
        gpus: impl IntoIterator<Item = &'g u32>,
        bytes: f64,
    ) {
        if !self.switch_hops.any {
            return;
        }
        self.note_intra_hop(Some(HopKind::NvLink));
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
    pub(super) fn note_intra_hop(&mut self, hop_kind: Option<HopKind>) {
        self.intra_hop = match (self.intra_hop, hop_kind) {
            (Some(HopKind::Pci), _) | (_, Some(HopKind::Pci)) => Some(HopKind::Pci),
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
        // peer-to-peer (each byte still crosses each GPU's link once, at SHM's lower one-way
        // rate; a link used both ways is charged in `finish`, see `ShmTally::charge`).
        match node.interconnect {
            GpuInterconnect::NvSwitch { .. } => {
                self.note_intra_hop(Some(HopKind::NvLink));
                self.add(a.su_up, bytes);
                self.add(b.su_down, bytes);
            }
            GpuInterconnect::BridgePairs if a.node == b.node && a.local / 2 == b.local / 2 => {
                self.note_intra_hop(Some(HopKind::NvLink));
                self.add(a.su_up, bytes);
            }
            GpuInterconnect::BridgePairs | GpuInterconnect::Pcie => {
                self.note_intra_hop(Some(HopKind::Pci));
                let bytes = if node.p2p {
                    bytes
                } else {
                    let load = bytes * eff::SHM_LOAD_PER_BYTE;
                    self.shm.add(fab, g, h, load);
                    load
                };
                self.add(a.pcie_up, bytes);
                self.add(b.pcie_down, bytes);
            }
            GpuInterconnect::Unified => self.note_intra_hop(None),
        }
    }

    pub(super) fn access_latency(&mut self, arc: ArcId) {
        let li = (arc / 2) as usize;
        if li < self.fab.link_latency_us.len() {
            self.stack_us = self.stack_us.max(self.fab.link_latency_us[li]);
        }
    }

    pub(super) fn note_switch(&mut self, v: Vertex) {
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
        // A NIC is used when its cable leads somewhere: to the peer, or into the network. One
        // cabled only to another server (which does not forward) leaves the traffic to the
        // node's other ports (a workstation's on-board Ethernet to its switch).
        let usable = |nic: Option<u32>, node: &Node, peer: Vertex| {
            nic.filter(|&i| {
                fab.nics_of(node).get(i as usize).is_some_and(|n| {
                    n.access
                        .is_none_or(|(_, _, far)| far == peer || fab.transit[far as usize])
                })
            })
        };
        let (nic_a, nic_b) = (usable(nic_g, na, nb.vertex), usable(nic_h, nb, na.vertex));
        let (staged_a, staged_b) = (self.staged_at(g, nic_a), self.staged_at(h, nic_b));
        self.gpu_net(g, bytes, 0.0, staged_a);
        self.gpu_net(h, 0.0, bytes, staged_b);
        if let Some(i) = nic_a {
            self.add(fab.nics_of(na)[i as usize].pcie_up, bytes);
        }
        if let Some(i) = nic_b {
            self.add(fab.nics_of(nb)[i as usize].pcie_down, bytes);
        }
        let not_connected = || CollectiveError::NotConnected {
            from: na.device,
            to: nb.device,
            names: None,
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
                Some((_, arc_in, far)) if fab.transit[far as usize] => {
                    self.add(arc_in, bytes);
                    self.access_latency(arc_in);
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
    /// looking at the peer: the NIC exists and is cabled to a switch, the node does not
    /// forward traffic itself, and the data does not pass through host memory (`inter`
    /// charges that).
    pub fn simple_end(&self, g: u32, nic: Option<u32>) -> Option<SimpleEnd> {
        let fab = self.fab;
        let node = &fab.nodes[fab.gpus[g as usize].node as usize];
        let i = nic.filter(|&i| (i as usize) < fab.nics_of(node).len())?;
        if self.staged_at(g, Some(i)) {
            return None;
        }
        let n = &fab.nics_of(node)[i as usize];
        let (out, arc_in, far) = n.access?;
        let switch = fab.transit[far as usize] && !fab.is_node[far as usize];
        (switch && !fab.transit[node.vertex as usize]).then_some(SimpleEnd {
            nic_up: n.pcie_up,
            nic_down: n.pcie_down,
            out,
            arc_in,
            attach: far,
        })
    }

    /// Attachment of a node's NIC for aggregated traffic: (arc out, arc in, transit vertex),
    /// or the node itself when it forwards (arcs ABSENT_ARC).
    pub fn attachment(&self, node: u32, nic: Option<u32>) -> Option<(ArcId, ArcId, Vertex)> {
        let fab = self.fab;
        let nd = &fab.nodes[node as usize];
        if fab.transit[nd.vertex as usize] {
            return Some((ABSENT_ARC, ABSENT_ARC, nd.vertex));
        }
        let access = nic
            .and_then(|i| fab.nics_of(nd).get(i as usize).and_then(|n| n.access))
            .or_else(|| fab.other_access_of(nd).first().copied())?;
        fab.transit[access.2 as usize].then_some(access)
    }

    pub fn add_arc(&mut self, arc: ArcId, bytes: f64) {
        self.add(arc, bytes);
        if arc != ABSENT_ARC && bytes > 0.0 {
            self.access_latency(arc);
        }
    }

    pub fn uniform(
        &mut self,
        senders: &[(Vertex, f64)],
        receivers: &[(Vertex, f64)],
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
        if !self.shm.gpus.is_empty() {
            self.shm.charge(fab, &mut self.loads);
        }
        if self.router.stop_early(Some(&self.loads)) {
            return Err(self.stopped());
        }
        self.router
            .route(&self.flows, self.routing, &mut self.loads)
            .map_err(|u| unreachable_error(fab, u))?;
        if self.router.pruned {
            return Err(self.stopped());
        }
        let switches = f64::from(self.router.max_hops) + 1.0;
        let prop = eff::propagation_us(true) * f64::from(self.router.max_hops);
        let extra = if self.uses_net {
            self.stack_us + switches * self.switch_us + prop
        } else {
            0.0
        };
        let loads = std::mem::take(&mut self.loads);
        Ok((Arc::new(loads), self.intra_hop, self.uses_net, extra))
    }
}

impl LoadBuilder<'_, '_> {
    /// Whether shortcuts that add a node's transfers in one sweep are on (always, bar tests
    /// that check them against the transfer-by-transfer sums).
    pub fn sweeps(&self) -> bool {
        !self.router.workspace.strategy.transfer_by_transfer
    }

    /// Whether the plan may stop early and a floor is worth working out now: for its first
    /// one, or to compare with a fastest time already found.
    pub(super) fn floor_wanted(&self) -> bool {
        self.router
            .prune
            .as_ref()
            .is_some_and(|prune| self.router.floor_worst == 0.0 || prune.best_us().is_some())
    }

    /// What a plan that stopped early returns (never reported: see `Router::pruned`).
    pub(super) fn stopped(&self) -> CollectiveError {
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

pub(super) fn pick_access(
    fab: &Fabric,
    list: &[(ArcId, ArcId, Vertex)],
    target: Vertex,
) -> Option<(ArcId, ArcId, Vertex)> {
    list.iter()
        .find(|a| a.2 == target)
        .or_else(|| list.iter().find(|a| fab.transit[a.2 as usize]))
        .copied()
}

pub(super) fn unreachable_error(fab: &Fabric, u: Unreachable) -> CollectiveError {
    CollectiveError::NotConnected {
        from: fab.device_ids[u.from as usize],
        to: fab.device_ids[u.to as usize],
        names: None,
    }
}
