//! The dashboard's files, compiled into the binary from `crates/flotilla/ui/`.

/// One embedded file of the dashboard.
#[derive(Debug, Clone, Copy)]
pub struct Asset {
    /// Its path under `/ui/`.
    pub path: &'static str,
    /// Its `Content-Type`.
    pub content_type: &'static str,
    /// Its bytes.
    pub body: &'static [u8],
}

const HTML: &str = "text/html; charset=utf-8";
const CSS: &str = "text/css; charset=utf-8";
const JS: &str = "text/javascript; charset=utf-8";

macro_rules! asset {
    ($path:literal, $type:expr) => {
        Asset {
            path: $path,
            content_type: $type,
            body: include_bytes!(concat!("../../ui/", $path)),
        }
    };
}

impl Asset {
    /// Every file of the dashboard.
    pub const ALL: &'static [Asset] = &[
        asset!("index.html", HTML),
        asset!("app.css", CSS),
        asset!("js/main.js", JS),
        asset!("js/api.js", JS),
        asset!("js/informer.js", JS),
        asset!("js/clock.js", JS),
        asset!("js/html.js", JS),
        asset!("js/login.js", JS),
        asset!("js/fleet.js", JS),
        asset!("js/placements.js", JS),
        asset!("js/staged_runs.js", JS),
        asset!("js/update_runs.js", JS),
        asset!("js/nodes.js", JS),
    ];

    /// The file at `path` (relative to `/ui/`), if the dashboard has one.
    pub fn find(path: &str) -> Option<&'static Asset> {
        Self::ALL.iter().find(|asset| asset.path == path)
    }
}
