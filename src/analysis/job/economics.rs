//! Time and money of training: days to train on a number of tokens, energy at the design's
//! power and a PUE, and cost per million tokens from the capital cost written off over a
//! period plus energy at a price. The defaults are stated with their sources; every one of
//! them can be set.

use crate::model::{Catalog, Design};
use serde::Serialize;

/// Power usage effectiveness: Uptime Institute's Global Data Center Survey 2023 average, 1.58.
pub const DEFAULT_PUE: f64 = 1.58;
/// Electricity, USD per kWh: US industrial average 2023, 8.0 ¢ (EIA Electric Power Monthly,
/// Table 5.3).
pub const DEFAULT_USD_PER_KWH: f64 = 0.080;
/// A home or office adds no data-centre power chain or cooling plant to the machines' own
/// draw: PUE 1.0 (air conditioning that removes the heat, where there is any, is not counted).
pub const DESK_PUE: f64 = 1.0;
/// Electricity at home, USD per kWh: US residential average 2023, 16.0 ¢ (EIA Electric Power
/// Annual 2023, average revenue per kWh by sector), twice the industrial price.
pub const DESK_USD_PER_KWH: f64 = 0.160;
/// Years the hardware is written off over, straight line: 5, Amazon's server life from 2025
/// (its 2024 annual report; Microsoft and Alphabet use 6, Meta 5.5).
pub const DEFAULT_AMORTISATION_YEARS: f64 = 5.0;

const HOURS_PER_YEAR: f64 = 8766.0;
/// An average month: 8,766 hours a year over 12.
pub const HOURS_PER_MONTH: f64 = HOURS_PER_YEAR / 12.0;

/// What the design's electricity costs a month run flat out (every part at its listed draw)
/// at its site's PUE and price: an upper bound, since idle machines draw less.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RunningCost {
    pub kwh_per_month: f64,
    pub usd_per_month: f64,
    pub pue: f64,
    pub usd_per_kwh: f64,
    pub site: Site,
    /// The PUE or the price was given rather than the site's default.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub given: bool,
}

impl RunningCost {
    /// At the site's defaults, or at a PUE and price given in their place.
    pub fn at_full_draw_given(
        power_w: f64,
        site: Site,
        pue: Option<f64>,
        usd_per_kwh: Option<f64>,
    ) -> RunningCost {
        let (pue, price) = (
            pue.unwrap_or(site.pue()),
            usd_per_kwh.unwrap_or(site.usd_per_kwh()),
        );
        let kwh_per_month = power_w / 1e3 * pue * HOURS_PER_MONTH;
        RunningCost {
            kwh_per_month,
            usd_per_month: kwh_per_month * price,
            pue,
            usd_per_kwh: price,
            site,
            given: true,
        }
    }

    pub fn at_full_draw(power_w: f64, site: Site) -> RunningCost {
        let kwh_per_month = power_w / 1e3 * site.pue() * HOURS_PER_MONTH;
        RunningCost {
            kwh_per_month,
            usd_per_month: kwh_per_month * site.usd_per_kwh(),
            pue: site.pue(),
            usd_per_kwh: site.usd_per_kwh(),
            site,
            given: false,
        }
    }

    /// "$274 a month at full draw (1,716 kWh at PUE 1 and $0.16/kWh; desk machines at home: …)".
    pub fn text(&self) -> String {
        format!(
            "{} a month at full draw ({} kWh at PUE {} and ${}/kWh; {})",
            crate::model::Usd(self.usd_per_month).compact(),
            crate::model::units::group_thousands(self.kwh_per_month.round() as i64),
            crate::model::units::trim_number(self.pue),
            crate::model::units::trim_number(self.usd_per_kwh),
            if self.given {
                "as given"
            } else {
                self.site.basis()
            }
        )
    }
}

/// Where the machines run, which decides what energy costs by default: a data centre (its
/// overhead, an industrial price) or a desk (a wall socket, a household price).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Site {
    DataCentre,
    Desk,
}

impl Site {
    /// A desk where every GPU machine of the design is one made for a desk (a Mac Studio, a
    /// DGX Spark, a workstation); a data centre otherwise, and for a design with none.
    pub fn of(design: &Design, catalog: &Catalog) -> Site {
        let mut nodes = design
            .devices
            .iter()
            .filter_map(|d| d.kind.as_node())
            .peekable();
        let all_desk = nodes.peek().is_some()
            && nodes.all(|n| catalog.node(&n.model).is_some_and(|spec| spec.desk));
        if all_desk {
            Site::Desk
        } else {
            Site::DataCentre
        }
    }

