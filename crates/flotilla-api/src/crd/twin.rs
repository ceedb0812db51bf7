//! Namespaced twins of cluster-scoped kinds: KubeFleet's `ResourcePlacement`,
//! `ResourceBinding`, `ResourceSnapshot`, `SchedulingPolicySnapshot`, `StagedUpdateStrategy`,
//! `StagedUpdateRun` and `ApprovalRequest` carry exactly the spec and status of
//! `ClusterResourcePlacement`, `ClusterResourceBinding`, `ClusterResourceSnapshot`,
//! `ClusterSchedulingPolicySnapshot`, `ClusterStagedUpdateStrategy`, `ClusterStagedUpdateRun`
//! and `ClusterApprovalRequest` and differ only in name and scope.
//!
//! `#[derive(CustomResource)]` turns one spec struct into one kind, so a second kind over the
//! same spec is written by [`namespaced_twin!`]: the root struct (`metadata`, `spec`, `status`,
//! serialized with `apiVersion` and `kind` as the derive does) and its kube traits, with the CRD
//! taken from the cluster twin's by [`namespaced_crd`]. Both kinds then implement
//! `HasSpec<Spec = S>` and `HasStatus<Status = T>` for the same `S` and `T`, and convert into
//! each other with `From` (metadata, spec and status move over), so controllers can be written
//! once over either scope. A kind without status (`ClusterStagedUpdateStrategy`) has a twin
//! without status: neither has a `status` field nor implements `HasStatus`.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

/// The names of a namespaced twin, and the description its schema carries.
pub(crate) struct TwinNames {
    /// Kind, e.g. `ResourcePlacement`.
    pub kind: &'static str,
    /// Resource name, e.g. `resourceplacements`.
    pub plural: &'static str,
    /// Singular name, e.g. `resourceplacement`.
    pub singular: &'static str,
    /// The one short name, e.g. `rp`.
    pub short_name: &'static str,
    /// Description of the kind (the root schema's).
    pub description: &'static str,
}

