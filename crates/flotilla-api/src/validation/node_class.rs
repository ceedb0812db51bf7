//! The AKS provider's CEL rules of an `AKSNodeClass` that its schema cannot express, at the
//! same fields with the same messages: FIPS images, swap and the kubelet, image garbage
//! collection, the kernel parameters that bound one another, the node-local DNS zones, and
//! Azure's limits on tags.

use flotilla_apimachinery::FieldError;
use serde_json::Value;

use super::path::Path;

/// Validates an `AKSNodeClass`.
pub(crate) fn validate_node_class(new: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let Some(spec) = new.get("spec") else {
        return errors;
    };
    let at = Path::new("spec");
    let fips = spec.get("fipsMode").and_then(Value::as_str) == Some("FIPS");
    let family = spec.get("imageFamily").and_then(Value::as_str);
    // Absent, the family is defaulted to `Ubuntu` before this runs.
    if fips && matches!(family, Some("Ubuntu2204" | "Ubuntu2404")) {
        errors.push(object_error(
            &at,
            spec,
            "FIPS is not yet supported for Ubuntu2204 or Ubuntu2404",
        ));
    }
    let swap = spec.pointer("/linuxOSConfig/swapFileSize").is_some();
    let fail_swap_on = spec.pointer("/kubelet/failSwapOn").and_then(Value::as_bool);
    if swap && fail_swap_on != Some(false) {
        errors.push(object_error(
            &at,
            spec,
            "kubelet.failSwapOn must be set to false when linuxOSConfig.swapFileSize is specified",
        ));
    }
    if let Some(kubelet) = spec.get("kubelet") {
        image_gc(&at.child("kubelet"), kubelet, &mut errors);
    }
    if let Some(sysctls) = spec.pointer("/linuxOSConfig/sysctls") {
        kernel_parameters(
            &at.child("linuxOSConfig").child("sysctls"),
            sysctls,
            &mut errors,
        );
    }
    if let Some(local_dns) = spec.get("localDNS") {
        zones(&at.child("localDNS"), local_dns, &mut errors);
    }
    if let Some(tags) = spec.get("tags").and_then(Value::as_object) {
        azure_tags(&at.child("tags"), tags, &mut errors);
    }
    errors
}

/// A rule on the object at `path` failing, as a kube-apiserver reports a failed CEL rule.
fn object_error(path: &Path, value: &Value, message: &str) -> FieldError {
    FieldError::invalid(path, value.clone(), message)
}

/// Image garbage collection starts above where it stops.
fn image_gc(at: &Path, kubelet: &Value, errors: &mut Vec<FieldError>) {
    let percent = |key: &str| kubelet.get(key).and_then(Value::as_i64);
    if let (Some(high), Some(low)) = (
        percent("imageGCHighThresholdPercent"),
        percent("imageGCLowThresholdPercent"),
    ) && high <= low
    {
        errors.push(object_error(
            at,
            kubelet,
            "imageGCHighThresholdPercent must be greater than imageGCLowThresholdPercent",
        ));
    }
}

/// Kernel parameters that bound one another, and the local port range.
fn kernel_parameters(at: &Path, sysctls: &Value, errors: &mut Vec<FieldError>) {
    let number = |key: &str| sysctls.get(key).and_then(Value::as_i64);
    for (low, high) in [
        ("netCoreRmemDefault", "netCoreRmemMax"),
        ("netCoreWmemDefault", "netCoreWmemMax"),
        (
            "netIPv4NeighDefaultGcThresh1",
            "netIPv4NeighDefaultGcThresh2",
        ),
        (
            "netIPv4NeighDefaultGcThresh2",
            "netIPv4NeighDefaultGcThresh3",
        ),
    ] {
        if let (Some(l), Some(h)) = (number(low), number(high))
            && l > h
        {
            errors.push(object_error(
                at,
                sysctls,
                &format!("{low} must be <= {high}"),
            ));
        }
    }
    let Some(range) = sysctls
        .get("netIPv4IPLocalPortRange")
        .and_then(Value::as_str)
    else {
        return;
    };
    // The schema's pattern (`FIRST LAST`) is checked first; only a matching range gets here
    // with two numbers.
    let ports: Vec<i64> = range
        .split(' ')
        .filter_map(|p| p.parse::<i64>().ok())
        .collect();
    let [first, last] = ports[..] else {
        return;
    };
    if !(1024..=60999).contains(&first) {
        errors.push(object_error(
            at,
            sysctls,
            "netIPv4IPLocalPortRange first port must be in [1024, 60999]",
        ));
    }
    if !(32768..=65535).contains(&last) {
        errors.push(object_error(
            at,
            sysctls,
            "netIPv4IPLocalPortRange last port must be in [32768, 65535]",
        ));
    }
    if first > last {
        errors.push(object_error(
            at,
            sysctls,
            "netIPv4IPLocalPortRange first port must be <= last port",
        ));
    }
}

