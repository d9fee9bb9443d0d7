//! The shared cost model: bisection, cost and power, checks, collectives, advice.
//! The designer's sidebar, the command line and the tests all call these same functions.
pub mod cost;
pub mod bisection;
pub mod graph;
