//! The two placement families one set of controllers serves: the cluster-scoped
//! `ClusterResourcePlacement` with its `ClusterSchedulingPolicySnapshot`s,
//! `ClusterResourceSnapshot`s and `ClusterResourceBinding`s, and the namespaced
//! `ResourcePlacement` with its `SchedulingPolicySnapshot`s, `ResourceSnapshot`s and
//! `ResourceBinding`s in its own namespace.
//!
//! The namespaced kinds are twins of the cluster-scoped ones over the very same spec and
//! status types (`flotilla_api::crd::twin`), so the controllers work on one form, the
//! cluster-scoped type (the *working form*, which the pure cores of this crate read), and a
//! [`PlacementFamily`] names the kinds to read and write at the API edge: a record read from
//! the hub converts into its working form, and a record written converts back (metadata, spec
//! and status move over; the namespace is in the metadata). Which family a placement belongs
//! to is also in its [`PlacementKey`]: a namespace means a `ResourcePlacement`.

use std::fmt::Debug;
use std::sync::Arc;

use flotilla_api::placement::binding::ResourceBindingStatus;
use flotilla_api::placement::staged_update_run::{UpdateRunSpec, UpdateRunStatus};
use flotilla_api::placement::{
    ApprovalRequest, ClusterApprovalRequest, ClusterResourceBinding, ClusterResourcePlacement,
    ClusterResourceSnapshot, ClusterSchedulingPolicySnapshot, ClusterStagedUpdateRun,
    ClusterStagedUpdateStrategy, PlacementSpec, PlacementStatus, ResourceBinding,
    ResourceBindingSpec, ResourcePlacement, ResourceSnapshot, SchedulingPolicySnapshot,
    StagedUpdateRun, StagedUpdateStrategy,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::core::object::{HasSpec, HasStatus};
use kube::core::{ClusterResourceScope, NamespaceResourceScope};
use kube::runtime::reflector::ObjectRef;
use kube::{Api, Client, Resource, ResourceExt};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::placement_key::PlacementKey;
use crate::status::PlacementKind;

/// How objects of one scope are reached: everywhere for cluster-scoped kinds, in one
/// namespace for namespaced kinds.
pub(crate) trait ScopeApi {
    /// The API of `K` objects: all of them, or those of `namespace`.
    fn api<K>(client: &Client, namespace: Option<&str>) -> Api<K>
    where
        K: Resource<DynamicType = (), Scope = Self>;
}

impl ScopeApi for ClusterResourceScope {
    fn api<K>(client: &Client, _: Option<&str>) -> Api<K>
    where
        K: Resource<DynamicType = (), Scope = Self>,
    {
        Api::all(client.clone())
    }
}

impl ScopeApi for NamespaceResourceScope {
    fn api<K>(client: &Client, namespace: Option<&str>) -> Api<K>
    where
        K: Resource<DynamicType = (), Scope = Self>,
    {
        Api::namespaced(client.clone(), namespace.unwrap_or_default())
    }
}

/// A kind the controllers read, write and watch: a typed hub object of either scope.
pub(crate) trait Object:
    Resource<DynamicType = (), Scope: ScopeApi>
    + Clone
    + DeserializeOwned
    + Serialize
    + Debug
    + Send
    + Sync
    + 'static
{
}

impl<K> Object for K where
    K: Resource<DynamicType = (), Scope: ScopeApi>
        + Clone
        + DeserializeOwned
        + Serialize
        + Debug
        + Send
        + Sync
        + 'static
{
}

/// A record kind whose working form is `W`, the cluster-scoped twin (itself, for the
/// cluster-scoped family).
pub(crate) trait Record<W>: Object + From<W> + Into<W> {}

impl<K, W> Record<W> for K where K: Object + From<W> + Into<W> {}

/// A placement kind: spec and status are a `ClusterResourcePlacement`'s.
pub(crate) trait Placement:
    Object + HasSpec<Spec = PlacementSpec> + HasStatus<Status = PlacementStatus>
{
}

impl<K> Placement for K where
    K: Object + HasSpec<Spec = PlacementSpec> + HasStatus<Status = PlacementStatus>
{
}

/// A placement kind and its records.
pub(crate) trait PlacementFamily: Send + Sync + 'static {
    /// The placement.
    type Placement: Placement;
    /// Its bindings (which the work generator reads as they are, spec and status).
    type Binding: Record<ClusterResourceBinding>
        + HasSpec<Spec = ResourceBindingSpec>
        + HasStatus<Status = ResourceBindingStatus>;
    /// Its resource snapshots.
    type ResourceSnapshot: Record<ClusterResourceSnapshot>;
    /// Its scheduling policy snapshots.
    type PolicySnapshot: Record<ClusterSchedulingPolicySnapshot>;
    /// The kind, which prefixes the placement-level condition types.
    const KIND: PlacementKind;

    /// A binding as read (shared with a watch cache) in its working form: the same object
    /// for the cluster-scoped family, a converted copy for the namespaced one. Bindings are
    /// read thousands at a time, on every reconcile of a large placement.
    fn working_binding(binding: Arc<Self::Binding>) -> Arc<ClusterResourceBinding>;
}