/// The CRD of a namespaced twin, made from its cluster twin's derived CRD (before
/// [`super::served_versions`] or [`super::finished`]): same group, version, categories,
/// schema and columns; the twin's names; `Namespaced` scope. Printer columns reading a
/// placement-level condition (`@.type=="ClusterResourcePlacementScheduled"`) read the twin's
/// (`ResourcePlacementScheduled`), since KubeFleet prefixes those types with the kind.
pub(crate) fn namespaced_crd(
    mut crd: CustomResourceDefinition,
    twin: &TwinNames,
) -> CustomResourceDefinition {
    let cluster_kind = std::mem::replace(&mut crd.spec.names.kind, twin.kind.to_string());
    let names = &mut crd.spec.names;
    names.plural = twin.plural.to_string();
    names.singular = Some(twin.singular.to_string());
    names.short_names = Some(vec![twin.short_name.to_string()]);
    if names.list_kind.is_some() {
        names.list_kind = Some(format!("{}List", twin.kind));
    }
    crd.metadata.name = Some(format!("{}.{}", twin.plural, crd.spec.group));
    crd.spec.scope = "Namespaced".to_string();
    let (from, to) = (
        format!(r#"@.type=="{cluster_kind}"#),
        format!(r#"@.type=="{}"#, twin.kind),
    );
    for version in &mut crd.spec.versions {
        for column in version.additional_printer_columns.iter_mut().flatten() {
            column.json_path = column.json_path.replace(&from, &to);
        }
        if let Some(schema) = version
            .schema
            .as_mut()
            .and_then(|s| s.open_api_v3_schema.as_mut())
        {
            schema.description = Some(twin.description.to_string());
        }
    }
    crd
}

/// Declares a namespaced twin of a cluster-scoped kind of `placement.kubernetes-fleet.io`
/// (see the module documentation):
///
/// ```text
/// namespaced_twin! {
///     /// Doc of the kind.
///     pub struct ResourcePlacement: twin of ClusterResourcePlacement {
///         spec: PlacementSpec,
///         status: PlacementStatus,
///         plural: "resourceplacements",
///         singular: "resourceplacement",
///         short_name: "rp",
///         description: "ResourcePlacement selects …",
///         derive: [],
///     }
/// }
/// ```
///
/// `status` is left out for a cluster twin that has none (derived without `status = …`):
/// the twin then has no `status` field and no `HasStatus`. `derive` lists extra derives of the
/// root struct (`Default` where the spec has one); it always derives `Clone`, `Debug`,
/// `PartialEq` and `Deserialize`.
macro_rules! namespaced_twin {
    (
        $(#[doc = $doc:literal])+
        pub struct $kind:ident: twin of $cluster:ident {
            spec: $spec:ty,
            $(status: $status:ty,)?
            plural: $plural:literal,
            singular: $singular:literal,
            short_name: $short:literal,
            description: $description:literal,
            derive: [$($derive:ident),*] $(,)?
        }
    ) => {
        $(#[doc = $doc])+
        #[derive(::serde::Deserialize, Clone, Debug, PartialEq $(, $derive)*)]
        #[serde(rename_all = "camelCase")]
        pub struct $kind {
            /// Standard object metadata; the namespace is the one the object lives and acts in.
            pub metadata: ::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
            /// Desired state, the same type as the cluster-scoped twin's.
            pub spec: $spec,
            $(
            /// Observed state, the same type as the cluster-scoped twin's.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub status: Option<$status>,
            )?
        }

        impl $kind {
            /// An object named `name` (the namespace is the caller's to set) with `spec` and
            /// no status, as `#[derive(CustomResource)]`'s constructor makes.
            pub fn new(name: &str, spec: $spec) -> Self {
                Self {
                    metadata: ::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                        name: Some(name.to_string()),
                        ..Default::default()
                    },
                    spec,
                    $(status: None::<$status>,)?
                }
            }
        }

        impl ::serde::Serialize for $kind {
            fn serialize<S: ::serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
                use ::kube::core::Resource as _;
                use ::serde::ser::SerializeStruct as _;
                let mut obj = ser.serialize_struct(
                    stringify!($kind),
                    4 $(+ usize::from(Option::<$status>::is_some(&self.status)))?,
                )?;
                obj.serialize_field("apiVersion", &Self::api_version(&()))?;
                obj.serialize_field("kind", &Self::kind(&()))?;
                obj.serialize_field("metadata", &self.metadata)?;
                obj.serialize_field("spec", &self.spec)?;
                $(
                if let Some(status) = &self.status {
                    obj.serialize_field::<$status>("status", status)?;
                }
                )?
                obj.end()
            }
        }

        impl ::kube::core::Resource for $kind {
            type DynamicType = ();
            type Scope = ::kube::core::NamespaceResourceScope;

            fn group(dt: &()) -> ::std::borrow::Cow<'_, str> {
                <$cluster as ::kube::core::Resource>::group(dt)
            }

            fn kind(_: &()) -> ::std::borrow::Cow<'_, str> {
                stringify!($kind).into()
            }

            fn version(dt: &()) -> ::std::borrow::Cow<'_, str> {
                <$cluster as ::kube::core::Resource>::version(dt)
            }

            fn api_version(dt: &()) -> ::std::borrow::Cow<'_, str> {
                <$cluster as ::kube::core::Resource>::api_version(dt)
            }

            fn plural(_: &()) -> ::std::borrow::Cow<'_, str> {
                $plural.into()
            }

            fn meta(&self) -> &::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                &self.metadata
            }

            fn meta_mut(
                &mut self,
            ) -> &mut ::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                &mut self.metadata
            }
        }

        impl ::core::convert::From<$cluster> for $kind {
            /// The same object as the namespaced twin: metadata, spec and status move over
            /// unchanged (the namespace is the metadata's).
            fn from(object: $cluster) -> Self {
                Self {
                    metadata: object.metadata,
                    spec: object.spec,
                    $(status: ::core::convert::identity::<Option<$status>>(object.status),)?
                }
            }
        }

        impl ::core::convert::From<$kind> for $cluster {
            /// The same object as the cluster-scoped twin: metadata, spec and status move
            /// over unchanged, so code written over the cluster-scoped type (the pure cores)
            /// reads either.
            fn from(object: $kind) -> Self {
                Self {
                    metadata: object.metadata,
                    spec: object.spec,
                    $(status: ::core::convert::identity::<Option<$status>>(object.status),)?
                }
            }
        }

        impl ::kube::core::object::HasSpec for $kind {
            type Spec = $spec;

            fn spec(&self) -> &$spec {
                &self.spec
            }

            fn spec_mut(&mut self) -> &mut $spec {
                &mut self.spec
            }
        }

        $(
        impl ::kube::core::object::HasStatus for $kind {
            type Status = $status;

            fn status(&self) -> Option<&$status> {
                self.status.as_ref()
            }

            fn status_mut(&mut self) -> &mut Option<$status> {
                &mut self.status
            }
        }
        )?

        impl ::kube::CustomResourceExt for $kind {
            fn crd() -> ::k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition {
                $crate::crd::twin::namespaced_crd(
                    <$cluster as ::kube::CustomResourceExt>::crd(),
                    &$crate::crd::twin::TwinNames {
                        kind: stringify!($kind),
                        plural: $plural,
                        singular: $singular,
                        short_name: $short,
                        description: $description,
                    },
                )
            }

            fn crd_name() -> &'static str {
                concat!($plural, ".placement.kubernetes-fleet.io")
            }

            fn api_resource() -> ::kube::core::ApiResource {
                ::kube::core::ApiResource::erase::<Self>(&())
            }

            fn shortnames() -> &'static [&'static str] {
                &[$short]
            }
        }
    };
}

pub(crate) use namespaced_twin;
