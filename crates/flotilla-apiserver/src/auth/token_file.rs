//! The static token file, in kube-apiserver's `--token-auth-file` format: one
//! `token,user,uid,"group1,group2"` line per token (groups optional, `#` comments allowed).

use std::collections::HashMap;
use std::sync::Arc;

use super::UserInfo;

/// Tokens accepted from the static file, by token.
#[derive(Debug, Default)]
pub struct TokenFile {
    users: HashMap<String, Arc<UserInfo>>,
}

/// A line of the token file that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("token file line {line}: {message}")]
pub struct TokenFileError {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong with it.
    pub message: String,
}

impl TokenFile {
    /// Parses the file's text.
    pub fn parse(text: &str) -> Result<Self, TokenFileError> {
        let mut users = HashMap::new();
        for (i, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let err = |message: &str| TokenFileError {
                line: i + 1,
                message: message.to_string(),
            };
            let fields = split_csv(line).ok_or_else(|| err("unbalanced quotes"))?;
            let [token, user, uid, rest @ ..] = fields.as_slice() else {
                return Err(err("expected token,user,uid[,\"group1,group2\"]"));
            };
            if token.is_empty() || user.is_empty() {
                return Err(err("token and user must not be empty"));
            }
            let groups = rest
                .first()
                .map(|g| {
                    g.split(',')
                        .map(str::trim)
                        .filter(|g| !g.is_empty())
                        .map(String::from)
                        .collect::<Vec<_>>()
                })
                .unwrap_or_default();
            let mut info = UserInfo::new(user.clone(), groups);
            info.uid = uid.clone();
            if users.insert(token.clone(), Arc::new(info)).is_some() {
                return Err(err("duplicate token"));
            }
        }
        Ok(Self { users })
    }

    /// One administrator token (what `flotilla up` writes): user `name` in `groups`.
    pub fn single(token: &str, name: &str, groups: &[&str]) -> Self {
        let info = UserInfo::new(name, groups.iter().map(|g| g.to_string()));
        Self {
            users: HashMap::from([(token.to_string(), Arc::new(info))]),
        }
    }

    /// The user a token belongs to.
    pub fn lookup(&self, token: &str) -> Option<Arc<UserInfo>> {
        self.users.get(token).cloned()
    }
}

/// Splits a CSV line, honouring double quotes; `None` when a quote is left open.
fn split_csv(line: &str) -> Option<Vec<String>> {
    let mut fields = vec![String::new()];
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => fields.push(String::new()),
            c => fields.last_mut()?.push(c),
        }
    }
    (!quoted).then(|| fields.into_iter().map(|f| f.trim().to_string()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_kube_token_file_lines() {
        let file = TokenFile::parse("# admins\nabc,alice,u1,\"fleet:admins,ops\"\n\ndef,bob,u2\n")
            .unwrap();
        let alice = file.lookup("abc").unwrap();
        assert_eq!(alice.name, "alice");
        assert_eq!(alice.uid, "u1");
        assert_eq!(
            alice.groups,
            ["fleet:admins", "ops", "system:authenticated"]
        );
        assert_eq!(file.lookup("def").unwrap().groups, ["system:authenticated"]);
        assert!(file.lookup("nope").is_none());
    }

    #[test]
    fn rejects_bad_lines_with_their_number() {
        let e = TokenFile::parse("abc,alice,u1\nonly-token\n").unwrap_err();
        assert_eq!(e.line, 2);
        let e = TokenFile::parse("abc,alice,u1,\"open\n").unwrap_err();
        assert_eq!(e.message, "unbalanced quotes");
        let e = TokenFile::parse("abc,alice,u1\nabc,bob,u2\n").unwrap_err();
        assert_eq!((e.line, e.message.as_str()), (2, "duplicate token"));
    }
}
