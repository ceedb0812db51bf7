//! The table of built-in Kubernetes kinds the hub and the simulated members serve: every kind
//! kube-apiserver 1.37 serves by default (as its discovery lists them), described once each.
//!
//! The identity of each kind (group, version, kind, plural, scope) and its schema come from its
//! k8s-openapi type, so they cannot drift from the published API; an entry adds only what the
//! type does not carry: kubectl's short names and categories, the subresources, and the printer
//! columns kube-apiserver's table printers show (`printer:` columns are computed, see
//! `flotilla_apimachinery::table::printers`). The differential suite compares all of it with a
//! real kube-apiserver.

use k8s_openapi::api::{
    admissionregistration, apps, autoscaling, batch, certificates, coordination, core, discovery,
    events, flowcontrol, networking, node, policy, rbac, resource, scheduling, storage,
    storagemigration,
};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1 as apiextensions;
use k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1 as apiregistration;
use k8s_openapi::{ClusterResourceScope, NamespaceResourceScope, Resource};
use schemars::JsonSchema;
use serde_json::Value;

use super::column::{AGE, CREATED_AT, Column};
use crate::crd::schema::generate;

/// Everything needed to describe one built-in kind as a CRD.
pub(crate) struct CoreKind {
    /// API group, `""` for the core group.
    pub group: &'static str,
    /// The one served (and stored) version.
    pub version: &'static str,
    /// Kind.
    pub kind: &'static str,
    /// Resource name.
    pub plural: &'static str,
    /// Short names (`kubectl get cm`).
    pub short_names: &'static [&'static str],
    /// Categories (`kubectl get all`).
    pub categories: &'static [&'static str],
    /// Namespaced or cluster-scoped.
    pub namespaced: bool,
    /// Whether `/status` is a subresource.
    pub status: bool,
    /// Whether `/scale` is a subresource (`.spec.replicas` / `.status.replicas`).
    pub scale: bool,
    /// Whether kube-apiserver keeps `metadata.generation` for the kind (most kinds with a
    /// desired state do; ConfigMaps, Secrets, Pods, Services, RBAC and a few more do not).
    pub generation: bool,
    /// Older versions also served (name and schema), converted to and from the stored one by
    /// `conversion::convert`.
    pub also_served: &'static [OlderVersion],
    /// The group whose objects this kind's are (stored once, served in both shapes), when not
    /// its own: `events.k8s.io` Events are core Events, as in kube-apiserver.
    pub stored_with: Option<&'static str>,
    /// Printer columns.
    pub columns: &'static [Column],
    /// Fields allowed in field selectors besides `metadata.name` / `metadata.namespace`.
    pub selectable: &'static [&'static str],
    /// The schema of the kind, generated from k8s-openapi.
    pub schema: fn() -> Value,
}

