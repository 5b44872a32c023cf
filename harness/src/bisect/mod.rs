//! `serverbench bisect NAME --good REV --bad REV`: which commit changed a contestant's figure. The commits
//! between the ends that change its inputs (`commits`), searched by A/B steps (`search`); the steps
//! themselves, each an A/B run of two revisions built in worktrees, are `commands::bisect`'s.

pub mod commits;
pub mod search;

pub use commits::{between, Between, Commit};
pub use search::{bisect, Bisection, Outcome, Reading, Step};
