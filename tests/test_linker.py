"""The Linker's search: a query whose first names hold too few entities is searched again, deeper, and gets
what one deep search gives."""

import numpy as np


def test_a_short_query_searched_again_gets_the_deep_result(dense_index):
    from ontolink.indexes.artifact import load_index
    from ontolink.linking.linker import Linker

    loaded = load_index(dense_index, device="cpu")
    texts = ["seizures", "generalized tonic-clonic seizures", "abnormality of the eye", "myopia", "blindness",
             "febrile seizure", "nystagmus", "absence epilepsy"]
    top_k = 40
    shallow = Linker(loaded, top_k=top_k)
    shallow.names_to_search = top_k  # most queries' first 40 names repeat an entity: they search again
    deep = Linker(loaded, top_k=top_k)
    deep.names_to_search = len(loaded)
    _, rows = loaded.name_index.search(texts, top_k)
    repeats = [len(set(loaded.entity_of_name[query_rows].tolist())) < top_k for query_rows in rows]
    assert sum(repeats) >= 3, "the test needs queries whose first names repeat an entity"
    for (entities, scores, names), (deep_entities, deep_scores, deep_names) in zip(shallow.search_rows(texts),
                                                                                 deep.search_rows(texts)):
        assert len(entities) == top_k
        np.testing.assert_array_equal(entities, deep_entities)
        np.testing.assert_array_equal(names, deep_names)
        np.testing.assert_allclose(scores, deep_scores, atol=1e-6)


def test_a_linker_follows_the_subset_its_index_is_given_later(hashed_index):
    """A Linker made before ``LoadedIndex.restrict`` (a ranker's, bound earlier) keeps to the subset from its next
    search on, and to every entity again once the subset is lifted; its memo does not mix the two."""
    from ontolink.indexes.artifact import load_index
    from ontolink.linking.linker import Linker

    loaded = load_index(hashed_index, device="cpu")
    linker = Linker(loaded, top_k=5)
    texts = ["seizures", "myopia"]
    before = [candidates for candidates in linker.candidates(texts)]
    subset = set(loaded.entity_ids[::7])
    loaded.restrict(subset)
    within = linker.candidates(texts)
    assert all(len(candidates) == 5 and {candidate["id"] for candidate in candidates} <= subset
               for candidates in within)
    loaded.restrict(None)
    assert linker.candidates(texts) == before