/// The zones of the node-local DNS proxy: both lists hold `.` and `cluster.local`; the VNet's
/// list forwards neither the root nor external domains to the cluster's CoreDNS; no
/// `cluster.local` zone goes to the VNet's DNS; stale answers are verified over UDP only.
fn zones(at: &Path, local_dns: &Value, errors: &mut Vec<FieldError>) {
    for (list, vnet) in [("vnetDNSOverrides", true), ("kubeDNSOverrides", false)] {
        let Some(items) = local_dns.get(list).and_then(Value::as_array) else {
            continue;
        };
        let path = at.child(list);
        let field =
            |item: &Value, key: &str| item.get(key).and_then(Value::as_str).map(str::to_owned);
        let zone_of = |item: &Value| field(item, "zone").unwrap_or_default();
        let forwards_to_core =
            |item: &Value| field(item, "forwardDestination").as_deref() == Some("ClusterCoreDNS");
        let list_value = Value::Array(items.clone());
        if ![".", "cluster.local"]
            .iter()
            .all(|z| items.iter().any(|item| zone_of(item) == *z))
        {
            errors.push(object_error(
                &path,
                &list_value,
                "must contain required zones '.' and 'cluster.local'",
            ));
        }
        if vnet
            && items
                .iter()
                .any(|i| zone_of(i) == "." && forwards_to_core(i))
        {
            errors.push(object_error(
                &path,
                &list_value,
                "root zone '.' cannot be forwarded to ClusterCoreDNS from vnetDNSOverrides",
            ));
        }
        if vnet
            && items.iter().any(|i| {
                let zone = zone_of(i);
                zone != "." && !zone.ends_with("cluster.local") && forwards_to_core(i)
            })
        {
            errors.push(object_error(
                &path,
                &list_value,
                "external domains cannot be forwarded to ClusterCoreDNS from vnetDNSOverrides",
            ));
        }
        for (i, item) in items.iter().enumerate() {
            if zone_of(item).ends_with("cluster.local")
                && field(item, "forwardDestination").as_deref() == Some("VnetDNS")
            {
                errors.push(object_error(
                    &path.index(i),
                    item,
                    "'cluster.local' cannot be forwarded to VnetDNS",
                ));
            }
            if field(item, "serveStale").as_deref() == Some("Verify")
                && field(item, "protocol").as_deref() == Some("ForceTCP")
            {
                errors.push(object_error(
                    &path.index(i),
                    item,
                    "serveStale Verify cannot be used with protocol ForceTCP",
                ));
            }
        }
    }
}

/// Azure's limits on tags.
fn azure_tags(at: &Path, tags: &serde_json::Map<String, Value>, errors: &mut Vec<FieldError>) {
    let value = Value::Object(tags.clone());
    let mut refuse = |message: &str| errors.push(object_error(at, &value, message));
    if tags.keys().any(|k| k.chars().count() > 512) {
        refuse("tags keys must be less than 512 characters");
    }
    if tags.keys().any(|k| k.contains(['<', '>', '%', '&', '?'])) {
        refuse("tags keys must not contain '<', '>', '%', '&', or '?'");
    }
    if tags.keys().any(|k| k.contains('\\')) {
        refuse("tags keys must not contain '\\'");
    }
    if tags
        .values()
        .any(|v| v.as_str().is_some_and(|v| v.chars().count() > 256))
    {
        refuse("tags values must be less than 256 characters");
    }
}