/// A version served besides the stored one: its name and its schema.
pub(crate) type OlderVersion = (&'static str, fn() -> Value);

/// Whether a k8s-openapi scope type is namespaced.
pub(crate) trait Scope {
    /// True for namespaced kinds.
    const NAMESPACED: bool;
}

impl Scope for NamespaceResourceScope {
    const NAMESPACED: bool = true;
}

impl Scope for ClusterResourceScope {
    const NAMESPACED: bool = false;
}

/// The kind of k8s-openapi type `T`: its identity and schema, no subresources, an `Age` column.
const fn of<T>() -> CoreKind
where
    T: Resource + JsonSchema,
    T::Scope: Scope,
{
    CoreKind {
        group: T::GROUP,
        version: T::VERSION,
        kind: T::KIND,
        plural: T::URL_PATH_SEGMENT,
        short_names: &[],
        categories: &[],
        namespaced: <T::Scope as Scope>::NAMESPACED,
        status: false,
        scale: false,
        generation: true,
        also_served: &[],
        stored_with: None,
        columns: &[AGE],
        selectable: &[],
        schema: generate::<T>,
    }
}

const ALL: &[&str] = &["all"];
const API_EXTENSIONS: &[&str] = &["api-extensions"];

const CONTAINERS: Column = (
    "Containers",
    "string",
    "printer:join:.spec.template.spec.containers[*].name",
    1,
);
const IMAGES: Column = (
    "Images",
    "string",
    "printer:join:.spec.template.spec.containers[*].image",
    1,
);
const SELECTOR: Column = ("Selector", "string", "printer:selector:.spec.selector", 1);

/// Bindings show their role and, wide, their subjects by kind.
const BINDING_COLUMNS: &[Column] = &[
    ("Role", "string", "printer:object:.roleRef", 0),
    AGE,
    (
        "Users",
        "string",
        r#"printer:join:.subjects[?(@.kind=="User")].name"#,
        1,
    ),
    (
        "Groups",
        "string",
        r#"printer:join:.subjects[?(@.kind=="Group")].name"#,
        1,
    ),
    (
        "ServiceAccounts",
        "string",
        r#"printer:join:.subjects[?(@.kind=="ServiceAccount")].name"#,
        1,
    ),
];

const WEBHOOK_COLUMNS: &[Column] = &[("Webhooks", "integer", "printer:count:.webhooks", 0), AGE];

const POLICY_BINDING_COLUMNS: &[Column] = &[
    ("PolicyName", "string", ".spec.policyName", 0),
    ("ParamRef", "string", ".spec.paramRef.name", 0),
    AGE,
];

/// The built-in kinds, in the order their definitions are returned.
pub(crate) const CORE_KINDS: &[CoreKind] = &[
    CoreKind {
        short_names: &["ns"],
        status: true,
        columns: &[("Status", "string", ".status.phase", 0), AGE],
        selectable: &[".status.phase"],
        generation: false,
        ..of::<core::v1::Namespace>()
    },
    CoreKind {
        short_names: &["cm"],
        columns: &[
            ("Data", "string", "printer:count-text:.data,.binaryData", 0),
            AGE,
        ],
        generation: false,
        ..of::<core::v1::ConfigMap>()
    },
    CoreKind {
        columns: &[
            ("Type", "string", ".type", 0),
            ("Data", "string", "printer:count-text:.data", 0),
            AGE,
        ],
        selectable: &[".type"],
        generation: false,
        ..of::<core::v1::Secret>()
    },
    CoreKind {
        short_names: &["svc"],
        categories: ALL,
        status: true,
        columns: &[
            ("Type", "string", ".spec.type", 0),
            ("Cluster-IP", "string", ".spec.clusterIP", 0),
            ("External-IP", "string", "printer:external-ip", 0),
            ("Port(s)", "string", "printer:service-ports", 0),
            AGE,
            SELECTOR,
        ],
        generation: false,
        ..of::<core::v1::Service>()
    },
    CoreKind {
        short_names: &["sa"],
        generation: false,
        ..of::<core::v1::ServiceAccount>()
    },
    CoreKind {
        short_names: &["ev"],
        columns: &[
            ("Last Seen", "string", "printer:since:.lastTimestamp", 0),
            ("Type", "string", ".type", 0),
            ("Reason", "string", ".reason", 0),
            (
                "Object",
                "string",
                "printer:object-lower:.involvedObject",
                0,
            ),
            ("Subobject", "string", ".involvedObject.fieldPath", 1),
            ("Source", "string", ".source.component", 1),
            ("Message", "string", ".message", 0),
            ("First Seen", "string", "printer:since:.firstTimestamp", 1),
            ("Count", "string", ".count", 1),
            ("Name", "string", "printer:name", 1),
        ],
        // What `kubectl describe` selects events by, plus kube-apiserver's other event fields.
        selectable: &[
            ".involvedObject.kind",
            ".involvedObject.namespace",
            ".involvedObject.name",
            ".involvedObject.uid",
            ".involvedObject.apiVersion",
            ".involvedObject.resourceVersion",
            ".involvedObject.fieldPath",
            ".reason",
            ".reportingComponent",
            ".type",
        ],
        generation: false,
        ..of::<core::v1::Event>()
    },
    CoreKind {
        short_names: &["ev"],
        columns: &[
            (
                "Last Seen",
                "string",
                "printer:since:.deprecatedLastTimestamp",
                0,
            ),
            ("Type", "string", ".type", 0),
            ("Reason", "string", ".reason", 0),
            ("Object", "string", "printer:object-lower:.regarding", 0),
            ("Subobject", "string", ".regarding.fieldPath", 1),
            ("Source", "string", ".deprecatedSource.component", 1),
            ("Message", "string", ".note", 0),
            (
                "First Seen",
                "string",
                "printer:since:.deprecatedFirstTimestamp",
                1,
            ),
            ("Count", "string", ".deprecatedCount", 1),
            ("Name", "string", "printer:name", 1),
        ],
        selectable: &[
            ".regarding.kind",
            ".regarding.namespace",
            ".regarding.name",
            ".regarding.uid",
            ".reason",
            ".reportingController",
            ".type",
        ],
        generation: false,
        stored_with: Some(""),
        ..of::<events::v1::Event>()
    },
    CoreKind {
        short_names: &["no"],
        status: true,
        columns: &[
            ("Status", "string", "printer:node-status", 0),
            ("Roles", "string", "printer:node-roles", 0),
            AGE,
            ("Version", "string", ".status.nodeInfo.kubeletVersion", 0),
            (
                "Internal-IP",
                "string",
                r#".status.addresses[?(@.type=="InternalIP")].address"#,
                1,
            ),
            (
                "External-IP",
                "string",
                r#".status.addresses[?(@.type=="ExternalIP")].address"#,
                1,
            ),
            ("OS-Image", "string", ".status.nodeInfo.osImage", 1),
            (
                "Kernel-Version",
                "string",
                ".status.nodeInfo.kernelVersion",
                1,
            ),
            (
                "Container-Runtime",
                "string",
                ".status.nodeInfo.containerRuntimeVersion",
                1,
            ),
        ],
        generation: false,
        ..of::<core::v1::Node>()
    },
    CoreKind {
        short_names: &["po"],
        categories: ALL,
        status: true,
        columns: &[
            ("Ready", "string", "printer:pod-ready", 0),
            ("Status", "string", "printer:pod-status", 0),
            ("Restarts", "string", "printer:pod-restarts", 0),
            AGE,
            ("IP", "string", ".status.podIP", 1),
            ("Node", "string", ".spec.nodeName", 1),
            ("Nominated Node", "string", ".status.nominatedNodeName", 1),
            (
                "Readiness Gates",
                "string",
                "printer:join:.spec.readinessGates[*].conditionType",
                1,
            ),
        ],
        generation: false,
        ..of::<core::v1::Pod>()
    },
    CoreKind {
        short_names: &["ep"],
        columns: &[
            (
                "Endpoints",
                "string",
                "printer:join:.subsets[*].addresses[*].ip",
                0,
            ),
            AGE,
        ],
        generation: false,
        ..of::<core::v1::Endpoints>()
    },
    CoreKind {
        short_names: &["limits"],
        columns: &[CREATED_AT],
        generation: false,
        ..of::<core::v1::LimitRange>()
    },
    CoreKind {
        short_names: &["pvc"],
        status: true,
        columns: &[
            ("Status", "string", ".status.phase", 0),
            ("Volume", "string", ".spec.volumeName", 0),
            ("Capacity", "string", ".status.capacity.storage", 0),
            (
                "Access Modes",
                "string",
                "printer:join:.status.accessModes[*]",
                0,
            ),
            ("StorageClass", "string", ".spec.storageClassName", 0),
            (
                "VolumeAttributesClass",
                "string",
                ".spec.volumeAttributesClassName",
                0,
            ),
            AGE,
            ("VolumeMode", "string", ".spec.volumeMode", 1),
        ],
        generation: false,
        ..of::<core::v1::PersistentVolumeClaim>()
    },
    CoreKind {
        short_names: &["pv"],
        status: true,
        columns: &[
            ("Capacity", "string", ".spec.capacity.storage", 0),
            (
                "Access Modes",
                "string",
                "printer:join:.spec.accessModes[*]",
                0,
            ),
            (
                "Reclaim Policy",
                "string",
                ".spec.persistentVolumeReclaimPolicy",
                0,
            ),
            ("Status", "string", ".status.phase", 0),
            ("Claim", "string", ".spec.claimRef.name", 0),
            ("StorageClass", "string", ".spec.storageClassName", 0),
            (
                "VolumeAttributesClass",
                "string",
                ".spec.volumeAttributesClassName",
                0,
            ),
            ("Reason", "string", ".status.reason", 0),
            AGE,
            ("VolumeMode", "string", ".spec.volumeMode", 1),
        ],
        generation: false,
        ..of::<core::v1::PersistentVolume>()
    },
    CoreKind {
        columns: &[
            (
                "Containers",
                "string",
                "printer:join:.template.spec.containers[*].name",
                0,
            ),
            (
                "Images",
                "string",
                "printer:join:.template.spec.containers[*].image",
                0,
            ),
            (
                "Pod Labels",
                "string",
                "printer:labels:.template.metadata.labels",
                0,
            ),
        ],
        ..of::<core::v1::PodTemplate>()
    },
    CoreKind {
        short_names: &["rc"],
        categories: ALL,
        status: true,
        scale: true,
        columns: &[
            ("Desired", "integer", ".spec.replicas", 0),
            ("Current", "integer", ".status.replicas", 0),
            ("Ready", "integer", ".status.readyReplicas", 0),
            AGE,
            CONTAINERS,
            IMAGES,
            SELECTOR,
        ],
        ..of::<core::v1::ReplicationController>()
    },
    CoreKind {
        short_names: &["quota"],
        status: true,
        columns: &[
            ("Request", "string", "printer:labels:.status.used", 0),
            ("Limit", "string", "printer:labels:.spec.hard", 0),
            AGE,
        ],
        generation: false,
        ..of::<core::v1::ResourceQuota>()
    },
    CoreKind {
        categories: API_EXTENSIONS,
        status: true,
        columns: &[
            ("Service", "string", ".spec.service.name", 0),
            (
                "Available",
                "string",
                r#".status.conditions[?(@.type=="Available")].status"#,
                0,
            ),
            AGE,
        ],
        ..of::<apiregistration::APIService>()
    },
    CoreKind {
        columns: &[
            (
                "Controller",
                "string",
                ".metadata.ownerReferences[0].name",
                0,
            ),
            ("Revision", "string", ".revision", 0),
            AGE,
        ],
        generation: false,
        ..of::<apps::v1::ControllerRevision>()
    },
    CoreKind {
        short_names: &["ds"],
        categories: ALL,
        status: true,
        columns: &[
            ("Desired", "integer", ".status.desiredNumberScheduled", 0),
            ("Current", "integer", ".status.currentNumberScheduled", 0),
            ("Ready", "integer", ".status.numberReady", 0),
            ("Up-to-date", "integer", ".status.updatedNumberScheduled", 0),
            ("Available", "integer", ".status.numberAvailable", 0),
            (
                "Node Selector",
                "string",
                "printer:labels:.spec.template.spec.nodeSelector",
                0,
            ),
            AGE,
            CONTAINERS,
            IMAGES,
            SELECTOR,
        ],
        ..of::<apps::v1::DaemonSet>()
    },
    CoreKind {
        short_names: &["deploy"],
        categories: ALL,
        status: true,
        scale: true,
        columns: &[
            (
                "Ready",
                "string",
                "printer:ratio:.status.readyReplicas,.spec.replicas",
                0,
            ),
            (
                "Up-to-date",
                "string",
                "printer:int:.status.updatedReplicas",
                0,
            ),
            (
                "Available",
                "string",
                "printer:int:.status.availableReplicas",
                0,
            ),
            AGE,
            CONTAINERS,
            IMAGES,
            SELECTOR,
        ],
        ..of::<apps::v1::Deployment>()
    },
    CoreKind {
        short_names: &["rs"],
        categories: ALL,
        status: true,
        scale: true,
        columns: &[
            ("Desired", "integer", ".spec.replicas", 0),
            ("Current", "integer", ".status.replicas", 0),
            ("Ready", "integer", ".status.readyReplicas", 0),
            AGE,
            CONTAINERS,
            IMAGES,
            SELECTOR,
        ],
        ..of::<apps::v1::ReplicaSet>()
    },
    CoreKind {
        short_names: &["sts"],
        categories: ALL,
        status: true,
        scale: true,
        columns: &[
            (
                "Ready",
                "string",
                "printer:ratio:.status.readyReplicas,.spec.replicas",
                0,
            ),
            AGE,
            CONTAINERS,
            IMAGES,
        ],
        ..of::<apps::v1::StatefulSet>()
    },
    CoreKind {
        short_names: &["hpa"],
        categories: ALL,
        status: true,
        columns: &[
            (
                "Reference",
                "string",
                "printer:object:.spec.scaleTargetRef",
                0,
            ),
            (
                "Targets",
                "string",
                "printer:join:.spec.metrics[*].resource.name",
                0,
            ),
            ("MinPods", "string", ".spec.minReplicas", 0),
            ("MaxPods", "string", ".spec.maxReplicas", 0),
            (
                "Replicas",
                "string",
                "printer:int:.status.currentReplicas",
                0,
            ),
            AGE,
        ],
        also_served: &[("v1", generate::<autoscaling::v1::HorizontalPodAutoscaler>)],
        ..of::<autoscaling::v2::HorizontalPodAutoscaler>()
    },
    CoreKind {
        short_names: &["cj"],
        categories: ALL,
        status: true,
        columns: &[
            ("Schedule", "string", ".spec.schedule", 0),
            ("Timezone", "string", ".spec.timeZone", 0),
            ("Suspend", "boolean", ".spec.suspend", 0),
            ("Active", "integer", "printer:count:.status.active", 0),
            (
                "Last Schedule",
                "string",
                "printer:since:.status.lastScheduleTime",
                0,
            ),
            AGE,
            (
                "Containers",
                "string",
                "printer:join:.spec.jobTemplate.spec.template.spec.containers[*].name",
                1,
            ),
            (
                "Images",
                "string",
                "printer:join:.spec.jobTemplate.spec.template.spec.containers[*].image",
                1,
            ),
            (
                "Selector",
                "string",
                "printer:selector:.spec.jobTemplate.spec.selector",
                1,
            ),
        ],
        ..of::<batch::v1::CronJob>()
    },
    CoreKind {
        categories: ALL,
        status: true,
        columns: &[
            ("Status", "string", "printer:job-status", 0),
            (
                "Completions",
                "string",
                "printer:ratio:.status.succeeded,.spec.completions",
                0,
            ),
            ("Duration", "string", "printer:since:.status.startTime", 0),
            AGE,
            CONTAINERS,
            IMAGES,
            SELECTOR,
        ],
        ..of::<batch::v1::Job>()
    },
    CoreKind {
        short_names: &["csr"],
        status: true,
        columns: &[
            AGE,
            ("SignerName", "string", ".spec.signerName", 0),
            ("Requestor", "string", ".spec.username", 0),
            ("RequestedDuration", "string", ".spec.expirationSeconds", 0),
            (
                "Condition",
                "string",
                "printer:join:.status.conditions[*].type",
                0,
            ),
        ],
        ..of::<certificates::v1::CertificateSigningRequest>()
    },
    CoreKind {
        columns: &[("SignerName", "string", ".spec.signerName", 0)],
        ..of::<certificates::v1::ClusterTrustBundle>()
    },
    CoreKind {
        status: true,
        columns: &[
            ("PodName", "string", ".spec.podName", 0),
            (
                "ServiceAccountName",
                "string",
                ".spec.serviceAccountName",
                0,
            ),
            ("NodeName", "string", ".spec.nodeName", 0),
            ("SignerName", "string", ".spec.signerName", 0),
            (
                "State",
                "string",
                "printer:join:.status.conditions[*].type",
                0,
            ),
            (
                "UnverifiedUserAnnotations",
                "string",
                "printer:labels:.spec.unverifiedUserAnnotations",
                0,
            ),
        ],
        ..of::<certificates::v1::PodCertificateRequest>()
    },
    CoreKind {
        columns: &[
            ("Controller", "string", ".spec.controller", 0),
            ("Parameters", "string", ".spec.parameters.name", 0),
            AGE,
        ],
        ..of::<networking::v1::IngressClass>()
    },
    CoreKind {
        short_names: &["ing"],
        status: true,
        columns: &[
            ("Class", "string", ".spec.ingressClassName", 0),
            ("Hosts", "string", "printer:join:.spec.rules[*].host", 0),
            (
                "Address",
                "string",
                "printer:join:.status.loadBalancer.ingress[*].ip",
                0,
            ),
            (
                "Ports",
                "string",
                "printer:join:.spec.rules[*].http.paths[*].backend.service.port.number",
                0,
            ),
            AGE,
        ],
        ..of::<networking::v1::Ingress>()
    },
    CoreKind {
        short_names: &["ip"],
        columns: &[("ParentRef", "string", ".spec.parentRef.name", 0)],
        ..of::<networking::v1::IPAddress>()
    },
    CoreKind {
        short_names: &["netpol"],
        columns: &[
            (
                "Pod-Selector",
                "string",
                "printer:selector:.spec.podSelector",
                0,
            ),
            AGE,
        ],
        ..of::<networking::v1::NetworkPolicy>()
    },
    CoreKind {
        status: true,
        columns: &[("CIDRs", "string", "printer:join:.spec.cidrs[*]", 0), AGE],
        ..of::<networking::v1::ServiceCIDR>()
    },
    CoreKind {
        short_names: &["pdb"],
        status: true,
        columns: &[
            ("Min Available", "string", ".spec.minAvailable", 0),
            ("Max Unavailable", "string", ".spec.maxUnavailable", 0),
            (
                "Allowed Disruptions",
                "integer",
                ".status.disruptionsAllowed",
                0,
            ),
            AGE,
        ],
        ..of::<policy::v1::PodDisruptionBudget>()
    },
    CoreKind {
        columns: BINDING_COLUMNS,
        generation: false,
        ..of::<rbac::v1::ClusterRoleBinding>()
    },
    CoreKind {
        columns: &[CREATED_AT],
        generation: false,
        ..of::<rbac::v1::ClusterRole>()
    },
    CoreKind {
        columns: BINDING_COLUMNS,
        generation: false,
        ..of::<rbac::v1::RoleBinding>()
    },
    CoreKind {
        columns: &[CREATED_AT],
        generation: false,
        ..of::<rbac::v1::Role>()
    },
    CoreKind {
        columns: &[
            ("AttachRequired", "boolean", ".spec.attachRequired", 0),
            ("PodInfoOnMount", "boolean", ".spec.podInfoOnMount", 0),
            ("StorageCapacity", "boolean", ".spec.storageCapacity", 0),
            (
                "TokenRequests",
                "string",
                "printer:join:.spec.tokenRequests[*].audience",
                0,
            ),
            ("RequiresRepublish", "boolean", ".spec.requiresRepublish", 0),
            (
                "Modes",
                "string",
                "printer:join:.spec.volumeLifecycleModes[*]",
                0,
            ),
            AGE,
        ],
        ..of::<storage::v1::CSIDriver>()
    },
    CoreKind {
        status: true,
        columns: &[
            ("Drivers", "integer", "printer:count:.spec.drivers", 0),
            AGE,
        ],
        ..of::<storage::v1::CSINode>()
    },
    CoreKind {
        columns: &[CREATED_AT],
        ..of::<storage::v1::CSIStorageCapacity>()
    },
    CoreKind {
        short_names: &["sc"],
        columns: &[
            ("Provisioner", "string", ".provisioner", 0),
            ("ReclaimPolicy", "string", ".reclaimPolicy", 0),
            ("VolumeBindingMode", "string", ".volumeBindingMode", 0),
            ("AllowVolumeExpansion", "string", ".allowVolumeExpansion", 0),
            AGE,
        ],
        generation: false,
        ..of::<storage::v1::StorageClass>()
    },
    CoreKind {
        status: true,
        columns: &[
            ("Attacher", "string", "printer:name-of:.spec.attacher", 0),
            ("PV", "string", ".spec.source.persistentVolumeName", 0),
            ("Node", "string", ".spec.nodeName", 0),
            ("Attached", "boolean", ".status.attached", 0),
            AGE,
        ],
        ..of::<storage::v1::VolumeAttachment>()
    },
    CoreKind {
        short_names: &["vac"],
        columns: &[("DriverName", "string", ".driverName", 0), AGE],
        ..of::<storage::v1::VolumeAttributesClass>()
    },
    CoreKind {
        categories: API_EXTENSIONS,
        columns: &[
            ("Mutations", "integer", "printer:count:.spec.mutations", 0),
            ("ParamKind", "string", ".spec.paramKind.kind", 0),
            AGE,
        ],
        ..of::<admissionregistration::v1::MutatingAdmissionPolicy>()
    },
    CoreKind {
        categories: API_EXTENSIONS,
        columns: POLICY_BINDING_COLUMNS,
        ..of::<admissionregistration::v1::MutatingAdmissionPolicyBinding>()
    },
    CoreKind {
        categories: API_EXTENSIONS,
        columns: WEBHOOK_COLUMNS,
        ..of::<admissionregistration::v1::MutatingWebhookConfiguration>()
    },
    CoreKind {
        categories: API_EXTENSIONS,
        status: true,
        columns: &[
            (
                "Validations",
                "integer",
                "printer:count:.spec.validations",
                0,
            ),
            ("ParamKind", "string", ".spec.paramKind.kind", 0),
            AGE,
        ],
        ..of::<admissionregistration::v1::ValidatingAdmissionPolicy>()
    },
    CoreKind {
        categories: API_EXTENSIONS,
        columns: POLICY_BINDING_COLUMNS,
        ..of::<admissionregistration::v1::ValidatingAdmissionPolicyBinding>()
    },
    CoreKind {
        categories: API_EXTENSIONS,
        columns: WEBHOOK_COLUMNS,
        ..of::<admissionregistration::v1::ValidatingWebhookConfiguration>()
    },
    CoreKind {
        short_names: &["crd", "crds"],
        categories: API_EXTENSIONS,
        status: true,
        columns: &[
            ("Scope", "string", ".spec.scope", 0),
            (
                "Versions",
                "string",
                "printer:join:.spec.versions[*].name",
                0,
            ),
            CREATED_AT,
            ("Group", "string", ".spec.group", 1),
            ("Kind", "string", ".spec.names.kind", 1),
            (
                "ShortNames",
                "string",
                "printer:join:.spec.names.shortNames[*]",
                1,
            ),
            ("Established", "boolean", "printer:condition:Established", 1),
        ],
        ..of::<apiextensions::CustomResourceDefinition>()
    },
    CoreKind {
        short_names: &["pc"],
        columns: &[
            ("Value", "integer", ".value", 0),
            ("Global-Default", "boolean", ".globalDefault", 0),
            AGE,
            ("PreemptionPolicy", "string", ".preemptionPolicy", 0),
        ],
        ..of::<scheduling::v1::PriorityClass>()
    },
    CoreKind {
        columns: &[("Holder", "string", ".spec.holderIdentity", 0), AGE],
        generation: false,
        ..of::<coordination::v1::Lease>()
    },
    CoreKind {
        columns: &[("Handler", "string", ".handler", 0), AGE],
        generation: false,
        ..of::<node::v1::RuntimeClass>()
    },
    CoreKind {
        columns: &[
            ("AddressType", "string", ".addressType", 0),
            ("Ports", "string", "printer:join:.ports[*].port", 0),
            (
                "Endpoints",
                "string",
                "printer:join:.endpoints[*].addresses[*]",
                0,
            ),
            AGE,
        ],
        ..of::<discovery::v1::EndpointSlice>()
    },
    of::<resource::v1::DeviceClass>(),
    CoreKind {
        status: true,
        columns: &[
            ("Key", "string", ".spec.taint.key", 0),
            ("Value", "string", ".spec.taint.value", 0),
            ("Effect", "string", ".spec.taint.effect", 0),
            ("TimeAdded", "string", ".spec.taint.timeAdded", 0),
            AGE,
        ],
        ..of::<resource::v1::DeviceTaintRule>()
    },
    CoreKind {
        status: true,
        columns: &[
            (
                "State",
                "string",
                "printer:join:.status.reservedFor[*].name",
                0,
            ),
            AGE,
        ],
        ..of::<resource::v1::ResourceClaim>()
    },
    of::<resource::v1::ResourceClaimTemplate>(),
    CoreKind {
        columns: &[
            ("Node", "string", ".spec.nodeName", 0),
            ("Driver", "string", ".spec.driver", 0),
            ("Pool", "string", ".spec.pool.name", 0),
            AGE,
        ],
        ..of::<resource::v1::ResourceSlice>()
    },
    CoreKind {
        status: true,
        columns: &[
            (
                "PriorityLevel",
                "string",
                ".spec.priorityLevelConfiguration.name",
                0,
            ),
            (
                "MatchingPrecedence",
                "string",
                ".spec.matchingPrecedence",
                0,
            ),
            (
                "DistinguisherMethod",
                "string",
                ".spec.distinguisherMethod.type",
                0,
            ),
            AGE,
            (
                "MissingPL",
                "string",
                r#".status.conditions[?(@.type=="Dangling")].status"#,
                0,
            ),
        ],
        ..of::<flowcontrol::v1::FlowSchema>()
    },
    CoreKind {
        status: true,
        columns: &[
            ("Type", "string", ".spec.type", 0),
            (
                "NominalConcurrencyShares",
                "string",
                ".spec.limited.nominalConcurrencyShares",
                0,
            ),
            (
                "Queues",
                "string",
                ".spec.limited.limitResponse.queuing.queues",
                0,
            ),
            (
                "HandSize",
                "string",
                ".spec.limited.limitResponse.queuing.handSize",
                0,
            ),
            (
                "QueueLengthLimit",
                "string",
                ".spec.limited.limitResponse.queuing.queueLengthLimit",
                0,
            ),
            AGE,
        ],
        ..of::<flowcontrol::v1::PriorityLevelConfiguration>()
    },
    CoreKind {
        status: true,
        columns: &[
            ("Resource", "string", ".spec.resource.resource", 0),
            (
                "Status",
                "string",
                "printer:join:.status.conditions[*].type",
                0,
            ),
        ],
        ..of::<storagemigration::v1::StorageVersionMigration>()
    },
];
