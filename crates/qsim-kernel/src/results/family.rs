//! One declaration per metric: [`metric_family!`] turns a list of metrics
//! of one scope into the per-replication struct's fields, the summary
//! struct's fields, the rows of the metric table and the summary's
//! builder, so a new metric of a station, a class at a station or a region
//! is one line there (and the kernel code that measures it).

use super::Estimate;

/// A summary field: an [`Estimate`] reported for every item (where it is
/// not defined, [`Estimate::UNKNOWN`], which outputs leave out), or an
/// `Option<Estimate>` present where the metric applies.
pub(crate) trait SummaryField: Copy {
    /// The field from the figure, `None` where the metric does not apply.
    fn from_figure(e: Option<Estimate>) -> Self;
    /// The estimate outputs report, `None` where there is none.
    fn reported(self) -> Option<Estimate>;
}

impl SummaryField for Estimate {
    fn from_figure(e: Option<Estimate>) -> Estimate {
        e.unwrap_or(Estimate::UNKNOWN)
    }

    fn reported(self) -> Option<Estimate> {
        (!self.mean.is_nan()).then_some(self)
    }
}

impl SummaryField for Option<Estimate> {
    fn from_figure(e: Option<Estimate>) -> Option<Estimate> {
        e
    }

    fn reported(self) -> Option<Estimate> {
        self
    }
}

/// Whether every flag is set (no flags: always).
pub(crate) fn all(flags: &[bool]) -> bool {
    flags.iter().all(|f| *f)
}

/// Declares a family of metrics of one scope, each once.
///
/// The header names the family's `MetricScope` and `Read` variants, its
/// table constant, its flags struct (`applies`) and its weights enum. Each
/// metric line then reads
/// `NAME: TYPE [when FLAG], Unit, "label", sweep, [aliases], WEIGHT, "doc";`
/// with `TYPE` the summary field's type (`Estimate`, or `Option<Estimate>`
/// for a metric that applies to some items only), `FLAG` a `bool` field of
/// the flags struct that says where it applies (always without one),
/// `sweep` whether sweeps write it as a column, and `WEIGHT` a variant of
/// the weights enum: what one replication's value is weighed by, so that
/// the figure is additive over the segments of a single replication (see
/// `Summary::fig` in run.rs).
///
/// From the line follow: the field `NAME: f64` of the replication struct
/// (0 where it does not apply), the field `NAME: TYPE` of the summary
/// struct (both documented by the doc), the metric table row named `NAME`
/// (the JSON key, CSV `metric`, sweep column and derived-metric variable)
/// with the unit, label and doc, and the summary's `with_figures`, which
/// fills every field from a function that summarizes one figure across
/// replications, in line order. The replication struct takes its other
/// fields (after the metrics) in braces, the summary struct its own
/// (before and after them) in two pairs of braces.
macro_rules! metric_family {
    (
        scope: $scope:ident,
        read: $read:ident,
        table: $table:ident,
        applies: $applies:ty,
        weights: $wty:ident,
        $(#[$rmeta:meta])*
        replication: $rep:ident { $($rtail:tt)* },
        $(#[$smeta:meta])*
        summary: $sum:ident { $($shead:tt)* } { $($stail:tt)* },
        metrics: {
            $(
                $field:ident: $ty:ty $([when $when:ident])?, $unit:ident, $label:literal,
                $sweep:literal, [$($alias:literal),*], $weight:ident, $doc:literal;
            )*
        }
    ) => {
        $(#[$rmeta])*
        pub struct $rep {
            $(
                #[doc = $doc]
                pub $field: f64,
            )*
            $($rtail)*
        }

        $(#[$smeta])*
        pub struct $sum {
            $($shead)*
            $(
                #[doc = $doc]
                pub $field: $ty,
            )*
            $($stail)*
        }

        /// The metric table's rows of the family, in report order.
        pub(super) const $table: &[$crate::results::Metric] = &[$(
            $crate::results::Metric {
                scope: $crate::results::MetricScope::$scope,
                name: stringify!($field),
                unit: $crate::results::Unit::$unit,
                label: $label,
                doc: $doc,
                sweep_column: $sweep,
                aliases: &[$($alias),*],
                read: $crate::results::Read::$read {
                    summary: |s: &$sum| $crate::results::SummaryField::reported(s.$field),
                    replication: |r: &$rep| r.$field,
                },
            }
        ),*];

        impl $sum {
            /// `self` with the family's figures, each summarized by `fig`
            /// (its name, its value in a replication, its weight) where
            /// `applies` says it applies; figures are summarized in table
            /// order.
            pub(crate) fn with_figures(
                self,
                applies: &$applies,
                fig: &dyn Fn(&'static str, fn(&$rep) -> f64, $wty) -> $crate::results::Estimate,
            ) -> $sum {
                $sum {
                    $(
                        $field: $crate::results::SummaryField::from_figure(
                            $crate::results::family::all(&[$(applies.$when)?]).then(|| {
                                fig(
                                    stringify!($field),
                                    |r: &$rep| r.$field,
                                    $wty::$weight,
                                )
                            }),
                        ),
                    )*
                    ..self
                }
            }
        }
    };
}
