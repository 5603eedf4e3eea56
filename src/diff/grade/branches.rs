//! `anyOf`, `oneOf` and `allOf`: branches paired across the change, and the proofs that one
//! branch of a union accepts everything a schema accepts.

use super::combinator::{as_view, disjoint};
use super::{CONTAINER_KEYWORDS, DOC_KEYWORDS, Effect, Grader, Side, View, child, same, show};
use serde_json::{Map, Value};

/// What pairs branches that are not equal: their `type`, `const` and `required`.
fn signature(v: &Value) -> Option<String> {
    let map = v.as_object()?;
    let keyed: Map<String, Value> = ["type", "const", "required"]
        .iter()
        .filter_map(|k| map.get(*k).map(|v| ((*k).to_owned(), v.clone())))
        .collect();
    (!keyed.is_empty()).then(|| show(&Value::Object(keyed)))
}

/// Branch pairing: (old index, new index) pairs in new order, then unpaired old and new.
struct Pairing {
    pairs: Vec<(usize, usize)>,
    lost: Vec<usize>,
    gained: Vec<usize>,
}

impl Grader<'_> {
    /// One branch accepts everything `x` accepts (and, for `oneOf`, every other branch is
    /// disjoint from `x`).
    pub(super) fn union_covers(
        &mut self,
        branches: &[Value],
        side: Side,
        x: View<'_>,
        x_side: Side,
        exclusive: bool,
    ) -> bool {
        let empty = Map::new();
        (0..branches.len()).any(|i| {
            self.view_covered_by(x, x_side, &branches[i], side)
                && (!exclusive
                    || branches.iter().enumerate().all(|(j, other)| {
                        i == j
                            || as_view(self.deref(other, side).0, &empty)
                                .is_none_or(|v| disjoint(x, v))
                    }))
        })
    }

    /// `x` has a union of types (`["string", "null"]`) and each member alone is covered by
    /// a branch: `type: [a, b]` respelled as `anyOf: [{type: a}, {type: b}]`.
    pub(super) fn union_covers_by_type(
        &mut self,
        branches: &[Value],
        side: Side,
        x: View<'_>,
        x_side: Side,
        exclusive: bool,
    ) -> bool {
        let Some(Value::Array(types)) = x.get("type") else {
            return false;
        };
        types.len() > 1
            && types
                .iter()
                .all(|t| self.union_covers(branches, side, x.with_type(t), x_side, exclusive))
    }

    fn pair_branches(&self, ob: &[Value], nb: &[Value]) -> Pairing {
        let mut old_used = vec![false; ob.len()];
        let mut new_used = vec![false; nb.len()];
        let mut pairs = Vec::new();
        let signatures = |bs: &[Value], side| -> Vec<Option<String>> {
            bs.iter()
                .map(|b| signature(self.deref(b, side).0))
                .collect()
        };
        let (old_sig, new_sig) = (signatures(ob, Side::Old), signatures(nb, Side::New));
        let rules: [&dyn Fn(usize, usize) -> bool; 3] = [
            &|i, j| same(&ob[i], &nb[j]),
            &|i, j| old_sig[i].is_some() && old_sig[i] == new_sig[j],
            &|i, j| i == j,
        ];
        for rule in rules {
            for (i, used) in old_used.iter_mut().enumerate() {
                if *used {
                    continue;
                }
                if let Some(j) = (0..nb.len()).find(|&j| !new_used[j] && rule(i, j)) {
                    *used = true;
                    new_used[j] = true;
                    pairs.push((i, j));
                }
            }
        }
        pairs.sort_by_key(|&(_, j)| j);
        Pairing {
            pairs,
            lost: (0..ob.len()).filter(|&i| !old_used[i]).collect(),
            gained: (0..nb.len()).filter(|&j| !new_used[j]).collect(),
        }
    }

    /// `anyOf` / `oneOf` / `allOf` present on both sides: paired branches are walked; unpaired
    /// ones are graded by what their loss or gain can do to the combinator.
    pub(super) fn branches_changed(
        &mut self,
        group: &str,
        ob: &[Value],
        nb: &[Value],
        o: View<'_>,
        n: View<'_>,
        ptr: &str,
    ) {
        let base = child(ptr, group);
        let pairing = self.pair_branches(ob, nb);
        for &(i, j) in &pairing.pairs {
            self.walk(&ob[i], &nb[j], &child(&base, &j.to_string()));
        }
        for &i in &pairing.lost {
            let p = child(&base, &i.to_string());
            let (effect, text) = self.lost_branch(group, &ob[i], nb, n, &pairing, &p);
            self.push(effect, text);
        }
        for &j in &pairing.gained {
            let p = child(&base, &j.to_string());
            let (effect, text) = self.gained_branch(group, j, ob, nb, o, &p);
            self.push(effect, text);
        }
    }

    fn lost_branch(
        &mut self,
        group: &str,
        branch: &Value,
        nb: &[Value],
        n: View<'_>,
        pairing: &Pairing,
        p: &str,
    ) -> (Effect, String) {
        if group == "allOf" {
            let implied = nb
                .iter()
                .any(|b| self.covered_by(b, Side::New, branch, Side::Old))
                || self.view_covered_by(n.siblings(), Side::New, branch, Side::Old);
            return if implied {
                (
                    Effect::Notation,
                    format!("allOf branch removed at {p} (no-op: still implied)"),
                )
            } else {
                (Effect::Loosens, format!("allOf branch removed at {p}"))
            };
        }
        if let Some(j) =
            (0..nb.len()).find(|&j| self.covered_by(branch, Side::Old, &nb[j], Side::New))
        {
            return (
                Effect::Notation,
                format!(
                    "{group} branch removed at {p} (its values are still accepted by branch {j})"
                ),
            );
        }
        if pairing.gained.is_empty() {
            (Effect::Tightens, format!("{group} branch removed at {p}"))
        } else {
            (
                Effect::Unknown,
                format!("{group} branch removed or rewritten at {p} (cannot be paired)"),
            )
        }
    }

    fn gained_branch(
        &mut self,
        group: &str,
        j: usize,
        ob: &[Value],
        nb: &[Value],
        o: View<'_>,
        p: &str,
    ) -> (Effect, String) {
        match group {
            "allOf" => {
                let implied = ob
                    .iter()
                    .any(|b| self.covered_by(b, Side::Old, &nb[j], Side::New))
                    || self.view_covered_by(o.siblings(), Side::Old, &nb[j], Side::New);
                if implied {
                    (
                        Effect::Notation,
                        format!("allOf branch added at {p} (no-op: already implied)"),
                    )
                } else {
                    (Effect::Tightens, format!("allOf branch added at {p}"))
                }
            }
            "oneOf" if !self.disjoint_from_others(j, nb) => (
                Effect::Unknown,
                format!("oneOf branch added at {p} (may overlap another branch)"),
            ),
            _ => (Effect::Loosens, format!("{group} branch added at {p}")),
        }
    }

    /// Branch `j` of a new `oneOf` provably shares no instance with any other branch.
    fn disjoint_from_others(&self, j: usize, nb: &[Value]) -> bool {
        let empty = Map::new();
        let Some(mine) = as_view(self.deref(&nb[j], Side::New).0, &empty) else {
            return true;
        };
        nb.iter().enumerate().all(|(k, other)| {
            k == j
                || as_view(self.deref(other, Side::New).0, &empty).is_none_or(|v| disjoint(mine, v))
        })
    }

    /// The branch of a pure union (`holder`, on `holder_side`) that accepts every value of
    /// `x` (on the other side), with the union's keyword. For `oneOf` the other branches must
    /// also share no value with `x` (else a value matching two branches is rejected).
    fn covering_branch(
        &mut self,
        x: &Value,
        x_side: Side,
        holder: &Map<String, Value>,
        holder_side: Side,
    ) -> Option<(&'static str, usize)> {
        let group = pure_union(holder)?;
        let Some(Value::Array(branches)) = holder.get(group) else {
            return None;
        };
        let empty = Map::new();
        (0..branches.len()).find_map(|j| {
            let covered = self.covered_by(x, x_side, &branches[j], holder_side);
            let exclusive_ok = group == "anyOf"
                || as_view(x, &empty).is_some_and(|xv| {
                    branches.iter().enumerate().all(|(k, other)| {
                        k == j
                            || as_view(self.deref(other, holder_side).0, &empty)
                                .is_none_or(|v| disjoint(xv, v))
                    })
                });
            (covered && exclusive_ok).then_some((group, j))
        })
    }

    /// The new schema is only a union (`anyOf`/`oneOf` plus annotations) one branch of which
    /// accepts every old value: the old schema was wrapped, and the union only adds values.
    /// The old schema is walked against that branch (pointers `/anyOf/0/...`), so its own
    /// combinators meet the branch's, never the new outer branches. `false` when no branch
    /// can be shown to cover the old schema.
    pub(super) fn union_wraps(&mut self, old: &Value, new: &Map<String, Value>, ptr: &str) -> bool {
        let Some((group, j)) = self.covering_branch(old, Side::Old, new, Side::New) else {
            return false;
        };
        let Some(branch) = new.get(group).and_then(|b| b.get(j)) else {
            return false;
        };
        let base = child(ptr, group);
        self.walk(old, branch, &child(&base, &j.to_string()));
        self.push(
            Effect::Loosens,
            format!("{group} at {base} wraps the old schema as branch {j} (every old value still accepted)"),
        );
        true
    }

    /// The reverse: the old schema was only a union and the new one keeps a single branch
    /// of it (every new value was accepted by that branch): the other branches' values are
    /// no longer accepted.
    pub(super) fn union_unwraps(
        &mut self,
        old: &Map<String, Value>,
        new: &Value,
        ptr: &str,
    ) -> bool {
        let Some((group, i)) = self.covering_branch(new, Side::New, old, Side::Old) else {
            return false;
        };
        let Some(branch) = old.get(group).and_then(|b| b.get(i)) else {
            return false;
        };
        self.walk(branch, new, ptr);
        self.push(
            Effect::Tightens,
            format!(
                "{group} at {} unwrapped to its branch {i} (the other branches' values are no longer accepted)",
                child(ptr, group)
            ),
        );
        true
    }
}

/// The union keyword of a schema object that holds nothing else but annotations and
/// definitions.
pub(super) fn pure_union(m: &Map<String, Value>) -> Option<&'static str> {
    let mut unions = ["anyOf", "oneOf"]
        .into_iter()
        .filter(|k| m.contains_key(*k));
    let group = unions.next()?;
    let rest_is_inert = m.keys().all(|k| {
        k == group
            || k == "$schema"
            || DOC_KEYWORDS.contains(&k.as_str())
            || CONTAINER_KEYWORDS.contains(&k.as_str())
    });
    (unions.next().is_none() && rest_is_inert).then_some(group)
}
