//! Taints and tolerations as the scheduler weighs them: a pod may run on a node only if it
//! tolerates every `NoSchedule` and `NoExecute` taint; `PreferNoSchedule` never blocks.

/// What a taint does to pods that do not tolerate it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Effect {
    /// New pods are not scheduled.
    NoSchedule,
    /// Schedulers avoid the node when they can; never blocks.
    PreferNoSchedule,
    /// New pods are not scheduled and running ones are evicted.
    NoExecute,
}

impl Effect {
    /// The effect named `text` (`NoSchedule`, `PreferNoSchedule`, `NoExecute`).
    pub fn parse(text: &str) -> Option<Effect> {
        match text {
            "NoSchedule" => Some(Effect::NoSchedule),
            "PreferNoSchedule" => Some(Effect::PreferNoSchedule),
            "NoExecute" => Some(Effect::NoExecute),
            _ => None,
        }
    }

    /// Whether a pod that does not tolerate a taint with this effect cannot be placed.
    pub fn blocks_scheduling(self) -> bool {
        self != Effect::PreferNoSchedule
    }
}

/// A node's (or a pool's template's) taint.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Taint {
    /// The taint key.
    pub key: String,
    /// The taint value; empty when unset.
    pub value: String,
    /// What the taint does.
    pub effect: Effect,
}

impl Taint {
    /// A taint of `key=value:effect`.
    pub fn new(key: &str, value: &str, effect: Effect) -> Self {
        Taint {
            key: key.to_string(),
            value: value.to_string(),
            effect,
        }
    }

    /// The taint of a Kubernetes object; `None` for an unknown effect.
    pub fn from_k8s(taint: &k8s_openapi::api::core::v1::Taint) -> Option<Self> {
        Some(Taint {
            key: taint.key.clone(),
            value: taint.value.clone().unwrap_or_default(),
            effect: Effect::parse(&taint.effect)?,
        })
    }
}

/// A pod's toleration.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Toleration {
    /// The tolerated key; `None` with `exists` tolerates every key.
    pub key: Option<String>,
    /// `Exists` (any value) rather than `Equal`.
    pub exists: bool,
    /// The tolerated value for `Equal`.
    pub value: String,
    /// The tolerated effect; `None` tolerates every effect.
    pub effect: Option<Effect>,
}

impl Toleration {
    /// Tolerates `key=value` with any effect.
    pub fn equal(key: &str, value: &str) -> Self {
        Toleration {
            key: Some(key.to_string()),
            exists: false,
            value: value.to_string(),
            effect: None,
        }
    }

    /// Tolerates `key` with any value and any effect.
    pub fn exists(key: &str) -> Self {
        Toleration {
            key: Some(key.to_string()),
            exists: true,
            value: String::new(),
            effect: None,
        }
    }

    /// The toleration of a Kubernetes pod; an unknown effect or operator tolerates nothing,
    /// which keeps the pod off nodes it might not tolerate.
    pub fn from_k8s(toleration: &k8s_openapi::api::core::v1::Toleration) -> Option<Self> {
        let effect = match toleration.effect.as_deref() {
            None | Some("") => None,
            Some(effect) => Some(Effect::parse(effect)?),
        };
        let exists = match toleration.operator.as_deref() {
            None | Some("") | Some("Equal") => false,
            Some("Exists") => true,
            Some(_) => return None,
        };
        Some(Toleration {
            key: toleration.key.clone().filter(|k| !k.is_empty()),
            exists,
            value: toleration.value.clone().unwrap_or_default(),
            effect,
        })
    }

    /// Whether this toleration tolerates `taint` (`v1.Toleration.ToleratesTaint`).
    pub fn tolerates(&self, taint: &Taint) -> bool {
        if self.effect.is_some_and(|effect| effect != taint.effect) {
            return false;
        }
        match &self.key {
            None => self.exists,
            Some(key) => key == &taint.key && (self.exists || self.value == taint.value),
        }
    }
}

/// The first taint in `taints` that blocks scheduling and that no toleration tolerates.
pub fn untolerated<'a>(taints: &'a [Taint], tolerations: &[Toleration]) -> Option<&'a Taint> {
    taints.iter().find(|taint| {
        taint.effect.blocks_scheduling() && !tolerations.iter().any(|t| t.tolerates(taint))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toleration_table() {
        let taint = Taint::new("gpu", "true", Effect::NoSchedule);
        let any_key = Toleration {
            key: None,
            exists: true,
            value: String::new(),
            effect: None,
        };
        let other_effect = Toleration {
            effect: Some(Effect::NoExecute),
            ..Toleration::exists("gpu")
        };
        let cases = [
            (Toleration::equal("gpu", "true"), true),
            (Toleration::equal("gpu", "false"), false),
            (Toleration::exists("gpu"), true),
            (Toleration::exists("other"), false),
            (any_key, true),
            (other_effect, false),
        ];
        for (toleration, expected) in cases {
            assert_eq!(toleration.tolerates(&taint), expected, "{toleration:?}");
        }
    }

    #[test]
    fn prefer_no_schedule_never_blocks() {
        let taints = [
            Taint::new("soft", "", Effect::PreferNoSchedule),
            Taint::new("hard", "", Effect::NoExecute),
        ];
        assert_eq!(
            untolerated(&taints, &[]).map(|t| t.key.as_str()),
            Some("hard")
        );
        assert_eq!(untolerated(&taints, &[Toleration::exists("hard")]), None);
    }
}
