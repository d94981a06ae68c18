//! HTTP API bodies (`/api/v1/...`) and the WebSocket messages of the live stream.

use crate::report::{Environment, RunError, RunStatus};
use crate::sample::{RunSummary, Sample};
use crate::spec::WorkloadSpec;
use serde::{Deserialize, Serialize};

/// Who a token belongs to.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Reads and streams (kiosks, dashboards on the LAN).
    Viewer,
    /// Also starts, stops and deletes runs.
    Operator,
}

/// Error body of every failed API call.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ApiErrorBody {
    pub code: String,
    pub message: String,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Health {
    pub status: String,
    pub version: String,
    pub protocol_version: u32,
}

/// `POST /api/v1/runs`: a target and one of a spec, a preset name or a fio job file; and
/// `POST /api/v1/groups`: the same with the `agents` it runs on.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct CreateRun {
    pub target: String,
    #[serde(default)]
    pub spec: Option<WorkloadSpec>,
    #[serde(default)]
    pub preset: Option<String>,
    #[serde(default)]
    pub name: Option<String>,
    /// Further targets run at the same time with the same workload (each with its own
    /// jobs); samples and the summary are their sum, with a part per target.
    #[serde(default)]
    pub also: Vec<String>,
    /// Knobs of the preset (test size, count, rate, ...).
    #[serde(default)]
    pub options: Option<crate::steps::PresetOptions>,
    /// Writes to a block device destroy its data: the request must repeat the device's path
    /// here (the dashboard asks the user to type it).
    #[serde(default)]
    pub confirm: Option<String>,
    /// Run the workload or preset this many times as one run, with statistics per metric
    /// (`analysis.repeat`); 1..=1000.
    #[serde(default)]
    pub repeat: Option<u32>,
    /// Idle time before each pass after the first.
    #[serde(default, deserialize_with = "crate::lenient::opt_ms")]
    #[cfg_attr(
        feature = "schema",
        schemars(schema_with = "crate::lenient::schema::opt_ms")
    )]
    pub repeat_idle_ms: Option<u64>,
    /// A fio job file's text, run in place of `spec` or `preset` as `diskscope run JOB.fio`
    /// runs it (stonewall groups as steps), on `target`. The agent follows no `include` and
    /// substitutes no `${VAR}` of its own environment for a request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fio_job: Option<String>,
    /// Start the run's I/O at this time of the agent's clock (ms since the Unix epoch), at
    /// most a minute ahead: a group's shared start. (Not in the wasm build: the dashboard
    /// sends none of the four fields so marked.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg(not(target_arch = "wasm32"))]
    pub start_at_ms: Option<u64>,
    /// `POST /api/v1/groups` only: the agents (1..64) this run starts on at a shared start,
    /// merged on the agent asked (`crate::group`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agents: Vec<crate::group::Member>,
    /// A group's time from the request to its shared start (default 2 s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg(not(target_arch = "wasm32"))]
    pub lead_ms: Option<u64>,
    /// A group member whose clock is further than this from the coordinator's is refused
    /// (default 500 ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg(not(target_arch = "wasm32"))]
    pub max_offset_ms: Option<u64>,
    /// `flushcheck`: the witness agent's operator token. Held in memory for the run and
    /// sent only to the witness: never stored (a group does not take one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg(not(target_arch = "wasm32"))]
    pub witness_token: Option<String>,
    /// What a group does when a member fails or drops off mid-run.
    #[serde(default, skip_serializing_if = "crate::group::OnFault::is_default")]
    #[cfg(not(target_arch = "wasm32"))]
    pub on_fault: crate::group::OnFault,
}

/// A fio job file to check before it runs (`POST /api/v1/fio-jobs/check`): its text and the
/// target it would run on.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct CheckFioJob {
    pub target: String,
    pub fio_job: String,
}

/// What the agent's validator finds in a workload (`POST /api/v1/specs/check`): each
/// problem names its field and value; none means the spec runs as it is.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SpecCheck {
    pub problems: Vec<crate::spec::SpecError>,
}

