//! The bookkeeping every family group shares: registering a family and
//! noting whether its series belong to a target (keyed by the target, or by
//! one of its kinds) and when they are created ([`Registrar`],
//! [`TargetSeries`]); and the series whose label values are not known in
//! advance — a server's self-description, references, protocol versions,
//! failing rules, a source's reasons — remembered per owner so that a new
//! set replaces the old one and an owner's series can all be dropped
//! ([`KeptLabels`]).

use super::families::Source;
use super::labels::{LabelKey, TargetKindLabels, TargetLabels, ValueLabels};
use mcp_listing::Kind;
use prometheus_client::metrics::family::{Family, MetricConstructor};
use prometheus_client::registry::{Metric, Registry, Unit};
use std::borrow::Borrow;
use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Mutex, MutexGuard};

/// A family's series of one key: created at their zero value, or removed.
pub trait Series<K>: Send + Sync + std::fmt::Debug {
    fn create(&self, key: &K);
    fn remove(&self, key: &K);
}

impl<L, M, C> Series<L> for Family<L, M, C>
where
    L: Clone + Hash + Eq + Send + Sync + std::fmt::Debug,
    M: Send + Sync + std::fmt::Debug,
    C: MetricConstructor<M> + Send + Sync,
{
    fn create(&self, key: &L) {
        // The guard is released at once.
        drop(self.get_or_create(key));
    }

    fn remove(&self, key: &L) {
        Family::remove(self, key);
    }
}

/// A family keyed by a series' labels and a labelled enum's value (a
/// (target, kind)'s, a tap client's, a source's): a series' are every value's.
impl<S, E, M, C> Series<S> for Family<ValueLabels<S, E>, M, C>
where
    S: Clone + Hash + Eq + Send + Sync + std::fmt::Debug,
    E: LabelKey + Send + Sync + std::fmt::Debug,
    M: Send + Sync + std::fmt::Debug,
    C: MetricConstructor<M> + Send + Sync,
{
    fn create(&self, key: &S) {
        for value in E::all() {
            drop(self.get_or_create(&ValueLabels::new(key, *value)));
        }
    }

    fn remove(&self, key: &S) {
        for value in E::all() {
            Family::remove(self, &ValueLabels::new(key, *value));
        }
    }
}

/// When a family's series of a target (or of one of its kinds) exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Creation {
    /// At 0 as soon as the target (or kind) is configured: what alerts and
    /// `increase()` need from the first scrape (docs/metrics.md).
    AtZero,
    /// With their first value: a rare event, or a value 0 would fake.
    FirstValue,
    /// At 0 for detail targets only (`metrics: {detail: true}`).
    Detail,
}

type Keyed<K> = Vec<(Box<dyn Series<K>>, Creation)>;

/// The families that hold a target's series, per target and per kind, and
/// when each creates them: what configuring or forgetting a target does.
#[derive(Debug, Default)]
pub struct TargetSeries {
    per_target: Keyed<TargetLabels>,
    per_kind: Keyed<TargetKindLabels>,
}

impl TargetSeries {
    /// Creates what `target` has from the start and drops what it must not
    /// have: the series of kinds not in `kinds`, detail series unless
    /// `detail`. Correct to call again after a reload.
    pub fn configure(&self, target: &str, kinds: &[Kind], detail: bool) {
        set_up(&self.per_target, &TargetLabels::new(target), detail);
        for kind in Kind::ALL {
            let l = TargetKindLabels::new(target, kind);
            if kinds.contains(&kind) {
                set_up(&self.per_kind, &l, detail);
            } else {
                remove_all(&self.per_kind, &l);
            }
        }
    }

    /// Drops every series of `target`.
    pub fn forget(&self, target: &str) {
        remove_all(&self.per_target, &TargetLabels::new(target));
        for kind in Kind::ALL {
            remove_all(&self.per_kind, &TargetKindLabels::new(target, kind));
        }
    }
}

fn set_up<K>(families: &Keyed<K>, key: &K, detail: bool) {
    for (family, creation) in families {
        match creation {
            Creation::AtZero => family.create(key),
            Creation::Detail if detail => family.create(key),
            Creation::Detail => family.remove(key),
            Creation::FirstValue => {}
        }
    }
}

fn remove_all<K>(families: &Keyed<K>, key: &K) {
    for (family, _) in families {
        family.remove(key);
    }
}

/// Registers families in a registry, noting in one [`TargetSeries`] those
/// whose series belong to a target.
pub struct Registrar<'r> {
    registry: &'r mut Registry,
    /// Where the values come from, for HELP strings.
    pub source: Source,
    series: TargetSeries,
}

impl<'r> Registrar<'r> {
    pub fn new(registry: &'r mut Registry, source: Source) -> Self {
        Registrar {
            registry,
            source,
            series: TargetSeries::default(),
        }
    }

    /// The family `name` (without `_total` or the unit, which the encoder
    /// appends), described by `help`.
    pub fn family(&mut self, name: &'static str, help: impl Into<String>) -> Registration<'_, 'r> {
        Registration {
            registrar: self,
            name,
            help: help.into(),
            unit: None,
        }
    }

