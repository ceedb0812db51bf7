//! Per-member bearer tokens. A token is issued when a member joins (`flotilla token issue`):
//! the hub keeps only its SHA-256, in a Secret `fleet-system/fleet-member-<name>-token`, so a
//! leaked store leaks no credential. Deleting that Secret revokes the token at once, on every
//! hub replica (each request re-reads it). Tokens name their member
//! (`flotilla-member.<name>.<secret>`), so authentication is one keyed read, not a scan.

use serde_json::{Value, json};

use super::UserInfo;
use crate::engine::Engine;
use crate::status::{ApiError, ApiResult};

/// Namespace of the token Secrets.
pub const TOKEN_NAMESPACE: &str = "fleet-system";
/// Secret type of member tokens.
pub const SECRET_TYPE: &str = "flotilla.dev/member-token";
/// Annotation holding the token's SHA-256 (hex).
pub const HASH_ANNOTATION: &str = "flotilla.dev/token-sha256";
/// Label naming the member a token Secret belongs to.
pub const MEMBER_LABEL: &str = "flotilla.dev/member";
/// Group every member agent is in.
pub const MEMBERS_GROUP: &str = "fleet:members";

const PREFIX: &str = "flotilla-member.";

/// The user name a member agent authenticates as.
pub fn user_name(member: &str) -> String {
    format!("fleet-member:{member}")
}

/// The name of the Secret holding `member`'s token hash.
pub fn secret_name(member: &str) -> String {
    format!("fleet-member-{member}-token")
}

/// A token for `member` from 32 random bytes.
pub fn token(member: &str, random: &[u8; 32]) -> String {
    let secret: String = random.iter().map(|b| format!("{b:02x}")).collect();
    format!("{PREFIX}{member}.{secret}")
}

/// The member a token claims to belong to, if it has the member-token shape.
pub fn member_of(token: &str) -> Option<&str> {
    let (member, secret) = token.strip_prefix(PREFIX)?.split_once('.')?;
    (!member.is_empty() && secret.len() == 64).then_some(member)
}

/// SHA-256 of a token, hex.
pub fn hash(token: &str) -> String {
    ring::digest::digest(&ring::digest::SHA256, token.as_bytes())
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The Secret that makes `token` valid for `member`.
pub fn secret(member: &str, token: &str) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": secret_name(member),
            "namespace": TOKEN_NAMESPACE,
            "labels": {MEMBER_LABEL: member},
            "annotations": {HASH_ANNOTATION: hash(token)},
        },
        "type": SECRET_TYPE,
    })
}

/// The member user `token` authenticates, if it is a member token whose hash is stored.
pub async fn authenticate(engine: &Engine, token: &str) -> ApiResult<Option<UserInfo>> {
    let Some(member) = member_of(token) else {
        return Ok(None);
    };
    let Some(info) = engine.registry().snapshot().get("", "v1", "secrets") else {
        return Ok(None);
    };
    let stored = match engine
        .get(&info, Some(TOKEN_NAMESPACE), &secret_name(member))
        .await
    {
        Ok(s) => s,
        Err(e) if e.code == 404 => return Ok(None),
        Err(e) => {
            return Err(ApiError::internal(format!(
                "reading member token: {}",
                e.message
            )));
        }
    };
    let matches = stored["type"] == SECRET_TYPE
        && stored
            .pointer(&format!(
                "/metadata/annotations/{}",
                HASH_ANNOTATION.replace('/', "~1")
            ))
            .and_then(Value::as_str)
            .is_some_and(|h| h == hash(token));
    Ok(matches.then(|| {
        let mut user = UserInfo::new(user_name(member), [MEMBERS_GROUP.to_string()]);
        user.uid = stored
            .pointer("/metadata/uid")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        user
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_name_their_member_and_hash_stably() {
        let t = token("member-1", &[7; 32]);
        assert_eq!(member_of(&t), Some("member-1"));
        assert_eq!(member_of("flotilla-member.member-1.short"), None);
        assert_eq!(member_of("some-admin-token"), None);
        assert_eq!(hash(&t), hash(&t));
        assert_ne!(hash(&t), hash(&token("member-1", &[8; 32])));
        assert_eq!(hash(&t).len(), 64);
        let s = secret("member-1", &t);
        assert_eq!(s["metadata"]["name"], "fleet-member-member-1-token");
        assert_eq!(s["metadata"]["annotations"][HASH_ANNOTATION], hash(&t));
        assert!(
            !s.to_string().contains(&t),
            "the plaintext token is never stored"
        );
    }
}
