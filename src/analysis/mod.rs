//! The shared cost model: bisection, cost and power, checks, collectives, advice.
//! The designer's sidebar, the command line and the tests all call these same functions.
pub mod checks;
pub mod cost;
pub mod finding;
pub mod metrics;
pub use metrics::{Metrics, evaluate};
pub mod accuracy;
pub mod as_built;
pub mod assess;
pub mod bisection;
pub mod calibrate;
pub mod collective;
pub mod compare;
pub mod graph;
pub mod job;
pub mod nccl_tests;
pub mod optic_cages;
pub mod refit;
pub mod twisted_pair;
pub mod validate;
pub mod whatif;
pub use assess::{Assessment, Assessor, Question, assess};
