//! Crate-level tests: the seed examples, the generated definitions, and the validation rules.

mod crds;
mod rules;
mod schema_check;
mod seeds;
