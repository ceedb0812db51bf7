//! What the pure controllers ask the shell to do: writes to the member's API, events to
//! record, and when to look again.

use flotilla_apiserver::metrics::{Desc, Observation};
use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::{Metadata, Resource};
use serde::Serialize;
use serde_json::Value;

use crate::objects::ObjectRef;

/// One write a controller wants made.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Create this object (its `kind` says where).
    Create(Value),
    /// Create this pod for `owner` (it may have only a `generateName`), then record
    /// `SuccessfulCreate` on the owner under the name the API gave it.
    CreatePod {
        /// The pod.
        pod: Value,
        /// The controller creating it.
        owner: ObjectRef,
    },
    /// Replace this object's spec and metadata; its `resourceVersion` guards the write (a
    /// conflict drops it: the change that caused it triggers another pass).
    Update(Value),
    /// Replace the status of the object `target` refers to (still the same uid) with `status`,
    /// keeping whatever else changed meanwhile.
    WriteStatus {
        /// The object.
        target: ObjectRef,
        /// Its new status.
        status: Value,
    },
    /// Delete this object (if it still has the referenced uid).
    Delete(ObjectRef),
    /// Delete this pod for `owner`, then record `SuccessfulDelete` on the owner.
    DeletePod {
        /// The pod.
        pod: ObjectRef,
        /// The controller deleting it.
        owner: ObjectRef,
    },
    /// Record an event.
    Record(EventNote),
}

/// Serializes a typed object for an action (typed Kubernetes objects always serialize).
fn json<T: Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

impl Action {
    /// Create `obj`.
    pub fn create<K: Serialize>(obj: &K) -> Action {
        Action::Create(json(obj))
    }

    /// Update `obj` (spec and metadata), guarded by its resourceVersion.
    pub fn update<K: Serialize>(obj: &K) -> Action {
        Action::Update(json(obj))
    }

    /// Write `status` as the status of `obj`.
    pub fn write_status<K, S>(obj: &K, status: &S) -> Action
    where
        K: Resource + Metadata<Ty = ObjectMeta>,
        S: Serialize,
    {
        Action::WriteStatus {
            target: ObjectRef::of(obj),
            status: json(status),
        }
    }

    /// Create `pod` on behalf of `owner`.
    pub fn create_pod<K, P>(pod: &P, owner: &K) -> Action
    where
        K: Resource + Metadata<Ty = ObjectMeta>,
        P: Serialize,
    {
        Action::CreatePod {
            pod: json(pod),
            owner: ObjectRef::of(owner),
        }
    }

    /// Delete `pod` on behalf of `owner`.
    pub fn delete_pod<K, P>(pod: &P, owner: &K) -> Action
    where
        K: Resource + Metadata<Ty = ObjectMeta>,
        P: Resource + Metadata<Ty = ObjectMeta>,
    {
        Action::DeletePod {
            pod: ObjectRef::of(pod),
            owner: ObjectRef::of(owner),
        }
    }
}

/// Whether an event reports normal operation or a problem.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    /// `Normal`.
    Normal,
    /// `Warning`.
    Warning,
}

impl EventType {
    /// The `type` field's value.
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Normal => "Normal",
            EventType::Warning => "Warning",
        }
    }
}

/// A core/v1 Event to record, before it gets a name and timestamps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventNote {
    /// The object the event is about.
    pub regarding: ObjectRef,
    /// Normal or Warning.
    pub kind: EventType,
    /// Short machine-readable reason (`FailedScheduling`).
    pub reason: String,
    /// Human-readable message.
    pub message: String,
    /// The component reporting it (`default-scheduler`, `deployment-controller`).
    pub component: &'static str,
}

impl EventNote {
    /// A `Normal` event.
    pub fn normal(
        component: &'static str,
        regarding: ObjectRef,
        reason: &str,
        message: String,
    ) -> EventNote {
        EventNote {
            regarding,
            kind: EventType::Normal,
            reason: reason.into(),
            message,
            component,
        }
    }

    /// A `Warning` event.
    pub fn warning(
        component: &'static str,
        regarding: ObjectRef,
        reason: &str,
        message: String,
    ) -> EventNote {
        EventNote {
            kind: EventType::Warning,
            ..EventNote::normal(component, regarding, reason, message)
        }
    }
}

/// What one pass of the controllers wants: writes in order, and the next moment something
/// will change without any write (a pod getting ready, a job pod finishing).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Plan {
    /// Writes to make, in order.
    pub actions: Vec<Action>,
    /// When to run again even if nothing is written meanwhile.
    pub wake_at: Option<Timestamp>,
    /// Metric changes the pass decided (counters it adds to, durations it observed), recorded
    /// in the member's registry by the shell.
    pub observations: Vec<Observation>,
}

impl Plan {
    /// Counts one of `desc` (a counter) at `labels`, or observes `value` when it is a
    /// histogram.
    pub fn observe(&mut self, desc: &'static Desc, labels: &[&str], value: f64) {
        self.observations.push(Observation {
            desc,
            labels: labels.iter().map(|l| l.to_string()).collect(),
            value,
        });
    }

    /// Adds an action.
    pub fn push(&mut self, action: Action) {
        self.actions.push(action);
    }

    /// Asks to run again at `at` (keeps the earliest).
    pub fn wake(&mut self, at: Timestamp) {
        self.wake_at = Some(self.wake_at.map_or(at, |w| w.min(at)));
    }

    /// Adds everything another plan wants.
    pub fn merge(&mut self, other: Plan) {
        self.actions.extend(other.actions);
        self.observations.extend(other.observations);
        if let Some(at) = other.wake_at {
            self.wake(at);
        }
    }
}