/// A placement family with staged update runs: the run, strategy and approval request kinds
/// of its scope.
pub(crate) trait UpdateRunFamily: PlacementFamily {
    /// The staged update run, whose spec and status are readable in place (a run's status
    /// lists every cluster, megabytes at 10,000: too much to copy for a look).
    type Run: Record<ClusterStagedUpdateRun>
        + HasSpec<Spec = UpdateRunSpec>
        + HasStatus<Status = UpdateRunStatus>;
    /// The staged update strategy.
    type Strategy: Record<ClusterStagedUpdateStrategy>;
    /// The approval request.
    type Approval: Record<ClusterApprovalRequest>;
}

impl UpdateRunFamily for ClusterFamily {
    type Run = ClusterStagedUpdateRun;
    type Strategy = ClusterStagedUpdateStrategy;
    type Approval = ClusterApprovalRequest;
}

impl UpdateRunFamily for NamespacedFamily {
    type Run = StagedUpdateRun;
    type Strategy = StagedUpdateStrategy;
    type Approval = ApprovalRequest;
}

/// `ClusterResourcePlacement` and its cluster-scoped records.
pub(crate) struct ClusterFamily;

impl PlacementFamily for ClusterFamily {
    type Placement = ClusterResourcePlacement;
    type Binding = ClusterResourceBinding;
    type ResourceSnapshot = ClusterResourceSnapshot;
    type PolicySnapshot = ClusterSchedulingPolicySnapshot;
    const KIND: PlacementKind = PlacementKind::ClusterResourcePlacement;

    fn working_binding(binding: Arc<Self::Binding>) -> Arc<ClusterResourceBinding> {
        binding
    }
}

/// `ResourcePlacement` and its records in its namespace.
pub(crate) struct NamespacedFamily;

impl PlacementFamily for NamespacedFamily {
    type Placement = ResourcePlacement;
    type Binding = ResourceBinding;
    type ResourceSnapshot = ResourceSnapshot;
    type PolicySnapshot = SchedulingPolicySnapshot;
    const KIND: PlacementKind = PlacementKind::ResourcePlacement;

    fn working_binding(binding: Arc<Self::Binding>) -> Arc<ClusterResourceBinding> {
        Arc::new((*binding).clone().into())
    }
}

/// The API of `K` objects in the scope of `placement`: all of them for a
/// `ClusterResourcePlacement`, those of its namespace for a `ResourcePlacement`.
pub(crate) fn api<K: Object>(client: &Client, placement: &PlacementKey) -> Api<K> {
    api_in(client, placement.namespace())
}

/// The API of `K` objects: all of them for a cluster-scoped kind, those of `namespace` for a
/// namespaced one.
pub(crate) fn api_in<K: Object>(client: &Client, namespace: Option<&str>) -> Api<K> {
    <K::Scope as ScopeApi>::api(client, namespace)
}

/// The key of a placement object.
pub(crate) fn key_of(object: &impl Resource) -> PlacementKey {
    PlacementKey::of(object.meta().namespace.as_deref(), &object.name_any())
}

/// The reference to the placement `key` a controller queues.
pub(crate) fn object_ref<K: Object>(key: &PlacementKey) -> ObjectRef<K> {
    let reference = ObjectRef::new(&key.name);
    match key.namespace() {
        Some(namespace) => reference.within(namespace),
        None => reference,
    }
}

/// The controller owner reference to `owner` that the objects made for it carry (a
/// placement's snapshots and bindings, which live in its scope; an override's snapshots; a
/// cluster binding's Works), so that deleting the owner deletes them.
pub(crate) fn owner_reference<K: Object>(owner: &K) -> OwnerReference {
    OwnerReference {
        api_version: K::api_version(&()).into_owned(),
        kind: K::kind(&()).into_owned(),
        name: owner.name_any(),
        uid: owner.uid().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

/// A placement of either kind as one reconcile reads it.
pub(crate) struct Parent<'a> {
    /// Which placement.
    pub key: PlacementKey,
    /// Its metadata as read (the version status writes are conditioned on).
    pub meta: &'a ObjectMeta,
    /// Its spec.
    pub spec: &'a PlacementSpec,
    /// Its status, if written yet.
    pub status: Option<&'a PlacementStatus>,
}

impl<'a> Parent<'a> {
    /// The reconcile's view of `placement`.
    pub fn of<P: Placement>(placement: &'a P) -> Self {
        Self {
            key: key_of(placement),
            meta: placement.meta(),
            spec: placement.spec(),
            status: placement.status(),
        }
    }

    /// The placement's generation.
    pub fn generation(&self) -> i64 {
        self.meta.generation.unwrap_or_default()
    }
}
