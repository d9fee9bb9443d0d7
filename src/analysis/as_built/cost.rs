//! What a miswiring costs in the model's own terms: bisection and the time of a 1 GiB
//! all-reduce, of the design as drawn against the design with the change applied.

use crate::analysis::bisection::bisection;
use crate::analysis::collective::{CollectiveQuery, Op, Workspace, collective_in};
use crate::model::{Bytes, Catalog, Design, Link, LinkId};
use serde::Serialize;

/// The all-reduce size the figures are taken at, as `eval` defaults to.
pub const ALL_REDUCE_BYTES: Bytes = Bytes(1 << 30);

/// A design's figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Figures {
    pub bisection_gbit_s: f64,
    /// None when the model cannot run the all-reduce (a GPU cut off, say).
    pub all_reduce_us: Option<f64>,
    /// Why it cannot, then.
    pub all_reduce_error: Option<String>,
}

/// The change from the drawn design's figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Delta {
    pub bisection_gbit_s: f64,
    /// None when either side's all-reduce cannot run.
    pub all_reduce_us: Option<f64>,
    /// Why the changed design's all-reduce cannot run, when it cannot.
    pub all_reduce_error: Option<String>,
}

/// Drawn links taken out and built ones put in: the difference a fault makes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Change {
    pub remove: Vec<LinkId>,
    pub add: Vec<Link>,
}

pub fn figures(design: &Design, catalog: &Catalog, workspace: &Workspace) -> Figures {
    let query = CollectiveQuery::new(Op::AllReduce, ALL_REDUCE_BYTES);
    let all_reduce = collective_in(design, catalog, &query, workspace);
    Figures {
        bisection_gbit_s: bisection(design, catalog).value.gbit_s(),
        all_reduce_us: all_reduce.as_ref().ok().map(|r| r.time_us),
        all_reduce_error: all_reduce.err().map(|e| e.to_string()),
    }
}

/// The drawn design with `changes` applied.
pub fn apply<'a>(drawn: &Design, changes: impl IntoIterator<Item = &'a Change>) -> Design {
    let mut design = drawn.clone();
    let mut add = Vec::new();
    for change in changes {
        design.links.retain(|l| !change.remove.contains(&l.id));
        add.extend(change.add.iter().cloned());
    }
    for link in add {
        design.add_link(link);
    }
    design
}

impl Figures {
    pub fn minus(&self, base: &Figures) -> Delta {
        Delta {
            bisection_gbit_s: self.bisection_gbit_s - base.bisection_gbit_s,
            all_reduce_us: self
                .all_reduce_us
                .zip(base.all_reduce_us)
                .map(|(a, b)| a - b),
            all_reduce_error: self.all_reduce_error.clone(),
        }
    }
}
