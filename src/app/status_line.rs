//! The status bar's line: what the last action said, with its age once a minute has passed,
//! greyed once the design it spoke of has changed or another tab is active.

/// The status line's text and the moment it was set.
pub(super) struct StatusMoment {
    pub text: String,
    /// The active tab's id and its design's revision then.
    pub design: (u64, u64),
    /// egui's clock then, in seconds.
    pub since_s: f64,
}

impl StatusMoment {
    /// The line as shown while `design` is active at `now_s`: its age once a minute has passed,
    /// and greyed once the design has changed or another tab is active, since it may no longer
    /// describe what is on screen.
    pub fn line(&self, design: (u64, u64), now_s: f64) -> egui::RichText {
        let minutes = ((now_s - self.since_s) / 60.0).floor();
        let text = if minutes >= 1.0 {
            format!("{} · {minutes:.0} min ago", self.text)
        } else {
            self.text.clone()
        };
        let line = egui::RichText::new(text);
        if design == self.design {
            line
        } else {
            line.weak()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_says_its_age_and_fades_when_the_design_moves_on() {
        let saved = StatusMoment {
            text: "Saved a.ron".into(),
            design: (1, 7),
            since_s: 10.0,
        };
        let weak = |line: egui::RichText| line == egui::RichText::new(line.text()).weak();
        let fresh = saved.line((1, 7), 40.0);
        assert_eq!(fresh.text(), "Saved a.ron");
        assert!(!weak(fresh));
        assert_eq!(
            saved.line((1, 7), 10.0 + 150.0).text(),
            "Saved a.ron · 2 min ago"
        );
        // An edit since, or another tab, greys it.
        assert!(weak(saved.line((1, 8), 40.0)));
        assert!(weak(saved.line((2, 7), 40.0)));
    }
}
