#!/usr/bin/env python3
"""Generates crates/flotilla-apiserver/src/protobuf/fields.rs: the protobuf wire field numbers of
the core Kubernetes kinds the hub serves, read from the prost sources of the k8s-pb crate (which
are generated from Kubernetes' generated.proto files).

Usage: cargo info k8s-pb@0.9.0 >/dev/null && tools/gen-protobuf-fields.py > crates/flotilla-apiserver/src/protobuf/fields.rs
"""
import glob, os, re, sys

src = glob.glob(os.path.expanduser('~/.cargo/registry/src/*/k8s-pb-0.9.0/src'))[0]
ROOTS = [
    'api.core.v1.Namespace', 'api.core.v1.ConfigMap', 'api.core.v1.Secret', 'api.core.v1.Service',
    'api.core.v1.ServiceAccount', 'api.core.v1.Event', 'api.apps.v1.Deployment', 'api.apps.v1.StatefulSet',
    'api.apps.v1.DaemonSet', 'api.batch.v1.Job', 'api.rbac.v1.Role', 'api.rbac.v1.ClusterRole',
    'api.rbac.v1.RoleBinding', 'api.rbac.v1.ClusterRoleBinding', 'api.coordination.v1.Lease',
    'api.events.v1.Event', 'api.core.v1.Node', 'api.core.v1.Pod', 'api.apps.v1.ReplicaSet',
    'api.policy.v1.PodDisruptionBudget',
    # Built-in kinds kubectl and client-go send as protobuf when users create them.
    'api.autoscaling.v1.HorizontalPodAutoscaler', 'api.autoscaling.v2.HorizontalPodAutoscaler',
    'api.autoscaling.v1.Scale', 'api.batch.v1.CronJob', 'api.core.v1.ReplicationController',
    'api.core.v1.ResourceQuota', 'api.core.v1.LimitRange', 'api.core.v1.PersistentVolumeClaim',
    'api.core.v1.PersistentVolume', 'api.core.v1.Endpoints', 'api.core.v1.PodTemplate',
    'api.discovery.v1.EndpointSlice', 'api.networking.v1.NetworkPolicy', 'api.networking.v1.Ingress',
    'api.networking.v1.IngressClass', 'api.scheduling.v1.PriorityClass', 'api.storage.v1.StorageClass',
    'api.admissionregistration.v1.ValidatingWebhookConfiguration',
    'api.admissionregistration.v1.MutatingWebhookConfiguration', 'api.apps.v1.ControllerRevision',
    'api.node.v1.RuntimeClass', 'api.policy.v1.Eviction',
    # The self-reviews kubectl sends (`kubectl auth can-i`, `kubectl auth whoami`).
    'api.authorization.v1.SelfSubjectAccessReview', 'api.authorization.v1.SelfSubjectRulesReview',
    'api.authentication.v1.SelfSubjectReview',
]
# Messages with a JSON form of their own (handled by the decoder, not by field tables).
SPECIAL = {
    'apimachinery.pkg.apis.meta.v1.Time': 'Time', 'apimachinery.pkg.apis.meta.v1.MicroTime': 'Time',
    'apimachinery.pkg.util.intstr.IntOrString': 'IntOrString', 'apimachinery.pkg.api.resource.Quantity': 'Quantity',
    'apimachinery.pkg.runtime.RawExtension': 'RawJson', 'apimachinery.pkg.apis.meta.v1.FieldsV1': 'RawJson',
}
# Go structs embedded with `json:",inline"`: their fields appear in the parent object.
INLINE = {('api.core.v1.Volume', 'volume_source'), ('api.core.v1.Probe', 'handler'),
          ('api.core.v1.EphemeralVolumeSource', 'volume_claim_template_inline'),
          ('api.core.v1.PersistentVolumeSpec', 'persistent_volume_source')}
SCALARS = {'string': 'Str', 'bytes': 'Bytes', 'bytes = "vec"': 'Bytes', 'bool': 'Bool', 'int32': 'Int', 'int64': 'Int', 'uint32': 'Int',
           'uint64': 'Int'}

msgs = {}
for f in glob.glob(src + '/**/mod.rs', recursive=True):
    pkg = os.path.dirname(os.path.relpath(f, src)).replace('/', '.')
    text = open(f).read()
    for m in re.finditer(r'pub struct (\w+) \{(.*?)\n\}', text, re.S):
        fields = []
        for chunk in m.group(2).split('#[prost(')[1:]:
            fm = re.match(r'([^\]]*)\)\]\s*pub (?:r#)?(\w+):\s*(.*)', chunk, re.S)
            ty = re.sub(r'///.*', '', fm.group(3))
            attrs, name, ty = fm.group(1), fm.group(2), ' '.join(ty.split()).rstrip(',')
            tag = int(re.search(r'tag = "(\d+)"', attrs).group(1))
            kind = attrs.split(',')[0].strip()
            fields.append((tag, name, kind, attrs, ty))
        msgs[pkg + '.' + m.group(1)] = fields