    pub fn pue(self) -> f64 {
        match self {
            Site::DataCentre => DEFAULT_PUE,
            Site::Desk => DESK_PUE,
        }
    }

    pub fn usd_per_kwh(self) -> f64 {
        match self {
            Site::DataCentre => DEFAULT_USD_PER_KWH,
            Site::Desk => DESK_USD_PER_KWH,
        }
    }

    /// Where the defaults come from, for the line that shows them.
    pub fn basis(self) -> &'static str {
        match self {
            Site::DataCentre => {
                "a data centre's: Uptime Institute's 2023 average PUE, EIA's 2023 US industrial price"
            }
            Site::Desk => {
                "desk machines at home: no data-centre overhead, EIA's 2023 US residential price"
            }
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct EconomicsInputs {
    pub tokens_per_s: f64,
    /// Tokens to train on; None = cost per token only.
    pub tokens: Option<f64>,
    pub capital_usd: f64,
    pub power_w: f64,
    pub pue: f64,
    pub usd_per_kwh: f64,
    pub amortisation_years: f64,
    /// Renting the same GPUs instead: USD per GPU-hour (a cloud's price, energy included) and
    /// the GPUs billed; None = no rental line.
    pub rent: Option<(f64, u64)>,
    /// The site whose defaults the PUE and price are; None where the user set either.
    pub energy_defaults: Option<Site>,
}

/// The same work on rented GPUs: what the hours cost at a price per GPU-hour.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Rented {
    pub usd_per_gpu_hour: f64,
    pub gpus: u64,
    pub usd_per_hour: f64,
    pub usd_per_million_tokens: f64,
    /// Over `tokens`, when given.
    pub usd_total: Option<f64>,
    /// The share of the hours the owned GPUs must be busy for owning to cost less than
    /// renting (capital runs by the hour, busy or not; energy only when busy): capital per
    /// hour ÷ (rent − energy per hour). None where renting costs less even at full use.
    pub break_even_use: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Economics {
    pub train_days: Option<f64>,
    pub energy_mwh: Option<f64>,
    /// Capital written off per hour plus energy per hour.
    pub usd_per_hour: f64,
    pub usd_per_million_tokens: f64,
    pub pue: f64,
    pub usd_per_kwh: f64,
    pub amortisation_years: f64,
    pub rented: Option<Rented>,
    /// The site whose defaults the PUE and price are; None where the user set either.
    pub energy_defaults: Option<Site>,
    /// The parts of `usd_per_hour`: capital written off per hour, and energy per busy hour.
    pub capital_usd_per_hour: f64,
    pub energy_usd_per_hour: f64,
    /// Hours a million tokens take.
    pub hours_per_million_tokens: f64,
}

impl Economics {
    /// The same work on `gpus` rented GPUs at `usd_per_gpu_hour` (energy included).
    pub fn rented_at(&self, usd_per_gpu_hour: f64, gpus: u64) -> Rented {
        let hours = self.train_days.map(|d| d * 24.0);
        rented(
            (self.capital_usd_per_hour, self.energy_usd_per_hour),
            (self.hours_per_million_tokens, hours),
            (usd_per_gpu_hour, gpus),
        )
    }

    /// "; desk machines at home: …" after the PUE and price where they are a site's defaults.
    pub fn energy_basis(&self) -> String {
        self.energy_defaults
            .map(|site| format!("; {}", site.basis()))
            .unwrap_or_default()
    }
}

pub fn economics(i: &EconomicsInputs) -> Economics {
    let facility_kw = i.power_w / 1e3 * i.pue;
    let capital_per_hour = i.capital_usd / (i.amortisation_years * HOURS_PER_YEAR);
    let energy_per_hour = facility_kw * i.usd_per_kwh;
    let usd_per_hour = capital_per_hour + energy_per_hour;
    let hours_per_million = 1e6 / i.tokens_per_s / 3600.0;
    let hours = i.tokens.map(|t| t / i.tokens_per_s / 3600.0);
    Economics {
        train_days: hours.map(|h| h / 24.0),
        energy_mwh: hours.map(|h| h * facility_kw / 1e3),
        usd_per_hour,
        usd_per_million_tokens: usd_per_hour * hours_per_million,
        pue: i.pue,
        usd_per_kwh: i.usd_per_kwh,
        amortisation_years: i.amortisation_years,
        energy_defaults: i.energy_defaults,
        rented: i.rent.map(|rent| {
            rented(
                (capital_per_hour, energy_per_hour),
                (hours_per_million, hours),
                rent,
            )
        }),
        capital_usd_per_hour: capital_per_hour,
        energy_usd_per_hour: energy_per_hour,
        hours_per_million_tokens: hours_per_million,
    }
}

/// Renting `gpus` at `usd_per_gpu_hour` for work that takes `hours_per_million` per million
/// tokens (and `hours` in all), against owning at `capital_per_hour` plus `energy_per_hour`.
fn rented(
    (capital_per_hour, energy_per_hour): (f64, f64),
    (hours_per_million, hours): (f64, Option<f64>),
    (usd_per_gpu_hour, gpus): (f64, u64),
) -> Rented {
    let usd_per_hour = usd_per_gpu_hour * gpus as f64;
    Rented {
        usd_per_gpu_hour,
        gpus,
        usd_per_hour,
        usd_per_million_tokens: usd_per_hour * hours_per_million,
        usd_total: hours.map(|h| h * usd_per_hour),
        break_even_use: (usd_per_hour > energy_per_hour)
            .then(|| capital_per_hour / (usd_per_hour - energy_per_hour))
            .filter(|&u| u <= 1.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cost_per_token_by_hand() {
        // $8,766,000 over 5 years is $200 an hour; 100 kW at PUE 1.5 and $0.10 is $15 an hour.
        // 1M tokens/s: a million tokens take 1/3600 h, so $215/3600 = 5.97 ¢ per million.
        let e = economics(&EconomicsInputs {
            tokens_per_s: 1e6,
            tokens: Some(1e12),
            capital_usd: 8_766_000.0,
            power_w: 100_000.0,
            pue: 1.5,
            usd_per_kwh: 0.10,
            amortisation_years: 5.0,
            rent: Some((2.0, 64)),
            energy_defaults: None,
        });
        assert!((e.usd_per_hour - 215.0).abs() < 1e-9);
        assert!((e.usd_per_million_tokens - 215.0 / 3600.0).abs() < 1e-12);
        // 1e12 tokens at 1e6/s: 1e6 s = 11.574 days; energy 277.8 h × 150 kW = 41.67 MWh.
        assert!((e.train_days.unwrap() - 1e6 / 86400.0).abs() < 1e-9);
        // Rented: 64 GPUs at $2 an hour is $128 an hour, 3.56 ¢ per million tokens, and
        // $35,556 over the 277.8 hours.
        let r = e.rented.expect("a rental line");
        assert!((r.usd_per_hour - 128.0).abs() < 1e-9);
        assert!((r.usd_per_million_tokens - 128.0 / 3600.0).abs() < 1e-12);
        assert!((r.usd_total.unwrap() - 128.0 * 1e6 / 3600.0).abs() < 1e-6);
        assert!((e.energy_mwh.unwrap() - 1e6 / 3600.0 * 150.0 / 1e3).abs() < 1e-9);
        // $128 rented against $200 of capital and $15 of energy an hour: renting costs less
        // even busy every hour. At $4 a GPU-hour ($256) owning pays off above
        // 200 / (256 − 15) = 83.0 % of the hours.
        assert_eq!(r.break_even_use, None);
        let dearer = economics(&EconomicsInputs {
            tokens_per_s: 1e6,
            tokens: None,
            capital_usd: 8_766_000.0,
            power_w: 100_000.0,
            pue: 1.5,
            usd_per_kwh: 0.10,
            amortisation_years: 5.0,
            rent: Some((4.0, 64)),
            energy_defaults: None,
        });
        let u = dearer
            .rented
            .and_then(|r| r.break_even_use)
            .expect("pays off");
        assert!((u - 200.0 / 241.0).abs() < 1e-12, "{u}");
        // Asked afterwards (a comparison's rent), the owned figures give the same line: the
        // $4 rent of 64 GPUs is $256 an hour, 7.11 ¢ per million tokens, 83.0 % to break even.
        let later = e.rented_at(4.0, 64);
        assert!((later.usd_per_million_tokens - 256.0 / 3600.0).abs() < 1e-12);
        assert!((later.usd_total.unwrap() - 256.0 * 1e6 / 3600.0).abs() < 1e-6);
        assert!((later.break_even_use.unwrap() - 200.0 / 241.0).abs() < 1e-12);
        // Owned machines that cost nothing to hold or run (written off, free power): renting
        // still has a price per token, and owning always pays (no share to reach).
        let free = economics(&EconomicsInputs {
            tokens_per_s: 1e6,
            tokens: None,
            capital_usd: 0.0,
            power_w: 100_000.0,
            pue: 1.0,
            usd_per_kwh: 0.0,
            amortisation_years: 5.0,
            rent: None,
            energy_defaults: None,
        })
        .rented_at(2.0, 64);
        assert!((free.usd_per_million_tokens - 128.0 / 3600.0).abs() < 1e-12);
        assert_eq!(free.break_even_use, Some(0.0));
    }
}
