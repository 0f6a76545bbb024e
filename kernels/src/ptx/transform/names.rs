//! Fresh names for what the transforms add to an entry: a register prefix
//! (`%tly`), a label prefix (`$TALLY_`) and a shared-variable prefix
//! (`__tally_`), each checked against every name the entry and the module
//! already use, so generated code can never capture or shadow a name.

use crate::ptx::ast::*;
use crate::ptx::walk::body_names;

/// The prefixes chosen for one generated entry.
#[derive(Debug, Clone)]
pub(crate) struct Names {
    /// Register prefix, e.g. `%tly`; registers are `%tlygx`, `%tlyL`, ...
    pub reg: String,
    /// Label prefix, e.g. `$TALLY_`; labels are `$TALLY_loop`, ...
    pub label: String,
    /// Function-scope shared-variable prefix, e.g. `__tally_`.
    pub shared: String,
}

/// `base`, or `base` + `N_` for the smallest N, such that no taken name
/// starts with the result (so `result + anything` is fresh).
fn fresh(base: &str, taken: &[&str]) -> String {
    if !taken.iter().any(|t| t.starts_with(base)) {
        return base.to_string();
    }
    (1u32..)
        .map(|n| format!("{base}{n}_"))
        .find(|p| !taken.iter().any(|t| t.starts_with(p.as_str())))
        .unwrap_or_else(|| base.to_string())
}

impl Names {
    /// Picks prefixes fresh for `entry` within module `m`.
    pub(crate) fn for_entry(m: &Module, entry: &Function) -> Names {
        let mut taken: Vec<&str> = Vec::new();
        if let Some(body) = &entry.body {
            body_names(body, &mut taken);
        }
        for p in entry.params.iter().flatten() {
            taken.extend(p.declarators.iter().map(|d| d.name.as_str()));
        }
        for item in &m.items {
            match item {
                Item::Var(v) => taken.extend(v.declarators.iter().map(|d| d.name.as_str())),
                Item::Function(f) => taken.push(&f.name),
                Item::Verbatim(_) => {}
            }
        }
        Names {
            reg: fresh("%tly", &taken),
            label: fresh("$TALLY_", &taken),
            shared: fresh("__tally_", &taken),
        }
    }

    /// Replaces the `@R@`, `@L@` and `@S@` placeholders in a code template.
    pub(crate) fn expand(&self, template: &str) -> String {
        template
            .replace("@R@", &self.reg)
            .replace("@L@", &self.label)
            .replace("@S@", &self.shared)
    }
}