def resolve(pkg, ty):
    """Fully qualified message name of a Rust type path relative to package `pkg`."""
    wrappers = ('::core::option::Option', '::prost::alloc::vec::Vec', '::prost::alloc::boxed::Box')
    tokens = [t for t in re.findall(r'[\w:]+', ty) if t not in wrappers and t]
    inner = tokens[0].lstrip(':')
    parts = inner.split('::')
    base = pkg.split('.')
    while parts and parts[0] == 'super':
        base = base[:-1]
        parts = parts[1:]
    return '.'.join(base + parts)

def json_name(snake):
    words = snake.split('_')
    name = words[0] + ''.join(w[:1].upper() + w[1:] for w in words[1:])
    for a, b in [('Ipc', 'IPC'), ('Pid', 'PID'), ('Ips', 'IPs'), ('Ip', 'IP'), ('Urls', 'URLs'), ('Cidr', 'CIDR'), ('Uid', 'UID')]:
        if name.endswith(a) and name != a.lower():
            name = name[: -len(a)] + b
    return {'ip': 'ip', 'uid': 'uid'}.get(snake, name)

out, seen, todo = [], set(), list(ROOTS)
while todo:
    full = todo.pop()
    if full in seen or full in SPECIAL:
        continue
    seen.add(full)
    pkg = full.rsplit('.', 1)[0]
    rows = []
    for tag, name, kind, attrs, ty in sorted(msgs[full]):
        repeated = 'repeated' in attrs
        if kind.startswith(('map', 'btree_map')):
            k, v = re.search(r'map = "(\w+), (\w+(?:\([^)]*\))?)"', attrs).groups()
            if v.startswith('message'):
                target = resolve(pkg, ty.split(',', 1)[1].strip())
                vt = SPECIAL.get(target) or ('Msg("%s")' % target)
                if target not in SPECIAL:
                    todo.append(target)
            else:
                vt = SCALARS[v]
            rows.append('F { tag: %d, name: "%s", ty: T::Map(&T::%s), repeated: false }' % (tag, json_name(name), vt))
            continue
        if kind == 'message':
            target = resolve(pkg, ty)
            t = ('T::' + SPECIAL[target]) if target in SPECIAL else 'T::Msg("%s")' % target
            if target not in SPECIAL:
                todo.append(target)
        else:
            t = 'T::' + SCALARS[kind]
        # Go structs embedded inline: LocalObjectReference, VolumeSource and
        # EphemeralContainerCommon wherever a field is named after them, plus INLINE.
        type_snake = re.sub(r'(?<!^)(?=[A-Z])', '_', t.split('.')[-1].rstrip('")')).lower() if kind == 'message' else ''
        inline_type = type_snake in ('local_object_reference', 'volume_source', 'ephemeral_container_common')
        jname = '' if (full, name) in INLINE or (name == type_snake and inline_type) else json_name(name)
        rows.append('F { tag: %d, name: "%s", ty: %s, repeated: %s }' % (tag, jname, t, 'true' if repeated else 'false'))
    out.append((full, rows))

print('//! Generated by `tools/gen-protobuf-fields.py` from the k8s-pb 0.9.0 prost sources (themselves')
print('//! generated from Kubernetes\' generated.proto): wire field numbers and JSON names of every')
print('//! message reachable from the core kinds the hub serves. Do not edit by hand.')
print()
print('use super::{Field as F, Ty as T};')
print()
print('/// Root message of each served core kind, by `apiVersion` and `kind`.')
print('#[rustfmt::skip]')
print('pub(super) fn root(api_version: &str, kind: &str) -> Option<&\'static str> {')
print('    Some(match (api_version, kind) {')
for r in ROOTS:
    parts = r.split('.')
    group, ver, kind = parts[1], parts[2], parts[3]
    group = {'core': '', 'rbac': 'rbac.authorization.k8s.io', 'coordination': 'coordination.k8s.io',
             'events': 'events.k8s.io', 'authorization': 'authorization.k8s.io',
             'authentication': 'authentication.k8s.io'}.get(group, group)
    av = ver if not group else group + '/' + ver
    print('        ("%s", "%s") => "%s",' % (av, kind, r))
print('        _ => return None,')
print('    })')
print('}')
print()
print('/// The fields of a message, by fully qualified name.')
print('#[rustfmt::skip]')
print('pub(super) fn message(name: &str) -> Option<&\'static [F]> {')
print('    Some(match name {')
# Messages with identical tables (Container and EphemeralContainerCommon, ...) share one arm.
groups = {}
for full, rows in sorted(out):
    groups.setdefault(tuple(rows), []).append(full)
for rows, names in sorted(groups.items(), key=lambda g: g[1][0]):
    print('        %s => &[' % ' | '.join('"%s"' % n for n in names))
    for r in rows:
        print('            %s,' % r)
    print('        ],')
print('        _ => return None,')
print('    })')
print('}')
