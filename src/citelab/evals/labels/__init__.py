"""Labels: what people said of (claim, evidence) pairs, read, written and chosen.

:func:`load_label_set` reads a labelled set (WiCE's claim and oracle-chunk files, ALCE's
human-eval citation file, JSON Lines or CSV with named columns: :class:`LabelColumns`,
citelab's own set) into a :class:`LabelSet`, a file's own label spellings read through a label
map (:func:`parse_label_map`). :func:`label_pairs` turns a run's citations into
pairs to label, with ids derived from where each pair sits; :func:`label_queue` orders pairs
for labelling (a seed, judges' disagreements first); a :class:`LabelFile` saves each label as
it is given. Cards (``citelab.evals.cards``) measure judges against these labels.
"""

from citelab.evals.labels._label_file import LABELS, Label, LabelFile, LabelLine, read_label_file
from citelab.evals.labels._label_pairs import (
    PAIR_UNITS,
    LabelPairs,
    PairSource,
    PairUnit,
    label_pairs,
    run_name,
)
from citelab.evals.labels._label_queue import (
    DESIGNS,
    Design,
    JudgeSpec,
    LabelItem,
    LabelPassage,
    LabelQueue,
    label_queue,
    pair_estimate,
    pending,
)
from citelab.evals.labels._labels import (
    DEFAULT_LABELS,
    LABEL_FORMATS,
    PARTIAL_AS,
    LabelColumns,
    LabelFormat,
    LabelledPair,
    LabelSet,
    LabelSource,
    PartialAs,
    load_label_set,
    parse_label_map,
    population_of,
)

__all__ = [
    "DEFAULT_LABELS",
    "DESIGNS",
    "LABELS",
    "LABEL_FORMATS",
    "PAIR_UNITS",
    "PARTIAL_AS",
    "Design",
    "JudgeSpec",
    "Label",
    "LabelColumns",
    "LabelFile",
    "LabelFormat",
    "LabelItem",
    "LabelLine",
    "LabelPairs",
    "LabelPassage",
    "LabelQueue",
    "LabelSet",
    "LabelSource",
    "LabelledPair",
    "PairSource",
    "PairUnit",
    "PartialAs",
    "label_pairs",
    "label_queue",
    "load_label_set",
    "pair_estimate",
    "parse_label_map",
    "pending",
    "population_of",
    "read_label_file",
    "run_name",
]