/// One workload option as `GET /api/v1/options` lists it (the one table,
/// `shared::options::OPTIONS`): the dashboard's New-test form is drawn from this list.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct OptionView {
    /// The option's name: the form field (`f-KEY`), the key of `POST /api/v1/specs/read`.
    pub key: String,
    /// The spec's field it lives in (`POST /api/v1/runs`'s `spec`), as the validator names it. (not read by the dashboard's build)
    #[cfg(not(target_arch = "wasm32"))]
    pub api: String,
    /// The CLI flags (the first, then aliases). (not read by the dashboard's build)
    #[cfg(not(target_arch = "wasm32"))]
    pub cli: Vec<String>,
    /// fio's names for it (none: fio has none). (not read by the dashboard's build)
    #[cfg(not(target_arch = "wasm32"))]
    pub fio: Vec<String>,
    pub label: String,
    pub help: String,
    /// text, size, count, time, micros, select, check or trace.
    pub kind: String,
    /// What an empty text field means.
    pub hint: String,
    /// A select's values.
    pub values: Vec<String>,
    /// Its text in the default spec (empty: unset).
    pub default: String,
    /// Drawn in the form's Advanced section (engine and kernel settings: batching, io_uring's
    /// fast paths, buffer memory, CPUs) rather than with the workload's own fields.
    #[serde(default)]
    pub advanced: bool,
}

/// A workload as the New-test form's fields hold it: option key → text as typed
/// (`POST /api/v1/specs/read`), or a spec written back as such texts
/// (`POST /api/v1/specs/fields`).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct SpecFields {
    pub fields: std::collections::BTreeMap<String, String>,
}

/// What a form's fields make (`POST /api/v1/specs/read`): the spec, and every problem with
/// it keyed by option (`field` is the option's key): a text that does not read, then what
/// the validator and the memory budget refuse. No problems: it runs as it is.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SpecRead {
    pub spec: crate::WorkloadSpec,
    pub problems: Vec<crate::spec::SpecError>,
}

/// A fio job file as it would run: the run's name, its steps (stonewall groups) with their
/// workloads, and the differences it would run with (`note:`s).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FioJobSteps {
    pub name: String,
    pub steps: Vec<crate::steps::Step>,
    pub notes: Vec<String>,
    /// The steps are jobs that run at once (the file is one group of several jobs), not
    /// one after another.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub together: bool,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Created {
    pub id: i64,
}

/// A run as the API shows it (samples are fetched separately).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RunInfo {
    pub id: i64,
    pub name: Option<String>,
    pub target: String,
    pub preset: Option<String>,
    pub status: RunStatus,
    pub created_ms: u64,
    pub ended_ms: Option<u64>,
    pub spec: WorkloadSpec,
    pub environment: Option<Environment>,
    pub summary: Option<RunSummary>,
    pub error: Option<RunError>,
    /// Steps of a preset run.
    #[serde(default)]
    pub steps: Vec<crate::steps::StepReport>,
    #[serde(default)]
    pub analysis: Option<crate::analysis::Analysis>,
    /// A run over several targets: each one's summary.
    #[serde(default)]
    pub targets: Vec<crate::report::TargetPart>,
    /// The steps as planned when the run started (their pauses, lengths, spans): what the
    /// live view's progress counts through. Only `GET /api/v1/runs/{id}` carries it (a
    /// history page leaves it empty).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub plan: Vec<crate::preset::PlannedStep>,
    /// The result in one line ([`crate::headline::line`]), made by the agent from the
    /// stored run, where every analysis is at hand (a probe's, a files run's, which the
    /// dashboard's build leaves out): what a history row, the kiosk and the fleet wall show.
    #[serde(default)]
    pub line: String,
    /// What the analyses found, a sentence each ([`crate::analysis::Analysis::summary_lines`]),
    /// made by the agent as `line` is.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<String>,
}

