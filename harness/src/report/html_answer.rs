//! report.html's first screen: what the run shows (`answer`), before the environment and the rules. Per
//! table, the groups by req/s and by CPU per request side by side, then the reading of the cost figures and
//! the flags that qualify the numbers.

use super::answer::{self, COST_LABEL, FLAGS_LABEL, GROUPS_NOTE, UNPLACED_LABEL};
use super::html_page::{esc, Cell, Page, Table};
use crate::model::ranks::Places;
use crate::model::RunResult;

/// The section's anchor.
pub(super) const ID: &str = "answer";

pub(super) fn opening(page: &mut Page, run: &RunResult, places: &[Places]) {
    let answers = answer::answers(run, places);
    page.raw(r#"<section class="answer">"#);
    page.heading(2, ID, "What the run shows");
    if answers.is_empty() {
        page.para("No configuration was measured: see \"Not measured, and warnings\" at the end.");
    } else {
        page.note(GROUPS_NOTE);
    }
    for (i, a) in answers.iter().enumerate() {
        page.heading(3, &format!("{ID}-{i}"), &a.title);
        let tables: Vec<String> = a
            .by_figure()
            .into_iter()
            .zip(["rps", "cpu"])
            .filter(|((_, groups), _)| !groups.is_empty())
            .map(|((what, groups), key)| {
                let rows = groups
                    .into_iter()
                    .map(|[places, members, medians]| vec![Cell::text(places), Cell::text(members).with_class("members"), Cell::text(medians)])
                    .collect();
                let table = Table {
                    id: format!("{ID}-{i}-{key}"),
                    caption: Some(format!("{what}: groups that cannot be told apart")),
                    headers: ["places", "contestants", "medians"].map(String::from).to_vec(),
                    rows,
                };
                format!(r#"<div class="table-box">{}</div>"#, table.to_html())
            })
            .collect();
        page.raw(&format!(r#"<div class="pair">{}</div>"#, tables.join("")));
        if !a.unplaced.is_empty() {
            page.note(&format!("{UNPLACED_LABEL} {}.", a.unplaced.join(", ")));
        }
        if let Some(cost) = &a.cost {
            page.raw(&format!("<p><strong>{}</strong> {}</p>", esc(COST_LABEL), esc(cost)));
        }
        page.raw(&format!(r#"<p class="flags"><strong>{}</strong> {}</p>"#, esc(FLAGS_LABEL), esc(&a.flags)));
    }
    page.raw("</section>");
}
