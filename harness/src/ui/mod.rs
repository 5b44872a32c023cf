//! What a person sees while a run goes on: a progress bar on long work, a line per finished step, and
//! how much of that `-q` and `-v` keep. The runner says what happens as typed events (`event.rs`,
//! `warning.rs`) through `Ui::emit`; `text.rs` alone turns them into words.

pub mod event;
mod figures;
pub mod text;
pub mod warning;

use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use event::{Bar, Event};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verbosity {
    /// Results and warnings only.
    Quiet,
    Normal,
    /// Every command and round.
    Verbose,
}

pub struct Ui {
    pub level: Verbosity,
    bar: ProgressBar,
}

impl Ui {
    /// Progress goes to stderr; the bar hides itself when stderr is not a terminal.
    pub fn new(level: Verbosity) -> Ui {
        let target = if level == Verbosity::Quiet { ProgressDrawTarget::hidden() } else { ProgressDrawTarget::stderr() };
        let bar = ProgressBar::with_draw_target(Some(0), target);
        bar.set_style(
            ProgressStyle::with_template("{spinner} [{elapsed_precise}] {wide_bar} {pos}/{len} {msg}")
                .expect("a valid template")
                .progress_chars("=> "),
        );
        Ui { level, bar }
    }

    /// Shows what the runner says: a change of the bar, or the event's status and line as `text.rs` words
    /// them, the line when the verbosity keeps it.
    pub fn emit<'a>(&self, event: impl Into<Event<'a>>) {
        let event = event.into();
        if let Event::Bar(bar) = event {
            match bar {
                Bar::Begun { phase, steps } => self.start(steps, text::phase(phase)),
                Bar::Step => self.step(),
                Bar::Dropped(steps) => self.drop_steps(steps),
                Bar::Ended => self.finish(),
            }
            return;
        }
        let text::Text { status, line } = text::text(&event);
        if let Some(status) = status {
            self.status(status);
        }
        if let Some((_, line)) = line.filter(|(least, _)| self.level >= *least) {
            self.print(&line);
        }
    }

    /// Starts (or restarts) the bar for `steps` steps of `what`.
    pub fn start(&self, steps: u64, what: &str) {
        self.bar.set_length(steps);
        self.bar.set_position(0);
        self.bar.set_message(what.to_string());
        self.bar.enable_steady_tick(Duration::from_millis(200));
    }

    pub fn step(&self) {
        self.bar.inc(1);
    }

    /// Removes steps that will not run (a contestant that failed).
    pub fn drop_steps(&self, n: u64) {
        let len = self.bar.length().unwrap_or(0);
        self.bar.set_length(len.saturating_sub(n).max(self.bar.position()));
    }

    pub fn status(&self, message: String) {
        self.bar.set_message(message);
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }

    /// A line in normal and verbose mode.
    pub fn line(&self, message: &str) {
        if self.level >= Verbosity::Normal {
            self.print(message);
        }
    }

    /// A line in verbose mode only.
    pub fn detail(&self, message: &str) {
        if self.level >= Verbosity::Verbose {
            self.print(message);
        }
    }

    /// A line in every mode.
    pub fn warn(&self, message: &str) {
        self.print(message);
    }

    fn print(&self, message: &str) {
        if self.bar.is_hidden() {
            eprintln!("{message}");
        } else {
            self.bar.println(message);
        }
    }
}
