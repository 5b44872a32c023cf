//! A history in a PostgreSQL database that a team shares: reached within `CONNECT_TIMEOUT` or not at all
//! (a benchmark never waits on it longer), brought to the current schema under an advisory lock (two
//! serverbench starting at once migrate once), and a run's rows replaced as a whole in one transaction.

use std::time::Duration;

use postgres::config::Host;
use postgres::types::ToSql;
use postgres::{Client, Config, NoTls};

use super::error::{DatabaseError, HistoryError};
use super::rows::{MeasurementRow, RunRow, StoredFigure};
use super::steps::StoredStep;
use super::statements::{CLEAR_VERSION, DELETE_RUN, HAS_RUN, INSERT_FIGURE, INSERT_MEASUREMENT, INSERT_RUN, RECORD_STEP, SELECT_FIGURES, SELECT_STEPS, SELECT_VERSION, SET_VERSION};
use super::store::{pending, HistoryStore};
use super::values::{Columns, Value};
use crate::model::history_schema::{Dialect, VERSION_TABLE};
use crate::model::verdict::Metric;
use crate::model::RunResult;

/// How long opening the history may take before the benchmark goes on without it, unless the setting
/// names its own `connect_timeout`.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// The password's variable, as libpq reads it, for a setting that holds none (a password in the setting
/// would be in the environment of every process the benchmark starts and in shell histories).
pub const PASSWORD_VAR: &str = "PGPASSWORD";
/// The advisory lock that migrations take ("sbhistry" in ASCII): one serverbench migrates at a time.
const MIGRATION_LOCK: i64 = 0x7362_6869_7374_7279;

pub struct PostgresStore {
    /// The database, as messages name it: without its password.
    place: String,
    client: Client,
}

/// The setting parsed, with the password from `PGPASSWORD` where it holds none, the user from `USER`
/// where it names none, and the connect timeout.
fn config(setting: &str) -> Result<Config, postgres::Error> {
    let mut config: Config = setting.parse()?;
    if config.get_password().is_none() {
        if let Some(password) = std::env::var_os(PASSWORD_VAR) {
            config.password(password.as_encoded_bytes());
        }
    }
    if config.get_user().is_none() {
        if let Ok(user) = std::env::var("USER") {
            config.user(&user);
        }
    }
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(CONNECT_TIMEOUT);
    }
    config.application_name("serverbench");
    Ok(config)
}

/// `postgres://user@host:port/database`, never with the password; the setting as it is when it cannot
/// be parsed (it then holds no password that could be told apart).
pub fn place(setting: &str) -> String {
    let Ok(config) = setting.parse::<Config>() else { return "a PostgreSQL setting that cannot be read".to_string() };
    let hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .enumerate()
        .map(|(i, host)| {
            let port = config.get_ports().get(i).or(config.get_ports().first()).map(|p| format!(":{p}")).unwrap_or_default();
            match host {
                Host::Tcp(name) => format!("{name}{port}"),
                Host::Unix(folder) => format!("{}{port}", folder.display()),
            }
        })
        .collect();
    let user = config.get_user().map(|u| format!("{u}@")).unwrap_or_default();
    format!("postgres://{user}{}/{}", hosts.join(","), config.get_dbname().unwrap_or(""))
}

impl PostgresStore {
    /// Connects with the setting (`postgres://...`, `postgresql://...` or `host=... dbname=...`) and
    /// migrates the database.
    pub fn open(setting: &str) -> Result<PostgresStore, HistoryError> {
        let place = place(setting);
        let opened = |source: postgres::Error| HistoryError::Open { place: place.clone(), source: source.into() };
        let client = config(setting).and_then(|c| c.connect(NoTls)).map_err(opened)?;
        let mut store = PostgresStore { place, client };
        store.migrate()?;
        Ok(store)
    }

    /// Applies the migrations newer than the database in one transaction under the migration lock, so
    /// that a second serverbench waits and then finds them done.
    fn migrate(&mut self) -> Result<(), HistoryError> {
        let place = &self.place;
        let mut version = 0;
        let failed = |version: u32| move |source: postgres::Error| HistoryError::Migrate { place: place.clone(), version, source: source.into() };
        let mut tx = self.client.transaction().map_err(failed(version))?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK]).map_err(failed(version))?;
        tx.batch_execute(VERSION_TABLE).map_err(failed(version))?;
        let found: Option<i32> = tx.query_one(SELECT_VERSION, &[]).map_err(failed(version))?.get(0);
        for m in pending(place, found.unwrap_or(0).try_into().unwrap_or(0))? {
            version = m.version;
            tx.batch_execute(m.sql(Dialect::Postgres)).map_err(failed(version))?;
            tx.execute(CLEAR_VERSION, &[]).map_err(failed(version))?;
            tx.execute(SET_VERSION, &[&i32::try_from(version).unwrap_or(i32::MAX)]).map_err(failed(version))?;
        }
        tx.commit().map_err(failed(version))
    }

    fn read_error(place: &str) -> impl Fn(postgres::Error) -> HistoryError + '_ {
        move |source| HistoryError::Read { place: place.to_string(), source: source.into() }
    }
}

