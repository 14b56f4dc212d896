//! The markdown formats of trusted skill sources, parsed strictly: source descriptors
//! (YAML list items inside ```` ```yaml ```` fences), the adopter's trust list, an
//! org-curated list, the discovery registry (two tables) and pointer files
//! (`skills/<name>/source.md`). Parsing is pure: callers hand in the text.
//!
//! Unknown keys, duplicate keys, YAML 1.1 booleans and unquoted numbers are errors (the
//! strict options of `docs/decisions/0001-yaml-parser.md`). Every problem names the file,
//! the line in the markdown file, the source id when known, the field and a stable code.
//!
//! One module per format (`descriptor`, `trust_list`, `curated`, `registry`, `pointer`),
//! the markdown scanning and the strict YAML reader they share (`markdown`, `yaml`, which
//! also reads a lock file item by item), and the diagnostics (`diagnostics`). Every public
//! item is re-exported here.

mod curated;
mod descriptor;
mod diagnostics;
mod markdown;
mod pointer;
mod registry;
mod trust_list;
mod yaml;

pub use curated::{CURATED_SECTION, DescriptorFile, parse_curated};
pub use descriptor::{Descriptor, Provide, ReferenceEntry, RejectedEntry, TreeLayout};
pub use diagnostics::{FileProblem, codes};
pub use pointer::{Pointer, PointerLines, parse_pointer};
pub use registry::{CommunityRow, CuratedRow, Registry, parse_registry};
pub use trust_list::{TRUSTED_SECTION, TrustEntry, TrustList, parse_trust_list};

pub(crate) use markdown::{frontmatter, join_lines, split_lines};
pub(crate) use yaml::{list_items, parse_yaml};

#[cfg(test)]
mod tests;
