//! Which of the two interfaces a server serves; the routes, the OpenAPI
//! document, the reference page and SimpleFIN differ by it.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interface {
    /// `/api/v1`, API keys.
    Personal,
    /// `/api/platform`: apps' users, OAuth 2 tokens, bearer data endpoints.
    Platform,
}

impl Interface {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Interface::Personal => "Personal API",
            Interface::Platform => "Platform API",
        }
    }

    pub(crate) fn binary(self) -> &'static str {
        match self {
            Interface::Personal => "personal-api",
            Interface::Platform => "platform-api",
        }
    }

    pub(crate) fn about(self) -> &'static str {
        match self {
            Interface::Personal => {
                "Tributary Personal API: serves /api/v1 (accounts, transactions, balances, holdings) to API-key holders."
            }
            Interface::Platform => {
                "Tributary Platform API: serves integrators' apps under /api/platform (users, OAuth 2 tokens, bearer data endpoints, portal sessions)."
            }
        }
    }
}