impl HistoryStore for PostgresStore {
    fn version(&mut self) -> Result<u32, HistoryError> {
        let row = self.client.query_one(SELECT_VERSION, &[]).map_err(Self::read_error(&self.place))?;
        let version: Option<i32> = row.try_get(0).map_err(Self::read_error(&self.place))?;
        Ok(version.unwrap_or(0).try_into().unwrap_or(0))
    }

    fn record_run(&mut self, run: &RunResult) -> Result<(), HistoryError> {
        let failed = |source: postgres::Error| HistoryError::Write { place: self.place.clone(), run_id: run.run_id.clone(), source: DatabaseError::from(source) };
        let mut tx = self.client.transaction().map_err(failed)?;
        tx.execute(DELETE_RUN, &[&run.run_id]).map_err(failed)?;
        tx.execute(INSERT_RUN, &params(&RunRow::of(run).values())).map_err(failed)?;
        let insert_measurement = tx.prepare(INSERT_MEASUREMENT).map_err(failed)?;
        let insert_figure = tx.prepare(INSERT_FIGURE).map_err(failed)?;
        for m in MeasurementRow::all(run) {
            let id: i64 = tx.query_one(&insert_measurement, &params(&m.values(&run.run_id))).map_err(failed)?.try_get(0).map_err(failed)?;
            for f in &m.figures {
                tx.execute(&insert_figure, &params(&f.values(id))).map_err(failed)?;
            }
        }
        tx.commit().map_err(failed)
    }

    fn figures(&mut self, metric: Metric) -> Result<Vec<StoredFigure>, HistoryError> {
        let rows = self.client.query(SELECT_FIGURES, &[&metric.key()]).map_err(Self::read_error(&self.place))?;
        rows.iter().map(StoredFigure::read).collect::<Result<Vec<_>, _>>().map_err(Self::read_error(&self.place))
    }

    fn has_run(&mut self, run_id: &str) -> Result<bool, HistoryError> {
        let found: i64 = self.client.query_one(HAS_RUN, &[&run_id]).and_then(|r| r.try_get(0)).map_err(Self::read_error(&self.place))?;
        Ok(found > 0)
    }

    fn record_step(&mut self, step: &StoredStep) -> Result<(), HistoryError> {
        self.client
            .execute(RECORD_STEP, &params(&step.values()))
            .map(|_| ())
            .map_err(|source| HistoryError::WriteStep { place: self.place.clone(), source: source.into() })
    }

    fn steps(&mut self, contestant: &str, metric: Metric, options: &str) -> Result<Vec<StoredStep>, HistoryError> {
        let rows = self.client.query(SELECT_STEPS, &[&contestant, &metric.key(), &options]).map_err(Self::read_error(&self.place))?;
        let steps = rows.iter().map(StoredStep::read).collect::<Result<Vec<_>, _>>().map_err(Self::read_error(&self.place))?;
        Ok(steps.into_iter().flatten().collect())
    }
}

/// The values as the client binds them.
fn params<'v>(values: &'v [Value<'_>]) -> Vec<&'v (dyn ToSql + Sync)> {
    values
        .iter()
        .map(|v| -> &'v (dyn ToSql + Sync) {
            match v {
                Value::Text(t) => t,
                Value::MaybeText(t) => t,
                Value::Int(i) => i,
                Value::MaybeInt(i) => i,
                Value::Bool(b) => b,
                Value::MaybeBool(b) => b,
                Value::Real(r) => r,
                Value::MaybeReal(r) => r,
            }
        })
        .collect()
}

impl Columns for postgres::Row {
    type Error = postgres::Error;
    fn text(&self, i: usize) -> Result<String, postgres::Error> {
        self.try_get(i)
    }
    fn maybe_text(&self, i: usize) -> Result<Option<String>, postgres::Error> {
        self.try_get(i)
    }
    fn int(&self, i: usize) -> Result<i64, postgres::Error> {
        self.try_get(i)
    }
    fn maybe_int(&self, i: usize) -> Result<Option<i64>, postgres::Error> {
        self.try_get(i)
    }
    fn boolean(&self, i: usize) -> Result<bool, postgres::Error> {
        self.try_get(i)
    }
    fn maybe_boolean(&self, i: usize) -> Result<Option<bool>, postgres::Error> {
        self.try_get(i)
    }
    fn real(&self, i: usize) -> Result<f64, postgres::Error> {
        self.try_get(i)
    }
    fn maybe_real(&self, i: usize) -> Result<Option<f64>, postgres::Error> {
        self.try_get(i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_place_never_shows_the_password() {
        assert_eq!(place("postgres://bench:s3cret@db.example:5433/history"), "postgres://bench@db.example:5433/history");
        assert_eq!(place("postgresql://bench:s3cret@%2Ftmp%2Fpg/history"), "postgres://bench@/tmp/pg:5432/history");
        assert_eq!(place("host=/tmp/pg dbname=h user=u password=s3cret"), "postgres://u@/tmp/pg/h");
        assert!(!place("postgres://bench:s3cret@[::1").contains("s3cret"));
    }
}
