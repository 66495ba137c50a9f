import citelab.evals


def test_every_builtin_scorer_is_registered_and_rebuildable() -> None:
    names = citelab.evals.scorer_names()
    assert {
        "anchor_validity",
        "citation_precision",
        "citation_recall",
        "claim_attribution",
        "claim_recall",
        "cross_turn_stability",
        "dangling_markers",
        "first_citation_order",
        "gold_sources",
        "no_answer",
        "numbering_stability",
        "required_searches",
        "source_language",
        "source_leakage",
        "uncited_dropping",
    } <= set(names)
    for scorer in citelab.evals.build_scorers():
        assert citelab.evals.build_scorer(scorer.config()).config() == scorer.config()
