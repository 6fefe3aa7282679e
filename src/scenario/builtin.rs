//! The built-in scenarios: scenarios/*.toml embedded in the binary.

/// The built-in scenarios, embedded so `echolab run NAME` works from any directory.
pub const BUILTIN: [(&str, &str); 32] = [
    ("quick", include_str!("../../scenarios/quick.toml")),
    (
        "max-clients",
        include_str!("../../scenarios/max-clients.toml"),
    ),
    (
        "request-frequency",
        include_str!("../../scenarios/request-frequency.toml"),
    ),
    (
        "message-size",
        include_str!("../../scenarios/message-size.toml"),
    ),
    ("churn", include_str!("../../scenarios/churn.toml")),
    ("ramp", include_str!("../../scenarios/ramp.toml")),
    ("hosts", include_str!("../../scenarios/hosts.toml")),
    ("c1m", include_str!("../../scenarios/c1m.toml")),
    ("languages", include_str!("../../scenarios/languages.toml")),
    (
        "lan-100mbit",
        include_str!("../../scenarios/lan-100mbit.toml"),
    ),
    ("claim-1", include_str!("../../scenarios/claim-1.toml")),
    ("claim-2", include_str!("../../scenarios/claim-2.toml")),
    ("claim-3", include_str!("../../scenarios/claim-3.toml")),
    ("claim-4", include_str!("../../scenarios/claim-4.toml")),
    ("claim-5", include_str!("../../scenarios/claim-5.toml")),
    ("claim-6", include_str!("../../scenarios/claim-6.toml")),
    ("claim-7", include_str!("../../scenarios/claim-7.toml")),
    ("claim-8", include_str!("../../scenarios/claim-8.toml")),
    ("classic", include_str!("../../scenarios/classic.toml")),
    ("claim-9", include_str!("../../scenarios/claim-9.toml")),
    ("claim-10", include_str!("../../scenarios/claim-10.toml")),
    ("claim-11", include_str!("../../scenarios/claim-11.toml")),
    ("claim-12", include_str!("../../scenarios/claim-12.toml")),
    ("claim-13", include_str!("../../scenarios/claim-13.toml")),
    ("claim-14", include_str!("../../scenarios/claim-14.toml")),
    ("claim-15", include_str!("../../scenarios/claim-15.toml")),
    ("claim-16", include_str!("../../scenarios/claim-16.toml")),
    ("claim-17", include_str!("../../scenarios/claim-17.toml")),
    ("claim-18", include_str!("../../scenarios/claim-18.toml")),
    ("claim-19", include_str!("../../scenarios/claim-19.toml")),
    ("claim-20", include_str!("../../scenarios/claim-20.toml")),
    ("claim-21", include_str!("../../scenarios/claim-21.toml")),
];
