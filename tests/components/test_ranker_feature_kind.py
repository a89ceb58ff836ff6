"""The kind group: the kind of name that matched (preferred name, EXACT, RELATED, other synonym)."""

import numpy as np

from ontolink.ranking.features import CandidateFeatures
from ontolink.ranking.groups import FEATURE_GROUPS
from ontolink.ranking.groups.kind import NAME_KINDS


def test_kind_is_one_hot_of_the_matched_names_kind(loaded_dense_index):
    loaded = loaded_dense_index
    features = CandidateFeatures(loaded, ["dense", "kind"])
    (entities, _, matrix, *_), = features([{"id": "m", "mention": "generalized seizures"}])
    kinds = [features.columns.index(column) for column in FEATURE_GROUPS.get("kind").columns]
    assert np.all(matrix[:, kinds].sum(axis=1) == 1)  # one kind per matched name
    _, _, name_rows = features.linker.rows([loaded.query_text({"mention": "generalized seizures"})])[0]
    for row, name_row in zip(matrix, name_rows.tolist()):
        kind = loaded.name_kinds[name_row]
        assert int(np.argmax(row[kinds])) == (NAME_KINDS.index(kind) if kind in NAME_KINDS else len(NAME_KINDS))
    assert matrix[:, kinds[0]].any() and not matrix[:, kinds[0]].all()  # preferred names and synonyms both matched