impl RunInfo {
    /// What the run is: a preset (typed) or a custom workload.
    pub fn kind(&self) -> crate::preset::RunKind {
        crate::preset::RunKind::of(self.preset.as_deref())
    }
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RunList {
    pub runs: Vec<RunInfo>,
    pub total: u64,
    pub page: u32,
    pub per_page: u32,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SampleList {
    pub run_id: i64,
    pub samples: Vec<Sample>,
}

/// A target the agent may use, with what it knows of it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TargetView {
    pub path: String,
    /// `file`, `block`, `directory` (files under it are allowed), `new` (the scratch file,
    /// created at `size` on first use) or `missing`.
    pub kind: String,
    pub size: Option<u64>,
    /// The agent's default scratch file.
    pub scratch: bool,
    /// A run is going on it.
    pub busy: bool,
    /// Why writes would be refused (mounted, swap, holders, signatures), empty when free.
    pub in_use: Vec<String>,
    /// The block device under it (itself, or the disk holding the file), when known.
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub transport: Option<String>,
    #[serde(default)]
    pub temperature_c: Option<f64>,
    #[serde(default)]
    pub health: Option<crate::devices::DeviceHealth>,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Preset {
    pub name: String,
    pub description: String,
    /// The first step's workload (what the form shows).
    pub spec: WorkloadSpec,
    /// Every step with default options on a 1 GiB target (sizes follow the real target).
    #[serde(default)]
    pub steps: Vec<crate::steps::Step>,
    /// The options it takes (keys of `PresetOptions::given`); any other is an error.
    #[serde(default)]
    pub options: Vec<String>,
}

/// What happened to a run, as streamed to subscribers.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum RunEvent {
    Started,
    Completed,
    Stopped,
    Failed,
}

/// The most samples one envelope (`samples?max_points`, the WebSocket `history`) carries:
/// two per pixel column of an 8K screen. Larger asks are refused, so a viewer cannot make
/// the agent build a 100,000-sample message per client.
pub const MAX_ENVELOPE_POINTS: u32 = 16_384;

/// Client → agent over `/api/v1/ws`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum ClientMsg {
    /// First message, when the token was not sent as an `Authorization` header.
    Auth {
        token: String,
    },
    /// Samples of one run, from `after_seq + 1` (or the first) on: history first, then live.
    Subscribe {
        run_id: i64,
        #[serde(default)]
        after_seq: Option<u64>,
        /// History as one [`ServerMsg::History`] of at most this many samples (the min/max
        /// envelope of a long run), then every new sample; without it, every stored sample.
        #[serde(default)]
        max_points: Option<u32>,
    },
    /// Whatever run starts next on this agent (and the one going on now, if any).
    SubscribeActive {
        /// As for `Subscribe`.
        #[serde(default)]
        max_points: Option<u32>,
    },
    Unsubscribe,
}

/// Agent → client over `/api/v1/ws`. (Samples dominate the stream, so the enum is as large
/// as a sample; boxing it would only add an allocation per message.)
#[allow(clippy::large_enum_variant)]
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "type", rename_all = "snake_case")]
#[cfg_attr(target_arch = "wasm32", serde(try_from = "wire::ServerMsgWire"))]
pub enum ServerMsg {
    Hello {
        protocol_version: u32,
        version: String,
        role: Role,
    },
    Subscribed {
        run_id: Option<i64>,
    },
    Sample {
        run_id: i64,
        sample: Sample,
    },
    /// A run's history up to `through_seq` as at most the asked number of samples (every
    /// one when they fit); `Sample` messages follow from `through_seq + 1`.
    History {
        run_id: i64,
        samples: Vec<Sample>,
        through_seq: Option<u64>,
    },
    Run {
        run_id: i64,
        event: RunEvent,
        error: Option<RunError>,
    },
    /// The client fell behind; the agent catches it up from the database after `after_seq`.
    Resync {
        run_id: i64,
        after_seq: Option<u64>,
    },
    Error {
        code: String,
        message: String,
    },
}

/// A trace a replay can name (`GET /api/v1/traces`): built into the agent, or a file in its
/// trace directory.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TraceInfo {
    pub name: String,
    pub description: String,
    pub builtin: bool,
    /// Size of the (compressed) trace file.
    pub bytes: u64,
}

/// Compact deserialization for the browser. `#[serde(tag = "type")]` buffers every message
/// into serde's `Content` and reads each variant back from it, which puts a second copy of
/// every sample type's reader in the wasm bundle. The dashboard reads [`ServerMsg`] (and
/// [`crate::analysis::repeat::Metric`]) through flat structs of the same JSON instead; the
/// agent keeps the derived readers, and a test holds both to the same result.
pub mod wire {
    use super::*;

    /// Every field any [`ServerMsg`] variant has, by name, beside its `type`.
    #[derive(Deserialize)]
    pub struct ServerMsgWire {
        #[serde(rename = "type")]
        kind: String,
        protocol_version: Option<u32>,
        version: Option<String>,
        role: Option<Role>,
        run_id: Option<i64>,
        sample: Option<Sample>,
        samples: Option<Vec<Sample>>,
        through_seq: Option<u64>,
        event: Option<RunEvent>,
        error: Option<RunError>,
        after_seq: Option<u64>,
        code: Option<String>,
        message: Option<String>,
    }