    /// The per-target families noted.
    pub fn finish(self) -> TargetSeries {
        self.series
    }
}

/// One family being registered.
pub struct Registration<'a, 'r> {
    registrar: &'a mut Registrar<'r>,
    name: &'static str,
    help: String,
    unit: Option<Unit>,
}

impl Registration<'_, '_> {
    /// Its values are in `unit` (the name gets the unit's suffix).
    pub fn unit(mut self, unit: Unit) -> Self {
        self.unit = Some(unit);
        self
    }

    /// Series keyed by a target alone, created as `creation` says; `family`
    /// handed back registered.
    pub fn per_target<F>(self, creation: Creation, family: F) -> F
    where
        F: Series<TargetLabels> + Metric + Clone,
    {
        self.keyed(creation, family, |s| &mut s.per_target)
    }

    /// Series keyed by a target's kind, created as `creation` says; `family`
    /// handed back registered.
    pub fn per_kind<F>(self, creation: Creation, family: F) -> F
    where
        F: Series<TargetKindLabels> + Metric + Clone,
    {
        self.keyed(creation, family, |s| &mut s.per_kind)
    }

    /// `family` noted in the list `keyed` picks, and registered.
    fn keyed<K, F>(
        self,
        creation: Creation,
        family: F,
        keyed: fn(&mut TargetSeries) -> &mut Keyed<K>,
    ) -> F
    where
        F: Series<K> + Metric + Clone + 'static,
    {
        keyed(&mut self.registrar.series).push((Box::new(family.clone()), creation));
        self.plain(&family);
        family
    }

    /// A new family of [`Self::per_target`] series.
    pub fn new_per_target<F>(self, creation: Creation) -> F
    where
        F: Series<TargetLabels> + Metric + Clone + Default,
    {
        self.per_target(creation, F::default())
    }

    /// A new family of [`Self::per_kind`] series.
    pub fn new_per_kind<F>(self, creation: Creation) -> F
    where
        F: Series<TargetKindLabels> + Metric + Clone + Default,
    {
        self.per_kind(creation, F::default())
    }

    /// A new family of series the caller creates and drops itself (as
    /// [`Self::plain`]), handed back registered.
    pub fn new_plain<F: Metric + Clone + Default>(self) -> F {
        let family = F::default();
        self.plain(&family);
        family
    }

    /// Series the caller creates and drops itself (fleet-wide ones, the
    /// exporter's own, those with labels not known in advance).
    pub fn plain(self, family: &(impl Metric + Clone)) {
        let registry = &mut *self.registrar.registry;
        match self.unit {
            Some(unit) => registry.register_with_unit(self.name, self.help, unit, family.clone()),
            None => registry.register(self.name, self.help, family.clone()),
        }
    }
}

/// The label sets of series whose values are not known in advance, per
/// owner (a target, a target's kind, a source): a new set replaces the old
/// one, and an owner's series can all be dropped. A few per owner, so kept
/// in a vector. Its holder locks it for each whole update.
#[derive(Debug)]
pub struct KeptLabels<O, L> {
    by_owner: HashMap<O, Vec<L>>,
}

impl<O, L> Default for KeptLabels<O, L> {
    fn default() -> Self {
        KeptLabels {
            by_owner: HashMap::new(),
        }
    }
}

impl<O: Hash + Eq, L: PartialEq> KeptLabels<O, L> {
    /// `owner`'s series are now those of `now`: the ones it had and no
    /// longer has are removed from `family` (the caller sets the new ones).
    pub fn replace(&mut self, owner: O, mut now: Vec<L>, family: &dyn Series<L>) {
        if let Some(before) = self.by_owner.get(&owner) {
            for gone in before.iter().filter(|l| !now.contains(l)) {
                family.remove(gone);
            }
        }
        if now.is_empty() {
            self.by_owner.remove(&owner);
        } else {
            now.shrink_to_fit();
            self.by_owner.insert(owner, now);
        }
    }

    /// One more series of `owner` (a reason seen for the first time).
    pub fn add(&mut self, owner: O, labels: L) {
        let kept = self.by_owner.entry(owner).or_default();
        if !kept.contains(&labels) {
            kept.push(labels);
        }
    }

    /// Drops every series of `owner`.
    pub fn forget<Q>(&mut self, owner: &Q, family: &dyn Series<L>)
    where
        O: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        for l in self.by_owner.remove(owner).unwrap_or_default() {
            family.remove(&l);
        }
    }

    /// Drops every series for which `stale(owner, labels)` holds.
    pub fn forget_where(&mut self, family: &dyn Series<L>, stale: impl Fn(&O, &L) -> bool) {
        for (owner, kept) in self.by_owner.iter_mut() {
            kept.retain(|l| {
                let gone = stale(owner, l);
                if gone {
                    family.remove(l);
                }
                !gone
            });
        }
        self.by_owner.retain(|_, kept| !kept.is_empty());
    }
}

/// `m` locked. Every update under these locks leaves the data whole, so a
/// lock poisoned by a panic elsewhere is still usable.
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
