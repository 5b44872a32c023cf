//! A Markdown table with aligned columns, shared by every Markdown-like output.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

#[derive(Debug, Clone)]
pub struct Table {
    header: Vec<String>,
    align: Vec<Align>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new(columns: &[(&str, Align)]) -> Table {
        Table {
            header: columns.iter().map(|(h, _)| h.to_string()).collect(),
            align: columns.iter().map(|(_, a)| *a).collect(),
            rows: Vec::new(),
        }
    }

    pub fn row(&mut self, cells: Vec<String>) {
        debug_assert_eq!(cells.len(), self.header.len(), "a row has one cell per column");
        self.rows.push(cells);
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// GitHub-flavoured Markdown, padded so that it also reads well as plain text.
    pub fn markdown(&self) -> String {
        let escape = |s: &str| s.replace('|', "\\|").replace('\n', " ");
        let header: Vec<String> = self.header.iter().map(|h| escape(h)).collect();
        let rows: Vec<Vec<String>> = self.rows.iter().map(|r| r.iter().map(|c| escape(c)).collect()).collect();
        let widths: Vec<usize> = (0..header.len())
            .map(|i| rows.iter().map(|r| r[i].chars().count()).chain([header[i].chars().count(), 3]).max().unwrap_or(3))
            .collect();
        let line = |cells: &[String]| {
            let padded: Vec<String> = cells
                .iter()
                .enumerate()
                .map(|(i, c)| match self.align[i] {
                    Align::Left => format!("{c:<w$}", w = widths[i]),
                    Align::Right => format!("{c:>w$}", w = widths[i]),
                })
                .collect();
            format!("| {} |\n", padded.join(" | "))
        };
        let rule: Vec<String> = widths
            .iter()
            .zip(&self.align)
            .map(|(w, a)| match a {
                Align::Left => "-".repeat(*w),
                Align::Right => format!("{}:", "-".repeat(w - 1)),
            })
            .collect();
        let mut out = line(&header);
        out.push_str(&format!("| {} |\n", rule.join(" | ")));
        for r in &rows {
            out.push_str(&line(r));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pads_and_aligns() {
        let mut t = Table::new(&[("Name", Align::Left), ("RPS", Align::Right)]);
        t.row(vec!["c-epoll".into(), "100".into()]);
        t.row(vec!["a|b".into(), "5".into()]);
        assert_eq!(t.markdown(), "| Name    | RPS |\n| ------- | --: |\n| c-epoll | 100 |\n| a\\|b    |   5 |\n");
    }
}