    fn need<T>(v: Option<T>, field: &str, kind: &str) -> Result<T, String> {
        v.ok_or_else(|| format!("missing field `{field}` in a '{kind}' message"))
    }

    impl TryFrom<ServerMsgWire> for ServerMsg {
        type Error = String;
        fn try_from(w: ServerMsgWire) -> Result<Self, String> {
            let k = w.kind.as_str();
            Ok(match k {
                "hello" => ServerMsg::Hello {
                    protocol_version: need(w.protocol_version, "protocol_version", k)?,
                    version: need(w.version, "version", k)?,
                    role: need(w.role, "role", k)?,
                },
                "subscribed" => ServerMsg::Subscribed { run_id: w.run_id },
                "sample" => ServerMsg::Sample {
                    run_id: need(w.run_id, "run_id", k)?,
                    sample: need(w.sample, "sample", k)?,
                },
                "history" => ServerMsg::History {
                    run_id: need(w.run_id, "run_id", k)?,
                    samples: need(w.samples, "samples", k)?,
                    through_seq: w.through_seq,
                },
                "run" => ServerMsg::Run {
                    run_id: need(w.run_id, "run_id", k)?,
                    event: need(w.event, "event", k)?,
                    error: w.error,
                },
                "resync" => ServerMsg::Resync {
                    run_id: need(w.run_id, "run_id", k)?,
                    after_seq: w.after_seq,
                },
                "error" => ServerMsg::Error {
                    code: need(w.code, "code", k)?,
                    message: need(w.message, "message", k)?,
                },
                other => return Err(format!("unknown message type '{other}'")),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::wire::ServerMsgWire;
    use super::*;

    /// The browser's flat reader gives what the derived one gives, for every variant.
    #[test]
    fn the_flat_reader_agrees_with_the_derived_one() {
        let mut sample = Sample {
            seq: 7,
            ..Sample::default()
        };
        sample.write.bytes = 1 << 20;
        sample.temp_c = Some(41.5);
        let msgs = [
            ServerMsg::Hello {
                protocol_version: 3,
                version: "0.1.0".into(),
                role: Role::Viewer,
            },
            ServerMsg::Subscribed { run_id: None },
            ServerMsg::Subscribed { run_id: Some(4) },
            ServerMsg::Sample {
                run_id: 4,
                sample: sample.clone(),
            },
            ServerMsg::History {
                run_id: 4,
                samples: vec![sample.clone(), sample],
                through_seq: Some(7),
            },
            ServerMsg::Run {
                run_id: 4,
                event: RunEvent::Failed,
                error: Some(RunError {
                    message: "ENOSPC".into(),
                    op: Some("write".into()),
                    offset: Some(4096),
                    errno: Some(28),
                }),
            },
            ServerMsg::Run {
                run_id: 4,
                event: RunEvent::Completed,
                error: None,
            },
            ServerMsg::Resync {
                run_id: 4,
                after_seq: Some(2),
            },
            ServerMsg::Error {
                code: "bad_request".into(),
                message: "no".into(),
            },
        ];
        for m in msgs {
            let text = serde_json::to_string(&m).expect("json");
            let derived: ServerMsg = serde_json::from_str(&text).expect("derived");
            let wire: ServerMsgWire = serde_json::from_str(&text).expect("wire");
            assert_eq!(ServerMsg::try_from(wire), Ok(derived), "{text}");
        }
        let wire: ServerMsgWire =
            serde_json::from_str(r#"{"type": "sample", "run_id": 1}"#).expect("wire");
        let e = ServerMsg::try_from(wire).expect_err("no sample");
        assert!(e.contains("`sample`"), "{e}");
    }

    #[test]
    fn a_metric_reads_the_same_flat() {
        use crate::analysis::repeat::{Metric, MetricWire, Stat};
        let m = Metric {
            step: Some("SEQ1M Q8T1 read".into()),
            name: "read MB/s".into(),
            stat: Stat::of(&[1.0, 2.0, 4.0]).expect("stat"),
        };
        let text = serde_json::to_string(&m).expect("json");
        let wire: MetricWire = serde_json::from_str(&text).expect("wire");
        let derived: Metric = serde_json::from_str(&text).expect("derived");
        assert_eq!(Metric::from(wire), derived);
    }
}
