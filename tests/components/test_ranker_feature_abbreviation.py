"""The abbreviation group: a short form defined in the document is searched as its long form too."""

import numpy as np

from ontolink.ranking.features import CandidateFeatures

DEFINED = {"mention": "GTCS", "context_left": "Generalized tonic-clonic seizures (GTCS) were seen. Then ",
           "context_right": " recurred."}


def test_candidates_found_by_the_long_form_are_marked_and_merged(loaded_dense_index):
    loaded = loaded_dense_index
    with_long_forms = CandidateFeatures(loaded, ["dense", "abbreviation"], top_k=10)
    entities, scores, matrix, *_ = with_long_forms([DEFINED])[0]
    expanded = matrix[:, with_long_forms.columns.index("expanded")]
    assert expanded[0] == 1.0 and "tonic-clonic" in loaded.entity_names[int(entities[0])].lower()
    assert list(scores) == sorted(scores, reverse=True)  # merged best first
    # without the group the long form is not searched: the short form alone finds no tonic-clonic seizure first
    alone, *_ = CandidateFeatures(loaded, ["dense"], top_k=10)([DEFINED])[0]
    assert not np.array_equal(alone, entities)
    # a short form the document does not define is searched as it is
    undefined = {"mention": "GTCS", "context_left": "Later, ", "context_right": " recurred."}
    assert not with_long_forms([undefined])[0][2][:, 3].any()
